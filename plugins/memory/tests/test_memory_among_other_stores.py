"""The workspace's own memory first: with two other memory-like servers installed beside junior-memory, memory
requests find memory's tools ahead of theirs (the sources here mimic basic-memory and the reference MCP memory
server, tool names and descriptions as those servers give them)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from junior_memory import MemoryPlugin

from junior_core import Runtime, Source, Tool, hookimpl

NOWHERE = "sqlite:////dev/null/no-such-dir/memory.sqlite3"  # searching never opens the store
OBJECT: dict[str, Any] = {"type": "object", "properties": {}}

BASIC_MEMORY = {
    "write_note": "Create or update a markdown note. Returns a markdown formatted summary of the semantic content.",
    "read_note": "Read a markdown note by title or permalink.",
    "edit_note": "Edit an existing markdown note using various operations like append, prepend, find_replace.",
    "delete_note": "Delete a note by title or permalink.",
    "search_notes": "Search across all content in the knowledge base with advanced syntax support.",
    "recent_activity": "Get recent activity for a project or across all projects.",
    "build_context": "Build context from a memory:// URI to continue conversations naturally.",
    "list_memory_projects": "List all available projects with their status.",
    "create_memory_project": "Create a new Basic Memory project.",
    "delete_project": "Delete a Basic Memory project.",
    "set_default_project": "Set default project in config. Requires restart to take effect.",
}
GRAPH_MEMORY = {
    "create_entities": "Create multiple new entities in the knowledge graph",
    "create_relations": "Create multiple new relations between entities in the knowledge graph.",
    "add_observations": "Add new observations to existing entities in the knowledge graph",
    "delete_entities": "Delete multiple entities and their associated relations from the knowledge graph",
    "delete_observations": "Delete specific observations from entities in the knowledge graph",
    "delete_relations": "Delete multiple relations from the knowledge graph",
    "read_graph": "Read the entire knowledge graph",
    "search_nodes": "Search for nodes in the knowledge graph based on a query",
    "open_nodes": "Open specific nodes in the knowledge graph by their names",
}


def _answer(**arguments: Any) -> dict[str, Any]:
    return {"ok": True}


class OtherMemoryServers:
    """Two memory-like tool sets, registered in process the way the MCP bridge registers a server's tools."""

    @hookimpl
    def register_sources(self, register: Any) -> None:
        register(Source("mcp:basic-memory", "Basic Memory: a local knowledge base of markdown notes in projects."),
                 tools=[Tool(name, text, OBJECT, _answer) for name, text in BASIC_MEMORY.items()])
        register(Source("mcp:memory", "Knowledge graph memory server: entities, relations and observations."),
                 tools=[Tool(name, text, OBJECT, _answer) for name, text in GRAPH_MEMORY.items()])


REQUESTS = [
    ("list memories about the user", "memory__list"),
    ("delte the memroy", "memory__forget"),
    ("delete the memory", "memory__forget"),
    ("tell me what you know about me", "memory__list"),
    ("show everything you remember about me", "memory__list"),
    ("forget that deploys are on Fridays", "memory__forget"),
    ("remember that I prefer tabs", "memory__remember"),
    ("search my memories about deploys", "memory__search"),
]


@pytest.fixture(scope="module")
def rt() -> Iterator[Runtime]:
    with Runtime(plugins=[MemoryPlugin(url=NOWHERE), OtherMemoryServers()], index_cache=False) as runtime:
        assert len(runtime.catalog_tools()) == 4 + len(BASIC_MEMORY) + len(GRAPH_MEMORY)
        yield runtime


@pytest.mark.parametrize(("query", "tool"), REQUESTS)
def test_a_memory_request_finds_the_workspaces_own_memory_tool_first(rt: Runtime, query: str, tool: str) -> None:
    ranked = [t["tool_name"] for t in rt.search_tools(query)["tools"]]
    assert ranked[0] == tool, ranked[:5]
