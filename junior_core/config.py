"""The core's part of ``junior.toml``: the ``[tools]`` table of exposure rules."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from junior_core.errors import ConfigError
from junior_core.policy import ExposureRule

__all__ = ["CONFIG_DIR_ENV", "CONFIG_ENV", "ConfigError", "config_dir", "config_path", "tool_rules"]

CONFIG_ENV = "JUNIOR_CONFIG"
CONFIG_DIR_ENV = "JUNIOR_CONFIG_DIR"
# Read in this order and a later rule wins a tie: of two equally specific patterns, hidden beats direct and
# direct beats deferred (hiding is the safe side of a tie; direct is a host's explicit choice).
_KEYS = ("deferred", "direct", "hidden")


def config_path(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path | None:
    """``junior.toml``: the file ``JUNIOR_CONFIG`` names, else ``./junior.toml`` if there is one."""
    environ = os.environ if environ is None else environ
    if environ.get(CONFIG_ENV):
        return Path(environ[CONFIG_ENV]).expanduser()
    path = (Path.cwd() if cwd is None else cwd) / "junior.toml"
    return path if path.is_file() else None


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where junior keeps its own files (secrets, tokens): ``JUNIOR_CONFIG_DIR``, else platformdirs' user config dir."""
    environ = os.environ if environ is None else environ
    if environ.get(CONFIG_DIR_ENV):
        return Path(environ[CONFIG_DIR_ENV]).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("junior", appauthor=False))


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
