"""A call of the model's or the host's, read and checked: ``Prepared`` to run, or ``Answered`` instead.

One place for every path (``call_model_tool``, ``execute_tool``, ``search_tools``, ``call_tool`` and their async
twins): read the model's input, find a tool the context may reach (``Reach``), validate the arguments against
its schema and ask the ``before_tool_execute`` policies. Every check raises ``protocol.Refusal`` carrying the
model-facing answer, so no layer returns "a dict or a tuple".
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from junior_core import _protocol as protocol
from junior_core._protocol import EXECUTE_TOOL, SEARCH_TOOLS, Refusal
from junior_core._protocol.limits import MAX_DEPTH, too_deep, too_long_number

if TYPE_CHECKING:
    from junior_core._catalog.catalog import Catalog, CatalogTool, Tool
    from junior_core._catalog.exposure import Reach
    from junior_core._discovery import Discovery
    from junior_core._plugins.plugin_set import PluginSet
    from junior_core._schemas.fastcheck import Check
    from junior_core.context import ToolContext

__all__ = ["Answered", "Dispatch", "Prepared"]

log = logging.getLogger("junior.runtime")


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


@attrs.define(eq=False)
class Dispatch:
    """Prepares calls against one catalog, as ``reach`` shows it, with ``plugins``' policies."""

    _catalog: Catalog
    _reach: Reach
    _discovery: Discovery
    _plugins: PluginSet
    _default_timeout_s: float
    _validators: dict[str, tuple[Tool, Check | None, Any]] = attrs.field(factory=dict, init=False)

    def may_wait(self, name: object) -> bool:
        """Whether preparing a call of ``name`` may block: a search (the index may be built or read from disk),
        or policy and visibility hooks (each may take up to the hook deadline)."""
        plugins = self._plugins
        return name == SEARCH_TOOLS or plugins.implements("before_tool_execute") or plugins.implements("tool_visible")

    # -- the model's calls ---------------------------------------------------------------------
    def model_call(self, name: Any, arguments: Any, context: ToolContext) -> Prepared | Answered:
        """Any tool of ``model_tools()`` by name; ``arguments`` is what the model sent (an object or JSON text)."""

        def prepare() -> Prepared | Answered:
            args = protocol.json_arguments(name, arguments) if isinstance(arguments, str) else arguments
            if too_deep(args):  # before validation, messages or repr recurse into it
                return Answered(protocol.nesting_error())
            if name == EXECUTE_TOOL:
                tool_name, tool_args = protocol.execute_request(args)
                return self._clear(self._reachable(tool_name, context), tool_args, context)
            if name == SEARCH_TOOLS:
                return Answered(self._discovery.search(protocol.search_request(args), self._reach.hidden_for(context)))
            if not isinstance(name, str):
                return Answered(self._discovery.unknown_tool(repr(name)[:200], self._reach.hidden_for(context)))
            entry = self._reachable(name[:200], context, direct=True)  # a direct tool, called by its own name
            if not isinstance(args, Mapping):
                return Answered(protocol.not_an_object(entry.tool_name))
            return self._clear(entry, dict(args), context)

        return self._guarded(name, prepare)

    def execute(self, tool_name: Any, arguments: Any, context: ToolContext) -> Prepared | Answered:
        """executeTool with its two fields apart (``Runtime.execute_tool``), answered as the model's call would be."""
        if not isinstance(tool_name, str) or not isinstance(arguments, Mapping):
            return self.model_call(EXECUTE_TOOL, {"tool_name": tool_name, "arguments": arguments}, context)

        def prepare() -> Prepared | Answered:
            if too_deep(arguments, MAX_DEPTH - 1):  # one level less: inside executeTool's own object
                return Answered(protocol.nesting_error())
            return self._clear(self._reachable(tool_name, context), dict(arguments), context)

        return self._guarded(EXECUTE_TOOL, prepare)

    def _guarded(self, name: Any, prepare: Callable[[], Prepared | Answered]) -> Prepared | Answered:
        try:
            return prepare()
        except Refusal as refusal:
            return Answered(refusal.answer)
        except Exception:
            log.exception("preparing a call of %r failed", name if isinstance(name, str) else type(name).__name__)
            return Answered(protocol.internal_error(name[:200] if isinstance(name, str) else None))

    # -- the host's calls ----------------------------------------------------------------------
    def host_call(self, tool_name: str, arguments: Mapping[str, Any] | None, context: ToolContext
                  ) -> Prepared | Answered:
        """``Runtime.call_tool``: any catalog tool, hidden ones included; ``KeyError`` for an unknown tool_name."""
        entry = self._catalog.get(tool_name)
        if entry is None:
            raise KeyError(f"no tool named {tool_name!r} in the catalog")
        if too_deep(arguments):
            return Answered(protocol.nesting_error(tool_name))
        try:
            return self._clear(entry, dict(arguments or {}), context)
        except Refusal as refusal:
            return Answered(refusal.answer)

    # -- the checks ----------------------------------------------------------------------------
    def _reachable(self, tool_name: str, context: ToolContext, direct: bool = False) -> CatalogTool:
        """The tool ``tool_name`` names if the model may call it in ``context``; else raises ``Refusal``.

        A tool hidden from the context's actor or conversation is refused exactly as a name that does not exist.
        """
        found = self._reach.find(tool_name, context, direct=direct)
        if found == "unknown":
            raise Refusal(self._discovery.unknown_tool(tool_name, self._reach.hidden_for(context)))
        if found == "hidden":
            raise Refusal(protocol.not_for_the_model(tool_name))
        return found

    def _clear(self, entry: CatalogTool, args: dict[str, Any], context: ToolContext) -> Prepared:
        """Validate ``args`` and ask the ``before_tool_execute`` policies; raises ``Refusal``."""
        tool_name = entry.tool_name
        long_number = too_long_number(args)
        if long_number is not None:  # before validation, whose messages print it, and fail
            raise Refusal(protocol.invalid_argument(
                f"Invalid arguments for {tool_name} at '{long_number}': an integer of more than 4,000 digits. "
                "Send a smaller number, or the digits as a string if the input_schema allows one.",
                long_number, "an integer of more than 4,000 digits", tool_name))
        try:
            errors = self._argument_errors(entry, args)
        except Exception:  # the tool's own schema is broken (e.g. a $ref to nowhere)
            log.exception("validating arguments of %s failed; its input_schema is broken", tool_name)
            raise Refusal(protocol.broken_schema(tool_name)) from None
        if errors:
            raise Refusal(protocol.validation_error(errors, f"arguments for {tool_name}", tool_name))
        veto = self._plugins.before_tool_execute(entry.tool, args, context)
        if veto is not None:
            raise Refusal(protocol.error("not_permitted", veto.message, tool_name))
        return Prepared(entry, args, context, float(entry.tool.timeout_s or self._default_timeout_s))

    def _argument_errors(self, entry: CatalogTool, args: dict[str, Any]) -> list[Any]:
        """JSON Schema errors of ``args``; a plain schema's quick check spares valid calls the full validator."""
        cached = self._validators.get(entry.tool_name)
        if cached is None and len(self._validators) > 2 * len(self._catalog) + 64:
            # Run-time sources come and go: forget the validators of tool_names the catalog no longer has.
            for gone in [name for name in self._validators if self._catalog.get(name) is None]:
                del self._validators[gone]
        if cached is None or cached[0] is not entry.tool:  # compiled per Tool object: providers replace tools
            from referencing import Registry

            from junior_core._schemas.fastcheck import compile_check
            from junior_core._schemas.patterns import validator_for

            # An empty registry: a $ref is resolved inside the schema or not at all, never fetched from a URL.
            validator = validator_for()(entry.tool.input_schema, registry=Registry())
            cached = (entry.tool, compile_check(entry.tool.input_schema), validator)
            self._validators[entry.tool_name] = cached
        _, quick, validator = cached
        if quick is not None and quick(args):
            return []
        return list(validator.iter_errors(args))  # a broken $ref raises: the caller maps it to tool_failed
