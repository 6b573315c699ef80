"""The runtime a bot embeds: plugins loaded, catalog built, the model's tools answered."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from junior_core._fastcheck import Check, compile_check
from junior_core._workers import BackgroundLoop, Call, DaemonPool
from junior_core.catalog import Catalog, CatalogTool, Tool
from junior_core.context import Message, ToolContext
from junior_core.discovery import (
    EXECUTE_DESCRIPTION,
    EXECUTE_SCHEMA,
    EXECUTE_TOOL,
    SEARCH_SCHEMA,
    SEARCH_TOOLS,
    Discovery,
    error,
    is_json,
    validation_error,
)
from junior_core.errors import RegistrationError, ToolError
from junior_core.plugins import PluginInfo, PluginSet, load, strict_from_env
from junior_core.registry import Register
from junior_core.search import summarize

__all__ = ["Runtime"]

log = logging.getLogger("junior.runtime")
DEFAULT_TIMEOUT_S = 30.0
_Prepared = tuple[CatalogTool, dict[str, Any], float]


class Runtime:
    """Loads plugins, builds the catalog, and answers ``searchTools`` and ``executeTool``.

    ``Runtime(plugins=[...])`` uses exactly the plugins given (modules, objects, or
    classes instantiated per runtime) and raises on a broken one;
    ``Runtime.from_entry_points()`` loads the installed ones, skipping and reporting
    the broken (``JUNIOR_STRICT_PLUGINS=1`` raises instead). ``lazy_sources=True`` (the CLI) lists a
    run-time source only when ``refresh_source`` asks for it, and tells plugins, through
    ``runtime.lazy_sources``, to connect to what backs such a source only then.
    """

    def __init__(
        self,
        plugins: Sequence[object] = (),
        *,
        strict: bool = True,
        default_timeout_s: float = DEFAULT_TIMEOUT_S,
        lazy_sources: bool = False,
        _plugin_set: PluginSet | None = None,
    ) -> None:
        self.default_timeout_s = default_timeout_s
        self.lazy_sources = lazy_sources
        self.catalog = Catalog()
        self.discovery = Discovery(self.catalog)
        self._pool = DaemonPool()
        self._loop = BackgroundLoop()
        self._closed = False
        self._close_lock = threading.Lock()
        self._validators: dict[str, tuple[Tool, Check | None, Any]] = {}
        self._plugins = _plugin_set if _plugin_set is not None else load(list(plugins), strict=strict)
        ref = weakref.ref(self)

        def close_at_exit() -> None:
            runtime = ref()
            if runtime is not None:
                runtime.close()

        self._atexit = close_at_exit
        atexit.register(close_at_exit)
        try:
            self._register_sources()
            self._plugins.call_each("startup", runtime=self, fatal_if_strict=True)
            for entry in self.catalog.sources:
                if entry.provider is not None and not lazy_sources:
                    self.refresh_source(entry.source.id)
        except BaseException:
            self.close()
            raise

    @classmethod
    def from_entry_points(cls, *, strict: bool | None = None, default_timeout_s: float = DEFAULT_TIMEOUT_S) -> Runtime:
        """A runtime of every installed ``junior`` entry point (see ``JUNIOR_LOAD_PLUGINS`` and friends)."""
        plugin_set = load(None, strict=strict_from_env() if strict is None else strict)
        return cls(default_timeout_s=default_timeout_s, _plugin_set=plugin_set)

    # -- plugins and catalog -------------------------------------------------------------------
    @property
    def plugins(self) -> list[PluginInfo]:
        """Every plugin tried, loaded or failed, with reasons."""
        return list(self._plugins.infos)

    @property
    def plugin_set(self) -> PluginSet:
        return self._plugins

    def _register_sources(self) -> None:
        for name in self._plugins.implementers("register_sources"):
            register = Register(name)
            try:
                self._plugins.call_one(name, "register_sources", register=register)
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

    def describe_source(self, source_id: str, description: str) -> None:
        """Replace a source's description; searchTools' description and the search index follow."""
        self.catalog.describe_source(source_id, description)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The runtime's background event loop, on a daemon thread, started on first use.

        Async handlers called through the synchronous API run here. A plugin that keeps async resources
        (MCP sessions, connection pools) on this loop saves a thread hop per synchronous call; the loop
        stops after the ``shutdown`` hooks have run.
        """
        return self._loop.loop

    @property
    def sources(self) -> list[dict[str, str]]:
        """``[{"id", "description"}]`` sorted by id."""
        return [{"id": e.source.id, "description": summarize(e.source.description)} for e in self.catalog.sources]

    # -- the model's tools ---------------------------------------------------------------------
    def model_tools(self) -> list[dict[str, Any]]:
        """searchTools, executeTool and every direct tool, as ``{"name", "description", "input_schema"}``."""
        tools = [
            {"name": SEARCH_TOOLS, "description": self.discovery.search_description(), "input_schema": SEARCH_SCHEMA},
            {"name": EXECUTE_TOOL, "description": EXECUTE_DESCRIPTION, "input_schema": EXECUTE_SCHEMA},
        ]
        for entry in self.catalog.tools():
            if entry.tool.exposure == "direct":
                tools.append(
                    {
                        "name": entry.tool_name,
                        "description": entry.tool.description,
                        "input_schema": entry.tool.input_schema,
                    }
                )
        return tools

    def search_tools(
        self, query: str | None = None, source: str | None = None, max_results: int | None = None
    ) -> dict[str, Any]:
        """Exactly what the searchTools tool returns."""
        return self.discovery.search({"query": query, "source": source, "max_results": max_results})

    def execute_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None = None, context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Exactly what the executeTool tool returns; never raises for anything the model could send."""
        return self.call_model_tool(EXECUTE_TOOL, {"tool_name": tool_name, "arguments": arguments or {}}, context)

    def call_model_tool(self, name: str, arguments: Any, context: ToolContext | None = None) -> dict[str, Any]:
        """Dispatch any ``model_tools()`` entry by name."""
        prepared = self._prepare_call(name, arguments, context)
        if isinstance(prepared, dict):
            return prepared
        entry, args, timeout = prepared
        ctx = context or ToolContext()
        if self._closed:
            return error("unavailable", "The runtime is closed; no tools can run.", entry.tool_name)
        try:
            future: Call | concurrent.futures.Future[Any]
            if entry.tool.is_async:
                future = self._loop.submit(entry.tool.handler(args, ctx))
            else:
                future = self._pool.call(entry.tool.handler, args, ctx)
        except RuntimeError:  # closed while this call was being prepared
            return error("unavailable", "The runtime is closed; no tools can run.", entry.tool_name)
        try:
            value = future.result(timeout)
        except (TimeoutError, concurrent.futures.TimeoutError):
            future.cancel()
            return self._timeout(entry, timeout)
        except BaseException as exc:  # mapped to a model-facing code
            if not future.done():
                raise  # the host itself was interrupted (Ctrl-C) while waiting, not the handler
            return self._failure(entry, exc)
        return self._success(entry, value)

    async def acall_model_tool(self, name: str, arguments: Any, context: ToolContext | None = None) -> dict[str, Any]:
        """Async twin of ``call_model_tool``; async handlers run on the caller's loop."""
        prepared = self._prepare_call(name, arguments, context)
        if isinstance(prepared, dict):
            return prepared
        entry, args, timeout = prepared
        ctx = context or ToolContext()
        if self._closed:
            return error("unavailable", "The runtime is closed; no tools can run.", entry.tool_name)
        try:
            if entry.tool.is_async:
                value = await asyncio.wait_for(entry.tool.handler(args, ctx), timeout)
            else:
                value = await asyncio.wait_for(
                    asyncio.wrap_future(self._pool.submit(entry.tool.handler, args, ctx)), timeout
                )
        except TimeoutError:
            return self._timeout(entry, timeout)
        except Exception as exc:  # noqa: BLE001 - mapped to a model-facing code (cancellation propagates)
            return self._failure(entry, exc)
        return self._success(entry, value)

    async def aexecute_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None = None, context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Async twin of ``execute_tool``."""
        return await self.acall_model_tool(
            EXECUTE_TOOL, {"tool_name": tool_name, "arguments": arguments or {}}, context
        )

    async def asearch_tools(
        self, query: str | None = None, source: str | None = None, max_results: int | None = None
    ) -> dict[str, Any]:
        """Async twin of ``search_tools`` (the index is in memory; this does not block on I/O)."""
        return self.search_tools(query, source, max_results)

    def _prepare_call(self, name: Any, arguments: Any, context: ToolContext | None) -> _Prepared | dict[str, Any]:
        if name == SEARCH_TOOLS:
            return self.discovery.search(arguments)
        if name == EXECUTE_TOOL:
            checked = self.discovery.check_execute(arguments)
            if isinstance(checked, dict):
                return checked
            tool_name, args = checked
            return self._prepare(tool_name, args, context)
        entry = self.catalog.get(name) if isinstance(name, str) else None
        if entry is None or entry.tool.exposure != "direct":
            shown = name if isinstance(name, str) else repr(name)
            return self.discovery.unknown_tool(shown[:200])
        if not isinstance(arguments, Mapping):
            return error("invalid_arguments", f"{name} takes an object of arguments.", entry.tool_name)
        return self._prepare(entry.tool_name, dict(arguments), context)

    def _prepare(self, tool_name: str, args: dict[str, Any], context: ToolContext | None) -> _Prepared | dict[str, Any]:
        entry = self.catalog.get(tool_name)
        if entry is None:
            return self.discovery.unknown_tool(tool_name)
        if entry.tool.exposure == "hidden":
            return error(
                "not_permitted",
                f"{tool_name} is not available to the model. Use searchTools to find a tool you can call.",
                tool_name,
            )
        try:
            errors = self._argument_errors(entry, args)
        except Exception:  # the tool's own schema is broken (e.g. a $ref to nowhere)
            log.exception("validating arguments of %s failed; its input_schema is broken", tool_name)
            return error(
                "tool_failed",
                f"{tool_name} cannot be called: its input schema is broken (logged for the operator). "
                "Use another tool.",
                tool_name,
            )
        if errors:
            return validation_error(errors, f"arguments for {tool_name}", tool_name)
        ctx = context or ToolContext()
        for plugin in self._plugins.implementers("before_tool_execute"):
            try:
                veto = self._plugins.call_one(
                    plugin, "before_tool_execute", tool=entry.tool, arguments=args, context=ctx
                )
            except Exception:
                log.exception("before_tool_execute of plugin %r failed; denying %s", plugin, tool_name)
                return error(
                    "not_permitted", f"{tool_name} could not be cleared to run (a policy check failed).", tool_name
                )
            if veto is not None and veto is not True:
                reason = veto if isinstance(veto, str) and veto.strip() else "This call was not permitted."
                return error("not_permitted", reason[:500], tool_name)
        return entry, args, float(entry.tool.timeout_s or self.default_timeout_s)

    def _argument_errors(self, entry: CatalogTool, args: dict[str, Any]) -> list[Any]:
        """JSON Schema errors of ``args``; a plain schema's quick check spares valid calls the full validator."""
        cached = self._validators.get(entry.tool_name)
        if cached is None or cached[0] is not entry.tool:  # compiled per Tool object: providers replace tools
            from jsonschema import Draft202012Validator
            from referencing import Registry

            # An empty registry: a $ref is resolved inside the schema or not at all, never fetched from a URL.
            validator = Draft202012Validator(entry.tool.input_schema, registry=Registry())
            cached = (entry.tool, compile_check(entry.tool.input_schema), validator)
            self._validators[entry.tool_name] = cached
        _, quick, validator = cached
        if quick is not None and quick(args):
            return []
        return list(validator.iter_errors(args))  # a broken $ref raises: the caller maps it to tool_failed

    def _success(self, entry: CatalogTool, value: Any) -> dict[str, Any]:
        if not is_json(value):
            log.error("tool %s returned a value that is not JSON-serialisable: %r", entry.tool_name, type(value))
            return error(
                "tool_failed",
                f"{entry.tool_name} returned a result that could not be encoded as JSON (logged for the operator). "
                "Try a different tool or report the problem.",
                entry.tool_name,
            )
        return {"ok": True, "tool_name": entry.tool_name, "result": value}

    def _timeout(self, entry: CatalogTool, timeout: float) -> dict[str, Any]:
        log.warning("tool %s timed out after %.3g s", entry.tool_name, timeout)
        return error(
            "timeout",
            f"{entry.tool_name} did not finish within {timeout:g} s. Try again later, or with a smaller request.",
            entry.tool_name,
        )

    def _failure(self, entry: CatalogTool, exc: BaseException) -> dict[str, Any]:
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
        """Text blocks plugins want injected before a model turn; a failing plugin is logged and skipped."""
        blocks: list[str] = []
        for _, result in self._plugins.call_each("prompt_context", context=context, user_text=user_text):
            if isinstance(result, str):
                result = [result]
            for block in result or ():
                if isinstance(block, str) and block.strip():
                    blocks.append(block)
        return blocks

    def after_turn(self, context: ToolContext, transcript: Sequence[Message]) -> None:
        """Let plugins observe a finished turn; a failing plugin is logged and skipped."""
        self._plugins.call_each("after_turn", context=context, transcript=list(transcript))

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
            self._plugins.call_each("shutdown", runtime=self)
        finally:
            self._pool.close()
            self._loop.close()

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
