"""The gateway's HTTP connections: uvicorn's h11 protocol with read timeouts and a cap on open connections.

uvicorn only times out a connection that is idle after an answer, and any byte it receives stops that timer,
so a client sending its headers a byte at a time holds a connection (and a file descriptor) for good; enough
of them and nobody else can connect. Here a connection must finish each request's headers within
``header_timeout_s`` and its body within ``body_timeout_s``, and at ``max_connections`` a new connection
displaces the oldest one that is idle or still sending a request, never one serving the owner.
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
            self._since = 0.0
            self._timer: asyncio.TimerHandle | None = None
            self._client: str | None = None  # the token of this connection's latest request

        # -- what uvicorn calls -------------------------------------------------------------------------

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._note()
            # Connections already closing are gone within a turn of the event loop: not counted.
            peers = [p for p in self.connections
                     if p is not self and isinstance(p, BoundedH11Protocol) and not p.transport.is_closing()]
            if len(peers) < cap:
                return
            ranked = [(rank, p) for p in peers if (rank := p._displaceable()) is not None]
            if not ranked:
                log.warning("refused a connection: all %d open connections are serving the owner", cap)
                transport.abort()
                return
            _, victim = min(ranked, key=lambda item: item[0])
            log.warning("%d connections open (the most allowed): closed the oldest %s one to let a new one in",
                        cap, victim._phase())
            victim.transport.abort()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._note()

        def on_response_complete(self) -> None:
            super().on_response_complete()
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
            self._since = self.loop.time()
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

        def _displaceable(self) -> tuple[int, float] | None:
            """Where this connection stands among those to close first, oldest first within each rank: other
            tokens' (or not yet known) connections sending headers, then sending a body; the owner's idle ones
            (a client opens another at no cost); other tokens' busy ones; the owner's unfinished requests.
            The owner's requests being served are never closed."""
            if self.transport is None or self.transport.is_closing():
                return None
            phase = self._phase()
            if self._client != owner:
                return {"headers": 0, "body": 1, "busy": 3}[phase], self._since
            if phase == "busy":
                return None
            idle = phase == "headers" and not self.conn.trailing_data[0]
            return (2 if idle else 4), self._since

    return BoundedH11Protocol
