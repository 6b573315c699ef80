"""``junior mcp serve``: the whole runtime as an MCP server, offering searchTools, executeTool and direct tools."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

    from junior_core import Runtime, ToolContext
    from junior_mcp_bridge.auth import TokenTable
    from junior_mcp_bridge.limits import GatewayLimits

__all__ = ["INSTRUCTIONS", "build_server", "serve"]

log = logging.getLogger("junior.mcp.gateway")
INSTRUCTIONS = (
    "junior offers many tools without listing them all. Call searchTools (optionally with a `source`) to find "
    "tools, then executeTool with the exact tool_name it returned and the tool's arguments."
)


def build_server(runtime: Runtime, context: ToolContext | None = None, tokens: TokenTable | None = None) -> Server[Any]:
    """A low-level MCP server answering from ``runtime``.

    A call runs in the context of the token it was authenticated with when ``tokens`` is given (and is refused
    without one), else in ``context``.
    """
    import mcp_types as types
    from mcp.server.lowlevel.server import Server
    from mcp.shared.exceptions import MCPError


    def context_of(ctx: Any) -> ToolContext | None:
        if tokens is None:
            return context
        from junior_mcp_bridge.auth import TokenTable

        client = TokenTable.client_of(getattr(ctx, "request", None))
        found = tokens.context_of(client) if client is not None else None
        if found is None:  # the HTTP middleware lets no such request through; fail closed all the same
            raise MCPError(code=types.INVALID_REQUEST, message="Not authenticated: send Authorization: Bearer <token>.")
        return found

    async def offered(context: Any) -> list[dict[str, Any]]:
        # Tools hidden from the caller's actor are left out; tool_visible hooks may take their time, so the
        # list is made on a worker thread and the server's loop keeps serving other clients.
        return await asyncio.to_thread(runtime.model_tools, context)

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t["name"], description=t["description"], input_schema=t["input_schema"])
                for t in await offered(context_of(ctx))
            ]
        )

    lister = SourceLister(runtime)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        context = context_of(ctx)
        await asyncio.to_thread(lister.list_for, params.name, params.arguments or {})
        names = await asyncio.to_thread(runtime.offered_names, context)  # on a worker thread, as offered()
        if params.name not in names:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Unknown tool: {params.name}. This server offers {', '.join(sorted(names))}.",
            )
        result = await runtime.acall_model_tool(params.name, params.arguments or {}, context)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
            structured_content=result,
            is_error=result.get("ok") is False,
        )

    return Server(
        "junior",
        version=_version(),
        title="junior",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


class SourceLister:
    """Lists a lazy runtime's run-time sources (bridged servers) when a call first needs them, as the CLI does.

    ``tools/list`` never waits for a server: it answers searchTools, executeTool and the direct tools listed so
    far. A search lists the sources it covers (all, or its ``source``) and a call the source its tool_name
    names; a server starts then, or answers from the tool cache.
    """

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.listed: set[str] = set()
        self._lock = threading.Lock()

    def list_for(self, name: str, arguments: dict[str, Any]) -> None:
        """List what a call of the model tool ``name`` with ``arguments`` needs (a no-op once listed)."""
        if not self.runtime.options.lazy_sources:
            return  # every source was listed at start-up
        if name == "searchTools":  # the two model tools' names are part of junior's contract
            source = arguments.get("source")
            wanted: Callable[[str], bool] = (lambda sid: sid == source) if isinstance(source, str) else (
                lambda sid: True)
        else:
            tool_name = arguments.get("tool_name") if name == "executeTool" else name
            if not isinstance(tool_name, str):
                return
            wanted = lambda sid: tool_name.startswith(sid.replace(":", "__") + "__")  # noqa: E731
        with self._lock:  # a second call waits for the listing the first started, rather than miss its tools
            for info in self.runtime.source_info():
                sid = info.id
                if info.run_time and sid not in self.listed and wanted(sid):
                    self.listed.add(sid)
                    self.runtime.refresh_source(sid)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("junior-core")
    except PackageNotFoundError:
        return "0"


def serve(runtime: Runtime, http_port: int | None = None, context: ToolContext | None = None,
          tokens: TokenTable | None = None, no_auth: bool = False, limits: GatewayLimits | None = None,
          say: Callable[[str], None] | None = None) -> None:
    """Serve ``runtime`` over stdio, or over streamable HTTP on 127.0.0.1:``http_port``; returns when done.

    Over HTTP, every request must carry a bearer token of ``tokens`` (default: the owner's token file and
    ``[mcp.serve.tokens]``); only ``no_auth=True`` serves without, letting any local process or user act as
    the owner. What clients can hold (sessions, connections, time to send a request, log lines) is bounded by
    ``limits`` (default: ``[plugins.mcp.gateway]``). Over HTTP, ``say`` (default: the log at INFO) is told the
    URL and the sources served once the port is bound.
    """
    import anyio

    from junior_core import local_context

    context = context or local_context()
    if http_port is None:
        from mcp.server.stdio import stdio_server

        server = build_server(runtime, context)

        async def run_stdio() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(run_stdio)
        return
    import uvicorn

    from junior_mcp_bridge.auth import OWNER
    from junior_mcp_bridge.connections import connection_cap, protocol_class
    from junior_mcp_bridge.limits import rate_limited_logs
    from junior_mcp_bridge.sessions import SessionLimiter, bearer_client

    if limits is None:
        from junior_mcp_bridge.config import bridge_settings

        limits = bridge_settings().gateway
    url = f"http://127.0.0.1:{http_port}"
    if not no_auth and tokens is None:
        from junior_mcp_bridge.auth import load_tokens

        tokens = load_tokens(context)
    server = build_server(runtime, context, None if no_auth else tokens)
    if no_auth or tokens is None:
        app = server.streamable_http_app(host="127.0.0.1", session_idle_timeout=limits.session_idle_s,
                                         max_sessions=limits.total_sessions)
        match = None
        log.warning("junior MCP gateway on %s/mcp WITHOUT authentication (--no-auth): any local process or user "
                    "can call every tool as %s, memory included", url, context.actor.key if context.actor else "-")
    else:
        from mcp.server.auth.settings import AuthSettings
        from pydantic import AnyHttpUrl

        # The gateway is its own issuer: tokens come from `junior mcp token` and junior.toml, not from OAuth.
        app = server.streamable_http_app(host="127.0.0.1", token_verifier=tokens,
                                         auth=AuthSettings(issuer_url=AnyHttpUrl(url), resource_server_url=None),
                                         session_idle_timeout=limits.session_idle_s,
                                         max_sessions=limits.total_sessions)
        match = tokens.match
        log.info("junior MCP gateway on %s/mcp; clients send `Authorization: Bearer <token>` (%d token(s): %s; "
                    "`junior mcp token` shows the owner's)", url, len(tokens), ", ".join(tokens.names()))
    log.info("gateway bounds: %d sessions for the owner, %d for other tokens (%d each), idle sessions closed "
             "after %g s; %d connections; %g s for a request's headers and %g s for its body",
             limits.owner_sessions, limits.max_sessions, limits.sessions_per_token, limits.session_idle_s,
             connection_cap(limits), limits.header_timeout_s, limits.body_timeout_s)

    def client_of(headers: Any) -> str | None:
        return bearer_client(headers, match, OWNER)

    bounded = SessionLimiter(app, limits, lambda scope: client_of(scope.get("headers", [])), OWNER)
    # uvicorn's own logging setup is skipped (log_config=None): its lines go through junior's handlers, where
    # the rate limit applies. The h11 protocol is named explicitly: it is the one the read timeouts extend; so is
    # asyncio's loop (not uvloop), whose order of timers and reads tells the connection cap a connection was read.
    config = uvicorn.Config(bounded, host="127.0.0.1", port=http_port, log_config=None, log_level="warning",
                            access_log=False, http=protocol_class(limits, client_of, OWNER), loop="asyncio",
                            lifespan="on")
    tokens_named = "no authentication: --no-auth" if match is None or tokens is None else (
        f"tokens: {', '.join(tokens.names())}")
    started = announcement(runtime, f"{url}/mcp", tokens_named)

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:  # the port is bound: the URL printed is one a client can use
                (say or log.info)(started)

    with rate_limited_logs(limits.log_lines_per_minute), _sigterm_unwinds():
        AnnouncingServer(config).run()


def announcement(runtime: Runtime, url: str, tokens: str) -> str:
    """What ``serve --http`` says once it listens: where, who may call, and which sources it serves."""
    rows = []
    for info in runtime.source_info():
        down = f" (unavailable: {info.unavailable})" if info.unavailable else ""
        rows.append(f"{info.id}{down}")
    served = ", ".join(rows) if rows else "none (no junior plugin is installed)"
    return f"junior MCP gateway listening on {url} ({tokens}); sources: {served}"


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """After a graceful stop uvicorn raises the signal that stopped it again; a SIGTERM then ends the process as
    ``SystemExit`` rather than at once, so the runtime still closes (bridged servers end, logs are flushed)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
