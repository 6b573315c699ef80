"""The clock every deadline is measured on: a hook call's, a tool call's.

A runtime waits through its ``RuntimeOptions.clock``: the monotonic clock by default; in tests a
``junior_core.testing.ManualClock``, which moves only when told, so a deadline test takes milliseconds and its
outcome never depends on how loaded the machine is.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio  # imported when awaited: `junior --help` does not need it
    from datetime import datetime

__all__ = ["MONOTONIC", "Clock", "MonotonicClock"]


class Clock(Protocol):
    """What deadlines are read from and waited on.

    A clock may also have ``utcnow() -> datetime`` (aware, UTC): the date the runtime's prompt context gives the
    model is read from it (``MonotonicClock`` reads the system's, ``ManualClock`` its own); without one, the
    system's wall clock is read.
    """

    def now(self) -> float:
        """The time in seconds; only differences between two readings mean anything."""
        ...

    def wait(self, ended: Callable[[float], bool], until: float) -> bool:
        """Wait until a call ended or the time ``until``; whether it ended.

        ``ended(seconds)`` blocks for at most ``seconds`` of real time and says whether the call ended.
        """
        ...

    async def wait_async(self, future: asyncio.Future[Any], until: float) -> bool:
        """Await ``future`` until the time ``until``, never cancelling it; whether it is done."""
        ...


class MonotonicClock:
    """``time.monotonic``: the clock of every runtime not given another."""

    def now(self) -> float:
        return time.monotonic()

    def utcnow(self) -> datetime:
        """The system's wall clock, in UTC."""
        from datetime import UTC, datetime

        return datetime.now(UTC)

    def wait(self, ended: Callable[[float], bool], until: float) -> bool:
        return ended(max(until - time.monotonic(), 0.0))

    async def wait_async(self, future: asyncio.Future[Any], until: float) -> bool:
        import asyncio

        done, _ = await asyncio.wait((future,), timeout=max(until - time.monotonic(), 0.0))
        return bool(done)


MONOTONIC = MonotonicClock()
