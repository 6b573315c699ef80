"""The memory tools are found by the words people use: a write request finds memory__remember first."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

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


@pytest.mark.parametrize(
    ("query", "tool", "note"),
    [("rember that I like tabs", "memory__remember", "Searched for remember (you wrote rember)."),
     ("frget my tabs preference", "memory__forget", "Searched for forget (you wrote frget)."),
     ("lsit my memroies", "memory__list",
      "Searched for list (you wrote lsit), memories (you wrote memroies).")],
)
def test_a_typo_finds_the_memory_tool_with_memory_installed_alone(rt: Runtime, query: str, tool: str,
                                                                  note: str) -> None:
    answer = rt.search_tools(query)
    assert answer["tools"][0]["tool_name"] == tool
    assert answer["note"] == note


DATA = Path(os.environ.get("JUNIOR_DATA_DIR") or Path(__file__).resolve().parents[4] / "shared" / "data") / "livemcpbench"
NO_DATA = (f"needs the public benchmark data livemcpbench/ in {DATA.parent}: README.md's Data section says how to "
           "fetch it, or set JUNIOR_DATA_DIR")


def _benchmarks() -> ModuleType:
    path = Path(__file__).resolve().parents[3] / "benchmarks" / "memory_intent.py"
    spec = importlib.util.spec_from_file_location("junior_memory_intent_benchmark", path)
    assert spec is not None and spec.loader is not None
    sys.path.append(str(path.parent))  # after site-packages, so benchmarks/mcp.py never shadows the mcp SDK
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def catalogs() -> Iterator[tuple[object, ModuleType]]:
    """junior-memory alone, beside the 527 real MCP tools of LiveMCPBench, and beside MetaTool's 199 tools."""
    bench = _benchmarks()
    cat = bench.Catalogs()
    try:
        yield cat, bench
    finally:
        cat.close()


@pytest.mark.skipif(not DATA.is_dir(), reason=NO_DATA)
@pytest.mark.parametrize(("sentence", "tool"), [
    ("Please remember that I prefer terse PR summaries.", "memory__remember"),
    ("Please forget that I prefer terse PR summaries.", "memory__forget"),
])
@pytest.mark.parametrize("setting", ["alone", "live", "meta"])
def test_the_seed_sentences_rank_their_tool_first_in_every_catalog(
    catalogs: tuple[object, ModuleType], sentence: str, tool: str, setting: str
) -> None:
    cat, _ = catalogs
    rt: Runtime = getattr(cat, setting)
    assert rt.search_tools(sentence)["total_catalog_tools"] == {"alone": 4, "live": 531, "meta": 203}[setting]
    assert rt.search_tools(sentence)["tools"][0]["tool_name"] == tool
    assert rt.search_tools(sentence, source="memory")["tools"][0]["tool_name"] == tool


@pytest.mark.slow  # the floors of a whole request set: hundreds of searches in three catalogs
@pytest.mark.skipif(not DATA.is_dir(), reason=NO_DATA)
def test_held_out_requests_find_their_memory_tool_and_nothing_else(catalogs: tuple[object, ModuleType]) -> None:
    """Precision on the held-out half (docs/benchmarks.md): requests no tool serves, other tools' requests, MetaTool
    requests. How often the people's sentences find their memory tool is reported (docs/discovery.md), not a
    floor: the model's own transcripts are the yardstick for recall."""
    cat, bench = catalogs
    half = bench.discovery_requests()["heldout"]
    rows = {r["wording"]: r for r in bench.memory_rows(cat, "heldout", half["memory"], None)}
    assert rows["all"]["requests"] == 140
    controls = bench.control_row(cat, "heldout", half, None)
    assert (controls["no_match_requests"], controls["shared_requests"]) == (40, 40)
    assert controls["no_match_alone"] >= 90, "requests no tool serves get a memory tool with memory alone"
    assert controls["non_memory_memory_first"] <= 2.5
    assert controls["shared_named_beats_memory"] >= 92.5
    intrusion = bench.metatool_intrusion(cat, 500)["heldout"]
    assert intrusion["requests"] == 500 and intrusion["memory_in_top3"] <= 4.5


@pytest.mark.slow  # the floors of a whole request set: hundreds of searches in three catalogs
@pytest.mark.skipif(not DATA.is_dir(), reason=NO_DATA)
def test_the_third_set_keeps_its_first_figures(catalogs: tuple[object, ModuleType]) -> None:
    """Precision floors of the third set (docs/benchmarks.md), never tuned on: wording that avoids the tools' own
    words is where lexical ranking is weakest."""
    cat, bench = catalogs
    third = bench.discovery_requests(bench.THIRD)["third"]
    mine = next(r for r in bench.memory_rows(cat, "third", third["memory"], None) if r["wording"] == "all")
    assert mine["requests"] == 140  # its recall figures are reported (docs/discovery.md), not floors
    controls = bench.control_row(cat, "third", third, None)
    assert (controls["no_match_requests"], controls["shared_requests"]) == (40, 0)
    assert controls["no_match_alone"] >= 75  # 77.5 with the old reference, built from LiveMCPBench and MetaTool
    assert controls["non_memory_memory_first"] <= 12.5
