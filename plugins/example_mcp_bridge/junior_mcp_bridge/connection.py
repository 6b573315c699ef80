"""One MCP server's session, run on the bridge's event loop: connect, list, call, follow changes, reconnect."""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import secrets
import shutil
import sys
import threading
import time
import unicodedata
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio

from junior_core import ToolError
from junior_core.clock import MONOTONIC, Clock
from junior_core.text import clip
from junior_mcp_bridge.config import RETRY_INTERVAL_S, ServerConfig
from junior_mcp_bridge.convert import error_text, from_note, result_json
from junior_mcp_bridge.describe import quoted_line
from junior_mcp_bridge.text import mask_urls

if TYPE_CHECKING:
    import mcp_types as types
    from mcp import ClientSession

    from junior_mcp_bridge.cache import FailedStart, ToolCache, ToolInfo
    from junior_mcp_bridge.oauth import Login, OAuthState
    from junior_mcp_bridge.reaper import KeeperWatch

# The MCP SDK is imported where a session is opened, not here: a process answering from the tool cache
# (`junior search`) never needs it, and importing it costs more than the rest of the command.

__all__ = ["ServerConnection", "State"]

log = logging.getLogger("junior.mcp")
STDERR_SAID_LIMIT = 1000
"""The most of a down server's last stderr lines an ``unavailable`` answer quotes (characters)."""
State = Literal["stopped", "starting", "ready", "failed"]
"""After a failed connect, calls answer ``unavailable`` this long before the next attempt; the bridge also retries
servers that are down this often in the background."""
_MAX_PAGES = 1000
_STOP_TIMEOUT_S = 10.0
# A burst of list_changed notifications arriving within this many seconds is one re-listing.
RELIST_DELAY_S = 0.5
STDERR_TAIL_LINES = 5
"""Last lines of a server's stderr kept to explain why it failed."""
_STDERR_LINE_LIMIT = 200
_STDERR_SETTLE_S = 1.0
RESTART_BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Waits before each attempt to restart a server whose session broke; after the last, the slow retry takes over."""
RUN_VARIABLE = "JUNIOR_MCP_RUN"
"""Set in each server's environment to a value of its own, so its daemonised children can be found and ended."""
_REAP_GRACE_S = 2.0
KEEPER_GONE = ("its keeper process was killed while it ran, perhaps by the server itself; junior ended the server "
               "and every process it started")


class _DropParseErrors(logging.Filter):
    """The SDK logs each unreadable stdout line with a pydantic traceback; the connection reports it in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Failed to parse JSONRPC message")


logging.getLogger("mcp.client.stdio").addFilter(_DropParseErrors())


class ServerConnection:
    """A server's session, owned by one task on the bridge loop from connect to close.

    Every coroutine here runs on the bridge loop; other threads read the plain
    attributes (``state``, ``tools`` ...), which are replaced, never mutated.
    """

    def __init__(self, config: ServerConfig, on_change: Callable[[ServerConnection], None]) -> None:
        self.config = config
        self.state: State = "stopped"
        self.error: str | None = None
        """What went wrong, in detail (paths, hosts): for the log and ``junior mcp list/check`` only."""
        self.problem: str | None = None
        """What went wrong, as a fixed category the model may see."""
        self.retryable = True
        """Whether trying again later can help (a timeout can; a command that is not there cannot)."""
        self.stderr_tail: tuple[str, ...] = ()
        """The last lines the server wrote to stderr before it failed."""
        self.cache: ToolCache | None = None
        """Where the tool list is kept between processes (None: not kept)."""
        self.cached = False
        """Whether ``tools`` came from the cache and the server has not been connected since."""
        self.failure_level = logging.WARNING
        """Level of the one log line a failed connect writes (commands that print the failure lower it)."""
        self.retry_interval_s = RETRY_INTERVAL_S
        self.clock: Clock = MONOTONIC
        """What the start-up deadline and the back-offs are measured on (a runtime's ``RuntimeOptions.clock``)."""
        self.advice: str | None = None
        """What to do about the failure, when it is something other than waiting or fixing the configuration."""
        self.login: Login | None = None
        """A person who can log in with a browser when the server asks (``junior mcp login``); None in a bot."""
        self._oauth: OAuthState | None = None
        self.tools: list[types.Tool | ToolInfo] = []
        self.listed = False
        self.server_name: str | None = None
        self.server_title: str | None = None
        self.server_version: str | None = None
        self.instructions: str | None = None
        self.protocol_version: str | None = None
        self.connect_s: float | None = None
        self._on_change = on_change
        self._session: ClientSession | None = None
        self._runner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock = asyncio.Lock()
        self._background: set[asyncio.Task[Any]] = set()
        self._reaping: set[asyncio.Task[None]] = set()
        self._retry_at = 0.0
        self._closed = False
        self._relist_wanted = False
        self._relister: asyncio.Task[None] | None = None
        self.relistings = 0
        """How many times the tools were re-listed after a change (a storm of notifications counts once or twice)."""
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._stderr_pump: threading.Thread | None = None
        self._bad_line: str | None = None
        self._unreachable: str | None = None
        """Why the last connect to a ``url`` server never got an answer (the SDK says only "cancelled")."""
        self._restarting = False
        self._failure: FailedStart | None = None
        """The last failed start recorded beside the tool cache (this process's or another's)."""
        self._held_until = 0.0
        """Monotonic time before which this process does not start the server (a recorded failed start)."""

    @property
    def name(self) -> str:
        return self.config.name

    # -- lifecycle ----------------------------------------------------------------------------
    def load_cached(self) -> bool:
        """Take the tool list from the cache, if a fresh one is there; the server then starts on the first call."""
        if self.cache is None or self.listed:
            return self.listed
        listing = self.cache.load(self.config)
        if listing is None:
            return False
        from junior_mcp_bridge.cache import ToolInfo

        tools = [info for info in map(ToolInfo.from_json, listing.tools) if info is not None]
        self.server_name, self.server_title = listing.server_name, listing.server_title
        self.server_version, self.instructions = listing.server_version, listing.instructions
        self.protocol_version = listing.protocol_version
        self.tools, self.listed, self.cached = tools, True, True
        log.debug("MCP server %r: %d tools from the cache", self.name, len(tools))
        return True

    def hold_failed(self) -> bool:
        """Take over a failed start recorded beside the tool cache whose back-off has not ended: the server is
        "failed" with that record's reason and stderr, and is not started before the back-off ends."""
        if self.cache is None or self.state != "stopped":
            return False
        failed = self._failure = self.cache.load_failure(self.config)
        left = failed.until - self.cache.clock() if failed is not None else 0.0
        if failed is None or left <= 0:
            return False
        self.error = f"{failed.error}; not started again for {left:.0f} s (`junior mcp check` tries it now)"
        self.problem, self.retryable, self.advice = failed.problem, failed.retryable, failed.advice
        self.stderr_tail = failed.stderr_tail
        self._held_until = self.clock.now() + left
        self._retry_at = max(self._retry_at, self._held_until)
        self.state = "failed"
        log.info("MCP server %r failed to start %.0f s ago; not starting it for another %.0f s: %s", self.name,
                 self.cache.clock() - failed.written, left, failed.error)
        return True

    def forget_failure(self) -> None:
        """Drop the recorded failed start, so this process and the next start the server."""
        self._failure, self._held_until = None, 0.0
        if self.cache is not None:
            self.cache.clear_failure(self.config)

    def _record_failure(self) -> None:
        """Keep this failed start beside the tool cache, so the next processes leave the server alone a while."""
        if self.cache is None or self.error is None:
            return
        from junior_mcp_bridge.cache import FailedStart, backoff_s

        now = self.cache.clock()
        failures = (self._failure.failures if self._failure is not None else 0) + 1
        self._failure = FailedStart(until=now + backoff_s(failures), failures=failures, error=self.error,
                                    problem=self.problem, retryable=self.retryable, advice=self.advice,
                                    stderr_tail=self.stderr_tail, written=now)
        self.cache.store_failure(self.config, self._failure)

    def _store(self) -> None:
        if self.cache is None:
            return
        from junior_mcp_bridge.cache import CachedListing

        self.cache.store(self.config, CachedListing(
            tools=[tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in self.tools
                   if hasattr(tool, "model_dump")],
            server_name=self.server_name, server_title=self.server_title, server_version=self.server_version,
            instructions=self.instructions, protocol_version=self.protocol_version, written=time.time(),
        ))

    async def start(self) -> None:
        """Connect and list tools within ``startup_timeout_s``; a failure is recorded, never raised."""
        async with self._lock:
            await self._connect()

    async def retry(self) -> None:
        """Connect again if the server is still down (the bridge's background retry)."""
        async with self._lock:
            if (self.state == "failed" and not self._closed and not self._restarting
                    and self.clock.now() >= self._held_until):
                log.debug("retrying MCP server %r", self.name)
                await self._connect()

    async def _connect(self) -> None:
        if self._oauth is None and self.config.oauth is not None and self.config.url is not None:
            from junior_mcp_bridge.oauth import OAuthState

            self._oauth = OAuthState.for_server(self.config, self.login)
        if self._oauth is not None:
            self._oauth.new_connect()
        await self._attempt()
        if self.state == "failed" and self._oauth is not None and self._oauth.retry_with_refresh():
            log.debug("MCP server %r refused its access token; refreshing it", self.name)
            await self._attempt()

    async def _attempt(self) -> None:
        if self._closed:
            return
        await self._drop_session()
        self.state, self.error, self.problem, self.advice = "starting", None, None, None
        ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._runner = asyncio.create_task(self._run(ready, self._stop), name=f"mcp:{self.name}")
        # The runner records the outcome itself, so a caller cancelled while waiting here leaves a consistent state.
        await ready.wait()

    async def _run(self, ready: asyncio.Event, stop: asyncio.Event) -> None:
        """Hold the transport and session open until ``stop``; their teardown reaps the server process.

        This task owns the session, so it alone moves ``state`` from "starting" to "ready" or "failed".
        """
        me = asyncio.current_task()
        started = time.perf_counter()
        from mcp import ClientSession

        session: ClientSession | None = None
        run = secrets.token_hex(8)
        self._bad_line = self._unreachable = None
        watch: KeeperWatch | None = None
        if self.config.command is not None:
            from junior_mcp_bridge import reaper

            watch = reaper.KeeperWatch(_marker(run)) if reaper.supported() else None
        try:
            async with AsyncExitStack() as stack:
                try:
                    read, write = await self._open_transport(stack, run)
                    session = ClientSession(read, write, message_handler=self._on_message)
                    await stack.enter_async_context(session)
                    init, tools = await self._handshake(session)
                    if watch is not None and not await asyncio.to_thread(watch.check):
                        await asyncio.to_thread(watch.end, 0.0)  # ended before it is reported
                        raise KeeperGone
                except BaseException as exc:
                    # Reported now, not after the teardown below: a hung server takes seconds to kill.
                    if not ready.is_set():
                        if _exited(exc):
                            await self._settle_stderr()
                        self._failed(me, exc)
                        ready.set()
                    raise
                if self._runner is me:
                    info = init.server_info
                    self.server_name, self.server_title, self.server_version = info.name, info.title, info.version
                    self.instructions = init.instructions
                    self.protocol_version = init.protocol_version
                    self.tools, self.listed, self.cached = tools, True, False
                    self._store()
                    if self._failure is not None:
                        self.forget_failure()
                    self._session = session
                    self.state = "ready"
                    self.connect_s = time.perf_counter() - started
                    log.info("MCP server %r ready in %.2f s with %d tools", self.name, self.connect_s, len(tools))
                    self._notify()
                ready.set()
                if watch is None:
                    await stop.wait()
                elif not await _watch(watch, stop):
                    # Marked down first, so no call reaches the session while its processes are killed; a server
                    # that killed its keeper gets no grace.
                    if self._runner is me:
                        self._keeper_gone()
                    await asyncio.to_thread(watch.end, 0.0)
        except Exception as exc:  # noqa: BLE001 - logged; callers learn of it through ``state``
            log.debug("MCP server %r session ended: %r", self.name, exc)
        finally:
            if session is not None and self._session is session:
                self._session = None
            if not ready.is_set():
                self._failed(me, ConnectionError("the session ended before it was ready"))
                ready.set()
            if self.config.command is not None:
                # The SDK ends the server's process group; a child that left it (setsid) is found by its run id.
                try:
                    await asyncio.to_thread(end_processes, run, _REAP_GRACE_S, watch)
                except BaseException:  # cancelled: end them without waiting
                    end_processes(run, grace_s=0.0, watch=watch)
                    raise

    async def _handshake(self, session: ClientSession) -> tuple[types.InitializeResult, list[types.Tool]]:
        """Initialize ``session`` and list its tools within ``startup_timeout_s`` on the clock; else TimeoutError."""
        until = self.clock.now() + self.config.startup_timeout_s  # fixed before the first request is sent

        async def initialize_and_list() -> tuple[types.InitializeResult, list[types.Tool]]:
            init = await session.initialize()
            return init, await _list_all(session)

        work = asyncio.ensure_future(initialize_and_list())
        try:
            on_time = await self.clock.wait_async(work, until)
        except BaseException:  # the start itself was cancelled
            work.cancel()
            raise
        if not on_time:
            work.cancel()
            await asyncio.wait((work,))
            raise TimeoutError
        return work.result()

    def _failed(self, runner: asyncio.Task[Any] | None, exc: BaseException) -> None:
        """Record a failed connect, unless a newer attempt has taken over."""
        if self._runner is not runner:
            return
        error, self.problem, self.retryable = _describe(exc, self.config, self._bad_line)
        if self._unreachable is not None:
            error, self.problem, self.retryable = self._unreachable, "the server could not be reached", True
        level = self.failure_level
        if self._oauth is not None and self._oauth.needs_login:
            error = f"the server needs a login: run `junior mcp login {self.name}`"
            self.problem, self.retryable = "it needs a login", False
            self.advice = f"run `junior mcp login {self.name}`"
        elif self._oauth is not None and self._oauth.failure is not None:
            error = f"the OAuth login failed: {self._oauth.failure}"
            self.problem, self.retryable = "its OAuth login failed", False
            self.advice = f"run `junior mcp login {self.name}`"
        elif self._oauth is not None and self._oauth.refresh_first:
            level = logging.DEBUG  # the next attempt refreshes the token; only its outcome is news
        self.error = mask_urls(error)  # an HTTP error quotes the URL, password and all
        self.stderr_tail = tuple(self._stderr)
        if self.stderr_tail:
            self.error += f"; its stderr ended with: {' | '.join(self.stderr_tail)}"
        self.state = "failed"
        self._retry_at = self.clock.now() + self.retry_interval_s
        if not (self._oauth is not None and self._oauth.refresh_first):  # the refreshed attempt is the outcome
            self._record_failure()
        log.log(level, "MCP server %r is unavailable: %s", self.name, self.error)
        self._notify()

    async def _settle_stderr(self) -> None:
        """Give the stderr thread a moment to read what a server that just exited wrote last."""
        pump = self._stderr_pump
        if pump is not None and pump.is_alive():
            await asyncio.to_thread(pump.join, _STDERR_SETTLE_S)

    async def _open_transport(self, stack: AsyncExitStack, run: str) -> tuple[Any, Any]:
        config = self.config
        if config.url is not None:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

            from junior_mcp_bridge.oauth import capped_transport

            oauth = self._oauth
            auth = await stack.enter_async_context(oauth.provider()) if oauth is not None else None

            def refused(why: str) -> None:
                if oauth is not None:
                    oauth.failure = why

            def unreachable(why: str) -> None:
                self._unreachable = why

            # As the SDK's create_mcp_http_client, with what is read from endpoints other than the server's capped.
            http = await stack.enter_async_context(httpx2.AsyncClient(
                headers=dict(config.headers), auth=auth, transport=capped_transport(config.url, refused, unreachable),
                timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)))
            streams = await stack.enter_async_context(streamable_http_client(config.url, http_client=http))
            return streams[0], streams[1]
        from mcp import StdioServerParameters, stdio_client

        assert config.command is not None
        env = server_environment(config)
        command, args = resolve_command(config.command, env.get("PATH")), list(config.args)
        from junior_mcp_bridge import reaper

        if reaper.supported():
            _check_runnable(command, env.get("PATH"), config.cwd)  # the keeper would only say "exited"
            command, args = reaper.keeper_command(command, args)
        # "replace": one invalid UTF-8 byte spoils a line (reported, and the session restarted), not the reader.
        params = StdioServerParameters(command=command, args=args, env={**env, RUN_VARIABLE: run}, cwd=config.cwd,
                                       encoding_error_handler="replace")
        self._stderr.clear()
        errlog, self._stderr_pump = _stderr_to_log(self.name, self._stderr)
        try:
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        finally:
            # The child holds its own copy; closing ours lets the log thread end when the server exits.
            errlog.close()
        return read, write

    async def stop(self) -> None:
        """Close the session and reap the server process (bounded)."""
        self._closed = True
        for task in list(self._background):
            task.cancel()
        await self._drop_session()
        if self._reaping:
            await asyncio.wait(list(self._reaping), timeout=_STOP_TIMEOUT_S)
        self.state = "stopped"

    async def _drop_session(self) -> None:
        runner, self._runner = self._runner, None
        if self._stop is not None:
            self._stop.set()
        self._session = None
        if runner is not None and not runner.done():
            try:
                await asyncio.wait_for(asyncio.shield(runner), _STOP_TIMEOUT_S)
            except TimeoutError:
                log.warning("MCP server %r did not shut down within %.0f s", self.name, _STOP_TIMEOUT_S)

    # -- calls --------------------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call one tool; every failure is a ``ToolError`` the model can act on."""
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        session = await self._ready_session()
        try:
            result = await session.call_tool(tool, arguments, read_timeout_seconds=self.config.timeout_s)
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                if self._restarting:
                    raise self._down() from None
                if self._session is session:
                    await self._crashed("the server closed the connection")
                raise self._unavailable(f"MCP server {self.name!r} stopped during the call") from None
            if exc.code == types.REQUEST_TIMEOUT:
                raise ToolError(
                    "timeout",
                    f"{tool} on MCP server {self.name!r} did not answer within {self.config.timeout_s:g} seconds. "
                    "Try again later, or with a smaller request.",
                ) from None
            if exc.code == types.INVALID_PARAMS and "unknown tool" in exc.error.message.lower():
                self._relist_soon()
            raise ToolError(
                "tool_failed",
                f"MCP server {self.name!r} refused the call to {tool}: {_bounded(exc.error.message)}. "
                "Check the arguments against the tool's schema, or search for another tool.",
            ) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError) as exc:
            if self._restarting:
                raise self._down() from None
            if self._session is session:
                await self._crashed(f"{type(exc).__name__}: {exc}")
            raise self._unavailable(f"MCP server {self.name!r} stopped during the call") from None
        if result.is_error:
            said = error_text(result).replace('"', "'")
            raise ToolError("tool_failed", f'{tool} on MCP server {self.name!r} failed, saying: "{said}"')
        # Marked as the server's, as recalled memories are: what it returns is data for the model, never
        # instructions (the runtime bounds its size, `max_result_chars`).
        return {"from": from_note(self.name), **result_json(result)}

    async def _ready_session(self) -> ClientSession:
        session = self._session
        if session is not None and self.state == "ready":
            return session
        if self._closed:
            raise self._unavailable(f"MCP server {self.name!r} is shut down")
        if self._restarting:
            raise self._down()
        async with self._lock:
            if self._session is None or self.state != "ready":
                if self.clock.now() < self._retry_at:
                    raise self._down()
                log.info("reconnecting to MCP server %r", self.name)
                await self._connect()
            if self._session is None:
                raise self._down()
            return self._session

    def _down(self) -> ToolError:
        """``unavailable`` with the reason, what the server last said, and whether retrying can help."""
        if self._restarting:
            return ToolError("unavailable", f"MCP server {self.name!r} is being restarted after its session broke. "
                                            "Try again in a few seconds, or use another tool.")
        # Quoted, on one bounded line, and said to be the server's: a failed-start record is read back from disk.
        quoted = quoted_line(" | ".join(self.stderr_tail[-5:]), STDERR_SAID_LIMIT) if self.stderr_tail else ""
        said = f" Its last words, on the server's stderr: {quoted}." if quoted else ""
        if self.advice is not None:
            advice = f"retrying will not help: tell the user to {self.advice}, and use another tool meanwhile"
        elif self.retryable and self.clock.now() < self._held_until:
            advice = (f"junior starts it again in {self._held_until - self.clock.now():.0f} s; try again later, "
                      "or use another tool")
        elif self.retryable:
            advice = (f"junior retries it {self.retry_interval_s:g} s after each failed attempt; try again later, "
                      "or use another tool")
        else:
            advice = ("retrying will not help until its configuration is fixed: tell the user to run "
                      "`junior mcp check`, and use another tool meanwhile")
        return ToolError("unavailable", f"MCP server {self.name!r} is unavailable ({self.problem or 'not running'})."
                                        f"{said} {advice.capitalize()}.")

    def _unavailable(self, message: str) -> ToolError:
        tail = tuple(self._stderr) if self.state == "failed" else ()
        said = f" Its last words on stderr: {' | '.join(tail)}." if tail else ""
        return ToolError("unavailable", f"{message}.{said} Tell the user this tool is down, or try another tool.")

    def _keeper_gone(self) -> None:
        """The keeper died while the server ran (the server may have killed it): calls answer ``unavailable``
        while the session's task ends the server's tree and the session."""
        log.warning("MCP server %r is down: %s", self.name, KEEPER_GONE)
        self.state, self.error, self.problem, self.retryable = "failed", KEEPER_GONE, KEEPER_GONE, True
        self.stderr_tail = tuple(self._stderr)
        self._retry_at = self.clock.now() + self.retry_interval_s
        self._session = None
        self._notify()

    async def _crashed(self, reason: str) -> None:
        log.warning("MCP server %r crashed: %s; it will be restarted on the next call", self.name, reason)
        self.state, self.error, self.problem = "failed", f"crashed: {reason}", "the server exited"
        self.stderr_tail = tuple(self._stderr)
        self._retry_at = 0.0  # the next call reconnects straight away
        self._end_runner()

    def _end_runner(self) -> None:
        """Stop the session's task; its server is reaped in the background so the failing call answers at once."""
        runner, self._runner = self._runner, None
        if self._stop is not None:
            self._stop.set()
        self._session = None
        if runner is not None:
            self._reaping.add(runner)
            runner.add_done_callback(self._reaping.discard)

    # -- change notifications -----------------------------------------------------------------
    async def _on_message(self, message: Any) -> None:
        import mcp_types as types

        if isinstance(message, types.ToolListChangedNotification):
            self._relist_soon()
        elif isinstance(message, Exception):
            line = _unreadable_line(message)
            if self._bad_line is None:
                self._bad_line = line
            if self.state == "ready" and self._session is not None and not self._restarting:
                self._spawn(self._restart(f"it wrote a line that is not JSON-RPC: {line!r}"))
            elif self.state != "starting":
                log.debug("MCP server %r wrote a line that is not JSON-RPC: %r", self.name, line)

    async def _restart(self, reason: str) -> None:
        """Replace a broken session: the server is restarted with back-off, and calls answer ``unavailable`` meanwhile.

        A session that read a line it cannot parse may have lost an answer, so every call on it would wait for
        its timeout; a fresh process starts from a clean stream.
        """
        if self._closed or self._restarting:
            return
        self._restarting = True
        log.warning("MCP server %r broke its session (%s); restarting it", self.name, reason)
        self.state, self.error, self.problem, self.retryable = "failed", f"session broke: {reason}", (
            "its session broke; it is being restarted"), True
        self._end_runner()
        self._notify()
        try:
            for attempt, delay in enumerate(RESTART_BACKOFF_S, 1):
                await asyncio.sleep(delay)
                async with self._lock:
                    if self._closed:
                        return
                    await self._connect()
                if self.state == "ready":
                    log.warning("MCP server %r restarted (attempt %d)", self.name, attempt)
                    return
            log.warning("MCP server %r did not restart after %d attempts; retrying every %g s", self.name,
                        len(RESTART_BACKOFF_S), self.retry_interval_s)
        finally:
            self._restarting = False

    @property
    def relisting(self) -> bool:
        """Whether a re-listing is waiting for the notifications to stop, or running."""
        return self._relister is not None and not self._relister.done()

    def _relist_soon(self) -> None:
        """Re-list once the notifications stop coming: at most one re-listing runs and one more waits.

        A server that sends ``list_changed`` in a loop would otherwise cost a ``tools/list``, a catalog refresh
        and an index rebuild per notification.
        """
        self._relist_wanted = True
        if self._relister is None or self._relister.done():
            self._relister = self._spawn(self._relist_while_wanted())

    async def _relist_while_wanted(self) -> None:
        while self._relist_wanted:
            await asyncio.sleep(RELIST_DELAY_S)
            self._relist_wanted = False
            await self._relist()

    async def _relist(self) -> None:
        self.relistings += 1
        session = self._session
        if session is None:
            return
        try:
            tools = await _list_all(session)
        except Exception as exc:  # noqa: BLE001 - the source keeps its last listing
            log.warning("re-listing the tools of MCP server %r failed: %s", self.name, exc)
            return
        if session is self._session:
            self.tools = tools
            self._store()
            log.info("MCP server %r changed its tools; now %d", self.name, len(tools))
            self._notify()

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    def _notify(self) -> None:
        try:
            self._on_change(self)
        except Exception:  # a failing listener must not break the session
            log.exception("updating the catalog for MCP server %r failed", self.name)


async def _list_all(session: ClientSession) -> list[types.Tool]:
    """Every page of ``tools/list``."""
    import mcp_types as types

    tools: list[types.Tool] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(_MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None or cursor in seen:
            break
        seen.add(cursor)
    return tools


def _describe(exc: BaseException, config: ServerConfig, bad_line: str | None = None) -> tuple[str, str, bool]:
    """``(detail, category, retryable)``: the detail may name paths, hosts or URLs; only the category is shown
    to the model, and ``retryable`` says whether trying again later can help."""
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0], config, bad_line)
    if bad_line is not None:
        return (f"not an MCP server: the first line it wrote to stdout was {bad_line!r}, not JSON-RPC",
                "the command is not an MCP server", False)
    if isinstance(exc, KeeperGone):
        return KEEPER_GONE, KEEPER_GONE, True
    if isinstance(exc, TimeoutError):
        text = f"no answer within {config.startup_timeout_s:g} s of starting"
        return text, f"the server did not answer within {config.startup_timeout_s:g} s of starting", True
    if isinstance(exc, FileNotFoundError) and config.command is not None:
        where = "" if _has_path(config.command) else f" (not on PATH, nor next to {sys.executable})"
        return (f"command not found: {config.command!r}{where}",
                "the server did not start (its command was not found)", False)
    if isinstance(exc, PermissionError) and config.command is not None:
        return (f"command not executable: {config.command!r}",
                "the server did not start (its command cannot be run)", False)
    if isinstance(exc, MCPError):
        if exc.code == types.CONNECTION_CLOSED:
            return "the server exited before it answered", "the server exited", False
        return (f"the server answered with an error: {_bounded(exc.error.message)}",
                "the server refused to start a session", False)
    if isinstance(exc, OSError) and config.url is not None:
        return _bounded(f"{type(exc).__name__}: {exc}"), "the server could not be reached", True
    return _bounded(f"{type(exc).__name__}: {exc}"), "the server did not start", True


class KeeperGone(Exception):
    """The keeper junior started a stdio server under is gone while its server runs on."""


async def _watch(watch: KeeperWatch, stop: asyncio.Event) -> bool:
    """Check the keeper every ``WATCH_INTERVAL_S``, and at once when it exits (a pidfd, where the kernel has them),
    until ``stop`` (True) or until it is gone (False)."""
    from junior_mcp_bridge.reaper import WATCH_INTERVAL_S

    loop = asyncio.get_running_loop()
    woken = asyncio.Event()
    pidfd = None
    if watch.keeper is not None and hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(watch.keeper[0])
            loop.add_reader(pidfd, woken.set)
        except (OSError, NotImplementedError):  # an old kernel, a seccomp filter, or a loop without readers
            if pidfd is not None:
                os.close(pidfd)
            pidfd = None
    stopped = asyncio.ensure_future(stop.wait())
    try:
        while True:
            wake = asyncio.ensure_future(woken.wait())
            await asyncio.wait((stopped, wake), timeout=WATCH_INTERVAL_S, return_when=asyncio.FIRST_COMPLETED)
            wake.cancel()
            if stop.is_set():
                return True
            if not await asyncio.to_thread(watch.check):
                return stop.is_set()
            if woken.is_set() and pidfd is not None:  # not the keeper's exit after all: polling alone from here
                loop.remove_reader(pidfd)
                os.close(pidfd)
                pidfd = None
                woken.clear()
    finally:
        stopped.cancel()
        if pidfd is not None:
            loop.remove_reader(pidfd)
            os.close(pidfd)


def _bounded(text: str, limit: int = 300) -> str:
    return clip(" ".join(text.split()), limit)


def server_environment(config: ServerConfig, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a stdio server gets over the SDK's default environment: ``pass_env`` from junior's, then its ``env``."""
    environ = os.environ if environ is None else environ
    passed = {name: environ[name] for name in config.pass_env if name in environ}
    return {**passed, **config.env}


def _unreadable_line(exc: Exception) -> str:
    """The stdout line the SDK could not parse, bounded (pydantic's error holds it), else the error's first line."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            value = errors()[0].get("input")
        except Exception:  # noqa: BLE001 - any other shape: fall back to the message
            value = None
        if isinstance(value, str | bytes):
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
            return _bounded(text, 80)
    return _bounded(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 80)


def end_processes(run: str, grace_s: float = _REAP_GRACE_S, watch: KeeperWatch | None = None) -> int:
    """End every process of this user whose environment has ``JUNIOR_MCP_RUN=<run>``, every process ``watch``
    saw under the run's keeper, and every process under those; how many were found.

    SIGTERM, then SIGKILL after ``grace_s``. Linux only (``/proc``); elsewhere the SDK's process-group kill is all.
    """
    if not Path("/proc").is_dir():
        return 0
    from junior_mcp_bridge.reaper import KeeperWatch

    found = (watch or KeeperWatch(_marker(run))).end(grace_s)
    if found:
        log.debug("ended %d leftover process(es) of an MCP server run", found)
    return found


def _marker(run: str) -> bytes:
    return f"{RUN_VARIABLE}={run}".encode()


def _exited(exc: BaseException) -> bool:
    """Whether ``exc`` says the server's end of the connection closed (the process exited, most likely)."""
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _exited(exc.exceptions[0])
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    return isinstance(exc, MCPError) and exc.code == types.CONNECTION_CLOSED


def _check_runnable(command: str, path: str | None, cwd: str | None) -> None:
    """``FileNotFoundError`` or ``PermissionError`` as starting ``command`` itself would raise them."""
    if _has_path(command):
        found: str | None = command if os.path.isabs(command) else os.path.join(cwd or os.getcwd(), command)
    else:
        found = shutil.which(command, mode=os.F_OK, path=path if path is not None else os.environ.get("PATH"))
    if found is None or not os.path.exists(found):
        raise FileNotFoundError(2, "No such file or directory", command)
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        raise PermissionError(13, "Permission denied", command)


def _has_path(command: str) -> bool:
    return os.sep in command or (os.altsep is not None and os.altsep in command)


def resolve_command(command: str, path: str | None = None) -> str:
    """``command`` as given if it names a path or is on ``path`` (default ``PATH``); else the executable of that
    name next to ``sys.executable``, where ``pip install`` puts a server's script; else as given (and not found).

    A desktop client launching ``junior mcp serve`` rarely has junior's environment on its ``PATH``.
    """
    if _has_path(command) or shutil.which(command, path=path if path is not None else os.environ.get("PATH")):
        return command
    beside = Path(sys.executable).parent / command
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return command


def _printable(line: str) -> str:
    line = "".join(ch for ch in line if unicodedata.category(ch)[0] != "C" or ch == " ")
    return _bounded(line, _STDERR_LINE_LIMIT)


def _stderr_to_log(name: str, tail: collections.deque[str]) -> tuple[Any, threading.Thread]:
    """A writable file whose lines go to the ``junior.mcp.<name>`` logger instead of the terminal, and to ``tail``."""
    read_fd, write_fd = os.pipe()
    logger = logging.getLogger(f"junior.mcp.{name}")

    def pump() -> None:
        with os.fdopen(read_fd, "r", encoding="utf-8", errors="replace") as stream:
            for line in stream:
                if line.strip():
                    logger.info("%s", line.rstrip())
                    tail.append(_printable(line))

    thread = threading.Thread(target=pump, name=f"mcp-{name}-stderr", daemon=True)
    thread.start()
    return os.fdopen(write_fd, "w"), thread
