"""``junior.toml``: where it is, reading it, and plugins' ``[plugins.<name>]`` tables (``[tools]`` is read in
``junior_core._catalog.exposure``)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from junior_core._base.errors import ConfigError

__all__ = [
    "CONFIG_DIR_ENV", "CONFIG_ENV", "ConfigError", "config_path", "plugin_settings", "read_file", "user_config_dir",
]

CONFIG_ENV = "JUNIOR_CONFIG"
CONFIG_DIR_ENV = "JUNIOR_CONFIG_DIR"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def user_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``JUNIOR_CONFIG_DIR``, else platformdirs' user config directory for junior (``~/.config/junior``)."""
    environ = os.environ if environ is None else environ
    if environ.get(CONFIG_DIR_ENV):
        return Path(environ[CONFIG_DIR_ENV]).expanduser()
    import platformdirs  # only without JUNIOR_CONFIG_DIR, and not at `junior --help`

    return Path(platformdirs.user_config_dir("junior", appauthor=False))


def config_path(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path | None:
    """``junior.toml``: the file ``JUNIOR_CONFIG`` names, else ``./junior.toml``, else the one in the user config
    directory (``~/.config/junior/junior.toml``), whichever exists first; None if none does."""
    environ = os.environ if environ is None else environ
    if environ.get(CONFIG_ENV):
        return Path(environ[CONFIG_ENV]).expanduser()
    for path in ((Path.cwd() if cwd is None else cwd) / "junior.toml", user_config_dir(environ) / "junior.toml"):
        if path.is_file():
            return path
    return None


def plugin_settings(name: str, environ: Mapping[str, str] | None = None, path: Path | None = None) -> dict[str, Any]:
    """The ``[plugins.<name>]`` table of ``junior.toml`` (``path``, default the file in effect), ``{}`` without one.

    ``${VAR}`` in any string value, nested ones included, is replaced by that environment variable; a variable
    that is not set, or a ``[plugins.<name>]`` that is not a table, raises ``ConfigError`` naming the file and key.
    Values are returned as TOML gives them; checking their types and names is the plugin's part.
    """
    environ = os.environ if environ is None else environ
    path = config_path(environ) if path is None else path
    if path is None:
        return {}
    plugins = read_file(path).get("plugins", {})
    if not isinstance(plugins, dict):
        raise ConfigError(f"{path}: [plugins] must be a table of [plugins.<name>] tables")
    table = plugins.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [plugins.{name}] must be a table")

    def expand(value: Any, where: str) -> Any:
        if isinstance(value, str):
            missing = [var for var in _VAR.findall(value) if var not in environ]
            if missing:
                raise ConfigError(f"{path}: [plugins.{name}] {where}: refers to ${{{missing[0]}}}, which is not set "
                                  "in the environment")
            return _VAR.sub(lambda m: environ[m.group(1)], value)
        if isinstance(value, dict):
            return {key: expand(item, f"{where}.{key}") for key, item in value.items()}
        if isinstance(value, list):
            return [expand(item, f"{where}[{i}]") for i, item in enumerate(value)]
        return value

    return {key: expand(value, key) for key, value in table.items()}


def read_file(path: Path) -> dict[str, Any]:
    """The TOML document in ``path``; ``ConfigError`` naming the file when it cannot be read or parsed."""
    import tomllib

    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the configuration file ({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
