"""The runtime a bot embeds: plugins loaded, the catalog built, the model's tools answered.

A facade: preparing a call is ``dispatch``'s, running it ``execution``'s, who may reach what ``exposure``'s,
searchTools' answers ``discovery``'s. Here are the lifecycle, the sources' changes, and the entry methods, each
async twin a thin wrapper over the same implementation.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from junior_core._base.workers import BackgroundLoop
from junior_core._calls.answering import Calls
from junior_core._calls.dispatch import Answered, Prepared
from junior_core._catalog.catalog import CatalogTool, SourceInfo
from junior_core._catalog.exposure import Exposure, ExposureRule
from junior_core._plugins.plugin_set import PluginInfo
from junior_core._protocol import EXECUTE_DESCRIPTION, EXECUTE_SCHEMA, EXECUTE_TOOL, SEARCH_SCHEMA, SEARCH_TOOLS
from junior_core._protocol.requests import search_arguments
from junior_core._runtime.assembly import Plugins, assemble, register_sources
from junior_core._runtime.host import ConversationKind, clock_utcnow, host_context, implied_kind
from junior_core._runtime.options import RuntimeOptions
from junior_core.context import Message, ToolContext

__all__ = ["Answered", "Prepared", "Runtime", "RuntimeOptions"]



class Runtime:
    """Loads plugins, builds the catalog, and answers ``searchTools`` and ``executeTool``.

    ``Runtime(plugins=[...])`` uses exactly the plugins given (modules, objects, or classes instantiated per
    runtime) and raises on a broken one; no plugins by default. ``plugins=None`` (``Runtime.from_entry_points()``)
    loads the installed ones, skipping and reporting the broken (``JUNIOR_STRICT_PLUGINS=1`` raises instead).
    Every setting is a field of ``RuntimeOptions``: pass ``options=RuntimeOptions(...)``, or its fields as
    keywords (``Runtime(plugins, index_cache=False)``), which override it. What the runtime offers plugins and
    hosts is listed in ``docs/internals.md``; every other attribute is private and may change in any release.
    """

    def __init__(self, plugins: Plugins = (), *, options: RuntimeOptions | None = None, **settings: Any) -> None:
        self._build(plugins, (options or RuntimeOptions()).with_settings(settings))
        try:
            self._plugins.startup(self)
            if not self.options.lazy_sources:
                self._refresh_providers()
        except BaseException:
            self.close()
            raise

    @classmethod
    def from_entry_points(cls, *, options: RuntimeOptions | None = None, **settings: Any) -> Runtime:
        """A runtime of every installed ``junior`` entry point (see ``JUNIOR_LOAD_PLUGINS`` and friends)."""
        return cls(None, options=options, **settings)

    @classmethod
    @contextlib.asynccontextmanager
    async def open_async(
        cls, plugins: Plugins = (), *, options: RuntimeOptions | None = None, **settings: Any
    ) -> AsyncIterator[Runtime]:
        """``async with Runtime.open_async(None) as rt:`` opens a runtime without blocking the event loop.

        ``plugins`` and the options as for ``Runtime``: ``()`` (none) by default, None the installed entry points.
        Loading runs on a worker thread; the ``startup`` hooks then run concurrently, one thread each, so a
        database engine opens while MCP sessions start. ``shutdown`` runs on leaving the block.
        """
        chosen = (options or RuntimeOptions()).with_settings(settings)

        def build() -> Runtime:
            runtime = cls.__new__(cls)
            runtime._build(plugins, chosen)
            return runtime

        runtime = await asyncio.to_thread(build)
        try:
            await runtime._astart()
            yield runtime
        finally:
            await asyncio.to_thread(runtime.close)

    def _build(self, plugins: Plugins, options: RuntimeOptions) -> None:
        """Everything but the ``startup`` hooks: plugins loaded, their sources registered."""
        self._options = options
        parts = assemble(plugins, options)
        self._catalog, self._policy, self._plugins = parts.catalog, parts.policy, parts.plugins
        self._reach, self._discovery, self._dispatch, self._execution = (
            parts.reach, parts.discovery, parts.dispatch, parts.execution)
        self._calls = Calls(parts.dispatch, parts.execution)
        self._clock = options.clock
        self._loop = BackgroundLoop("junior-io")
        ref = weakref.ref(self)

        def close_at_exit() -> None:
            runtime = ref()
            if runtime is not None:
                runtime.close()

        self._atexit = close_at_exit
        atexit.register(close_at_exit)
        try:
            register_sources(self._plugins, self._catalog)
        except BaseException:
            self.close()
            raise

    async def _astart(self) -> None:
        def start(name: str) -> None:
            self._plugins.startup(self, plugin=name)  # failures and overruns are reported as in startup()

        starts = [asyncio.to_thread(start, name) for name in self._plugins.implementers("startup")]
        failures = [r for r in await asyncio.gather(*starts, return_exceptions=True) if isinstance(r, BaseException)]
        if failures:
            raise failures[0]
        await asyncio.to_thread(self._refresh_providers)

    def _refresh_providers(self) -> None:
        for entry in self._catalog.sources:
            if entry.provider is not None:
                self.refresh_source(entry.source.id)

    # -- plugins -------------------------------------------------------------------------------
    @property
    def options(self) -> RuntimeOptions:
        """The settings this runtime was made with (``lazy_sources``, ``default_timeout_s``, ...)."""
        return self._options

    @property
    def plugins(self) -> list[PluginInfo]:
        """Every plugin tried, loaded or failed, with reasons."""
        return list(self._plugins.infos)

    def plugin(self, name: str) -> object | None:
        """The loaded plugin object registered under ``name`` (an instance where the entry point named a class)."""
        return self._plugins.pm.get_plugin(name) if name in self._plugins.loaded else None

    def note_plugin_problem(self, plugin: object, problem: str) -> None:
        """Record a problem of a loaded plugin (the plugin object or its name) where ``plugins`` reports it.

        For a problem the plugin has logged already (an MCP server that failed to start); nothing is logged.
        """
        self._plugins.note(plugin, problem)

    # -- sources -------------------------------------------------------------------------------
    @property
    def sources(self) -> list[dict[str, str]]:
        """``[{"id", "description"}]`` sorted by id: the sources searchTools' description names."""
        return self._discovery.source_summaries()

    def source_info(self) -> list[SourceInfo]:
        """Every registered source, sorted by id: its plugin, whether its tools are listed at run time, how many
        it has and whether it is down (what a host's own listing needs; ``sources`` is what the model is told)."""
        return [
            SourceInfo(e.source.id, e.source.description, e.plugin, e.provider is not None,
                       len(self._catalog.tools(e.source.id)), e.unavailable)
            for e in self._catalog.sources
        ]

    def refresh_source(self, source_id: str) -> None:
        """Ask a run-time source's provider for its current tools; the search index follows.

        A provider that fails or returns invalid tools is reported and the source keeps the tools it had.
        """
        entry = self._catalog.source(source_id)
        if entry is None or entry.provider is None:
            raise KeyError(f"{source_id!r} is not a source with a provider")
        try:
            self._catalog.replace_tools(source_id, list(entry.provider()))
        except Exception as exc:  # noqa: BLE001 - reported with the plugin's name
            self._plugins.report_error(entry.plugin, f"listing tools of {source_id!r} failed: {exc}", exc)
            return
        self._discovery.refresh_index()

    def describe_source(self, source_id: str, description: str) -> None:
        """Replace a source's description; searchTools' description and the search index follow."""
        self._catalog.describe_source(source_id, description)
        self._discovery.refresh_index()

    def set_source_unavailable(self, source_id: str, reason: str | None) -> None:
        """Mark a source as down with a short reason the model may see, or as up again with None.

        A call to an unknown tool_name of a down source answers ``unavailable`` naming the source, instead of
        suggesting unrelated tools.
        """
        self._catalog.set_unavailable(source_id, reason)

    # -- the search index ----------------------------------------------------------------------
    def wait_for_index(self, timeout: float | None = None) -> bool:
        """Wait until the search index reflects the catalog; whether it does.

        After ``refresh_source`` or ``describe_source`` the index is rebuilt on a background thread and searches
        answer from the previous index meanwhile; call this when the next search must see the change.
        """
        return self._discovery.wait_for_index(timeout)

    def index_info(self) -> dict[str, Any]:
        """The search index of the current catalog, built if need be: ``{"state", "cache_dir", "path",
        "fingerprint", "tools", "bytes", "stored_indexes"}`` (``junior index --json`` prints it)."""
        return self._discovery.index_info()

    def rebuild_index(self) -> dict[str, Any]:
        """Build the current catalog's index again (its stored copy replaced); ``index_info()`` of the new one."""
        return self._discovery.index_info(rebuild=True)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """An event loop for plugins' long-lived async I/O (MCP sessions, connection pools), on a daemon thread.

        No handler runs on it: async handlers run on a loop of their source's own, so a handler that blocks
        cannot stall the sessions here. Started on first use; it stops after the ``shutdown`` hooks have run.
        """
        return self._loop.loop

    # -- host policy ---------------------------------------------------------------------------
    def set_exposure(self, pattern: str, exposure: Exposure) -> None:
        """Give the tools ``pattern`` matches (a glob over tool_names and source ids) ``exposure``.

        ``direct`` pins a tool to the model's tools, ``deferred`` leaves it to searchTools, ``hidden`` keeps it
        from the model (``call_tool`` still runs it). Overrides the tools' own exposure and ``junior.toml``:
        the rule naming a tool_name exactly wins, then the pattern with the most literal characters, then the
        rule set last. Setting a pattern again replaces its rule. Raises ``ValueError`` on a bad pattern.
        """
        self._policy.add(ExposureRule(pattern, exposure, origin="api"))
        self._discovery.refresh_index()

    def exposure_of(self, tool_name: str) -> Exposure:
        """The exposure a catalog tool has after the host's rules; ``KeyError`` for an unknown tool_name."""
        return self._reach.exposure_of(tool_name)

    # -- the catalog -----------------------------------------------------------------------------
    def catalog_tool(self, tool_name: str) -> CatalogTool | None:
        """The catalog tool named ``tool_name`` whatever its exposure, or None."""
        return self._catalog.get(tool_name)

    def catalog_tools(self, source_id: str | None = None) -> list[CatalogTool]:
        """Every catalog tool, or those of one source, by tool_name, whatever its exposure (hidden ones too)."""
        return self._catalog.tools(source_id)

    def visible_tools(self, context: ToolContext | None = None, exposure: Exposure | None = None) -> list[CatalogTool]:
        """The tools the model may reach in ``context`` (deferred and direct, none hidden for it), by tool_name;
        with ``exposure``, only the ``"deferred"`` or only the ``"direct"`` ones."""
        return self._reach.visible(context, exposure)

    def offered_names(self, context: ToolContext | None = None) -> list[str]:
        """The names of ``model_tools(context)``: searchTools, executeTool, then the direct tools, cheaply."""
        return self._reach.offered(context)

    # -- the model's tools ---------------------------------------------------------------------
    def model_tools(self, context: ToolContext | None = None) -> list[dict[str, Any]]:
        """searchTools, executeTool and every direct tool not hidden for ``context``, as ``{"name", ...}``."""
        tools = [
            {"name": SEARCH_TOOLS, "description": self._discovery.view().description, "input_schema": SEARCH_SCHEMA},
            {"name": EXECUTE_TOOL, "description": EXECUTE_DESCRIPTION, "input_schema": EXECUTE_SCHEMA},
        ]
        tools += [
            {"name": e.tool_name, "description": e.tool.description, "input_schema": e.tool.input_schema}
            for e in self._reach.visible(context, "direct")
        ]
        return tools

    def search_tools(self, query: str | None = None, source: str | None = None, max_results: int | None = None,
                     context: ToolContext | None = None, cursor: str | None = None) -> dict[str, Any]:
        """Exactly what the searchTools tool returns in ``context`` (tools hidden there are left out)."""
        return self.call_model_tool(SEARCH_TOOLS, search_arguments(query, source, max_results, cursor), context)

    def explain(self, query: str, source: str | None = None, max_results: int | None = None,
                context: ToolContext | None = None, tool: str | None = None) -> dict[str, Any]:
        """Why each tool ``search_tools(query, source, max_results, context)`` returns ranks where it does, as
        data: per tool its score, the words it matched (the fields holding each, what each added), its verbs, what
        admitted it past the relevance floor, and what moved it in the order (docs/discovery.md). With ``tool``
        (a tool_name), also ``why_not``: that tool's words held and lacked, the floor it met or missed, its
        place."""
        hidden = self._reach.hidden_for(context)
        answer = self._discovery.explain(query, source, hidden, max_results)
        if tool is not None and "tools" in answer and answer.get("query"):
            from junior_core._protocol import DEFAULT_RESULTS

            answer["why_not"] = self._discovery.index.why_not(
                answer["query"], tool, limit=max_results or DEFAULT_RESULTS, source_id=source, hidden=hidden)
        return answer

    async def asearch_tools(self, query: str | None = None, source: str | None = None, max_results: int | None = None,
                            context: ToolContext | None = None, cursor: str | None = None) -> dict[str, Any]:
        """Async twin of ``search_tools``; the search runs on a worker thread (the first one builds the index)."""
        return await self.acall_model_tool(SEARCH_TOOLS, search_arguments(query, source, max_results, cursor), context)

    def execute_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None = None, context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Exactly what the executeTool tool returns; never raises for anything the model could send."""
        return self._calls.answer(self._dispatch.execute, tool_name, arguments or {}, context)

    async def aexecute_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None = None, context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Async twin of ``execute_tool``."""
        return await self._calls.aanswer(self._dispatch.execute, EXECUTE_TOOL, tool_name, arguments or {}, context)

    def call_model_tool(self, name: str, arguments: Any, context: ToolContext | None = None) -> dict[str, Any]:
        """Dispatch any ``model_tools()`` entry by name; ``arguments`` is a dict or the model's JSON text."""
        return self._calls.answer(self._dispatch.model_call, name, arguments, context)

    async def acall_model_tool(self, name: str, arguments: Any, context: ToolContext | None = None) -> dict[str, Any]:
        """Async twin of ``call_model_tool``; handlers run where they do for it, never on the caller's loop.

        Preparing the call moves to a worker thread whenever it may wait: a search (the index may be built or
        read from disk) or policy and visibility hooks (each may take up to ``hook_timeout_s``).
        """
        return await self._calls.aanswer(self._dispatch.model_call, name, name, arguments, context)

    def call_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None = None, context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Run any catalog tool from host code, hidden ones included, answering as executeTool does.

        Exposure and ``tool_visible`` decide what the model may reach, not what the host may run; arguments
        are still validated and ``before_tool_execute`` policies still asked. ``KeyError`` for an unknown
        tool_name: a host's typo is a bug to see, not an answer to pass on.
        """
        return self._calls.answer(self._dispatch.host_call, tool_name, arguments, context)

    async def acall_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None = None, context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Async twin of ``call_tool``."""
        return await self._calls.aanswer(self._dispatch.host_call, EXECUTE_TOOL, tool_name, arguments, context)

    # -- turn hooks ----------------------------------------------------------------------------
    def prompt_context(
        self, context: ToolContext, user_text: str, *, conversation_kind: ConversationKind | None = None,
        host: bool = True,
    ) -> list[str]:
        """Text blocks to inject before a model turn: first the host's (today's UTC date from ``utcnow``, and what
        the conversation's kind means: ``conversation_kind``, else the one ``context`` implies), then the plugins'.

        ``host=False`` leaves the host's block out (the agent loop puts it in the system prompt itself). A failing
        or late plugin is logged and skipped.
        """
        blocks = self._plugins.prompt_context(context, user_text)
        if not host:
            return blocks
        kind = conversation_kind if conversation_kind is not None else implied_kind(context)
        return [host_context(self.utcnow(), kind), *blocks]

    def utcnow(self) -> datetime:
        """The wall-clock time, in UTC, from ``RuntimeOptions.clock`` when it has a ``utcnow`` (``ManualClock``
        does), else from the system."""
        return clock_utcnow(self._clock)

    def after_turn(self, context: ToolContext, transcript: Sequence[Message]) -> None:
        """Let plugins observe a finished turn; a failing or late plugin is logged and skipped."""
        self._plugins.after_turn(context, list(transcript))

    async def aprompt_context(
        self, context: ToolContext, user_text: str, *, conversation_kind: ConversationKind | None = None,
        host: bool = True,
    ) -> list[str]:
        """Async twin of ``prompt_context`` (hooks run on a worker thread)."""
        return await asyncio.to_thread(self.prompt_context, context, user_text, conversation_kind=conversation_kind,
                                       host=host)

    async def aafter_turn(self, context: ToolContext, transcript: Sequence[Message]) -> None:
        """Async twin of ``after_turn`` (hooks run on a worker thread)."""
        await asyncio.to_thread(self.after_turn, context, transcript)

    # -- lifecycle -----------------------------------------------------------------------------
    def close(self) -> None:
        """Run every plugin's ``shutdown`` once; later calls do nothing."""
        if not self._execution.closing():  # the runtime's one closed state, set once under the execution's lock
            return
        atexit.unregister(self._atexit)
        try:
            self._plugins.shutdown(self)
        finally:
            self._plugins.close()
            self._execution.close()
            self._loop.close()

    @property
    def closed(self) -> bool:
        """Whether ``close()`` has begun: tools are refused from then on (``unavailable``)."""
        return self._execution.closed

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        counts = (f"sources={len(self._catalog.sources)} tools={len(self._catalog)} "
                  f"plugins={len(self._plugins.loaded)}")
        return f"<Runtime {counts}>"

