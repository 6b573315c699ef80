"""The HTTP server for the Events API: the Bolt app behind a small ASGI front on uvicorn.

The front does what must happen before a request body is trusted or parsed: it refuses a body over the limit
(413, from ``Content-Length`` or as it streams in), gives a client ``read_timeout`` seconds to send its headers and
its body (a half-sent request is dropped or answered 408), and checks Slack's signature on the raw bytes (401).
Only then does Bolt see the request, on a worker thread, so the event loop keeps accepting. Every refusal is a
short plain-text answer; no traceback reaches a client. ``GET /healthz`` answers 200 with no signature, for a load
balancer or a supervisor.

Open connections are capped (``max_connections``, by default sized from the process's open-file limit): a new
connection past the cap closes the one that has waited longest for a complete request, idle keep-alive and
half-sent ones first, and one that has delivered a signed request (Slack's) only when no other is left; a request
being answered is never closed. So connections held open by anyone cannot keep Slack's deliveries out, and the
process never runs out of file descriptors to accept them. What clients can make the server say (refusals and
closed connections at WARNING, failed accepts at ERROR) is logged at a bounded rate, and a run of requests that all
fail their signature check is said once, naming ``SLACK_SIGNING_SECRET``.

On SIGTERM or Ctrl-C the server stops accepting, answers the requests under way and returns; the turns Bolt runs
on its listener executor (a ``TurnPool``) are then given a grace period to finish (``junior slack serve``).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

    from slack_bolt import App

__all__ = [
    "BACKLOG", "BODY_LIMIT", "CONNECTIONS_CEILING", "EVENTS_PATH", "FD_RESERVE", "HEALTH_PATH", "READ_TIMEOUT",
    "SIGNATURE_RUN", "LogLimit", "SlackServer", "TurnPool", "asgi_app", "connection_cap", "make_server",
]

log = logging.getLogger("junior.slack")

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
# Slack's event payloads are a few KB; a megabyte leaves room for large messages and refuses floods early.
BODY_LIMIT = 1024 * 1024
READ_TIMEOUT = 10.0
# Bursts of events arrive together; the kernel caps this at net.core.somaxconn.
BACKLOG = 2048
# Connections taken from the kernel's queue at a time: each needs a file descriptor before the cap can close an
# older one, so these must fit in what FD_RESERVE leaves.
ACCEPT_BATCH = 16
# File descriptors kept, beyond those open when the server starts, for what turns open (connections to Slack's
# Web API and the model, bridged servers' pipes, database files) and the connections accepted in one batch.
FD_RESERVE = 64
# The default cap when the open-file limit allows more: far more than Slack's deliveries need at once.
CONNECTIONS_CEILING = 4096
# Requests in a row carrying Slack's signature headers that all fail the check: the signing secret is wrong.
SIGNATURE_RUN = 5
# Slack refuses a request whose timestamp is further than this from its clock; Slack's SignatureVerifier does too.
SIGNATURE_AGE_S = 300
SIGNED = "junior_slack.signed"  # set in a request's scope once its signature is checked: Slack's connection

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
T = TypeVar("T")


class LogLimit:
    """Log lines of each kind at a bounded rate: ``burst`` at once, then one every ``interval`` seconds; the next
    line let through says how many of its kind were held back. ``clock`` is monotonic seconds (inject one in
    tests)."""

    def __init__(self, logger: logging.Logger, *, burst: int = 5, interval: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.logger, self.burst, self.interval, self.clock = logger, burst, interval, clock
        self._lock = threading.Lock()
        self._kinds: dict[str, list[float]] = {}  # kind -> [tokens, last refill, held back]

    def take(self, kind: str) -> int | None:
        """None when ``kind`` is over its rate (the line is held back); else how many were held back before it."""
        now = self.clock()
        with self._lock:
            bucket = self._kinds.setdefault(kind, [float(self.burst), now, 0.0])
            bucket[0] = min(float(self.burst), bucket[0] + (now - bucket[1]) / self.interval)
            bucket[1] = now
            if bucket[0] < 1.0:
                bucket[2] += 1
                return None
            bucket[0] -= 1.0
            held, bucket[2] = int(bucket[2]), 0.0
            return held

    def log(self, level: int, kind: str, message: str, *args: object) -> bool:
        """Log ``message % args`` at ``level`` unless ``kind`` is over its rate; whether it was logged."""
        held = self.take(kind)
        if held is None:
            return False
        self.logger.log(level, "%s", _held(message % args if args else message, held))
        return True

    def warning(self, kind: str, message: str, *args: object) -> bool:
        return self.log(logging.WARNING, kind, message, *args)


def _held(text: str, held: int) -> str:
    return f"{text} (and {held} more like this since, not logged)" if held else text


class _Bounded(logging.Filter):
    """A logger's lines through a ``LogLimit``, one kind per place in the code that logs."""

    def __init__(self, limit: LogLimit) -> None:
        super().__init__()
        self.limit = limit

    def filter(self, record: logging.LogRecord) -> bool:
        held = self.limit.take(f"{record.pathname}:{record.lineno}")
        if held:
            record.msg, record.args = _held(record.getMessage(), held), None
        return held is not None


# An accept() that fails for want of these is retried by asyncio a second later, and logged with a traceback each
# time, for every connection queued: thousands of lines a second.
_OUT_OF = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


def _loop_errors(accepts: LogLimit, others: LogLimit) -> Callable[[asyncio.AbstractEventLoop, dict[str, Any]], None]:
    """An event loop exception handler: a failed accept() in one line per interval, other errors at a bounded
    rate (as asyncio would log them)."""

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in _OUT_OF and "accept" in str(context.get("message", "")):
            accepts.log(logging.ERROR, "accept", "cannot accept connections: %s; asyncio retries each second (the "
                        "open-file limit, `ulimit -n`, is too low for --max-connections and what turns open)",
                        exc.strerror or exc)
            return
        held = others.take(str(context.get("message")))
        if held is not None:
            loop.default_exception_handler({**context, "message": _held(str(context.get("message")), held)})

    return handle


def _open_files() -> int:
    """File descriptors this process has open (0 where the system does not list them)."""
    for listing in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return max(len(os.listdir(listing)) - 1, 0)  # less the one listing them
    return 0


def connection_cap(requested: int | None = None) -> tuple[int, str | None]:
    """The most connections to hold open, and why it is lower than ``requested`` (None when it is not).

    What fits the open-file limit (``RLIMIT_NOFILE``'s soft limit, ``ulimit -n``) once the files open now and
    ``FD_RESERVE`` are set aside; by default that, at most ``CONNECTIONS_CEILING``.
    """
    try:
        import resource
    except ImportError:  # not POSIX: no limit to read
        return (requested or CONNECTIONS_CEILING), None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return (requested or CONNECTIONS_CEILING), None
    fits = max(1, soft - _open_files() - FD_RESERVE)
    if requested is None:
        return min(fits, CONNECTIONS_CEILING), None
    if requested <= fits:
        return requested, None
    return fits, (f"{requested} connections do not fit the open-file limit ({soft}, `ulimit -n`; {_open_files()} "
                  f"open now and {FD_RESERVE} kept for turns): at most {fits}")


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
             read_timeout: float = READ_TIMEOUT, clock: Callable[[], float] = time.monotonic) -> ASGIApp:
    """``app`` as an ASGI application answering ``POST <path>``: body limit, read timeout and signature first.

    Each refusal is logged at WARNING, at most a few lines a minute for each reason (``LogLimit`` on ``clock``);
    ``SIGNATURE_RUN`` requests in a row that carry Slack's signature headers and fail the check are said once, at
    ERROR, naming ``SLACK_SIGNING_SECRET``. A request whose signature is valid marks its scope (``SIGNED``).
    """
    from slack_bolt.request import BoltRequest
    from slack_sdk.signature import SignatureVerifier

    verifier = SignatureVerifier(signing_secret)
    refusals = LogLimit(log, clock=clock)
    # Requests signed as Slack signs them failing the check in a row (with a fresh timestamp, or a stale one), and
    # whether that was said.
    run = {"failed": 0, "said": 0, "stale": 0, "said_stale": 0}

    def refused(scope: Scope, status: int, text: str) -> None:
        client = scope.get("client")
        refusals.warning(f"{status} {text}", "refused %s %s from %s: %s (%d)", scope["method"], scope["path"],
                         client[0] if client else "-", text, status)

    def check(raw: bytes, timestamp: str | None, signature: str | None) -> None:
        """``_Refused`` (401) unless Slack's signature headers are there, fresh and match ``raw``."""
        if timestamp is None or signature is None:
            raise _Refused(401, "invalid request signature (no X-Slack-Signature and X-Slack-Request-Timestamp)")
        try:
            age = abs(verifier.clock.now() - int(timestamp))
            valid = verifier.is_valid(body=raw, timestamp=timestamp, signature=signature)
        except ValueError:  # a timestamp that is not a number, a body that is not UTF-8
            raise _Refused(401, "invalid request signature") from None
        if valid:
            run.update(failed=0, said=0, stale=0, said_stale=0)
            return
        if age > SIGNATURE_AGE_S:
            run["stale"] += 1
            if run["stale"] >= SIGNATURE_RUN and not run["said_stale"]:
                run["said_stale"] = 1
                log.error("the last %d requests signed as Slack signs them all had a timestamp more than 5 minutes "
                          "from this machine's clock, and none passed: check the clock (NTP); until it is right, "
                          "every event is refused with 401", run["stale"])
            raise _Refused(401, "invalid request signature (its timestamp is more than 5 minutes from this "
                                "machine's clock)")
        run["failed"] += 1
        if run["failed"] >= SIGNATURE_RUN and not run["said"]:
            run["said"] = 1
            log.error("the last %d requests signed as Slack signs them all failed the signature check, and none "
                      "passed: check SLACK_SIGNING_SECRET (the Signing Secret on the app's Basic Information "
                      "page); until it matches, every event is refused with 401", run["failed"])
        raise _Refused(401, "invalid request signature")

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
            refused(scope, 404, "not found")
            await _answer(send, 404, b"not found")
            return
        if scope["method"] != "POST":
            refused(scope, 405, "method not allowed")
            await _answer(send, 405, b"method not allowed", [(b"allow", b"POST")])
            return
        try:
            raw = await _read_body(scope, receive, body_limit, read_timeout)
            headers: dict[str, list[str]] = {}
            for key, value in scope["headers"]:
                headers.setdefault(key.decode("latin-1").lower(), []).append(value.decode("latin-1"))
            check(raw, headers.get("x-slack-request-timestamp", [None])[0],
                  headers.get("x-slack-signature", [None])[0])
            scope[SIGNED] = True
            try:
                body = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise _Refused(400, "request body is not UTF-8") from None
        except _Refused as refusal:
            refused(scope, refusal.status, str(refusal.text))
            # The client is told only what it did wrong, not the details operators read.
            await _answer(send, refusal.status, refusal.text.split(" (", 1)[0].encode(), [(b"connection", b"close")])
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


def _protocol(read_timeout: float, cap: int, say: LogLimit) -> type:
    """uvicorn's HTTP/1.1 protocol, closing a connection that has not sent a request's headers in time, and holding
    at most ``cap`` connections open.

    uvicorn times out idle keep-alive connections but not one still sending its first headers; without this each
    half-sent connection is held forever. Past the cap, a new connection closes the one waiting longest for a
    complete request (since it opened or was last answered, whatever it sent meanwhile): idle and half-sent ones
    first, one that has delivered a signed request only when no other is left, one whose request is being answered
    never. A new connection finding every other one busy is closed itself.
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    queue: dict[Protocol, None] = {}  # the connections open, the one waiting longest for a request first

    class Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None
        _since = 0.0  # when it began waiting for the request it is sending: opened, or last answered
        _signed = False  # it has delivered a request with a valid signature: Slack's

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
                if self.conn.trailing_data[0] or self.cycle is None:  # not a keep-alive left idle (uvicorn's)
                    say.warning("408", "closed a connection that sent no complete request headers within %g s (408)",
                                read_timeout)
                self.transport.close()

        def _waiting(self) -> bool:
            """Waiting for a complete request: idle, or sending its headers or its body."""
            if self.cycle is None or self.cycle.response_complete:
                return True
            return self.conn.their_state is h11.SEND_BODY and not self.cycle.response_started

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._since = self.loop.time()
            queue[self] = None
            self._arm()
            self._make_room()

        def on_response_complete(self) -> None:
            self._signed = self._signed or bool(self.scope and self.scope.get(SIGNED))
            self._since = self.loop.time()
            queue.pop(self, None)
            queue[self] = None  # waiting again: the newest
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            queue.pop(self, None)
            self._disarm()
            super().connection_lost(exc)

        def _make_room(self) -> None:
            """Past the cap, close the connections that have waited longest for a request, Slack's last.

            ``queue`` is in the order they began waiting, so those to close are found from its start: in a flood
            of connections, among the first few looked at.
            """
            excess = len(queue) - cap
            if excess <= 0:
                return
            victims: list[Protocol] = []
            slacks: list[Protocol] = []
            for p in queue:
                if len(victims) >= excess:
                    break
                if p.transport.is_closing():
                    excess -= 1  # already leaving: its place is free within a turn of the loop
                elif p is not self and p._waiting():
                    (slacks if p._signed else victims).append(p)
            victims += slacks[:max(excess - len(victims), 0)]
            now = self.loop.time()
            for victim in victims:
                say.warning("cap", "%d connections open, the most allowed (--max-connections): closed the one "
                            "waiting longest for a request (%s, %.0f s) to let a new one in", cap,
                            "Slack's" if victim._signed else "idle" if victim._idle() else "half-sent",
                            now - victim._since)
                queue.pop(victim, None)
                victim.transport.abort()
            if len(victims) < excess:
                say.warning("full", "%d connections open, the most allowed (--max-connections), every one of them "
                            "with a request under way: closed a new one", cap)
                queue.pop(self, None)
                self.transport.abort()

        def _idle(self) -> bool:
            return (self.cycle is None or self.cycle.response_complete) and not self.conn.trailing_data[0]

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
                 backlog: int = BACKLOG, max_connections: int | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        import uvicorn

        self.socket = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET,
                                           backlog=backlog)
        self.server_address = self.socket.getsockname()
        self.server_port = int(self.server_address[1])
        self.max_connections, self.lowered = connection_cap(max_connections)
        """The most connections held open; ``lowered`` says why it is less than asked, when it is."""
        say = LogLimit(log, clock=clock)
        # On stopping, a request under way has what a client is given to send one, and a little more, to end.
        # asyncio's own loop (not uvloop) is named: its failed accepts are the ones _loop_errors bounds. Its accept
        # batch is uvicorn's backlog; the kernel's queue is set back to ``backlog`` once serving (Server.startup).
        config = uvicorn.Config(application, lifespan="off", http=_protocol(read_timeout, self.max_connections, say),
                                backlog=min(backlog, ACCEPT_BATCH), loop="asyncio",
                                timeout_keep_alive=max(1, round(read_timeout)), log_config=None, log_level="warning",
                                access_log=False, server_header=False, ws="none",
                                timeout_graceful_shutdown=int(read_timeout * 2) + 1)
        self._server = _server_class()(config, backlog, _loop_errors(LogLimit(log, burst=1, clock=clock),
                                                                      LogLimit(logging.getLogger("asyncio"),
                                                                               clock=clock)))
        self._bounded = _Bounded(LogLimit(log, clock=clock))
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
        uvicorn_log = logging.getLogger("uvicorn.error")  # a line for each malformed request, each client's
        uvicorn_log.addFilter(self._bounded)
        try:
            self._server.run(sockets=[self.socket])
        finally:
            uvicorn_log.removeFilter(self._bounded)
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

        def __init__(self, config: uvicorn.Config, backlog: int,
                     on_error: Callable[[asyncio.AbstractEventLoop, dict[str, Any]], None]) -> None:
            super().__init__(config)
            self.signals: list[int] = []
            self.again = threading.Event()
            self.backlog, self.on_error = backlog, on_error

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            import asyncio

            asyncio.get_running_loop().set_exception_handler(self.on_error)
            await super().startup(sockets)
            for sock in sockets or []:  # asyncio listened with the accept batch: the kernel queues more
                sock.listen(self.backlog)

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
                backlog: int = BACKLOG, max_connections: int | None = None,
                clock: Callable[[], float] = time.monotonic) -> SlackServer:
    """A server answering ``POST <path>`` with ``app`` (port 0: a free one, see ``server.server_port``).

    ``signing_secret`` defaults to ``SLACK_SIGNING_SECRET``, as Bolt's does; ``max_connections`` to what the
    open-file limit allows (``connection_cap``); ``clock`` paces the log's rate limits.
    """
    secret = signing_secret or os.environ.get("SLACK_SIGNING_SECRET", "").strip()
    if not secret:
        raise ValueError("a signing secret is needed: signing_secret= or SLACK_SIGNING_SECRET")
    application = asgi_app(app, secret, path, body_limit=body_limit, read_timeout=read_timeout, clock=clock)
    return SlackServer(application, host, port, read_timeout=read_timeout, backlog=backlog,
                       max_connections=max_connections, clock=clock)
