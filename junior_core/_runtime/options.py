"""``RuntimeOptions``: every setting of a runtime, in one frozen value taken by each way of making one."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from junior_core._protocol.tools import DEFAULT_MAX_SEARCH_CHARS

if TYPE_CHECKING:
    from junior_core._discovery.index import SearchIndex
    from junior_core.clock import Clock

__all__ = [
    "DEFAULT_MAX_HUNG_PER_SOURCE",
    "DEFAULT_MAX_RESULT_CHARS",
    "DEFAULT_MAX_SEARCH_CHARS",
    "DEFAULT_TIMEOUT_S",
    "RuntimeOptions",
]

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_HUNG_PER_SOURCE = 8
"""Calls of one source that may still run after their callers gave up, before that source answers ``unavailable``."""
DEFAULT_MAX_RESULT_CHARS = 100_000
"""Longest tool result, as JSON text, given to the model; a longer one is cut and marked ``truncated``."""


def _exposure(value: Mapping[str, str] | None) -> dict[str, str] | None:
    return dict(value) if value is not None else None


@attrs.frozen(kw_only=True)
class RuntimeOptions:
    """How a runtime loads, waits, caches and shows tools; ``Runtime(plugins, options=RuntimeOptions(...))``.

    Every constructor (``Runtime(...)``, ``Runtime.from_entry_points(...)``, ``Runtime.open_async(...)``) takes
    ``options=`` and the same fields as keywords, which override it: ``Runtime(plugins, index_cache=False)``.

    - ``strict``: raise on a plugin that fails to load or register instead of reporting and skipping it;
      None is True for plugins given in code and ``JUNIOR_STRICT_PLUGINS`` for installed entry points.
    - ``default_timeout_s``: a tool call's time limit when its ``Tool`` sets none.
    - ``hook_timeout_s``, ``startup_timeout_s``: each turn hook call, and each start-up/shutdown hook call
      (None: ``JUNIOR_HOOK_TIMEOUT_S`` / ``JUNIOR_STARTUP_TIMEOUT_S``, else 10 s / 60 s; see ``docs/hooks.md``).
    - ``max_hung_per_source``: calls of one source still running past their limit before it answers
      ``unavailable``; ``max_result_chars``: the longest result, as JSON text, the model is given;
      ``max_search_chars``: the longest searchTools answer, as ``json.dumps`` text (schemas shortened past it).
    - ``index_cache``: True stores search indexes in the user cache directory, a path there, False nowhere.
    - ``lazy_sources``: list a run-time source only when ``refresh_source`` asks for it (the CLI), and tell
      plugins, through ``runtime.options.lazy_sources``, to connect to what backs it only then.
    - ``exposure``: tool_name or source id patterns to ``direct``, ``deferred`` or ``hidden``, over the tools'
      own exposure and the ``[tools]`` table of ``junior.toml``; ``config``: True reads the file in effect
      (``JUNIOR_CONFIG``, ``./junior.toml``, the user config directory), a path that file, False none.
    - ``index_factory``: makes the search index instead of ``SearchIndex(cache=...)``, e.g. one with other
      ranking settings (``benchmarks/retrieval.py``); ``index_cache`` is then the factory's to use or not.
    - ``clock``: what hook and tool deadlines are measured and waited on (``junior_core.clock.Clock``); None is
      the monotonic clock, a test passes ``junior_core.testing.ManualClock`` to move it by hand.
    """

    strict: bool | None = None
    default_timeout_s: float = DEFAULT_TIMEOUT_S
    hook_timeout_s: float | None = None
    startup_timeout_s: float | None = None
    max_hung_per_source: int = DEFAULT_MAX_HUNG_PER_SOURCE
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    max_search_chars: int = DEFAULT_MAX_SEARCH_CHARS
    index_cache: bool | str | os.PathLike[str] = True
    lazy_sources: bool = False
    exposure: Mapping[str, str] | None = attrs.field(default=None, converter=_exposure)
    config: bool | str | os.PathLike[str] = True
    index_factory: Callable[[], SearchIndex] | None = None
    clock: Clock | None = None

    def with_settings(self, settings: Mapping[str, Any]) -> RuntimeOptions:
        """These options with ``settings`` (field names) replaced; ``TypeError`` naming an unknown one."""
        if not settings:
            return self
        unknown = sorted(set(settings) - {field.name for field in attrs.fields(RuntimeOptions)})
        if unknown:
            raise TypeError(f"{unknown[0]!r} is not a runtime option; see junior_core.RuntimeOptions")
        return attrs.evolve(self, **settings)
