"""Tool lists kept on disk per server configuration, so a new process can search a server without starting it."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs

from junior_mcp_bridge.config import ServerConfig

__all__ = ["CachedListing", "ToolCache", "ToolInfo", "cache_key", "default_dir"]

log = logging.getLogger("junior.mcp")
FORMAT = 1
DEFAULT_MAX_AGE_S = 86400.0
MAX_ENTRY_BYTES = 4 * 1024 * 1024
"""The largest entry read or written: a thousand tools with long schemas fit."""


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


class ToolCache:
    """One JSON file per server configuration under ``directory`` (0700), written 0600 and atomically.

    A file that is not the current user's, or that others may write, is not read: a tool list is text the
    model reads, so only the user's own processes may have written it. An entry is bound to the server it
    describes (the configuration's key is written inside it) and capped at ``MAX_ENTRY_BYTES``.
    """

    def __init__(self, directory: Path | None = None, max_age_s: float = DEFAULT_MAX_AGE_S) -> None:
        self.directory = directory or default_dir()
        self.max_age_s = max_age_s

    def path(self, config: ServerConfig) -> Path:
        return self.directory / f"{config.name}-{cache_key(config)}.json"

    def load(self, config: ServerConfig) -> CachedListing | None:
        """The listing stored for ``config`` if there is a usable one younger than ``max_age_s``, else None."""
        path = self.path(config)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if (hasattr(os, "getuid") and info.st_uid != os.getuid()) or info.st_mode & 0o022:
                log.warning("not using the cached tool list %s: it is not yours alone", path)
                return None
            with os.fdopen(fd, "rb") as stream:
                fd = -1
                raw = stream.read(MAX_ENTRY_BYTES + 1)
            if len(raw) > MAX_ENTRY_BYTES:
                raise ValueError(f"larger than {MAX_ENTRY_BYTES // 1024 // 1024} MB")
            data = json.loads(raw)
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
        finally:
            if fd >= 0:
                os.close(fd)
        if data.get("format") != FORMAT or not time.time() - self.max_age_s < listing.written <= time.time() + 60:
            return None
        return listing

    def store(self, config: ServerConfig, listing: CachedListing) -> None:
        """Write ``listing`` for ``config``; a failure is logged, never raised (the cache only saves time)."""
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            data = {"format": FORMAT, "key": cache_key(config), **attrs.asdict(listing),
                    "written": listing.written or time.time()}
            text = json.dumps(data, ensure_ascii=False)
            if len(text.encode()) > MAX_ENTRY_BYTES:
                log.info("not caching the tool list of MCP server %r: larger than %d MB", config.name,
                         MAX_ENTRY_BYTES // 1024 // 1024)
                return
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(text)
                os.replace(tmp, self.path(config))
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            log.info("could not cache the tool list of MCP server %r: %s", config.name, exc)

    def remove(self, config: ServerConfig) -> None:
        self.path(config).unlink(missing_ok=True)
