"""Running a ``Prepared`` call: its handler on a worker thread (sync) or its source's event loop (async), under
its time limit and its source's hung-call limit, and the model-facing answer of how it went.

``run`` and ``arun`` differ only in how they wait (a blocking wait, or an await that never blocks the caller's
loop); starting a call and reading how it ended are shared.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import TYPE_CHECKING, Any

from junior_core import _protocol as protocol
from junior_core._base.errors import ToolError
from junior_core._base.workers import BackgroundLoop, Call, Closed, DaemonPool, Guarded, HandlerExit, HungCalls, Ticket
from junior_core.clock import MONOTONIC, Clock
from junior_core.text import clean_json, is_clean_json_text

if TYPE_CHECKING:
    from junior_core._calls.dispatch import Prepared
    from junior_core._catalog.catalog import CatalogTool

__all__ = ["SLOW_STEP_S", "Execution"]

log = logging.getLogger("junior.runtime")
SLOW_STEP_S = 0.5
"""An async handler that holds its event loop this long in one step is logged as blocking."""


class _Started:
    """A call under way: what to wait on, and its place in the hung-call count."""

    __slots__ = ("future", "step", "ticket")

    def __init__(self, step: Prepared, future: Call | Future[Any], ticket: Ticket) -> None:
        self.step, self.future, self.ticket = step, future, ticket


def _ended_within(future: Call | Future[Any]) -> Callable[[float], bool]:
    """``future``'s wait for the clock: at most the seconds given, whether the call ended."""
    if isinstance(future, Call):
        return future.wait
    return lambda seconds: bool(wait((future,), seconds).done)


class Execution:
    """Runs prepared calls; one per runtime, closed with it."""

    def __init__(self, max_hung_per_source: int, max_result_chars: int, clock: Clock | None = None) -> None:
        self.max_result_chars = max_result_chars
        self.clock: Clock = clock or MONOTONIC
        self._hung = HungCalls(max_hung_per_source)
        self._pool = DaemonPool(self._hung)
        self._loops: dict[str, BackgroundLoop] = {}
        self._lock = threading.Lock()
        self._closed = False

    def run(self, step: Prepared) -> dict[str, Any]:
        """Run ``step`` and wait for it here; the answer the model receives."""
        until = self.clock.now() + step.timeout  # fixed before the call starts, so nothing it does can come first
        started = self._start(step, future=False)
        if isinstance(started, dict):
            return started
        try:
            if not self.clock.wait(_ended_within(started.future), until):
                raise TimeoutError
            value = started.future.result(0)
        except BaseException as exc:
            answer = self._ended(started, exc)
            if answer is None:
                raise  # the host itself was interrupted (Ctrl-C) while waiting, not the handler
            return answer
        return self._success(step.entry, value)

    async def arun(self, step: Prepared) -> dict[str, Any]:
        """Run ``step`` and await it, never blocking the caller's event loop; the answer the model receives."""
        import asyncio

        until = self.clock.now() + step.timeout
        started = self._start(step, future=True)
        if isinstance(started, dict):
            return started
        assert isinstance(started.future, Future)
        waited = asyncio.wrap_future(started.future)
        try:
            if not await self.clock.wait_async(waited, until):
                waited.cancel()
                raise TimeoutError
            value = waited.result()
        except asyncio.CancelledError:
            self._abandon(started)
            raise
        except BaseException as exc:  # the handler's, even SystemExit: a failed call must not end an MCP server
            answer = self._ended(started, exc)
            if answer is None:
                raise  # the caller's own thread was interrupted, not the handler
            return answer
        return self._success(step.entry, value)

    def _start(self, step: Prepared, *, future: bool) -> _Started | dict[str, Any]:
        """Start the handler (``future``: with a ``concurrent.futures.Future`` to await); or the answer instead."""
        entry, args, ctx = step.entry, step.arguments, step.context
        if self._closed:
            return protocol.runtime_closed(entry.tool_name)
        if self._hung.full(entry.source_id):
            count = self._hung.count(entry.source_id)
            log.warning("source %s has %d hung calls; refusing %s", entry.source_id, count, entry.tool_name)
            return protocol.source_busy(entry.tool_name, entry.source_id, count)
        try:
            if entry.tool.is_async:
                ticket = Ticket(self._hung, entry.source_id)
                work = Guarded(entry.tool.handler(args, ctx), entry.tool_name, SLOW_STEP_S)
                return _Started(step, self._loop(entry.source_id).submit(work, ticket), ticket)
            if future:
                submitted, ticket = self._pool.submit(entry.source_id, entry.tool.handler, args, ctx)
                return _Started(step, submitted, ticket)
            call = self._pool.call(entry.source_id, entry.tool.handler, args, ctx)
            return _Started(step, call, call.ticket)
        except Closed:  # closed while this call was being prepared
            return protocol.runtime_closed(entry.tool_name)
        except Exception as exc:  # noqa: BLE001 - an async handler that raised before returning its coroutine
            return self._failure(entry, exc)

    def _ended(self, started: _Started, exc: BaseException) -> dict[str, Any] | None:
        """The answer to a wait that raised ``exc``: a timeout or the handler's failure; None to re-raise."""
        entry = started.step.entry
        if isinstance(exc, TimeoutError):
            self._abandon(started)
            log.warning("tool %s timed out after %.3g s", entry.tool_name, started.step.timeout)
            return protocol.timed_out(entry.tool_name, started.step.timeout)
        if not started.future.done():
            return None
        return self._failure(entry, exc)

    def _abandon(self, started: _Started) -> None:
        """Give up on a call: cancel what can be, count what still runs as hung (a blocked loop's queue too)."""
        if isinstance(started.future, Future):
            started.future.cancel()
        if started.step.entry.tool.is_async:
            started.ticket.abandon(queued_is_hung=True)
        else:
            self._pool.abandon(started.ticket)

    def _loop(self, source_id: str) -> BackgroundLoop:
        """The loop running ``source_id``'s async handlers: one per source, so a blocking one stalls only its own."""
        loop = self._loops.get(source_id)
        if loop is None:
            with self._lock:
                if self._closed:
                    raise Closed
                loop = self._loops.setdefault(source_id, BackgroundLoop(f"junior-loop-{source_id}"))
        return loop

    def _success(self, entry: CatalogTool, value: Any) -> dict[str, Any]:
        try:
            text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            log.error("tool %s returned a value that is not JSON-serialisable: %r", entry.tool_name, type(value))
            return protocol.not_json(entry.tool_name)
        if not is_clean_json_text(text):
            # What a tool returns may quote a web page or a server's output: escapes, bidi and zero-width
            # characters go before the model or a terminal sees them.
            value = clean_json(value)
            text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        limit = self.max_result_chars
        if len(text) > limit:
            log.warning("tool %s returned %d characters of JSON; the model gets the first %d", entry.tool_name,
                        len(text), limit)
            return protocol.truncated(entry.tool_name, text, limit)
        return protocol.result(entry.tool_name, value)

    def _failure(self, entry: CatalogTool, exc: BaseException) -> dict[str, Any]:
        if isinstance(exc, HandlerExit):
            exc = exc.exc
        if isinstance(exc, ToolError):
            answer, dropped = protocol.tool_error(entry.tool_name, exc)
            if dropped:
                log.error("ToolError details from %s are not JSON-serialisable; dropped", entry.tool_name)
            return dict(clean_json(answer))  # a message may quote a server's own words
        log.error("tool %s (plugin %r) failed", entry.tool_name, entry.plugin, exc_info=exc)
        return protocol.tool_failed(entry.tool_name)

    @property
    def closed(self) -> bool:
        """Whether calls are refused: the runtime's one closed state (``Runtime.closed`` reads it)."""
        return self._closed

    def closing(self) -> bool:
        """Refuse calls from now on (the runtime is shutting down); those running go on. Whether this call
        closed it (False: closed already)."""
        with self._lock:
            first, self._closed = not self._closed, True
        return first

    def close(self) -> None:
        """Refuse calls, let the idle worker threads go and stop the handler loops."""
        self.closing()
        self._pool.close()
        for loop in list(self._loops.values()):
            loop.close()
