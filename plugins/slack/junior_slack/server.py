"""The HTTP server for the Events API: the Bolt app behind a small ASGI front on uvicorn.

The front does what must happen before a request body is trusted or parsed: it refuses a body over the limit
(413, from ``Content-Length`` or as it streams in), gives a client ``read_timeout`` seconds to send its headers and
its body (a half-sent request is dropped or answered 408), and checks Slack's signature on the raw bytes (401).
Only then does Bolt see the request, on a worker thread, so the event loop keeps accepting. Every refusal is a
short plain-text answer; no traceback reaches a client. ``GET /healthz`` answers 200 with no signature, for a load
balancer or a supervisor.

On SIGTERM or Ctrl-C the server stops accepting, answers the requests under way and returns; the turns Bolt runs
on its listener executor (a ``TurnPool``) are then given a grace period to finish (``junior slack serve``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator, MutableMapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

    from slack_bolt import App

__all__ = [
    "BACKLOG", "BODY_LIMIT", "EVENTS_PATH", "HEALTH_PATH", "READ_TIMEOUT", "SlackServer", "TurnPool", "asgi_app",
    "make_server",
]

log = logging.getLogger("junior.slack")

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
# Slack's event payloads are a few KB; a megabyte leaves room for large messages and refuses floods early.
BODY_LIMIT = 1024 * 1024
READ_TIMEOUT = 10.0
# Bursts of events arrive together; the kernel caps this at net.core.somaxconn.
BACKLOG = 2048

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
T = TypeVar("T")


class _Refused(Exception):
    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status, self.text = status, text


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", b"%d" % len(body)),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


async def _read_body(scope: Scope, receive: Receive, body_limit: int, read_timeout: float) -> bytes:
    """The whole body, or ``_Refused`` when it is over ``body_limit`` or not all sent within ``read_timeout``."""
    import asyncio

    declared = dict(scope["headers"]).get(b"content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > body_limit):
        raise _Refused(413, "request body too large") if declared.isdigit() else _Refused(400, "bad content-length")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + read_timeout
    chunks: list[bytes] = []
    size = 0
    while True:
        try:
            message = await asyncio.wait_for(receive(), max(deadline - loop.time(), 0.0))
        except TimeoutError:
            raise _Refused(408, "request body not sent in time") from None
        if message["type"] == "http.disconnect":
            raise _Refused(400, "client went away")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > body_limit:
            raise _Refused(413, "request body too large")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def asgi_app(app: App, signing_secret: str, path: str = EVENTS_PATH, *, body_limit: int = BODY_LIMIT,
             read_timeout: float = READ_TIMEOUT) -> ASGIApp:
    """``app`` as an ASGI application answering ``POST <path>``: body limit, read timeout and signature first."""
    from slack_bolt.request import BoltRequest
    from slack_sdk.signature import SignatureVerifier

    verifier = SignatureVerifier(signing_secret)

    def dispatch(body: str, query: str, headers: dict[str, list[str]]) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        bolt_headers: dict[str, str | Sequence[str]] = dict(headers)
        try:
            response = app.dispatch(BoltRequest(body=body, query=query, headers=bolt_headers))
        except Exception as exc:  # noqa: BLE001 - a signed body Bolt cannot read is the sender's fault, said plainly
            log.warning("a signed request could not be read: %s", type(exc).__name__)
            return 400, b"bad request", []
        extra = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, values in response.headers.items()
                 for v in values if k.lower() not in ("content-length", "content-type")]
        kind = (response.headers.get("content-type") or ["text/plain; charset=utf-8"])[0].encode("latin-1")
        return response.status, (response.body or "").encode(), [(b"content-type", kind), *extra]

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        import asyncio

        if scope["type"] != "http":
            return  # lifespan is off; nothing else is served
        if scope["path"] == HEALTH_PATH:
            if scope["method"] not in ("GET", "HEAD"):
                await _answer(send, 405, b"method not allowed", [(b"allow", b"GET, HEAD")])
            else:  # serving: the event loop answered; nothing of the request is read (a HEAD gets no body)
                await _answer(send, 200, b"ok\n")
            return
        oauth = getattr(app, "oauth_flow", None)
        if oauth is not None and scope["path"] in (oauth.install_path, oauth.redirect_uri_path):
            await _oauth_page(oauth, scope, send)  # a browser's GET: Bolt's OAuth flow checks its own state
            return
        if scope["path"] != path:
            await _answer(send, 404, b"not found")
            return
        if scope["method"] != "POST":
            await _answer(send, 405, b"method not allowed", [(b"allow", b"POST")])
            return
        try:
            raw = await _read_body(scope, receive, body_limit, read_timeout)
            headers: dict[str, list[str]] = {}
            for key, value in scope["headers"]:
                headers.setdefault(key.decode("latin-1").lower(), []).append(value.decode("latin-1"))
            timestamp = headers.get("x-slack-request-timestamp", [None])[0]
            signature = headers.get("x-slack-signature", [None])[0]
            try:
                valid = verifier.is_valid(body=raw, timestamp=timestamp, signature=signature)
            except ValueError:  # a timestamp that is not a number
                valid = False
            if not valid:
                raise _Refused(401, "invalid request signature")
            try:
                body = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise _Refused(400, "request body is not UTF-8") from None
        except _Refused as refused:
            await _answer(send, refused.status, refused.text.encode(), [(b"connection", b"close")])
            return
        status, content, extra = await asyncio.to_thread(dispatch, body, scope["query_string"].decode("latin-1"),
                                                         headers)
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-length", b"%d" % len(content)), *extra]})
        await send({"type": "http.response.body", "body": content})

    return application


async def _oauth_page(oauth: Any, scope: Scope, send: Send) -> None:
    """``GET`` of Bolt's install or redirect page (the OAuth install flow), answered by Bolt on a worker thread."""
    import asyncio

    from slack_bolt.request import BoltRequest

    if scope["method"] != "GET":
        await _answer(send, 405, b"method not allowed", [(b"allow", b"GET")])
        return
    headers: dict[str, str | Sequence[str]] = {}
    for key, value in scope["headers"]:
        listed = headers.setdefault(key.decode("latin-1").lower(), [])
        assert isinstance(listed, list)
        listed.append(value.decode("latin-1"))
    request = BoltRequest(body="", query=scope["query_string"].decode("latin-1"), headers=headers)
    handle = oauth.handle_installation if scope["path"] == oauth.install_path else oauth.handle_callback
    response = await asyncio.to_thread(handle, request)
    body = (response.body or "").encode()
    extra = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, values in response.headers.items()
             for v in values if k.lower() != "content-length"]
    await send({"type": "http.response.start", "status": response.status,
                "headers": [(b"content-length", b"%d" % len(body)), *extra]})
    await send({"type": "http.response.body", "body": body})


def _protocol(read_timeout: float) -> type:
    """uvicorn's HTTP/1.1 protocol, closing a connection that has not sent a request's headers in time.

    uvicorn times out idle keep-alive connections but not one still sending its first headers; without this each
    half-sent connection is held forever.
    """
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(read_timeout, self._headers_overdue)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_overdue(self) -> None:
            self._header_timer = None
            if self.cycle is None or self.cycle.response_complete:  # no request under way: none arrived in time
                self.transport.close()

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return Protocol


class TurnPool(ThreadPoolExecutor):
    """Bolt's listener executor, counting the work it has taken and not finished: ``drain`` waits for it.

    Bolt acknowledges an event, then submits its turn here before the request's answer is sent, so once the
    server has answered every request under way, every turn to finish is counted.
    """

    def __init__(self, max_workers: int = 5) -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix="junior-slack-turn")
        self._busy = 0
        self._idle = threading.Condition()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        with self._idle:
            self._busy += 1
        try:
            future = super().submit(fn, *args, **kwargs)
        except BaseException:
            self._done()
            raise
        future.add_done_callback(lambda _future: self._done())
        return future

    def _done(self) -> None:
        with self._idle:
            self._busy -= 1
            self._idle.notify_all()

    @property
    def busy(self) -> int:
        """Work taken and not finished: turns running or waiting for a worker."""
        with self._idle:
            return self._busy

    def drain(self, timeout: float, hurry: threading.Event | None = None) -> int:
        """Wait up to ``timeout`` seconds (less once ``hurry`` is set) for every turn to finish; how many did not."""
        import time

        deadline = time.monotonic() + timeout
        with self._idle:
            while self._busy and not (hurry is not None and hurry.is_set()):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._idle.wait(min(left, 0.2))
            return self._busy


class SlackServer:
    """uvicorn serving an ASGI app on a socket bound at construction (so ``server_port`` is known at once)."""

    def __init__(self, application: ASGIApp, host: str, port: int, *, read_timeout: float = READ_TIMEOUT,
                 backlog: int = BACKLOG) -> None:
        import uvicorn

        self.socket = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET,
                                           backlog=backlog)
        self.server_address = self.socket.getsockname()
        self.server_port = int(self.server_address[1])
        # On stopping, a request under way has what a client is given to send one, and a little more, to end.
        config = uvicorn.Config(application, lifespan="off", http=_protocol(read_timeout), backlog=backlog,
                                timeout_keep_alive=max(1, round(read_timeout)), log_config=None, log_level="warning",
                                access_log=False, server_header=False, ws="none",
                                timeout_graceful_shutdown=int(read_timeout * 2) + 1)
        self._server = _server_class()(config)
        self._done = threading.Event()

    @property
    def again(self) -> threading.Event:
        """Set by a second SIGINT or SIGTERM while ``serve_forever`` stops: whoever waits after it should hurry."""
        event: threading.Event = self._server.again
        return event

    @property
    def stopped_by(self) -> int | None:
        """The signal that stopped ``serve_forever`` (``signal.SIGTERM``, ``signal.SIGINT``), if one did."""
        return self._server.signals[0] if self._server.signals else None

    def serve_forever(self) -> None:
        """Serve until ``shutdown()`` or, on the main thread, SIGINT or SIGTERM; then stop accepting, answer the
        requests under way and return (the signal is not raised again: see ``stopped_by``)."""
        try:
            self._server.run(sockets=[self.socket])
        finally:
            self._done.set()

    def stop_soon(self) -> None:
        """Have ``serve_forever`` stop as a signal would (at once if it has not started yet); safe in a signal
        handler."""
        self._server.should_exit = True

    def shutdown(self, timeout: float = 30.0) -> None:
        self.stop_soon()
        self._done.wait(timeout)

    def server_close(self) -> None:
        self.socket.close()


def _server_class() -> type:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, keeping the stopping signal for the caller instead of raising it again on return:
        raised, SIGTERM's default action would end the process before the turns in flight finish."""

        def __init__(self, config: uvicorn.Config) -> None:
            super().__init__(config)
            self.signals: list[int] = []
            self.again = threading.Event()

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return

            def stop(sig: int, frame: Any) -> None:
                if self.signals:
                    self.again.set()  # uvicorn ignores a second SIGTERM; the caller cuts its grace short
                self.signals.append(sig)
                self.handle_exit(sig, frame)

            original = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

    return Server


def make_server(app: App, host: str = "127.0.0.1", port: int = 3000, path: str = EVENTS_PATH, *,
                signing_secret: str | None = None, body_limit: int = BODY_LIMIT, read_timeout: float = READ_TIMEOUT,
                backlog: int = BACKLOG) -> SlackServer:
    """A server answering ``POST <path>`` with ``app`` (port 0: a free one, see ``server.server_port``).

    ``signing_secret`` defaults to ``SLACK_SIGNING_SECRET``, as Bolt's does.
    """
    secret = signing_secret or os.environ.get("SLACK_SIGNING_SECRET", "").strip()
    if not secret:
        raise ValueError("a signing secret is needed: signing_secret= or SLACK_SIGNING_SECRET")
    application = asgi_app(app, secret, path, body_limit=body_limit, read_timeout=read_timeout)
    return SlackServer(application, host, port, read_timeout=read_timeout, backlog=backlog)
