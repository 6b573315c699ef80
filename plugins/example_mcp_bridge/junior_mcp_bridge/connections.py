"""The gateway's HTTP connections: uvicorn's h11 protocol with read timeouts and a cap on open connections.

uvicorn only times out a connection that is idle after an answer, and any byte it receives stops that timer,
so a client sending its headers a byte at a time holds a connection (and a file descriptor) for good; enough
of them and nobody else can connect. Here a connection must finish each request's headers within
``header_timeout_s`` and its body within ``body_timeout_s``. Past ``max_connections``, once the gateway has
read from the new connection, the connection that has waited longest for a complete request is closed, judged on
what it has sent: the owner's (any whose latest request carried the token of ``junior mcp token``) are never
closed, nor one not yet read from, which may be the owner's next request. So a client of the owner's that opens
a new connection for each request keeps being served while others open and drop connections as fast as they can.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

from junior_mcp_bridge.limits import GatewayLimits

__all__ = ["FD_RESERVE", "connection_cap", "protocol_class"]

log = logging.getLogger("junior.mcp.gateway")

# File descriptors kept for everything but client connections: bridged servers' pipes, databases, the index.
FD_RESERVE = 64
_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


def connection_cap(limits: GatewayLimits) -> int:
    """``max_connections``, lowered so that it fits the process's open-file limit with ``FD_RESERVE`` to spare."""
    try:
        import resource
    except ImportError:  # not POSIX
        return limits.max_connections
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return limits.max_connections
    return max(1, min(limits.max_connections, soft - FD_RESERVE))


def protocol_class(limits: GatewayLimits, client_of: Callable[[Iterable[tuple[bytes, bytes]]], str | None],
                   owner: str) -> type[asyncio.Protocol]:
    """A uvicorn HTTP protocol class (``uvicorn.Config(http=...)``) bounded by ``limits``; ``client_of`` names
    the token of a request's headers, so that the owner's requests are never the ones dropped."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    cap = connection_cap(limits)

    class BoundedH11Protocol(H11Protocol):
        max_connections = cap

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._seen: tuple[Any, Any] | None = None
            self._timer: asyncio.TimerHandle | None = None
            self._client: str | None = None  # the token of this connection's latest request
            self._waiting_since = 0.0  # when the request being read began: the connection opened, or last answered
            self._unread = True  # not yet read from: nothing is known of it, the owner's next request maybe

        # -- what uvicorn calls -------------------------------------------------------------------------

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._waiting_since = self.loop.time()
            self._note()
            # Reading starts on the loop's next turn; a timer due now runs after that turn's reads (in asyncio's
            # loop, which serve() names): then what the connection sent is known, and the cap is applied.
            self.loop.call_later(0, self._read_once)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._unread = False
            self._note()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._waiting_since = self.loop.time()
            self._note()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        # -- bounds --------------------------------------------------------------------------------------

        def _phase(self) -> str:
            state = self.conn.their_state
            if state is h11.IDLE:
                return "headers"
            return "body" if state is h11.SEND_BODY else "busy"

        def _note(self) -> None:
            """Restart the clock when the request being read (or its state) changes."""
            seen = (self.conn.their_state, self.cycle)
            if seen == self._seen:
                return
            if self._seen is None or seen[1] is not self._seen[1]:
                self._client = client_of(self.headers) if self.cycle is not None else None
            self._seen = seen
            self._disarm()
            state = seen[0]
            if self.transport is None or self.transport.is_closing():
                return
            if state is h11.IDLE:
                self._timer = self.loop.call_later(limits.header_timeout_s, self._time_out, seen)
            elif state is h11.SEND_BODY:
                self._timer = self.loop.call_later(limits.body_timeout_s, self._time_out, seen)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _time_out(self, seen: tuple[Any, Any]) -> None:
            self._timer = None
            if seen != self._seen or self.transport.is_closing():
                return
            phase = self._phase()
            if phase == "headers" and (self.conn.trailing_data[0] or self.cycle is None):
                log.warning("closed a connection that sent no complete request headers within %g s",
                            limits.header_timeout_s)
                self.transport.write(_TIMED_OUT)
            elif phase == "body":
                log.warning("closed a connection whose request body did not arrive within %g s",
                            limits.body_timeout_s)
                if self.cycle is not None and not self.cycle.response_started:
                    self.transport.write(_TIMED_OUT)
            self.transport.close()

        def _read_once(self) -> None:
            """The gateway has read from this new connection (if it sent anything): past the cap, close the
            connections that have waited longest, judged on what they have sent."""
            self._unread = False
            # Connections already closing are gone within a turn of the event loop: not counted.
            opened = [p for p in self.connections
                      if isinstance(p, BoundedH11Protocol) and p.transport is not None and not p.transport.is_closing()]
            excess = len(opened) - cap
            if excess <= 0:
                return
            ranked = sorted(((rank, p) for p in opened if (rank := p._displaceable()) is not None),
                            key=lambda item: item[0])
            for _, victim in ranked[:excess]:
                log.warning("%d connections open (the most allowed): closed the oldest %s one to let a new one in",
                            cap, victim._phase())
                victim.transport.abort()
            if not ranked and not any(p._unread for p in opened):
                log.warning("%d connections open, more than the %d allowed: all of them the owner's", len(opened), cap)

        def _displaceable(self) -> tuple[int, float] | None:
            """Where this connection stands among those to close first: connections not the owner's that are
            idle or still sending a request, the one waiting longest first (since it opened or was last
            answered, whatever it has sent meanwhile); then other tokens' requests being served, oldest first.
            The owner's connections are never closed, nor one not yet read from, which may be the owner's next
            request (None)."""
            if self.transport is None or self.transport.is_closing() or self._unread or self._client == owner:
                return None
            return (1 if self._phase() == "busy" else 0), self._waiting_since

    return BoundedH11Protocol
