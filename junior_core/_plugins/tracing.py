"""``JUNIOR_TRACE_PLUGINS=1``: each hook call printed to stderr, before with its arguments' names, after with what
it returned and how long it took."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pluggy

from junior_core.text import clip

__all__ = ["HookTrace", "brief"]


def brief(value: Any) -> str:
    """``repr(value)``, cut to 80 characters."""
    return clip(repr(value), 80)


class HookTrace:
    """The two monitoring callbacks ``pm.add_hookcall_monitoring`` takes, for one plugin manager."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self._pm = pm
        self._started: dict[int, float] = {}

    def before(self, hook: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
        self._started[id(kwargs)] = time.perf_counter()
        for impl in impls:
            print(f"[junior] {hook} -> {impl.plugin_name}({', '.join(impl.argnames)})", file=sys.stderr)

    def after(
        self, outcome: pluggy.Result[Any], hook: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]
    ) -> None:
        started = self._started.pop(id(kwargs), None)
        took = f" in {(time.perf_counter() - started) * 1000:.1f} ms" if started is not None else ""
        exc = outcome.exception
        if exc is None:
            result = outcome.get_result()
            spec = getattr(self._pm.hook, hook).spec
            if len(impls) == 1 and isinstance(result, list) and not (spec is not None and spec.opts.get("firstresult")):
                result = result[0] if result else None  # one plugin's own answer, not pluggy's list of answers
        what = f"raised {type(exc).__name__}: {exc}" if exc is not None else f"returned {brief(result)}"
        for impl in impls:
            print(f"[junior] {hook} <- {impl.plugin_name}: {what}{took}", file=sys.stderr)
