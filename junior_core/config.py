"""``junior.toml``: where it is, the core's ``[tools]`` table of exposure rules, and plugins' ``[plugins.<name>]``."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from junior_core.errors import ConfigError
from junior_core.policy import ExposureRule

__all__ = [
    "CONFIG_DIR_ENV", "CONFIG_ENV", "ConfigError", "config_path", "plugin_settings", "tool_rules", "user_config_dir",
]

CONFIG_ENV = "JUNIOR_CONFIG"
CONFIG_DIR_ENV = "JUNIOR_CONFIG_DIR"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Read in this order and a later rule wins a tie: of two equally specific patterns, hidden beats direct and
# direct beats deferred (hiding is the safe side of a tie; direct is a host's explicit choice).
_KEYS = ("deferred", "direct", "hidden")


def user_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``JUNIOR_CONFIG_DIR``, else platformdirs' user config directory for junior (``~/.config/junior``)."""
    environ = os.environ if environ is None else environ
    if environ.get(CONFIG_DIR_ENV):
        return Path(environ[CONFIG_DIR_ENV]).expanduser()
    import platformdirs

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
    plugins = _read(path).get("plugins", {})
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


def _read(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the configuration file ({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def tool_rules(path: Path | None) -> list[ExposureRule]:
    """The exposure rules of ``[tools]`` in ``path`` (none without a file or table); raises ``ConfigError``."""
    if path is None:
        return []
    table = _read(path).get("tools", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tools] must be a table of deferred, direct and hidden lists")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise ConfigError(f"{path}: [tools] {unknown[0]}: unknown field; use {', '.join(_KEYS)}")
    rules: list[ExposureRule] = []
    seen: dict[str, str] = {}
    for exposure in _KEYS:
        patterns = table.get(exposure, [])
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise ConfigError(f"{path}: [tools] {exposure}: must be a list of tool_name or source id patterns")
        for pattern in patterns:
            if pattern in seen:
                raise ConfigError(f"{path}: [tools] {exposure}: {pattern!r} is also in {seen[pattern]}; keep one")
            seen[pattern] = exposure
            try:
                rules.append(ExposureRule(pattern, exposure, origin=str(path)))  # type: ignore[arg-type]
            except ValueError as exc:
                raise ConfigError(f"{path}: [tools] {exposure}: {exc}") from None
    return rules
