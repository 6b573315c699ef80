"""The runtime a bot embeds: plugins loaded, catalog built, the model's tools answered."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import json
import logging
import os
import threading
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from junior_core import protocol
from junior_core._fastcheck import Check, compile_check
from junior_core._limits import nesting_error, too_deep
from junior_core._workers import BackgroundLoop, Call, DaemonPool, Guarded, HandlerExit, HungCalls, Ticket
from junior_core.analysis import summarize
from junior_core.catalog import Catalog, CatalogTool, Tool
from junior_core.context import Message, ToolContext
from junior_core.discovery import Discovery
from junior_core.errors import RegistrationError, ToolError
from junior_core.exposure import Exposure, ExposurePolicy, ExposureRule, Reach, host_rules
from junior_core.plugins import PluginInfo, PluginSet, load, strict_from_env
from junior_core.protocol import (
    EXECUTE_DESCRIPTION,
    EXECUTE_SCHEMA,
    EXECUTE_TOOL,
    SEARCH_SCHEMA,
    SEARCH_TOOLS,
    Refusal,
    error,
    is_json,
    validation_error,
)
from junior_core.registry import Register

__all__ = ["Answered", "Prepared", "Runtime"]

log = logging.getLogger("junior.runtime")
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_HUNG_PER_SOURCE = 8
"""Calls of one source that may still run after their callers gave up, before that source answers ``unavailable``."""
DEFAULT_MAX_RESULT_CHARS = 100_000
"""Longest tool result, as JSON text, given to the model; a longer one is cut and marked ``truncated``."""
SLOW_STEP_S = 0.5
"""An async handler that holds its event loop this long in one step is logged as blocking."""
_NO_CONTEXT = ToolContext()


@attrs.frozen
class Prepared:
    """A call cleared to run: the tool, its validated arguments, the context it runs in and its time limit."""

    entry: CatalogTool
    arguments: dict[str, Any]
    context: ToolContext
    timeout: float


@attrs.frozen
class Answered:
    """A call answered without running a handler: a searchTools answer, or why the call does not run."""

    answer: dict[str, Any]


class Runtime:
    """Loads plugins, builds the catalog, and answers ``searchTools`` and ``executeTool``.

    ``Runtime(plugins=[...])`` uses exactly the plugins given (modules, objects, or
    classes instantiated per runtime) and raises on a broken one;
    ``Runtime.from_entry_points()`` loads the installed ones, skipping and reporting
    the broken (``JUNIOR_STRICT_PLUGINS=1`` raises instead). ``hook_timeout_s`` and ``startup_timeout_s``
    bound each turn hook and each start-up/shutdown hook call (see ``docs/hooks.md``). ``lazy_sources=True``
    (the CLI) lists a run-time source only when ``refresh_source`` asks for it, and tells plugins, through
    ``runtime.lazy_sources``, to connect to what backs such a source only then.

    ``exposure`` maps tool_name or source id patterns to ``direct``, ``deferred`` or ``hidden``, over the
    tools' own exposure and the ``[tools]`` table of ``junior.toml`` (``config``: True reads the file
    ``JUNIOR_CONFIG`` names or ``./junior.toml``, a path reads that file, False none); see ``set_exposure``.
    """

    def __init__(
        self,
        plugins: Sequence[object] = (),
        *,
        strict: bool = True,
        default_timeout_s: float = DEFAULT_TIMEOUT_S,
        index_cache: bool | str | os.PathLike[str] = True,
        hook_timeout_s: float | None = None,
        startup_timeout_s: float | None = None,
        max_hung_per_source: int = DEFAULT_MAX_HUNG_PER_SOURCE,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        lazy_sources: bool = False,
        exposure: Mapping[str, str] | None = None,
        config: bool | str | os.PathLike[str] = True,
        _plugin_set: PluginSet | None = None,
        _start: bool = True,
    ) -> None:
        self.default_timeout_s = default_timeout_s
        self.max_result_chars = max_result_chars
        self.lazy_sources = lazy_sources
        self.catalog = Catalog()
        self.policy = ExposurePolicy(host_rules(config, exposure))
        self._plugins = _plugin_set if _plugin_set is not None else load(list(plugins), strict=strict)
        self._plugins.set_deadlines(hook_timeout_s=hook_timeout_s, startup_timeout_s=startup_timeout_s)
        self.reach = Reach(self.catalog, self.policy, self._plugins)
        cache = None
        if index_cache is not False:
            from junior_core.index_cache import IndexCache

            cache = IndexCache(None if index_cache is True else Path(index_cache))
        self.discovery = Discovery(self.catalog, self.reach, cache=cache)
        self._hung = HungCalls(max_hung_per_source)
        self._pool = DaemonPool(self._hung)
        self._loop = BackgroundLoop("junior-io")
        self._handler_loops: dict[str, BackgroundLoop] = {}
        self._closed = False
        self._close_lock = threading.Lock()
        self._validators: dict[str, tuple[Tool, Check | None, Any]] = {}
        ref = weakref.ref(self)

        def close_at_exit() -> None:
            runtime = ref()
            if runtime is not None:
                runtime.close()

        self._atexit = close_at_exit
        atexit.register(close_at_exit)
        try:
            self._register_sources()
            if _start:
                self._plugins.startup(self)
                if not lazy_sources:
                    self._refresh_providers()
        except BaseException:
            self.close()
            raise

    @classmethod
    def from_entry_points(
        cls,
        *,
        strict: bool | None = None,
        default_timeout_s: float = DEFAULT_TIMEOUT_S,
        index_cache: bool | str | os.PathLike[str] = True,
        hook_timeout_s: float | None = None,
        startup_timeout_s: float | None = None,
        max_hung_per_source: int = DEFAULT_MAX_HUNG_PER_SOURCE,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        exposure: Mapping[str, str] | None = None,
        config: bool | str | os.PathLike[str] = True,
    ) -> Runtime:
        """A runtime of every installed ``junior`` entry point (see ``JUNIOR_LOAD_PLUGINS`` and friends)."""
        plugin_set = load(None, strict=strict_from_env() if strict is None else strict)
        return cls(
            default_timeout_s=default_timeout_s,
            index_cache=index_cache,
            hook_timeout_s=hook_timeout_s,
            startup_timeout_s=startup_timeout_s,
            max_hung_per_source=max_hung_per_source,
            max_result_chars=max_result_chars,
            exposure=exposure,
            config=config,
            _plugin_set=plugin_set,
        )

    @classmethod
    @contextlib.asynccontextmanager
    async def open_async(
        cls,
        plugins: Sequence[object] | None = None,
        *,
        strict: bool | None = None,
        default_timeout_s: float = DEFAULT_TIMEOUT_S,
        exposure: Mapping[str, str] | None = None,
        config: bool | str | os.PathLike[str] = True,
    ) -> AsyncIterator[Runtime]:
        """``async with Runtime.open_async() as rt:`` opens a runtime without blocking the event loop.

        ``plugins=None`` loads the installed entry points (``strict`` as in ``from_entry_points``), a list
        uses exactly those plugins (``strict`` defaults to True). Loading runs on a worker thread; the
        ``startup`` hooks then run concurrently, one thread each, so a database engine opens while MCP
        sessions start. ``shutdown`` runs on leaving the block.
        """

        def build() -> Runtime:
            if plugins is None:
                plugin_set = load(None, strict=strict_from_env() if strict is None else strict)
                return cls(default_timeout_s=default_timeout_s, exposure=exposure, config=config,
                           _plugin_set=plugin_set, _start=False)
            return cls(plugins, strict=True if strict is None else strict, default_timeout_s=default_timeout_s,
                       exposure=exposure, config=config, _start=False)

        runtime = await asyncio.to_thread(build)
        try:
            await runtime._astart()
            yield runtime
        finally:
            await asyncio.to_thread(runtime.close)

    async def _astart(self) -> None:
        def start(name: str) -> None:
            self._plugins.startup(self, plugin=name)  # failures and overruns are reported as in startup()

        starts = [asyncio.to_thread(start, name) for name in self._plugins.implementers("startup")]
        failures = [r for r in await asyncio.gather(*starts, return_exceptions=True) if isinstance(r, BaseException)]
        if failures:
            raise failures[0]
        await asyncio.to_thread(self._refresh_providers)

    def _refresh_providers(self) -> None:
        for entry in self.catalog.sources:
            if entry.provider is not None:
                self.refresh_source(entry.source.id)

    # -- plugins and catalog -------------------------------------------------------------------
    @property
    def plugins(self) -> list[PluginInfo]:
        """Every plugin tried, loaded or failed, with reasons."""
        return list(self._plugins.infos)

    @property
    def plugin_set(self) -> PluginSet:
        return self._plugins

    def note_plugin_problem(self, plugin: object, problem: str) -> None:
        """Record a problem of a loaded plugin (the plugin object or its name) where ``plugins`` reports it.

        For a problem the plugin has logged already (an MCP server that failed to start); nothing is logged.
        """
        self._plugins.note(plugin, problem)

    def _register_sources(self) -> None:
        for name in self._plugins.implementers("register_sources"):
            register = Register(name)
            try:
                self._plugins.register_sources(name, register)
                for reg in register.registrations:
                    self.catalog.add_source(name, reg.source, reg.tools, reg.provider)
            except Exception as exc:  # noqa: BLE001 - a broken plugin is reported and skipped
                self.catalog.remove_plugin(name)
                if isinstance(exc, RegistrationError):
                    refused = exc
                else:
                    refused = RegistrationError(name, f"register_sources failed: {type(exc).__name__}: {exc}")
                    refused.__cause__ = exc
                self._plugins.fail_loaded(name, str(refused), refused)

    def refresh_source(self, source_id: str) -> None:
        """Ask a run-time source's provider for its current tools; the search index follows.

        A provider that fails or returns invalid tools is reported and the
        source keeps the tools it had.
        """
        entry = self.catalog.source(source_id)
        if entry is None or entry.provider is None:
            raise KeyError(f"{source_id!r} is not a source with a provider")
        try:
            self.catalog.replace_tools(source_id, list(entry.provider()))
        except Exception as exc:  # noqa: BLE001 - reported with the plugin's name
            self._plugins.report_error(entry.plugin, f"listing tools of {source_id!r} failed: {exc}", exc)
            return
        self.discovery.refresh_index()

    def describe_source(self, source_id: str, description: str) -> None:
        """Replace a source's description; searchTools' description and the search index follow."""
        self.catalog.describe_source(source_id, description)
        self.discovery.refresh_index()

    def set_source_unavailable(self, source_id: str, reason: str | None) -> None:
        """Mark a source as down with a short reason the model may see, or as up again with None.

        A call to an unknown tool_name of a down source answers ``unavailable`` naming the source, instead of
        suggesting unrelated tools.
        """
        self.catalog.set_unavailable(source_id, reason)

    def wait_for_index(self, timeout: float | None = None) -> bool:
        """Wait until the search index reflects the catalog; whether it does.

        After ``refresh_source`` or ``describe_source`` the index is rebuilt on a background thread and searches
        answer from the previous index meanwhile; call this when the next search must see the change.
        """
        return self.discovery.wait_for_index(timeout)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """An event loop for plugins' long-lived async I/O (MCP sessions, connection pools), on a daemon thread.

        No handler runs on it: async handlers run on a loop of their source's own, so a handler that blocks
        cannot stall the sessions here. Started on first use; it stops after the ``shutdown`` hooks have run.
        """
        return self._loop.loop

    def _handler_loop(self, source_id: str) -> BackgroundLoop:
        """The loop running ``source_id``'s async handlers: one per source, so a blocking one stalls only its own."""
        loop = self._handler_loops.get(source_id)
        if loop is None:
            with self._close_lock:
                if self._closed:
                    raise RuntimeError("the runtime is closed")
                loop = self._handler_loops.setdefault(source_id, BackgroundLoop(f"junior-loop-{source_id}"))
        return loop

    @property
    def sources(self) -> list[dict[str, str]]:
        """``[{"id", "description"}]`` sorted by id."""
        return [{"id": e.source.id, "description": summarize(e.source.description)} for e in self.catalog.sources]

    # -- host policy ---------------------------------------------------------------------------
    def set_exposure(self, pattern: str, exposure: Exposure) -> None:
        """Give the tools ``pattern`` matches (a glob over tool_names and source ids) ``exposure``.

        ``direct`` pins a tool to the model's tools, ``deferred`` leaves it to searchTools, ``hidden`` keeps it
        from the model (``call_tool`` still runs it). Overrides the tools' own exposure and ``junior.toml``:
        the rule naming a tool_name exactly wins, then the pattern with the most literal characters, then the
        rule set last. Setting a pattern again replaces its rule. Raises ``ValueError`` on a bad pattern.
        """
        self.policy.add(ExposureRule(pattern, exposure, origin="api"))
        self.discovery.refresh_index()

    def exposure_of(self, tool_name: str) -> Exposure:
        """The exposure a catalog tool has after the host's rules; ``KeyError`` for an unknown tool_name."""
        return self.reach.exposure_of(tool_name)

    def visible_tools(self, context: ToolContext | None = None) -> list[CatalogTool]:
        """The tools the model may reach in ``context`` (deferred and direct, none hidden for it), by tool_name."""
        return self.reach.visible(context)

    # -- the model's tools ---------------------------------------------------------------------
    def model_tools(self, context: ToolContext | None = None) -> list[dict[str, Any]]:
        """searchTools, executeTool and every direct tool not hidden for ``context``, as ``{"name", ...}``."""
        tools = [
            {"name": SEARCH_TOOLS, "description": self.discovery.view().description, "input_schema": SEARCH_SCHEMA},
            {"name": EXECUTE_TOOL, "description": EXECUTE_DESCRIPTION, "input_schema": EXECUTE_SCHEMA},
        ]
        tools += [
            {"name": e.tool_name, "description": e.tool.description, "input_schema": e.tool.input_schema}
            for e in self.reach.visible(context, "direct")
        ]
        return tools

    def search_tools(
        self,
        query: str | None = None,
        source: str | None = None,
        max_results: int | None = None,
        context: ToolContext | None = None,
    ) -> dict[str, Any]:
        """Exactly what the searchTools tool returns in ``context`` (tools hidden there are left out)."""
        return self.call_model_tool(
            SEARCH_TOOLS, {"query": query, "source": source, "max_results": max_results}, context
        )

    async def asearch_tools(
        self,
        query: str | None = None,
        source: str | None = None,
        max_results: int | None = None,
        context: ToolContext | None = None,
    ) -> dict[str, Any]:
        """Async twin of ``search_tools``; the search runs on a worker thread (the first one builds the index)."""
        return await self.acall_model_tool(
            SEARCH_TOOLS, {"query": query, "source": source, "max_results": max_results}, context
        )

    def execute_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None = None, context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Exactly what the executeTool tool returns; never raises for anything the model could send."""
        return self.call_model_tool(EXECUTE_TOOL, {"tool_name": tool_name, "arguments": arguments or {}}, context)

    async def aexecute_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None = None, context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Async twin of ``execute_tool``."""
        return await self.acall_model_tool(
            EXECUTE_TOOL, {"tool_name": tool_name, "arguments": arguments or {}}, context
        )

    def call_model_tool(self, name: str, arguments: Any, context: ToolContext | None = None) -> dict[str, Any]:
        """Dispatch any ``model_tools()`` entry by name; ``arguments`` is a dict or the model's JSON text."""
        step = self._prepare(name, arguments, context or _NO_CONTEXT)
        return step.answer if isinstance(step, Answered) else self._run(step)

    async def acall_model_tool(self, name: str, arguments: Any, context: ToolContext | None = None) -> dict[str, Any]:
        """Async twin of ``call_model_tool``; handlers run where they do for it, never on the caller's loop.

        Preparing the call moves to a worker thread whenever it may wait: a search (the index may be built or
        read from disk) or policy and visibility hooks (each may take up to ``hook_timeout_s``).
        """
        ctx = context or _NO_CONTEXT
        if name == SEARCH_TOOLS or self._hooks_may_wait():
            step = await asyncio.to_thread(self._prepare, name, arguments, ctx)
        else:
            step = self._prepare(name, arguments, ctx)
        return step.answer if isinstance(step, Answered) else await self._arun(step)

    def _hooks_may_wait(self) -> bool:
        return self._plugins.implements("before_tool_execute") or self._plugins.implements("tool_visible")

    def call_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None = None, context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Run any catalog tool from host code, hidden ones included, answering as executeTool does.

        Exposure and ``tool_visible`` decide what the model may reach, not what the host may run; arguments
        are still validated and ``before_tool_execute`` policies still asked. ``KeyError`` for an unknown
        tool_name: a host's typo is a bug to see, not an answer to pass on.
        """
        step = self._host_step(tool_name, arguments, context or _NO_CONTEXT)
        return step.answer if isinstance(step, Answered) else self._run(step)

    async def acall_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None = None, context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Async twin of ``call_tool``."""
        step = self._host_step(tool_name, arguments, context or _NO_CONTEXT)
        return step.answer if isinstance(step, Answered) else await self._arun(step)

    # -- preparing a call: one step for every path -----------------------------------------------
    def _prepare(self, name: Any, arguments: Any, context: ToolContext) -> Prepared | Answered:
        """Read a model's call, find the tool it may reach, validate, ask the policies; or the answer instead."""
        try:
            if isinstance(arguments, str):  # OpenAI-style APIs deliver a tool call's arguments as JSON text
                arguments = protocol.json_arguments(name, arguments)
            if too_deep(arguments):  # before validation, messages or repr recurse into it
                return Answered(nesting_error())
            if name == EXECUTE_TOOL:
                tool_name, args = protocol.execute_request(arguments)
                return self._clear(self._reachable(tool_name, context), args, context)
            if name == SEARCH_TOOLS:
                request = protocol.search_request(arguments)
                return Answered(self.discovery.search(request, self.reach.hidden_for(context)))
            if not isinstance(name, str):
                return Answered(self.discovery.unknown_tool(repr(name)[:200], self.reach.hidden_for(context)))
            entry = self._reachable(name[:200], context, direct=True)  # a direct tool, called by its own name
            if not isinstance(arguments, Mapping):
                return Answered(error("invalid_arguments", f"{name} takes an object of arguments.", entry.tool_name))
            return self._clear(entry, dict(arguments), context)
        except Refusal as refusal:
            return Answered(refusal.answer)
        except Exception:
            log.exception("preparing a call of %r failed", name if isinstance(name, str) else type(name).__name__)
            shown = name[:200] if isinstance(name, str) else None
            return Answered(error(
                "tool_failed",
                "The call could not be prepared because of an internal error (logged for the operator). "
                "Try again once; if it fails again, tell the user.",
                shown,
            ))

    def _host_step(self, tool_name: str, arguments: Mapping[str, Any] | None, context: ToolContext
                   ) -> Prepared | Answered:
        entry = self.catalog.get(tool_name)
        if entry is None:
            raise KeyError(f"no tool named {tool_name!r} in the catalog")
        if too_deep(arguments):
            return Answered(nesting_error(tool_name))
        try:
            return self._clear(entry, dict(arguments or {}), context)
        except Refusal as refusal:
            return Answered(refusal.answer)

    def _reachable(self, tool_name: str, context: ToolContext, direct: bool = False) -> CatalogTool:
        """The tool ``tool_name`` names if the model may call it in ``context``; else raises ``Refusal``.

        A tool hidden from the context's actor or conversation is refused exactly as a name that does not exist.
        """
        found = self.reach.find(tool_name, context, direct=direct)
        if found == "unknown":
            raise Refusal(self.discovery.unknown_tool(tool_name, self.reach.hidden_for(context)))
        if found == "hidden":
            raise Refusal(protocol.not_for_the_model(tool_name))
        return found

    def _clear(self, entry: CatalogTool, args: dict[str, Any], context: ToolContext) -> Prepared:
        """Validate ``args`` and ask the ``before_tool_execute`` policies; raises ``Refusal``."""
        tool_name = entry.tool_name
        try:
            errors = self._argument_errors(entry, args)
        except Exception:  # the tool's own schema is broken (e.g. a $ref to nowhere)
            log.exception("validating arguments of %s failed; its input_schema is broken", tool_name)
            raise Refusal(error(
                "tool_failed",
                f"{tool_name} cannot be called: its input schema is broken (logged for the operator). "
                "Use another tool.",
                tool_name,
            )) from None
        if errors:
            raise Refusal(validation_error(errors, f"arguments for {tool_name}", tool_name))
        veto = self._plugins.before_tool_execute(entry.tool, args, context)
        if veto is not None:
            raise Refusal(error("not_permitted", veto.message, tool_name))
        return Prepared(entry, args, context, float(entry.tool.timeout_s or self.default_timeout_s))

    # -- running a prepared call -----------------------------------------------------------------
    def _run(self, step: Prepared) -> dict[str, Any]:
        entry, args, ctx, timeout = step.entry, step.arguments, step.context, step.timeout
        if self._closed:
            return error("unavailable", "The runtime is closed; no tools can run.", entry.tool_name)
        if self._hung.full(entry.source_id):
            return self._busy(entry)
        future: Call | concurrent.futures.Future[Any]
        try:
            if entry.tool.is_async:
                ticket = Ticket(self._hung, entry.source_id)
                future = self._handler_loop(entry.source_id).submit(self._guarded(entry, args, ctx), ticket)
            else:
                future = self._pool.call(entry.source_id, entry.tool.handler, args, ctx)
                ticket = future.ticket
        except RuntimeError:  # closed while this call was being prepared
            return error("unavailable", "The runtime is closed; no tools can run.", entry.tool_name)
        except Exception as exc:  # noqa: BLE001 - an async handler that raised before returning its coroutine
            return self._failure(entry, exc)
        try:
            value = future.result(timeout)
        except (TimeoutError, concurrent.futures.TimeoutError):
            self._abandon(entry, ticket, future)
            return self._timeout(entry, timeout)
        except BaseException as exc:  # mapped to a model-facing code
            if not future.done():
                raise  # the host itself was interrupted (Ctrl-C) while waiting, not the handler
            return self._failure(entry, exc)
        return self._success(entry, value)

    async def _arun(self, step: Prepared) -> dict[str, Any]:
        entry, args, ctx, timeout = step.entry, step.arguments, step.context, step.timeout
        if self._closed:
            return error("unavailable", "The runtime is closed; no tools can run.", entry.tool_name)
        if self._hung.full(entry.source_id):
            return self._busy(entry)
        future: concurrent.futures.Future[Any]
        try:
            if entry.tool.is_async:
                ticket = Ticket(self._hung, entry.source_id)
                future = self._handler_loop(entry.source_id).submit(self._guarded(entry, args, ctx), ticket)
            else:
                future, ticket = self._pool.submit(entry.source_id, entry.tool.handler, args, ctx)
        except RuntimeError:  # closed while this call was being prepared
            return error("unavailable", "The runtime is closed; no tools can run.", entry.tool_name)
        except Exception as exc:  # noqa: BLE001 - an async handler that raised before returning its coroutine
            return self._failure(entry, exc)
        try:
            value = await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except TimeoutError:
            self._abandon(entry, ticket, future)
            return self._timeout(entry, timeout)
        except asyncio.CancelledError:
            self._abandon(entry, ticket, future)
            raise
        except BaseException as exc:  # the handler's, even SystemExit: a failed call must not end an MCP server
            if not future.done():
                raise  # the caller's own thread was interrupted, not the handler
            return self._failure(entry, exc)
        return self._success(entry, value)

    def _guarded(self, entry: CatalogTool, args: dict[str, Any], ctx: ToolContext) -> Guarded:
        return Guarded(entry.tool.handler(args, ctx), entry.tool_name, SLOW_STEP_S)

    def _abandon(self, entry: CatalogTool, ticket: Ticket, future: object) -> None:
        """Give up on a call: cancel what can be, count what still runs as hung (a blocked loop's queue too)."""
        if isinstance(future, concurrent.futures.Future):
            future.cancel()
        if entry.tool.is_async:
            ticket.abandon(queued_is_hung=True)
        else:
            self._pool.abandon(ticket)

    def _busy(self, entry: CatalogTool) -> dict[str, Any]:
        source = entry.source_id
        log.warning("source %s has %d hung calls; refusing %s", source, self._hung.count(source), entry.tool_name)
        return error(
            "unavailable",
            f"Source {source!r} is not responding: {self._hung.count(source)} of its calls are still running past "
            f"their time limit. Do not retry it now; use a tool of another source, or tell the user {source!r} "
            "is not responding.",
            entry.tool_name,
        )

    def _argument_errors(self, entry: CatalogTool, args: dict[str, Any]) -> list[Any]:
        """JSON Schema errors of ``args``; a plain schema's quick check spares valid calls the full validator."""
        cached = self._validators.get(entry.tool_name)
        if cached is None and len(self._validators) > 2 * len(self.catalog) + 64:
            # Run-time sources come and go: forget the validators of tool_names the catalog no longer has.
            for gone in [name for name in self._validators if self.catalog.get(name) is None]:
                del self._validators[gone]
        if cached is None or cached[0] is not entry.tool:  # compiled per Tool object: providers replace tools
            from referencing import Registry

            from junior_core._patterns import validator_for

            # An empty registry: a $ref is resolved inside the schema or not at all, never fetched from a URL.
            validator = validator_for()(entry.tool.input_schema, registry=Registry())
            cached = (entry.tool, compile_check(entry.tool.input_schema), validator)
            self._validators[entry.tool_name] = cached
        _, quick, validator = cached
        if quick is not None and quick(args):
            return []
        return list(validator.iter_errors(args))  # a broken $ref raises: the caller maps it to tool_failed

    def _success(self, entry: CatalogTool, value: Any) -> dict[str, Any]:
        try:
            text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            log.error("tool %s returned a value that is not JSON-serialisable: %r", entry.tool_name, type(value))
            return error(
                "tool_failed",
                f"{entry.tool_name} returned a result that could not be encoded as JSON (logged for the operator). "
                "Try a different tool or report the problem.",
                entry.tool_name,
            )
        if len(text) > self.max_result_chars:
            return self._truncated(entry, text)
        return {"ok": True, "tool_name": entry.tool_name, "result": value}

    def _truncated(self, entry: CatalogTool, text: str) -> dict[str, Any]:
        """A result too long for the model: the start of its JSON text, marked ``truncated`` with the full size."""
        limit = self.max_result_chars
        log.warning("tool %s returned %d characters of JSON; the model gets the first %d", entry.tool_name,
                    len(text), limit)
        return {
            "ok": True,
            "tool_name": entry.tool_name,
            "result": text[:limit],
            "truncated": {
                "original_chars": len(text),
                "shown_chars": limit,
                "message": (
                    f"The result was {len(text):,} characters of JSON, too long to show; 'result' is its first "
                    f"{limit:,} characters, as text. Ask for less (a narrower query, a smaller limit, one page) "
                    "if you need the rest."
                ),
            },
        }

    def _timeout(self, entry: CatalogTool, timeout: float) -> dict[str, Any]:
        log.warning("tool %s timed out after %.3g s", entry.tool_name, timeout)
        return error(
            "timeout",
            f"{entry.tool_name} did not finish within {timeout:g} s. Try again later, or with a smaller request.",
            entry.tool_name,
        )

    def _failure(self, entry: CatalogTool, exc: BaseException) -> dict[str, Any]:
        if isinstance(exc, HandlerExit):
            exc = exc.exc
        if isinstance(exc, ToolError):
            body = error(str(exc.code), str(exc.message), entry.tool_name)
            details = {k: v for k, v in exc.details.items() if k not in body["error"]}
            if is_json(details):
                body["error"].update(details)
            else:
                log.error("ToolError details from %s are not JSON-serialisable; dropped", entry.tool_name)
            return body
        log.error("tool %s (plugin %r) failed", entry.tool_name, entry.plugin, exc_info=exc)
        return error(
            "tool_failed",
            f"{entry.tool_name} failed with an internal error (details are in the host's log). "
            "Try again once; if it fails again, tell the user the tool is failing.",
            entry.tool_name,
        )

    # -- turn hooks ----------------------------------------------------------------------------
    def prompt_context(self, context: ToolContext, user_text: str) -> list[str]:
        """Text blocks plugins want injected before a model turn; a failing or late plugin is logged and skipped."""
        return self._plugins.prompt_context(context, user_text)

    def after_turn(self, context: ToolContext, transcript: Sequence[Message]) -> None:
        """Let plugins observe a finished turn; a failing or late plugin is logged and skipped."""
        self._plugins.after_turn(context, list(transcript))

    async def aprompt_context(self, context: ToolContext, user_text: str) -> list[str]:
        """Async twin of ``prompt_context`` (hooks run on a worker thread)."""
        return await asyncio.to_thread(self.prompt_context, context, user_text)

    async def aafter_turn(self, context: ToolContext, transcript: Sequence[Message]) -> None:
        """Async twin of ``after_turn`` (hooks run on a worker thread)."""
        await asyncio.to_thread(self.after_turn, context, transcript)

    # -- lifecycle -----------------------------------------------------------------------------
    def close(self) -> None:
        """Run every plugin's ``shutdown`` once; later calls do nothing."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        atexit.unregister(self._atexit)
        try:
            self._plugins.shutdown(self)
        finally:
            self._plugins.close()
            self._pool.close()
            self._loop.close()
            for loop in list(self._handler_loops.values()):
                loop.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        counts = f"sources={len(self.catalog.sources)} tools={len(self.catalog)} plugins={len(self._plugins.loaded)}"
        return f"<Runtime {counts}>"
