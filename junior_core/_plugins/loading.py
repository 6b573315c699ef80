"""What loading knows of a plugin before its hooks are called: the entry-point group, the environment's switches
(which plugins load, strictness, hook deadlines), a plugin's name, and the ``PluginInfo`` ``junior plugins`` reports."""

from __future__ import annotations

import logging
import math
import os
from types import ModuleType
from typing import Any

import attrs

from junior_core._plugins import hookspecs

__all__ = [
    "DEFAULT_HOOK_TIMEOUT_S",
    "DEFAULT_STARTUP_TIMEOUT_S",
    "ENTRY_POINT_GROUP",
    "PluginInfo",
    "plugin_name",
    "seconds",
    "strict_from_env",
]

log = logging.getLogger("junior.plugins")
ENTRY_POINT_GROUP = "junior"
DEFAULT_HOOK_TIMEOUT_S = 10.0
DEFAULT_STARTUP_TIMEOUT_S = 60.0
HOOK_TIMEOUT_ENV = "JUNIOR_HOOK_TIMEOUT_S"
STARTUP_TIMEOUT_ENV = "JUNIOR_STARTUP_TIMEOUT_S"



@attrs.define
class PluginInfo:
    """What ``junior plugins`` reports about one plugin."""

    name: str
    distribution: str | None = None
    version: str | None = None
    status: str = "loaded"
    error: str | None = None
    hooks: list[str] = attrs.Factory(list)

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)



def plugin_name(plugin: object) -> str:
    """A readable name for an in-process plugin: its module name, or its class's."""
    if isinstance(plugin, ModuleType):
        return plugin.__name__
    explicit = getattr(plugin, "junior_plugin_name", None)
    if isinstance(explicit, str):
        return explicit
    cls = plugin if isinstance(plugin, type) else type(plugin)
    return f"{cls.__module__}.{cls.__qualname__}"


def env_list(name: str) -> set[str] | None:
    raw = os.environ.get(name)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def strict_from_env() -> bool:
    return os.environ.get("JUNIOR_STRICT_PLUGINS", "") not in ("", "0", "false", "no")


def seconds(value: float | None, env: str, default: float) -> float:
    """A hook deadline: ``value`` if given, else the environment variable ``env``, else ``default``.

    An invalid argument raises; an invalid environment variable is logged and the default used, so a typo in a
    deployment's environment cannot stop the host from starting.
    """
    if value is None:
        raw = os.environ.get(env, "").strip()
        try:
            parsed = float(raw) if raw else default
        except ValueError:
            parsed = math.nan
        if not 0 < parsed < math.inf:
            log.warning("%s=%r is not a number of seconds greater than 0; using %g s", env, raw, default)
            return default
        return parsed
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 < value < math.inf):
        raise ValueError(f"a hook deadline must be a number of seconds greater than 0, not {value!r}")
    return float(value)


def did_you_mean(name: str) -> str:
    import difflib  # only for a misspelled hook

    close = difflib.get_close_matches(name, hookspecs.HOOK_NAMES, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else f"; junior's hooks are {', '.join(hookspecs.HOOK_NAMES)}"

