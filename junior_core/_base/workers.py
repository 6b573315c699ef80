"""Daemon worker threads and background event loops for running handlers with timeouts.

``concurrent.futures.ThreadPoolExecutor`` joins its threads at interpreter exit,
so one handler hung past its timeout would hang the host's exit; these threads
are daemons and are simply abandoned when a call times out.

A call whose caller gave up while it still runs is *hung*. Hung calls are
counted per source (``HungCalls``) so the runtime can refuse a source that has
too many, and a pool thread running a hung call stops counting towards the
pool's size, so one source's hung handlers never starve the others.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Coroutine, Generator
from concurrent.futures import Future, InvalidStateError
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

__all__ = ["BackgroundLoop", "Call", "Closed", "DaemonPool", "Guarded", "HandlerExit", "HungCalls", "Ticket"]

log = logging.getLogger("junior.runtime")


class Closed(RuntimeError):
    """Work offered to a pool or loop of a runtime that is closed: what every refusal after ``close()`` raises."""

    def __init__(self) -> None:
        super().__init__("the runtime is closed")

_QUEUED, _RUNNING, _FINISHED, _SKIPPED = 0, 1, 2, 3


class HungCalls:
    """How many calls of each source are still running after their caller gave up on them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}

    def full(self, source: str) -> bool:
        """Whether ``source`` has as many hung calls as allowed; new calls to it are refused until one ends."""
        return self.counts.get(source, 0) >= self.limit

    def count(self, source: str) -> int:
        return self.counts.get(source, 0)


class Ticket:
    """One call's place in the hung count: ``abandon()`` when the caller gives up, ``end()`` when the call ends."""

    __slots__ = ("abandoned", "hung", "source", "state")

    def __init__(self, hung: HungCalls, source: str) -> None:
        self.hung = hung
        self.source = source
        self.state = _QUEUED
        self.abandoned = False

    def start(self) -> bool:
        """Mark the call running; False when its caller already gave up (the call is skipped)."""
        with self.hung.lock:
            if self.state == _SKIPPED:
                return False
            self.state = _RUNNING
            return True

    def abandon(self, queued_is_hung: bool = False) -> bool:
        """The caller gave up: a running call counts as hung (True); one not started yet is skipped.

        ``queued_is_hung``: a coroutine not started on its loop by the time its caller gives up waits behind
        a handler that blocks that loop; it counts as hung until the loop gets to it.
        """
        hung = self.hung
        with hung.lock:
            if self.state == _QUEUED and not queued_is_hung:
                self.state = _SKIPPED
                return False
            if self.state == _FINISHED or self.abandoned:
                return False
            self.abandoned = True
            hung.counts[self.source] = hung.counts.get(self.source, 0) + 1
            return True

    def end(self) -> bool:
        """The call is over; True when it had been counted as hung (and no longer is)."""
        hung = self.hung
        with hung.lock:
            self.state = _FINISHED
            if not self.abandoned:
                return False
            left = hung.counts[self.source] - 1
            if left:
                hung.counts[self.source] = left
            else:
                del hung.counts[self.source]
            return True


class HandlerExit(Exception):
    """A handler raised a ``BaseException`` (``SystemExit``, ``KeyboardInterrupt`` ...): a failed call, not an exit."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(f"the handler raised {type(exc).__name__}: {exc}")
        self.exc = exc


class Call:
    """One call on a pool thread; a lock stands for "done", the cheapest hand-off between two threads."""

    __slots__ = ("_done", "args", "error", "fn", "ticket", "value")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], ticket: Ticket) -> None:
        self.fn = fn
        self.args = args
        self.ticket = ticket
        self.value: Any = None
        self.error: BaseException | None = None
        self._done = threading.Lock()
        self._done.acquire()

    def run(self) -> None:
        if self.ticket.start():
            try:
                self.value = self.fn(*self.args)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, who maps it to an error code
                self.error = exc
        self._done.release()

    def result(self, timeout: float) -> Any:
        """The handler's value; raises its exception, or ``TimeoutError`` after ``timeout`` seconds."""
        if not self._done.acquire(timeout=timeout):
            raise TimeoutError
        self._done.release()
        if self.error is not None:
            raise self.error
        return self.value

    def wait(self, timeout: float) -> bool:
        """Wait at most ``timeout`` seconds for the call to end; whether it has."""
        if not self._done.acquire(timeout=timeout):
            return False
        self._done.release()
        return True

    def done(self) -> bool:
        if self._done.acquire(blocking=False):
            self._done.release()
            return True
        return False


class _FutureCall:
    __slots__ = ("args", "fn", "future", "ticket")

    def __init__(self, future: Future[Any], fn: Callable[..., Any], args: tuple[Any, ...], ticket: Ticket) -> None:
        self.future, self.fn, self.args, self.ticket = future, fn, args, ticket

    def run(self) -> None:
        if self.ticket.start() and self.future.set_running_or_notify_cancel():
            try:
                self.future.set_result(self.fn(*self.args))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, who maps it to an error code
                self.future.set_exception(exc)
        elif not self.future.done():
            self.future.cancel()


class DaemonPool:
    """Runs callables on daemon threads, starting a new one whenever none is idle (up to ``max_threads``).

    A thread whose call was abandoned (``abandon``) leaves the count until the call ends, so ``max_threads``
    bounds the threads doing live work; hung ones are bounded per source by the caller through ``HungCalls``.
    """

    def __init__(self, hung: HungCalls, name: str = "junior-tool", max_threads: int = 64) -> None:
        self.hung = hung
        self._tasks: queue.SimpleQueue[Call | _FutureCall | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._threads = 0
        self._started = 0
        self._name = name
        self._max = max_threads
        self._closed = False

    def call(self, source: str, fn: Callable[..., Any], *args: Any) -> Call:
        """Start ``fn(*args)`` for ``source``; wait with ``.result(timeout)``, give up with ``abandon``."""
        task = Call(fn, args, Ticket(self.hung, source))
        self._put(task)
        return task

    def submit(self, source: str, fn: Callable[..., Any], *args: Any) -> tuple[Future[Any], Ticket]:
        """Start ``fn(*args)`` with a ``concurrent.futures.Future``, for ``asyncio.wrap_future``."""
        future: Future[Any] = Future()
        ticket = Ticket(self.hung, source)
        self._put(_FutureCall(future, fn, args, ticket))
        return future, ticket

    def abandon(self, ticket: Ticket) -> None:
        """The caller gave up on this call; a running one frees its place in the pool for live work."""
        if ticket.abandon():
            with self._lock:
                self._threads -= 1

    def _put(self, task: Call | _FutureCall) -> None:
        with self._lock:
            if self._closed:
                raise Closed
            if self._idle > 0:
                self._idle -= 1
            elif self._threads < self._max:
                self._threads += 1
                self._started += 1
                threading.Thread(target=self._work, name=f"{self._name}-{self._started}", daemon=True).start()
            # else: every thread is busy with live work; the call waits its turn and its own timeout applies.
        self._tasks.put(task)

    def _work(self) -> None:
        while True:
            task = self._tasks.get()
            if task is None:
                return
            task.run()
            was_hung = task.ticket.end()
            with self._lock:
                if self._closed:
                    return  # no work and no stop signal will come for a thread that goes idle now
                if was_hung:
                    if self._closed or self._threads >= self._max:
                        return  # replaced while it hung; the pool is full without it
                    self._threads += 1
                self._idle += 1

    def close(self) -> None:
        with self._lock:
            self._closed = True
            count = self._idle
            self._idle = 0
        for _ in range(count):
            self._tasks.put(None)


class Guarded:
    """Awaits a handler's coroutine step by step, so the loop running it stays sound whatever the handler does.

    A step that holds the loop longer than ``slow_s`` (a blocking call inside ``async def``) is logged naming
    the tool; a ``BaseException`` other than cancellation becomes ``HandlerExit``, because asyncio re-raises
    ``SystemExit`` and ``KeyboardInterrupt`` out of the loop itself.
    """

    __slots__ = ("coro", "slow_s", "tool_name")

    def __init__(self, coro: Coroutine[Any, Any, Any], tool_name: str, slow_s: float) -> None:
        self.coro, self.tool_name, self.slow_s = coro, tool_name, slow_s

    def __await__(self) -> Generator[Any, Any, Any]:
        import asyncio  # already loaded: this runs on an event loop

        coro = self.coro
        send: Any = None
        thrown: BaseException | None = None
        while True:
            began = time.perf_counter()
            try:
                yielded = coro.send(send) if thrown is None else coro.throw(thrown)
            except StopIteration as stop:
                return stop.value
            except (Exception, asyncio.CancelledError, GeneratorExit):
                raise
            except BaseException as exc:  # SystemExit and friends, raised by the handler
                raise HandlerExit(exc) from exc
            finally:
                took = time.perf_counter() - began
                if took > self.slow_s:
                    log.warning(
                        "async handler of %s held its event loop for %.2f s in one step; it blocks (e.g. "
                        "time.sleep or blocking I/O inside async def): await instead, or make it a sync handler",
                        self.tool_name,
                        took,
                    )
            try:
                send, thrown = (yield yielded), None
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # noqa: BLE001 - cancellation and the like, passed to the handler
                send, thrown = None, exc

    async def run(self) -> Any:
        """This as a coroutine, for ``create_task``."""
        return await self


class BackgroundLoop:
    """An event loop on a daemon thread, for running coroutines from any thread."""

    def __init__(self, name: str = "junior-loop") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise Closed
            if self._loop is None:
                # Imported on first use: hook calls share this module, and `junior --help` needs no asyncio.
                import asyncio

                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()
                    # Stopped by close(): cancel what is left, so handler tasks settle (their hung-call tickets
                    # end), then release the loop's selector and file descriptors.
                    try:
                        pending = asyncio.all_tasks(loop)
                        for task in pending:
                            task.cancel()
                        if pending:
                            loop.run_until_complete(asyncio.wait(pending, timeout=1.0))
                    finally:
                        loop.close()

                threading.Thread(target=run, name=self._name, daemon=True).start()
                ready.wait()
                self._loop = loop
            return self._loop

    def submit(self, work: Guarded, ticket: Ticket) -> Future[Any]:
        """Run ``work`` on the loop; cancelling the future cancels it, and ``ticket`` ends when its task does.

        Unlike ``run_coroutine_threadsafe``, the end is known even for work cancelled before its first step
        (its loop was blocked), which the hung count needs.
        """
        try:
            loop = self.loop
        except Closed:
            work.coro.close()  # never scheduled: close it rather than warn that it was never awaited
            raise
        future: Future[Any] = Future()

        def settle(task: asyncio.Task[Any]) -> None:
            work.coro.close()  # a no-op once it ran; quiets the warning for one cancelled before its first step
            ticket.end()
            try:
                if task.cancelled():
                    future.cancel()
                elif task.exception() is not None:
                    future.set_exception(task.exception())
                else:
                    future.set_result(task.result())
            except InvalidStateError:  # the caller cancelled it meanwhile
                pass

        def start() -> None:
            if future.cancelled():
                work.coro.close()
                ticket.end()
                return
            ticket.start()
            task = loop.create_task(work.run())
            task.add_done_callback(settle)
            future.add_done_callback(lambda f: f.cancelled() and loop.call_soon_threadsafe(task.cancel))

        loop.call_soon_threadsafe(start)
        return future

    def close(self) -> None:
        with self._lock:
            self._closed = True
            loop, self._loop = self._loop, None
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
