"""Daemon worker threads and a background event loop for running handlers with timeouts.

``concurrent.futures.ThreadPoolExecutor`` joins its threads at interpreter exit,
so one handler hung past its timeout would hang the host's exit; these threads
are daemons and are simply abandoned when a call times out.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any

__all__ = ["BackgroundLoop", "Call", "DaemonPool"]


class Call:
    """One call on a pool thread; a lock stands for "done", the cheapest hand-off between two threads."""

    __slots__ = ("_done", "args", "cancelled", "error", "fn", "value")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn = fn
        self.args = args
        self.value: Any = None
        self.error: BaseException | None = None
        self.cancelled = False
        self._done = threading.Lock()
        self._done.acquire()

    def run(self) -> None:
        if not self.cancelled:
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

    def done(self) -> bool:
        if self._done.acquire(blocking=False):
            self._done.release()
            return True
        return False

    def cancel(self) -> None:
        """Skip the call if it has not started (a hung one cannot be stopped; its thread is abandoned)."""
        self.cancelled = True


class _FutureCall:
    __slots__ = ("args", "fn", "future")

    def __init__(self, future: Future[Any], fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.future, self.fn, self.args = future, fn, args

    def run(self) -> None:
        if self.future.set_running_or_notify_cancel():
            try:
                self.future.set_result(self.fn(*self.args))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, who maps it to an error code
                self.future.set_exception(exc)


class DaemonPool:
    """Runs callables on daemon threads, starting a new one whenever none is idle (up to ``max_threads``)."""

    def __init__(self, name: str = "junior-tool", max_threads: int = 64) -> None:
        self._tasks: queue.SimpleQueue[Call | _FutureCall | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._threads = 0
        self._name = name
        self._max = max_threads
        self._closed = False

    def call(self, fn: Callable[..., Any], *args: Any) -> Call:
        """Start ``fn(*args)``; wait with ``.result(timeout)``."""
        task = Call(fn, args)
        self._put(task)
        return task

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        """Start ``fn(*args)`` with a ``concurrent.futures.Future``, for ``asyncio.wrap_future``."""
        future: Future[Any] = Future()
        self._put(_FutureCall(future, fn, args))
        return future

    def _put(self, task: Call | _FutureCall) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("the runtime is closed")
            if self._idle > 0:
                self._idle -= 1
            elif self._threads < self._max:
                self._threads += 1
                threading.Thread(target=self._work, name=f"{self._name}-{self._threads}", daemon=True).start()
            # else: every thread is busy (some perhaps hung past their timeout); the call waits its turn and
            # its own timeout still applies, so hung handlers cannot grow threads without bound.
        self._tasks.put(task)

    def _work(self) -> None:
        while True:
            task = self._tasks.get()
            if task is None:
                return
            task.run()
            with self._lock:
                self._idle += 1

    def close(self) -> None:
        with self._lock:
            self._closed = True
            count = self._idle
            self._idle = 0
        for _ in range(count):
            self._tasks.put(None)


class BackgroundLoop:
    """An event loop on a daemon thread, for running async handlers from synchronous code."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise RuntimeError("the runtime is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                threading.Thread(target=run, name="junior-loop", daemon=True).start()
                ready.wait()
                self._loop = loop
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, Any]) -> Future[Any]:
        try:
            return asyncio.run_coroutine_threadsafe(coro, self.loop)
        except RuntimeError:
            coro.close()  # never scheduled: close it rather than warn that it was never awaited
            raise

    def close(self) -> None:
        with self._lock:
            self._closed = True
            loop, self._loop = self._loop, None
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
