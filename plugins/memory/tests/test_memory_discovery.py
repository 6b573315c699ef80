"""The memory tools are found by the words people use: a write request finds memory__remember first."""

from __future__ import annotations

import pytest
from junior_memory import MemoryPlugin

from junior_core import Runtime

# Refers to no database: searching never opens the store.
NOWHERE = "sqlite:////dev/null/no-such-dir/memory.sqlite3"


@pytest.fixture(scope="module")
def rt() -> Runtime:
    with Runtime(plugins=[MemoryPlugin(url=NOWHERE)]) as runtime:
        yield runtime  # type: ignore[misc]


@pytest.mark.parametrize(
    "query",
    ["save a preference", "remember a preference", "remember this for later", "store this",
     "keep in mind that deploys need two approvals"],
)
def test_write_requests_find_remember_first_inside_memory(rt: Runtime, query: str) -> None:
    assert rt.search_tools(query, source="memory")["tools"][0]["tool_name"] == "memory__remember"


@pytest.mark.parametrize(
    ("query", "tool"),
    [("forget that preference", "memory__forget"), ("what do you remember about me", "memory__list"),
     ("search my saved memories about deploys", "memory__search")],
)
def test_other_requests_find_their_tool_in_the_top_3(rt: Runtime, query: str, tool: str) -> None:
    assert tool in [t["tool_name"] for t in rt.search_tools(query)["tools"][:3]]
