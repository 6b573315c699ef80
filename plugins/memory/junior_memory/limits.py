"""Per-actor write limits: one actor cannot crowd a workspace's memory.

Two limits, read from ``JUNIOR_MEMORY_WRITES_PER_HOUR`` / ``JUNIOR_MEMORY_MEMORIES_PER_ACTOR`` or else
``[plugins.memory]`` of junior.toml (0 turns one off):

- ``writes_per_hour`` (default 200): memories one actor may write through ``memory__remember`` in any hour,
  counted in this process on the runtime's clock (a sliding window);
- ``memories_per_actor`` (default 2,000): current (not archived) memories one actor may hold, counted in the
  database, so it holds across processes.

A write past either is refused with ``rejected`` and a message saying which limit, its size, and what to do
(forget memories no longer needed, or wait). A retried call (its tool_call_id already wrote a memory) is never
refused: it writes nothing new.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import deque
from typing import TYPE_CHECKING

import attrs

from junior_core import ToolError

if TYPE_CHECKING:
    from junior_core.clock import Clock
    from junior_memory.store import MemoryStore

__all__ = ["DEFAULT_MEMORIES_PER_ACTOR", "DEFAULT_WRITES_PER_HOUR", "WriteLimits", "check_write", "limits_from_config"]

DEFAULT_WRITES_PER_HOUR = 200
DEFAULT_MEMORIES_PER_ACTOR = 2000
_HOUR = 3600.0
_MAX_ACTORS = 10_000  # actors whose recent writes are remembered; the quietest are dropped past this


def _limit(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"must be a whole number, 0 or more (0 turns the limit off), not {value!r}")
    return value


@attrs.frozen
class WriteLimits:
    """How much one actor may write: per rolling hour, and in total (current memories). 0 means no limit."""

    writes_per_hour: int = attrs.field(default=DEFAULT_WRITES_PER_HOUR, converter=_limit)
    memories_per_actor: int = attrs.field(default=DEFAULT_MEMORIES_PER_ACTOR, converter=_limit)


ENV = {"writes_per_hour": "JUNIOR_MEMORY_WRITES_PER_HOUR", "memories_per_actor": "JUNIOR_MEMORY_MEMORIES_PER_ACTOR"}


def limits_from_config() -> WriteLimits:
    """``JUNIOR_MEMORY_WRITES_PER_HOUR`` and ``JUNIOR_MEMORY_MEMORIES_PER_ACTOR``, else ``writes_per_hour`` and
    ``memories_per_actor`` of ``[plugins.memory]``, else the defaults."""
    from junior_core import ConfigError, config_path, plugin_settings

    settings = plugin_settings("memory")
    values = {}
    for name, variable in ENV.items():
        raw = os.environ.get(variable, "").strip()
        if raw:
            try:
                values[name] = _limit(int(raw))
            except ValueError:
                raise ConfigError(f"{variable}={raw!r}: must be a whole number, 0 or more (0 turns the limit "
                                  "off)") from None
        elif name in settings:
            try:
                values[name] = _limit(settings[name])
            except ValueError as exc:
                raise ConfigError(f"{config_path()}: [plugins.memory] {name}: {exc}") from None
    return WriteLimits(**values)


class _Limiter:
    """One store's limits and the recent writes of each actor, on the store's clock."""

    def __init__(self, limits: WriteLimits, clock: Clock) -> None:
        self.limits = limits
        self.clock = clock
        self._recent: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def admit(self, store: MemoryStore, actor_key: str, idempotency_key: str | None) -> None:
        limits = self.limits
        now = self.clock.now()
        with self._lock:
            recent = self._recent.setdefault(actor_key, deque())
            while recent and recent[0] <= now - _HOUR:
                recent.popleft()
            over_rate = limits.writes_per_hour and len(recent) >= limits.writes_per_hour
        if over_rate or limits.memories_per_actor:
            if idempotency_key is not None and store.replayed(idempotency_key) is not None:
                return  # a retry writes nothing new
        if over_rate:
            raise ToolError(
                "rejected",
                f"Not saved: this person has written {limits.writes_per_hour} memories in the last hour, the most "
                "one person may write per hour here. Save only what will matter later, and try again later.",
                limit="writes_per_hour", allowed=limits.writes_per_hour,
            )
        if limits.memories_per_actor and _live_count(store, actor_key) >= limits.memories_per_actor:
            raise ToolError(
                "rejected",
                f"Not saved: this person already has {limits.memories_per_actor} memories, the most one person may "
                "hold here. Forget ones that no longer matter (memory__list, then memory__forget), then save this.",
                limit="memories_per_actor", allowed=limits.memories_per_actor,
            )
        with self._lock:
            self._recent.setdefault(actor_key, deque()).append(now)
            if len(self._recent) > _MAX_ACTORS:
                quietest = min(self._recent, key=lambda key: self._recent[key][-1] if self._recent[key] else 0.0)
                del self._recent[quietest]


def _live_count(store: MemoryStore, actor_key: str) -> int:
    from sqlalchemy import func, select

    from junior_memory.tables import Memory

    statement = select(func.count()).select_from(Memory).where(Memory.actor_key == actor_key,
                                                               Memory.archived_at.is_(None))
    return int(store.db.unit(lambda conn: conn.execute(statement).scalar_one(), write=False))


_limiters: weakref.WeakKeyDictionary[MemoryStore, _Limiter] = weakref.WeakKeyDictionary()
_limiters_lock = threading.Lock()


def check_write(store: MemoryStore, actor_key: str | None, idempotency_key: str | None) -> None:
    """Refuse (``rejected``) a write by ``actor_key`` past its limits; a write with no actor is not limited."""
    if actor_key is None:
        return
    with _limiters_lock:
        limiter = _limiters.get(store)
        if limiter is None:
            limiter = _limiters[store] = _Limiter(limits_from_config(), store.db.clock)
    limiter.admit(store, actor_key, idempotency_key)
