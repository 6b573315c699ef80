"""The tools a plugin's search is tried among by ``assert_found``: junior-memory, when installed, and a background
catalog of public tools (the words of the reference catalog discovery reckons rarity with), beside the plugin.

The background sources are made once per process, and the runtime of a plugin's sources among them once per
catalog (the few latest kept; the index itself is stored as the plugin's runtime stores its own), so a test file
that makes a runtime per test builds it once.
"""

from __future__ import annotations

import atexit
import functools
import json
import threading
from collections import OrderedDict
from importlib import metadata, resources
from typing import TYPE_CHECKING, Any

from junior_core._catalog.catalog import Source, Tool
from junior_core._plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from junior_core._runtime.runtime import Runtime

__all__ = ["BACKGROUND_PREFIX", "background", "crowd"]

BACKGROUND_PREFIX = "background-"
"""The background sources' ids: ``background-00``, ``background-01``, ..."""
_PER_SOURCE = 10
"""Tools per background source: about what an MCP server has, so no background source outweighs real ones."""
_OBJECT: dict[str, Any] = {"type": "object"}
_KEPT = 4
"""Runtimes kept, one per catalog searched among the background: a test file's few plugin setups."""
_made: OrderedDict[str, Runtime] = OrderedDict()
_lock = threading.Lock()


@atexit.register
def _close_all() -> None:
    while _made:
        _made.popitem()[1].close()


def _nothing(arguments: dict[str, Any], context: Any) -> None:
    """A background tool is searched, never run."""


@functools.cache
def background() -> tuple[tuple[Source, tuple[Tool, ...]], ...]:
    """The background sources and their tools, read once per process from ``junior_core/data/
    reference_tools.txt`` (one tool a line: its name, then its words)."""
    text = resources.files("junior_core").joinpath("data", "reference_tools.txt").read_text(encoding="utf-8")
    tools: list[Tool] = []
    seen: set[str] = set()
    for line in text.splitlines():
        name, _, words = line.strip().partition(" ")
        if not words.strip() or name in seen:
            continue
        try:
            tools.append(Tool(name, words, _OBJECT, _nothing))
        except ValueError:
            continue  # a name junior would refuse (spaces, other scripts): the words alone do not make a tool
        seen.add(name)
    groups = [tools[i : i + _PER_SOURCE] for i in range(0, len(tools), _PER_SOURCE)]
    return tuple((Source(f"{BACKGROUND_PREFIX}{n:02d}", f"Background tools, group {n}."), tuple(group))
                 for n, group in enumerate(groups))


class _Sources:
    """Registers given sources with their tools."""

    def __init__(self, name: str, sources: list[tuple[Source, tuple[Tool, ...]]]) -> None:
        self.junior_plugin_name = name
        self.sources = sources

    @hookimpl
    def register_sources(self, register: Any) -> None:
        for source, tools in self.sources:
            register(source, tools=list(tools))


def _memory() -> object | None:
    """junior-memory's plugin from its entry point, if installed."""
    for entry in metadata.entry_points(group="junior", name="memory"):
        try:
            return entry.load()  # type: ignore[no-any-return]
        except Exception:  # noqa: BLE001 - not installed properly: searched without it
            return None
    return None


def crowd(runtime: Runtime) -> Runtime:
    """``runtime``'s sources (their tools as registered now) beside junior-memory and the background catalog."""
    mine = [(Source(info.id, info.description), tuple(e.tool for e in runtime.catalog_tools(info.id)))
            for info in runtime.source_info()]
    key = json.dumps([[source.id, source.description, [_signature(tool) for tool in tools]] for source, tools in mine],
                     sort_keys=True, default=repr)
    with _lock:
        made = _made.get(key)
        if made is not None and not made.closed:
            _made.move_to_end(key)
            return made
        from junior_core._runtime.runtime import Runtime

        ids = {source.id for source, _ in mine}
        plugins: list[object] = [_Sources("plugin-under-test", mine)]
        memory = _memory() if "memory" not in ids else None
        if memory is not None:
            plugins.append(memory)
        plugins.append(_Sources("background", [item for item in background() if item[0].id not in ids]))
        others = Runtime(plugins=plugins, strict=False, index_cache=runtime.options.index_cache)
        _made[key] = others
        while len(_made) > _KEPT:
            _made.popitem(last=False)[1].close()
        return others


def _signature(tool: Tool) -> list[Any]:
    """What of a tool its search reads: a catalog with the same signatures searches the same."""
    return [tool.name, tool.description, tool.input_schema, tool.annotations, tool.exposure, list(tool.keywords)]
