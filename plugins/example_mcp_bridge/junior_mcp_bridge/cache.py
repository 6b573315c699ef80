"""Tool lists kept on disk per server configuration, so a new process can search a server without starting it."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from junior_core.text import clip
from junior_mcp_bridge.config import ServerConfig

__all__ = ["CachedListing", "FailedStart", "ToolCache", "ToolInfo", "backoff_s", "cache_key", "default_dir"]

log = logging.getLogger("junior.mcp")
FORMAT = 1
DEFAULT_MAX_AGE_S = 86400.0
MAX_ENTRY_BYTES = 4 * 1024 * 1024
"""The largest entry read or written: a thousand tools with long schemas fit."""
FAILED_START_BACKOFF_S = (60.0, 120.0, 300.0, 600.0, 900.0)
"""How long a server whose start failed is left alone by the next processes, after 1, 2, ... failures in a row."""
_MAX_FAILURE_BYTES = 64 * 1024
RECORD_TEXT_LIMIT = 120
"""The longest ``problem`` or ``advice`` read back from a failed-start record (characters)."""


def backoff_s(failures: int) -> float:
    """The back-off after ``failures`` failed starts in a row."""
    return FAILED_START_BACKOFF_S[min(max(failures, 1), len(FAILED_START_BACKOFF_S)) - 1]


def default_dir() -> Path:
    """``$JUNIOR_CACHE_DIR/mcp-tools``, else ``mcp-tools`` in the user cache directory."""
    configured = os.environ.get("JUNIOR_CACHE_DIR")
    if configured:
        return Path(configured).expanduser() / "mcp-tools"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("junior")) / "mcp-tools"


def cache_key(config: ServerConfig) -> str:
    """A digest of everything that decides which server answers and how: a changed command, argument, variable,
    URL or header is another entry. Values (secrets among them) are only hashed, never stored."""
    identity = {
        "format": FORMAT, "name": config.name, "command": config.command, "args": list(config.args),
        "env": sorted(config.env.items()), "pass_env": list(config.pass_env), "cwd": config.cwd, "url": config.url,
        "headers": sorted(config.headers.items()),
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:32]


@attrs.frozen
class ToolInfo:
    """A tool as ``tools/list`` described it, read back from the cache: what the bridge needs of an MCP ``Tool``."""

    name: str
    input_schema: dict[str, Any]
    description: str | None = None
    title: str | None = None
    annotations: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolInfo | None:
        """From the wire spelling (``inputSchema``); None for an entry that is not a tool."""
        name, schema = data.get("name"), data.get("inputSchema")
        if not isinstance(name, str) or not isinstance(schema, dict):
            return None
        text = {key: data[key] if isinstance(data.get(key), str) else None for key in ("description", "title")}
        annotations = data.get("annotations")
        return cls(name=name, input_schema=schema, annotations=annotations if isinstance(annotations, dict) else None,
                   **text)


@attrs.frozen
class CachedListing:
    """What a server said when it was last connected: its tools (as ``tools/list`` JSON) and who it is."""

    tools: list[dict[str, Any]]
    server_name: str | None = None
    server_title: str | None = None
    server_version: str | None = None
    instructions: str | None = None
    protocol_version: str | None = None
    written: float = 0.0


@attrs.frozen
class FailedStart:
    """A server whose start failed: what went wrong, and until when no process starts it again."""

    until: float
    """Wall-clock time before which the next processes do not start the server."""
    failures: int
    """Failed starts in a row (the back-off grows with them)."""
    error: str
    """The detail (masked URLs): for people, ``junior mcp list/check`` and the log."""
    problem: str | None = None
    retryable: bool = True
    advice: str | None = None
    stderr_tail: tuple[str, ...] = ()
    written: float = 0.0


class ToolCache:
    """One JSON file per server configuration under ``directory`` (0700), written 0600 and atomically.

    A file that is not the current user's, or that others may write, is not read: a tool list is text the
    model reads, so only the user's own processes may have written it. An entry is bound to the server it
    describes (the configuration's key is written inside it) and capped at ``MAX_ENTRY_BYTES``.
    """

    def __init__(self, directory: Path | None = None, max_age_s: float = DEFAULT_MAX_AGE_S,
                 clock: Callable[[], float] = time.time) -> None:
        """``clock``: the wall clock that dates entries and failed starts (a test's own)."""
        self.directory = directory or default_dir()
        self.max_age_s = max_age_s
        self.clock = clock
        self._checked: bool | None = None

    def path(self, config: ServerConfig) -> Path:
        return self.directory / f"{config.name}-{cache_key(config)}.json"

    def failure_path(self, config: ServerConfig) -> Path:
        return self.directory / f"{config.name}-{cache_key(config)}.failed.json"

    def load(self, config: ServerConfig) -> CachedListing | None:
        """The listing stored for ``config`` if there is a usable one younger than ``max_age_s``, else None."""
        path = self.path(config)
        if not self._readable():
            return None
        try:
            data = _read_own(path, MAX_ENTRY_BYTES)
            if data is None:
                return None
            if data.get("key") != cache_key(config):
                # Its name says it is this server's; only the key written inside it says which server it describes.
                raise ValueError("it was written for another server")
            if not isinstance(data["tools"], list):
                raise ValueError(f"its tools are a {type(data['tools']).__name__}, not a list")
            listing = CachedListing(
                tools=[tool for tool in data["tools"] if isinstance(tool, dict)],
                server_name=data.get("server_name"), server_title=data.get("server_title"),
                server_version=data.get("server_version"), instructions=data.get("instructions"),
                protocol_version=data.get("protocol_version"), written=float(data["written"]),
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.info("not using the cached tool list %s: %s; the server will be asked", path, exc)
            return None
        now = self.clock()
        if data.get("format") != FORMAT or not now - self.max_age_s < listing.written <= now + 60:
            return None
        return listing

    def load_failure(self, config: ServerConfig) -> FailedStart | None:
        """The failed start recorded for ``config`` (held or not: the count of failures in a row is kept), else
        None. A record older than ``max_age_s`` is forgotten."""
        path = self.failure_path(config)
        if not self._readable():
            return None
        try:
            data = _read_own(path, _MAX_FAILURE_BYTES)
            if data is None:
                return None
            if data.get("key") != cache_key(config):
                raise ValueError("it was written for another server")
            tail = data.get("stderr_tail") or []
            failed = FailedStart(
                until=float(data["until"]), failures=int(data["failures"]), error=clip(str(data["error"]), 2000),
                problem=_line_or_none(data.get("problem")), retryable=bool(data.get("retryable", True)),
                advice=_line_or_none(data.get("advice")),
                stderr_tail=tuple(clip(str(line), 300) for line in tail[-10:]) if isinstance(tail, list) else (),
                written=float(data["written"]),
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.info("not using the failed-start record %s: %s", path, exc)
            return None
        now = self.clock()
        if not now - self.max_age_s < failed.written <= now + 60:
            return None
        return failed

    def store_failure(self, config: ServerConfig, failed: FailedStart) -> None:
        """Record a failed start of ``config``'s server; a failure to write is logged, never raised."""
        data = {"format": FORMAT, "key": cache_key(config), **attrs.asdict(failed, recurse=False),
                "stderr_tail": list(failed.stderr_tail), "written": failed.written or self.clock()}
        try:
            self._write(self.failure_path(config), json.dumps(data, ensure_ascii=False))
        except OSError as exc:
            log.info("could not record the failed start of MCP server %r: %s", config.name, exc)

    def clear_failure(self, config: ServerConfig) -> None:
        """Forget a failed start: the next process starts the server."""
        try:
            self.failure_path(config).unlink(missing_ok=True)
        except OSError as exc:
            log.info("could not clear the failed start of MCP server %r: %s", config.name, exc)

    def _readable(self) -> bool:
        """Whether entries may be read: no directory yet (nothing to read), or a private one."""
        return not self.directory.is_dir() or self._private()

    def _private(self) -> bool:
        """Whether the directory is private to this user, made so if it was not (once per cache object)."""
        if self._checked is None:
            from junior_mcp_bridge.auth import private_dir

            try:
                private_dir(self.directory, "MCP tool cache directory")
                self._checked = True
            except OSError as exc:
                log.warning("not using the MCP tool cache: %s", exc)
                self._checked = False
        return self._checked

    def _write(self, path: Path, text: str) -> None:
        if not self._private():
            return
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def store(self, config: ServerConfig, listing: CachedListing) -> None:
        """Write ``listing`` for ``config``; a failure is logged, never raised (the cache only saves time)."""
        try:
            data = {"format": FORMAT, "key": cache_key(config), **attrs.asdict(listing),
                    "written": listing.written or self.clock()}
            text = json.dumps(data, ensure_ascii=False)
            if len(text.encode()) > MAX_ENTRY_BYTES:
                log.info("not caching the tool list of MCP server %r: larger than %d MB", config.name,
                         MAX_ENTRY_BYTES // 1024 // 1024)
                return
            self._write(self.path(config), text)
        except OSError as exc:
            log.info("could not cache the tool list of MCP server %r: %s", config.name, exc)

    def remove(self, config: ServerConfig) -> None:
        self.path(config).unlink(missing_ok=True)


def _read_own(path: Path, limit: int) -> dict[str, Any] | None:
    """The JSON object in ``path`` if the file is there, the user's alone and at most ``limit`` bytes; None if
    it is not there or not the user's alone (logged); ``ValueError`` if it is too large or not an object."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as stream:
        info = os.fstat(stream.fileno())
        if (hasattr(os, "getuid") and info.st_uid != os.getuid()) or info.st_mode & 0o022:
            log.warning("not using the cached tool list %s: it is not yours alone", path)
            return None
        raw = stream.read(limit + 1)
    if len(raw) > limit:
        raise ValueError(f"larger than {limit // 1024 // 1024 or 1} MB" if limit >= 1024 * 1024
                         else f"larger than {limit // 1024} KB")
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError(f"it holds a {type(data).__name__}, not an object")
    return data


def _line_or_none(value: Any) -> str | None:
    """A record's ``problem`` or ``advice``: junior's own few words when it wrote them, so one plain line of at
    most ``RECORD_TEXT_LIMIT`` characters is all that is read back (the file may have been changed since)."""
    from junior_mcp_bridge.describe import plain_line

    return (plain_line(value, RECORD_TEXT_LIMIT) or None) if isinstance(value, str) else None
