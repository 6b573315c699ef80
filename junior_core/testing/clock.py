"""``ManualClock``: a clock that moves only when told, for deadline tests that take milliseconds and cannot flake;
``wait_until``: a bounded poll for what another thread or process does, the one kind of real wait a test keeps."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio
    from datetime import datetime

__all__ = ["ManualClock", "wait_until"]

T = TypeVar("T")

_POLL_S = 0.001
"""How often, in real seconds, a wait looks at the clock again while the call it waits for is still running."""


class ManualClock:
    """A clock for ``RuntimeOptions.clock`` that stands still until ``advance`` moves it.

    A call's deadline passes only when the clock is moved past it, however long the call really takes, so a
    test decides which call is late: a handler or hook that should overrun calls ``advance`` past its deadline
    and then blocks (on an event the test sets afterwards); one that should be on time just returns.
    Deadlines are fixed when a call starts, so ``advance`` from inside the call is never too early.

    Its wall time (``utcnow``, the date a runtime's prompt context gives the model) is ``utc`` (default
    2026-01-01 00:00 UTC) moved on by every ``advance``.
    """

    def __init__(self, start: float = 0.0, *, utc: datetime | None = None) -> None:
        from datetime import UTC, datetime

        if utc is not None and utc.tzinfo is None:
            raise ValueError("ManualClock(utc=...) needs an aware datetime, e.g. datetime(2027, 3, 1, tzinfo=UTC)")
        self._now = start
        self._start = start
        self._utc = utc if utc is not None else datetime(2026, 1, 1, tzinfo=UTC)
        self._lock = threading.Lock()

    def utcnow(self) -> datetime:
        """The wall time: ``utc`` plus how far the clock was advanced."""
        from datetime import UTC, timedelta

        with self._lock:
            return (self._utc + timedelta(seconds=self._now - self._start)).astimezone(UTC)

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward: every wait whose deadline is then past gives up."""
        if not seconds >= 0:
            raise ValueError(f"a clock moves forward only, not by {seconds!r} s")
        with self._lock:
            self._now += seconds

    def wait(self, ended: Callable[[float], bool], until: float) -> bool:
        while not ended(_POLL_S):
            if self.now() >= until:
                return False
        return True

    async def wait_async(self, future: asyncio.Future[Any], until: float) -> bool:
        import asyncio

        while not future.done():
            if self.now() >= until:
                return False
            await asyncio.wait((future,), timeout=_POLL_S)
        return True


def wait_until(predicate: Callable[[], T], timeout: float = 60.0, what: str | None = None,
               interval: float = 0.01) -> T:
    """Call ``predicate`` every ``interval`` real seconds until it returns something true, and return that; fail
    (``AssertionError`` naming ``what``) if ``timeout`` real seconds pass first.

    For waiting on another thread or process (a server to listen, a file to appear, hung calls to drain), never
    for time itself to pass: a deadline under test moves on a ``ManualClock``. ``timeout`` bounds a hand-off
    that normally takes milliseconds, so it is generous; a healthy test never comes near it.
    """
    __tracebackhide__ = True
    deadline = time.monotonic() + timeout
    while True:
        found = predicate()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise AssertionError(f"gave up after {timeout:g} s waiting for {what or 'the condition'}")
        time.sleep(interval)
