"""How many MCP sessions each gateway token may hold: an ASGI layer in front of the SDK's streamable HTTP app.

The SDK limits sessions for all clients together, so one token could take every one and lock the owner out.
This layer counts the sessions each token opened, from what the SDK answers (the ``Mcp-Session-Id`` of a
successful opening request; a ``DELETE`` or a ``404`` ends one; a session with nothing in flight for the idle
period has been closed by the SDK too), and answers ``429`` to a request that would open one more than its
token's room.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from junior_mcp_bridge.limits import GatewayLimits

__all__ = ["SessionLimiter", "bearer_client"]

log = logging.getLogger("junior.mcp.gateway")

Scope = dict[str, Any]
ASGIApp = Callable[..., Any]
SESSION_HEADER = b"mcp-session-id"
VERSION_HEADER = b"mcp-protocol-version"


def bearer_client(headers: Iterable[tuple[bytes, bytes]], match: Callable[[str], str | None] | None,
                  owner: str) -> str | None:
    """The name of the token a request's ``Authorization: Bearer`` header carries, as the SDK reads it; every
    request is ``owner``'s when ``match`` is None (no authentication)."""
    if match is None:
        return owner
    for name, value in headers:
        if name == b"authorization":
            text = value.decode("latin-1")
            return match(text[7:]) if text.lower().startswith("bearer ") else None
    return None


def _opens_session(scope: Scope) -> bool:
    """Whether the SDK would open a session for this request: no session id, and a handshake-era protocol."""
    headers = scope.get("headers", [])
    if any(name == SESSION_HEADER for name, _ in headers):
        return False
    version = next((v.decode("latin-1") for k, v in headers if k == VERSION_HEADER), None)
    if version is None:
        return True
    try:
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
    except ImportError:  # an SDK without stateless-era routing: every such request opens one
        return True
    return version in HANDSHAKE_PROTOCOL_VERSIONS


@attrs.define
class _Session:
    client: str
    in_flight: int = 0
    idle_since: float = attrs.field(factory=time.monotonic)


class SessionLimiter:
    """ASGI middleware: at most ``owner_sessions`` for the owner, ``sessions_per_token`` for any other token and
    ``max_sessions`` for all other tokens together; unauthenticated requests pass on to the SDK's ``401``."""

    def __init__(self, app: ASGIApp, limits: GatewayLimits, client_of: Callable[[Scope], str | None],
                 owner: str) -> None:
        self.app = app
        self.limits = limits
        self.client_of = client_of
        self.owner = owner
        self._sessions: dict[str, _Session] = {}
        self._opening: Counter[str] = Counter()

    def open_sessions(self, client: str | None = None) -> int:
        """Sessions open (or being opened) for ``client``, or for every token but the owner's."""
        self._expire()
        if client is not None:
            return sum(1 for s in self._sessions.values() if s.client == client) + self._opening[client]
        return (sum(1 for s in self._sessions.values() if s.client != self.owner)
                + sum(n for c, n in self._opening.items() if c != self.owner))

    def _expire(self) -> None:
        # The SDK closes a session once nothing has been in flight for the idle period, counted from slightly
        # before this layer sees the request end, so a session is never forgotten here while the SDK keeps it.
        cutoff = time.monotonic() - self.limits.session_idle_s
        for sid in [sid for sid, s in self._sessions.items() if not s.in_flight and s.idle_since <= cutoff]:
            del self._sessions[sid]

    def _refusal(self, client: str) -> str | None:
        mine = self.open_sessions(client)
        if client == self.owner:
            if mine >= self.limits.owner_sessions:
                return f"the owner's {self.limits.owner_sessions} sessions are all open"
            return None
        if mine >= self.limits.sessions_per_token:
            return f"this token's {self.limits.sessions_per_token} sessions are all open"
        if self.open_sessions() >= self.limits.max_sessions:
            return f"the {self.limits.max_sessions} sessions of tokens other than the owner's are all open"
        return None

    def _retry_after(self, client: str) -> int:
        """Seconds until the first of ``client``'s idle sessions expires (the idle period if none is idle)."""
        now = time.monotonic()
        idle = [s.idle_since for s in self._sessions.values() if s.client == client and not s.in_flight]
        wait = min(idle) + self.limits.session_idle_s - now if idle else self.limits.session_idle_s
        return max(1, int(wait + 0.999))

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        client = self.client_of(scope)
        if client is None:  # not authenticated: the SDK answers 401 and opens nothing
            await self.app(scope, receive, send)
            return
        if _opens_session(scope):
            await self._open(client, scope, receive, send)
            return
        sid = next((v.decode("latin-1") for k, v in scope["headers"] if k == SESSION_HEADER), "")
        await self._use(sid, scope, receive, send)

    async def _open(self, client: str, scope: Scope, receive: Any, send: Any) -> None:
        problem = self._refusal(client)
        if problem is not None:
            log.warning("refused a new MCP session for token %r: %s", client, problem)
            await _too_many(send, problem, self.limits.session_idle_s, self._retry_after(client))
            return
        opened: list[str] = []

        async def watch(message: dict[str, Any]) -> None:
            if message.get("type") == "http.response.start" and message.get("status", 500) < 400:
                opened.extend(v.decode("latin-1") for k, v in message.get("headers", []) if k == SESSION_HEADER)
            await send(message)

        self._opening[client] += 1
        try:
            await self.app(scope, receive, watch)
        finally:
            self._opening[client] -= 1
            if not self._opening[client]:
                del self._opening[client]
            for sid in opened[:1]:
                self._sessions[sid] = _Session(client)

    async def _use(self, sid: str, scope: Scope, receive: Any, send: Any) -> None:
        session = self._sessions.get(sid)
        if session is None:
            await self.app(scope, receive, send)
            return
        status: list[int] = []

        async def watch(message: dict[str, Any]) -> None:
            if message.get("type") == "http.response.start":
                status.append(int(message.get("status", 500)))
            await send(message)

        session.in_flight += 1
        try:
            await self.app(scope, receive, watch)
        finally:
            session.in_flight -= 1
            session.idle_since = time.monotonic()
            ended = status and (status[0] == 404 or (scope.get("method") == "DELETE" and status[0] < 300))
            if ended and self._sessions.get(sid) is session:
                del self._sessions[sid]


async def _too_many(send: Any, problem: str, idle_s: float, retry_after: int) -> None:
    message = (f"Too many open MCP sessions: {problem}. End one (HTTP DELETE with its Mcp-Session-Id) or reuse "
               f"it; a session idle for {idle_s:g} s is closed.")
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()
    await send({"type": "http.response.start", "status": 429, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(retry_after).encode())]})
    await send({"type": "http.response.body", "body": body})
