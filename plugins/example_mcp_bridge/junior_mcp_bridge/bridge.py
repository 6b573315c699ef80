"""The bridge: every configured server's session on one event loop of its own, and their tools as junior tools."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from junior_core import Tool, ToolContext, ToolError
from junior_core.clock import MONOTONIC, Clock
from junior_core.text import clip
from junior_mcp_bridge.config import RETRY_INTERVAL_S, ServerConfig
from junior_mcp_bridge.connection import ServerConnection
from junior_mcp_bridge.convert import DESCRIPTION_LIMIT, annotations_of, bounded_schema, local_names, modern_schema
from junior_mcp_bridge.describe import INSTRUCTIONS_LIMIT, NAME_LIMIT, described, plain_line, unavailable_reason
from junior_mcp_bridge.text import clean_text, mask_urls

if TYPE_CHECKING:
    from junior_mcp_bridge.cache import ToolCache

__all__ = ["INSTRUCTIONS_LIMIT", "NAME_LIMIT", "Bridge", "BridgeLoop", "plain_line"]

log = logging.getLogger("junior.mcp")
_CALL_SLACK_S = 2.0
_SHUTDOWN_TIMEOUT_S = 15.0
class BridgeLoop:
    """The loop the sessions live on: the runtime's I/O loop, or one on a thread of this loop's own.

    Never a loop that runs tool handlers: a plugin's handler that blocks its loop must not stall the sessions.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._thread: threading.Thread | None = None
        if loop is not None:
            self.loop = loop
            return
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.call_soon(ready.set)
            self.loop.run_forever()

        self._thread = threading.Thread(target=run, name="junior-mcp-loop", daemon=True)
        self._thread.start()
        ready.wait()

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float | None = None) -> Any:
        """Run ``coro`` on the loop and wait for it from another thread."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        if self._thread is None or self.loop.is_closed():
            return  # a borrowed loop is closed by its owner
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self.loop.close()


class Bridge:
    """Connections to the enabled servers of ``configs``; ``on_change(name)`` runs when a server's tools change."""

    def __init__(self, configs: Sequence[ServerConfig], on_change: Callable[[str], None] | None = None,
                 retry_interval_s: float = RETRY_INTERVAL_S, cache: ToolCache | None = None,
                 refresh: bool = False, clock: Clock | None = None) -> None:
        """``cache``: keep tool lists there, and answer from a fresh one without starting the server (unless
        ``refresh``: then every server is connected and its entry rewritten). ``clock``: what start-up deadlines
        and back-offs are measured on (a runtime's ``RuntimeOptions.clock``; default the monotonic clock)."""
        self.configs = list(configs)
        self.connections = {c.name: ServerConnection(c, self._changed) for c in self.configs if c.enabled}
        for conn in self.connections.values():
            conn.retry_interval_s = retry_interval_s
            conn.cache = cache
            conn.clock = clock or MONOTONIC
        self.cache = cache
        self.refresh = refresh
        self.on_change = on_change
        self.retry_interval_s = retry_interval_s
        self._loop: BridgeLoop | None = None
        self._retrier: asyncio.Task[None] | None = None
        self._started: set[str] = set()
        self._closed = False

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self, loop: asyncio.AbstractEventLoop | None = None, names: Sequence[str] | None = None) -> None:
        """Connect to every server (or those in ``names``) in parallel; returns when each is ready or has failed.

        A server already started is left alone, so a CLI can start each server when it first needs it.

        :param loop: a running loop on another thread to keep the sessions on (the runtime's); default, a new one.
        """
        todo = [conn for name, conn in self.connections.items()
                if (names is None or name in names) and name not in self._started]
        if not todo or self._closed:
            return
        self._started.update(conn.name for conn in todo)
        if self._loop is None:
            self._loop = BridgeLoop(loop)
        held: list[ServerConnection] = []
        if self.refresh:
            for conn in todo:  # `junior mcp check` tries every server now, whatever failed before
                conn.forget_failure()
        else:
            cached = [conn for conn in todo if conn.load_cached()]
            # A server whose start failed a moment ago (in this process or another) is not started again
            # before its back-off ends: it would fail the same way and cost every command its start-up.
            held = [conn for conn in todo if conn not in cached and conn.hold_failed()]
            for conn in cached + held:  # its description and tools, as when it connects
                self._changed(conn)
            todo = [conn for conn in todo if conn not in cached and conn not in held]
            if not todo and not held:
                return
        bound = max((conn.config.startup_timeout_s for conn in todo), default=0.0) + 10.0

        async def start_all() -> None:
            # Started first, so a slow start-up that overruns ``bound`` below still gets its servers retried.
            if self._retrier is None:
                self._retrier = asyncio.create_task(self._retry_failed(), name="mcp:retry")
            await asyncio.gather(*(conn.start() for conn in todo))

        try:
            self._loop.run(start_all(), bound)
        except TimeoutError:
            log.error("MCP servers did not all start within %.0f s; continuing without them", bound)

    def started(self, name: str) -> bool:
        """Whether ``start`` has been asked to connect to server ``name``."""
        return name in self._started

    def close(self) -> None:
        """Close every session and reap every server process."""
        if self._closed:
            return
        self._closed = True
        loop, self._loop = self._loop, None
        if loop is None:
            return

        async def stop_all() -> None:
            if self._retrier is not None:
                self._retrier.cancel()
            await asyncio.gather(*(conn.stop() for conn in self.connections.values()), return_exceptions=True)

        try:
            loop.run(stop_all(), _SHUTDOWN_TIMEOUT_S)
        except Exception:  # shutdown goes on; what is left is logged
            log.exception("closing MCP sessions failed")
        finally:
            loop.close()

    async def _retry_failed(self) -> None:
        """Every ``retry_interval_s``, start the servers that are down again; one that comes up refreshes its source.

        Without this, a server that failed at start-up and has no ``allowed_tools`` stubs would never be called,
        so never retried, for the life of the runtime.
        """
        while True:
            await asyncio.sleep(self.retry_interval_s)
            failed = [conn for conn in self.connections.values() if conn.state == "failed"]
            if failed:
                await asyncio.gather(*(conn.retry() for conn in failed), return_exceptions=True)

    def _changed(self, connection: ServerConnection) -> None:
        if self.on_change is not None:
            self.on_change(connection.name)

    # -- what the catalog sees ----------------------------------------------------------------
    def description(self, name: str) -> str:
        """From config, else the first line of the server's instructions, else its title or name.

        What a server sends is untrusted and sits in searchTools' description on every turn, so it is cut to
        one plain line; a configured description is the owner's own words and is used as written.
        """
        return self._described(name) + self.unavailable_note(name)

    def _described(self, name: str) -> str:
        conn = self.connections.get(name)
        if conn is None:
            return described(self._config(name), None, None, None)
        return described(conn.config, conn.instructions, conn.server_title, conn.server_name)

    def unavailable_note(self, name: str) -> str:
        """`` Unavailable: <why>.`` for a server that is down, with "try again later" only when that can help."""
        reason = self.unavailable_reason(name)
        return f" Unavailable: {reason}." if reason else ""

    def unavailable_reason(self, name: str) -> str | None:
        """Why server ``name`` is down, as a category the model may see, or None if it is not down."""
        conn = self.connections.get(name)
        if conn is None or conn.state != "failed":
            return None
        return unavailable_reason(conn.problem, conn.retryable, conn.advice, conn.stderr_tail)

    def tools(self, name: str) -> list[Tool]:
        """The junior tools of one server: its last listing, or stubs for ``allowed_tools`` before it connects."""
        conn = self.connections.get(name)
        if conn is None:
            return []
        config = conn.config
        allowed = set(config.allowed_tools) if config.allowed_tools is not None else None
        if not conn.listed:
            # Named in config but never listed: stubs that reconnect on call, or answer `unavailable`.
            # Named as they will be once listed, so a stub's tool name does not change when the server connects.
            return [self._stub(config, local, tool) for local, tool in local_names(sorted(allowed or ())).items()]
        by_name = {tool.name: tool for tool in conn.tools}
        result = []
        for local, server_name in local_names(by_name).items():
            if allowed is not None and server_name not in allowed and local not in allowed:
                continue
            built = self._tool(config, local, by_name[server_name])
            if built is not None:
                result.append(built)
        return result

    def _tool(self, config: ServerConfig, local: str, tool: Any) -> Tool | None:
        # Cleaned before choosing: a description of nothing but zero-width characters is no description.
        description = (clean_text(tool.description or "").strip() or clean_text(tool.title or "").strip()
                       or f"{tool.name} (no description)")
        try:
            return Tool(
                name=local,
                # Bounded: a server's text reaches the model with every answer that shows the tool in full.
                description=clip(description, DESCRIPTION_LIMIT),
                input_schema=bounded_schema(modern_schema(tool.input_schema)),
                handler=self._handler(config.name, tool.name),
                annotations=annotations_of(tool),
                # The first call after a crash reconnects before it calls.
                timeout_s=config.startup_timeout_s + config.timeout_s + _CALL_SLACK_S,
            )
        except ValueError as exc:
            log.warning("MCP server %r: tool %r skipped: %s", config.name, tool.name, exc)
            return None

    def _stub(self, config: ServerConfig, local: str, name: str) -> Tool:
        return Tool(
            name=local,
            description=f"{name} on the MCP server {config.name!r} (not connected; its schema is not known yet).",
            input_schema={"type": "object"},
            handler=self._handler(config.name, name),
            timeout_s=config.startup_timeout_s + config.timeout_s + _CALL_SLACK_S,
        )

    def _handler(self, server: str, tool: str) -> Callable[[dict[str, Any], ToolContext], Coroutine[Any, Any, Any]]:
        async def call_mcp_tool(arguments: dict[str, Any], context: ToolContext) -> Any:
            return await self.acall(server, tool, arguments)

        call_mcp_tool.__qualname__ = f"mcp:{server}:{tool}"
        return call_mcp_tool

    async def acall(self, server: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call ``tool`` on ``server`` from any thread or loop."""
        loop = self._loop
        conn = self.connections.get(server)
        if loop is None or conn is None or self._closed:
            raise ToolError("unavailable", f"MCP server {server!r} is not running. Try another tool.")
        coro = conn.call(tool, dict(arguments))
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop.loop:
            result: dict[str, Any] = await coro
            return result
        try:
            future = asyncio.run_coroutine_threadsafe(coro, loop.loop)
        except RuntimeError:
            coro.close()
            raise ToolError("unavailable", f"MCP server {server!r} is shut down. Try another tool.") from None
        return await asyncio.wrap_future(future)

    def _config(self, name: str) -> ServerConfig:
        for config in self.configs:
            if config.name == name:
                return config
        raise KeyError(name)

    def status(self) -> list[dict[str, Any]]:
        """One row per configured server: state, tool count, error (no env or header values)."""
        rows = []
        for config in self.configs:
            conn = self.connections.get(config.name)
            rows.append({
                "name": config.name,
                "source": config.source_id,
                "transport": config.transport,
                "target": config.target,
                "enabled": config.enabled,
                "state": ("cached" if conn.cached and conn.state == "stopped" else conn.state)
                if conn is not None else "disabled",
                "tools": len(self.tools(config.name)) if conn is not None and conn.listed else None,
                "server": (f"{conn.server_name} {conn.server_version or ''}".strip()
                           if conn is not None and conn.server_name else None),
                "protocol_version": conn.protocol_version if conn is not None else None,
                "connect_s": round(conn.connect_s, 3) if conn is not None and conn.connect_s is not None else None,
                "error": mask_urls(conn.error) if conn is not None and conn.error else None,
                "origin": config.origin,
            })
        return rows
