"""Who may reach which tool: the exposure words, the host's rules and ``[tools]`` table, and ``Reach``.

A tool's own ``exposure`` says how the model meets it; the host's rules (``Runtime(exposure=...)``,
``set_exposure``, ``[tools]`` in ``junior.toml``) override it; ``tool_visible`` hooks hide tools from one actor or
conversation. ``Reach`` puts the three together and is the one place asked "which tools can this context see"
and "may it call this one": by searchTools, executeTool, ``model_tools``, the MCP gateway and
``AnthropicToolSearch``. The exposure words themselves are defined in ``junior_core._schemas.functions``, beneath the
catalog (a ``Tool`` checks its own), and named here as well.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, cast

import attrs

from junior_core._base.errors import ConfigError
from junior_core._catalog.catalog import tool_name_prefix
from junior_core._schemas.functions import EXPOSURES, Exposure, check_exposure
from junior_core.context import Actor, Conversation, ToolContext

if TYPE_CHECKING:
    from junior_core._catalog.catalog import Catalog, CatalogTool

__all__ = [
    "EXPOSURES",
    "Exposure",
    "ExposurePolicy",
    "ExposureRule",
    "Reach",
    "check_exposure",
    "host_rules",
    "tool_rules",
]

PATTERN = re.compile(r"^[A-Za-z0-9_:*?\[\]!-]{1,200}$")
_WILDCARDS = frozenset("*?[]!")
MAX_VISIBILITY_ENTRIES = 1024
"""Actors and conversations whose hidden tools are remembered (per catalog and policy version), oldest dropped."""
NOTHING_HIDDEN: frozenset[str] = frozenset()
_NO_CONTEXT = ToolContext()


def _check_pattern(instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    if not isinstance(value, str) or not PATTERN.match(value):
        raise ValueError(
            f"invalid tool pattern {value!r}: a tool_name or source id, with * ? [...] wildcards "
            "(e.g. 'memory__*', 'mcp:git', 'mcp:*')"
        )


@attrs.frozen
class ExposureRule:
    """``pattern`` (a glob over tool_names and source ids) gets ``exposure``; ``origin`` says who set it."""

    pattern: str = attrs.field(validator=_check_pattern)
    exposure: Exposure = attrs.field(validator=check_exposure)
    origin: str = "api"

    def rank(self, tool_name: str, source_id: str) -> tuple[int, int] | None:
        """How specifically this rule names the tool (higher wins), or None if it does not match."""
        if self.pattern == tool_name:
            return (1, len(self.pattern))
        if fnmatchcase(tool_name, self.pattern) or fnmatchcase(source_id, self.pattern):
            return (0, sum(char not in _WILDCARDS for char in self.pattern))
        return None


class ExposurePolicy:
    """The host's exposure rules over the tools' own; ``version`` increases on every change.

    Among the rules matching a tool, the one naming its tool_name exactly wins, then the pattern with the most
    literal (non-wildcard) characters; a tie goes to the rule set later. No matching rule: the tool's own
    ``exposure``.
    """

    def __init__(self, rules: Iterable[ExposureRule] = ()) -> None:
        self._rules: list[ExposureRule] = []
        self._lock = threading.Lock()
        self.version = 0
        for rule in rules:
            self.add(rule)

    @property
    def rules(self) -> list[ExposureRule]:
        """In the order they were set (the later of two equally specific rules wins)."""
        return list(self._rules)

    def add(self, rule: ExposureRule) -> None:
        """Set ``rule``; one set earlier for the same pattern is replaced."""
        with self._lock:
            self._rules = [r for r in self._rules if r.pattern != rule.pattern] + [rule]
            self.version += 1

    def exposure(self, tool_name: str, source_id: str, own: str) -> Exposure:
        """The exposure the host gives a tool whose own exposure is ``own``."""
        best: tuple[int, int, int] | None = None
        chosen = own
        for order, rule in enumerate(self._rules):
            rank = rule.rank(tool_name, source_id)
            if rank is not None and (best is None or (*rank, order) > best):
                best, chosen = (*rank, order), rule.exposure
        return cast(Exposure, chosen)

    def hides_source(self, source_id: str) -> bool:
        """Whether the rules hide a tool of ``source_id`` that no rule names more specifically."""
        return self.exposure(tool_name_prefix(source_id), source_id, "deferred") == "hidden"


def tool_rules(path: Path | None) -> list[ExposureRule]:
    """The exposure rules of ``[tools]`` in ``path`` (none without a file or table); raises ``ConfigError``."""
    if path is None:
        return []
    from junior_core._base.config import read_file

    table = read_file(path).get("tools", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tools] must be a table of deferred, direct and hidden lists")
    unknown = sorted(set(table) - set(EXPOSURES))
    if unknown:
        raise ConfigError(f"{path}: [tools] {unknown[0]}: unknown field; use {', '.join(EXPOSURES)}")
    rules: list[ExposureRule] = []
    seen: dict[str, str] = {}
    for exposure in EXPOSURES:
        patterns = table.get(exposure, [])
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise ConfigError(f"{path}: [tools] {exposure}: must be a list of tool_name or source id patterns")
        for pattern in patterns:
            if pattern in seen:
                raise ConfigError(f"{path}: [tools] {exposure}: {pattern!r} is also in {seen[pattern]}; keep one")
            seen[pattern] = exposure
            try:
                rules.append(ExposureRule(pattern, exposure, origin=str(path)))
            except ValueError as exc:
                raise ConfigError(f"{path}: [tools] {exposure}: {exc}") from None
    return rules


def host_rules(config: bool | str | os.PathLike[str], exposure: Mapping[str, str] | None) -> list[ExposureRule]:
    """The ``[tools]`` rules of ``config`` (True: the file in effect, a path: that file, False: none), then those of
    ``exposure`` (which win a tie)."""
    from junior_core._base.config import config_path

    rules = tool_rules(config_path() if config is True else Path(config) if config is not False else None)
    return rules + [ExposureRule(pattern, value, origin="api") for pattern, value in (exposure or {}).items()]  # type: ignore[arg-type]


class VisibilityHooks(Protocol):
    """What ``Reach`` asks of the plugins (``PluginSet`` is one)."""

    def implements(self, hook: str) -> bool: ...

    def tool_visible(self, tools: Sequence[CatalogTool], context: ToolContext) -> frozenset[str] | None: ...


class Table:
    """Each catalog tool's exposure after the host's rules, for one catalog and policy version."""

    def __init__(self, catalog: Catalog, policy: ExposurePolicy, version: int) -> None:
        self.version = version  # read first by the caller: a change meanwhile makes this table older, never newer
        self.tools = catalog.tools()
        self.exposure: dict[str, Exposure] = {
            t.tool_name: policy.exposure(t.tool_name, t.source_id, t.tool.exposure) for t in self.tools
        }
        self.visible = [t for t in self.tools if self.exposure[t.tool_name] != "hidden"]
        self.direct = [t for t in self.visible if self.exposure[t.tool_name] == "direct"]
        self.deferred = [t for t in self.visible if self.exposure[t.tool_name] == "deferred"]
        self.hides_source = policy.hides_source


class Reach:
    """Which tools a context can see and whether it may call one, after exposure, rules and ``tool_visible``.

    A tool is *visible* in a context when its exposure (after the host's rules) is not ``hidden`` and no
    ``tool_visible`` hook hides it from the context's actor or conversation. The hooks are asked once per
    actor and conversation (not per message) and catalog version; a hook that fails hides every tool for that
    call (fail closed) and is asked again on the next.
    """

    def __init__(self, catalog: Catalog, policy: ExposurePolicy, hooks: VisibilityHooks) -> None:
        self.catalog = catalog
        self.policy = policy
        self._hooks = hooks
        self._table: Table | None = None
        self._table_lock = threading.Lock()
        self._hidden: OrderedDict[tuple[Actor | None, Conversation | None], tuple[int, frozenset[str]]] = (
            OrderedDict()
        )
        self._hidden_lock = threading.Lock()

    @property
    def version(self) -> int:
        """Increases whenever the catalog or the policy changes: both counters only grow, so their sum does."""
        return self.catalog.version + self.policy.version

    def table(self) -> Table:
        """The current exposure of every tool, remade only when the catalog or the policy changed."""
        table = self._table
        version = self.version
        if table is not None and table.version == version:
            return table
        with self._table_lock:
            table = self._table
            if table is None or table.version != version:
                table = self._table = Table(self.catalog, self.policy, version)
        return table

    def exposure_of(self, tool_name: str) -> Exposure:
        """A catalog tool's exposure after the host's rules; ``KeyError`` for an unknown tool_name."""
        entry = self.catalog.get(tool_name)
        if entry is None:
            raise KeyError(f"no tool named {tool_name!r} in the catalog")
        found = self.table().exposure.get(tool_name)
        return found or self.policy.exposure(tool_name, entry.source_id, entry.tool.exposure)

    def hidden_for(self, context: ToolContext | None) -> frozenset[str]:
        """The tool_names ``tool_visible`` hides from the context's actor and conversation."""
        if not self._hooks.implements("tool_visible"):
            return NOTHING_HIDDEN
        context = context or _NO_CONTEXT
        table = self.table()
        # Per channel and thread, not per message: every Slack message has a new message_ts.
        conversation = context.conversation
        if conversation is not None and conversation.message_ts is not None:
            conversation = attrs.evolve(conversation, message_ts=None)
        key = (context.actor, conversation)
        cached = self._hidden.get(key)
        if cached is not None and cached[0] == table.version:
            return cached[1]
        hidden = self._hooks.tool_visible(table.visible, ToolContext(context.actor, conversation))
        if hidden is None:  # a hook failed: fail closed for this call, ask again on the next
            return frozenset(t.tool_name for t in table.visible)
        with self._hidden_lock:
            self._hidden[key] = (table.version, hidden)
            self._hidden.move_to_end(key)
            while len(self._hidden) > MAX_VISIBILITY_ENTRIES:
                self._hidden.popitem(last=False)
        return hidden

    def visible(self, context: ToolContext | None = None, exposure: Exposure | None = None) -> list[CatalogTool]:
        """The tools the model may reach in ``context``, by tool_name: deferred and direct, or only ``exposure``."""
        table = self.table()
        tools = table.visible if exposure is None else table.direct if exposure == "direct" else table.deferred
        hidden = self.hidden_for(context)
        return [t for t in tools if t.tool_name not in hidden] if hidden else list(tools)

    def find(
        self, tool_name: str, context: ToolContext | None, *, direct: bool = False
    ) -> CatalogTool | Literal["unknown", "hidden"]:
        """The tool ``tool_name`` names if the model may call it in ``context`` (``direct``: by its own name).

        ``"unknown"`` for a name that does not exist or is hidden from the context (the two must look alike to
        the model), ``"hidden"`` for a tool whose exposure is hidden.
        """
        entry = self.catalog.get(tool_name)
        if entry is None or tool_name in self.hidden_for(context):
            return "unknown"
        exposure = self.exposure_of(tool_name)
        if direct and exposure != "direct":
            return "unknown"
        return "hidden" if exposure == "hidden" else entry

    def offered(self, context: ToolContext | None = None) -> list[str]:
        """The names of the model's tools in ``context``: searchTools, executeTool, then the direct tools."""
        from junior_core._protocol import EXECUTE_TOOL, SEARCH_TOOLS  # not needed at `junior --help`

        return [SEARCH_TOOLS, EXECUTE_TOOL, *(t.tool_name for t in self.visible(context, "direct"))]
