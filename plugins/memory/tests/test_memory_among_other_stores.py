"""The workspace's own memory first: with two other memory-like MCP servers installed beside junior-memory, memory
requests find memory's tools ahead of theirs, and never another store's destructive tool first.

The two servers are real MCP servers run as subprocesses through the MCP bridge, configured in a junior.toml as a
user configures them; each offers the tools (names, descriptions, input schemas) that basic-memory and the
reference MCP memory server list in LiveMCPBench's catalog (``data/other_memory_servers.json``), served by
``servers/recorded_memory_server.py``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from junior_mcp_bridge import MCPBridge, load_config
from junior_memory import MemoryPlugin

from junior_core import Runtime

pytestmark = pytest.mark.slow  # two MCP servers, each a Python process

HERE = Path(__file__).parent
SERVER = HERE / "servers" / "recorded_memory_server.py"
RECORDED = json.loads((HERE / "data" / "other_memory_servers.json").read_text(encoding="utf-8"))
OTHERS = ("basic-memory", "memory")  # the names the catalog's configs give them
NOWHERE = "sqlite:////dev/null/no-such-dir/memory.sqlite3"  # searching never opens the store

REQUESTS = [
    ("list memories about the user", "memory__list"),
    ("delte the memroy", "memory__forget"),
    ("delete the memory", "memory__forget"),
    ("forget my preference about PR summaries", "memory__forget"),
    # Nothing to search for: reading every memory or searching them both answer it.
    ("tell me what you know about me", ("memory__list", "memory__search")),
    ("show everything you remember about me", "memory__list"),
    ("forget that deploys are on Fridays", "memory__forget"),
    ("remember that I prefer tabs", "memory__remember"),
    ("search my memories about deploys", "memory__search"),
]


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    config = tmp_path_factory.mktemp("other-stores") / "junior.toml"
    config.write_text("".join(
        f'[mcp.servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps([str(SERVER), name])}\n\n'
        for name in OTHERS
    ))
    bridge = MCPBridge(load_config(environ={"JUNIOR_CONFIG": str(config)}))
    with Runtime(plugins=[MemoryPlugin(url=NOWHERE), bridge], index_cache=False) as runtime:
        for name in OTHERS:  # both servers started and listed their recorded tools
            listed = {entry.tool_name for entry in runtime.catalog_tools(f"mcp:{name}")}
            assert listed == {f"mcp__{name}__{tool['name']}" for tool in RECORDED[name]["tools"]}, name
        yield runtime


@pytest.mark.parametrize(("query", "tool"), REQUESTS)
def test_a_memory_request_finds_the_workspaces_own_memory_tool_first(
        rt: Runtime, query: str, tool: str | tuple[str, ...]) -> None:
    ranked = [t["tool_name"] for t in rt.search_tools(query)["tools"]]
    # junior-memory's tool first: so never another store's tool, its destructive ones included (delete_project).
    assert ranked[0] in ((tool,) if isinstance(tool, str) else tool), ranked[:5]


def test_the_other_stores_are_real_servers_answering_through_the_bridge(rt: Runtime) -> None:
    answer = rt.execute_tool("mcp__memory__read_graph", {})
    assert answer["ok"] is True and "stand-in" in json.dumps(answer["result"]), answer
