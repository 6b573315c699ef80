"""What ``junior mcp serve --http`` bounds: ``[plugins.mcp.gateway]`` of junior.toml, and its log rate limit."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

__all__ = ["GatewayLimits", "LogRateLimit", "gateway_limits", "rate_limited_logs"]


def _positive_int(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{attribute.name}: must be a positive whole number, got {value!r}")


def _positive_seconds(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
        raise ValueError(f"{attribute.name}: must be a positive number of seconds, got {value!r}")


@attrs.frozen
class GatewayLimits:
    """Bounds on what HTTP clients of the gateway can hold; the defaults suit one owner and a few other tokens."""

    max_sessions: int = attrs.field(default=256, validator=_positive_int)
    """Open MCP sessions of all tokens but the owner's, together."""
    sessions_per_token: int = attrs.field(default=32, validator=_positive_int)
    """Open sessions of any one token other than the owner's."""
    owner_sessions: int = attrs.field(default=64, validator=_positive_int)
    """The owner's sessions: room no other token can take."""
    session_idle_s: float = attrs.field(default=900.0, validator=_positive_seconds, converter=float)
    """A session with no request in flight for this long is closed; its id then answers 404."""
    header_timeout_s: float = attrs.field(default=10.0, validator=_positive_seconds, converter=float)
    """A connection must finish sending a request's headers within this, from when it opens or its last answer."""
    body_timeout_s: float = attrs.field(default=30.0, validator=_positive_seconds, converter=float)
    """A request's body must have arrived within this after its headers."""
    max_connections: int = attrs.field(default=256, validator=_positive_int)
    """Open connections (fewer if the open-file limit requires); past it, the one waiting longest for a complete
    request is closed, never the owner's."""
    log_lines_per_minute: int = attrs.field(default=10, validator=_positive_int)
    """Lines per minute from each place that logs what any client can cause (refusals, timeouts, bad requests)."""

    @property
    def total_sessions(self) -> int:
        """What the SDK's own session limit is set to: every token's room together."""
        return self.max_sessions + self.owner_sessions


_FIELDS = tuple(field.name for field in attrs.fields(GatewayLimits))


def gateway_limits(raw: object, where: str) -> GatewayLimits:
    """``GatewayLimits`` from ``[plugins.mcp]``'s ``gateway`` table; ``ValueError`` naming ``where`` and the field."""
    if raw is None:
        return GatewayLimits()
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: must be a table ([plugins.mcp.gateway])")
    unknown = sorted(set(raw) - set(_FIELDS))
    if unknown:
        raise ValueError(f"{where} {unknown[0]}: unknown field; use {', '.join(sorted(_FIELDS))}")
    try:
        limits = GatewayLimits(**raw)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{where} {exc}") from None
    if limits.sessions_per_token > limits.max_sessions:
        raise ValueError(f"{where} sessions_per_token: {limits.sessions_per_token} is more than max_sessions "
                         f"({limits.max_sessions}), the room of all other tokens together")
    return limits


# Loggers whose lines a network client can cause, one per request it sends. asyncio's are its event loop's
# errors, among them a failed accept() or a connection reset under churn, each with a traceback.
CLIENT_DRIVEN = ("mcp", "uvicorn", "starlette", "junior.mcp.gateway", "asyncio")
# Loggers whose tracebacks say nothing a client could not make happen again: one line each instead.
ONE_LINE = ("asyncio",)


class LogRateLimit(logging.Filter):
    """Lets at most ``per_minute`` lines a minute through from each place in the code that logs (a token bucket
    per logger, file and line), for the loggers ``CLIENT_DRIVEN`` names; the next line let through says how many
    were held back. A handler filter, so it is decided once per record however many handlers share it."""

    def __init__(self, per_minute: int, prefixes: tuple[str, ...] = CLIENT_DRIVEN) -> None:
        super().__init__()
        self.per_minute = per_minute
        self.prefixes = prefixes
        self._lock = threading.Lock()
        self._buckets: dict[tuple[str, str, int], list[float]] = {}  # key -> [tokens, last refill, held back]
        self.held_back = 0

    def _watched(self, name: str) -> bool:
        return any(name == p or name.startswith(p + ".") for p in self.prefixes)

    def filter(self, record: logging.LogRecord) -> bool:
        decided: Any = getattr(record, "_junior_rate_ok", None)
        if decided is not None:
            return bool(decided)
        ok = True
        if self._watched(record.name):
            ok = self._take(record)
            if ok and record.exc_info and any(record.name == p or record.name.startswith(p + ".") for p in ONE_LINE):
                exc = record.exc_info[1]
                record.msg = f"{record.getMessage()}: {type(exc).__name__}: {exc}" if exc else record.getMessage()
                record.args, record.exc_info, record.exc_text, record.stack_info = None, None, None, None
        record._junior_rate_ok = ok
        return ok

    def _take(self, record: logging.LogRecord) -> bool:
        now = time.monotonic()
        key = (record.name, record.pathname, record.lineno)
        with self._lock:
            bucket = self._buckets.setdefault(key, [float(self.per_minute), now, 0.0])
            bucket[0] = min(float(self.per_minute), bucket[0] + (now - bucket[1]) * self.per_minute / 60.0)
            bucket[1] = now
            if bucket[0] < 1.0:
                bucket[2] += 1
                self.held_back += 1
                return False
            bucket[0] -= 1.0
            held, bucket[2] = int(bucket[2]), 0.0
        if held:
            record.msg = f"{record.getMessage()} (and {held} more like this, not logged)"
            record.args = None
        return True


@contextlib.contextmanager
def rate_limited_logs(per_minute: int) -> Iterator[LogRateLimit]:
    """``LogRateLimit`` on the root logger's handlers (else Python's last-resort handler) while the block runs."""
    limit = LogRateLimit(per_minute)
    root = logging.getLogger()
    handlers = list(root.handlers) or ([logging.lastResort] if logging.lastResort is not None else [])
    for handler in handlers:
        handler.addFilter(limit)
    try:
        yield limit
    finally:
        for handler in handlers:
            handler.removeFilter(limit)
        if limit.held_back:
            logging.getLogger("junior.mcp.gateway").warning(
                "%d repeated log lines caused by clients were not logged (at most %d a minute from each place)",
                limit.held_back, per_minute)
