"""``explain`` is the ranking's own record: over hundreds of searches of a real catalog its parts add up to each
score, its order is searchTools' order, and its admission and order reasons are those the ranking applied; and it
says why a named tool is not returned (``SearchIndex.why_not``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from importlib.resources import files
from typing import Any

import pytest
from click.testing import CliRunner

from junior_core import Runtime, Source, Tool
from junior_core import cli as cli_module
from junior_core._plugins.plugin_set import PluginSet
from tests.helpers import OBJECT, SourcePlugin, echo
from tests.test_explain import garden, kitchen


def reference_lines() -> list[str]:
    text = files("junior_core").joinpath("data", "reference_tools.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if len(line.split()) > 3]


def reference_catalog(lines: list[str]) -> list[SourcePlugin]:
    """The first 400 BFCL functions of the reference catalog as tools, 50 a source (eight sources)."""
    plugins, seen = [], set()
    for start in range(0, 400, 50):
        tools = []
        for line in lines[start : start + 50]:
            name, *words = line.split()
            name = re.sub(r"[^A-Za-z0-9_]", "_", name)[:48].strip("_") or "tool"
            if name in seen:
                continue
            seen.add(name)
            tools.append(Tool(name, " ".join(words).capitalize() + ".", OBJECT, echo))
        plugins.append(SourcePlugin(Source(f"ref{start // 50}", "Reference functions."), tools))
    return plugins


@pytest.fixture(scope="module")
def catalog() -> Iterator[tuple[Runtime, list[str]]]:
    lines = reference_lines()
    queries = [" ".join(line.split()[1:8]) for line in lines[400:640]]  # functions not installed
    with Runtime(plugins=reference_catalog(lines), index_cache=False) as rt:
        yield rt, queries


def test_explain_is_the_rankings_record_over_240_queries(catalog: tuple[Runtime, list[str]]) -> None:
    rt, queries = catalog
    assert len(queries) >= 200
    checked = admitted_by = 0
    kinds: set[str] = set()
    for query in queries:
        explained = rt.explain(query, max_results=10)
        assert [t["tool_name"] for t in explained["tools"]] == \
            [t["tool_name"] for t in rt.search_tools(query, max_results=10)["tools"]], query
        previous: dict[str, Any] | None = None
        for tool in explained["tools"]:
            parts = sum(w["added"] for w in tool["words"]) + sum(v["added"] for v in tool.get("verbs", []))
            assert parts == pytest.approx(tool["score"], abs=2e-3), (query, tool)
            why = tool["admitted"]
            kinds.add(why["by"])
            terms = {w["term"] for w in tool["words"]}
            if why["by"] == "telling word":
                assert why["term"].replace("\x1f", " ") in terms or why["term"] in terms, (query, tool)
            elif why["by"] == "coverage":
                assert why["held"] >= why["needed"] - 1e-3, (query, tool)
            elif why["by"] == "partial match":  # shown below the floor: it holds a word of the query
                assert terms, (query, tool)
            elif why["by"] == "its source":
                assert tool["tool_name"].startswith(why["source"] + "__"), (query, tool)
            else:
                pytest.fail(f"{query!r}: {tool['tool_name']} admitted by {why['by']} in a search of every source")
            admitted_by += 1
            # A tool stands below one with a lower score only for a reason explain states.
            if previous is not None and tool["score"] > previous["score"] + 1e-3:
                assert "order" in tool or "order" in previous, (query, previous, tool)
            previous = tool
            checked += 1
    assert checked >= 400 and admitted_by == checked
    assert {"telling word", "coverage"} <= kinds


def test_why_not_says_what_a_tool_lacks_and_which_floor_it_missed(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(kitchen(), garden(), index_cache=False)
    # Holds none of the words.
    boil = rt.explain("bake bread", tool="kitchen__boil_water")["why_not"]
    assert boil["returned"] is False and boil["rank"] is None and boil["words"] == []
    assert boil["lacked"] == ["bake", "bread"] and "none of the request's words" in boil["why"]
    # Passed the floor, ranks after the one returned.
    plants = rt.explain("bake bread", max_results=1, tool="garden__water_plants")["why_not"]
    assert plants["returned"] is False and plants["rank"] == 2 and "ranks 2, after the 1 returned" in plants["why"]
    assert [w["term"] for w in plants["words"]] == ["bread"] and plants["lacked"] == ["bake"]
    assert plants["floor"]["telling word"] == "bread"
    # Holds a word, misses the floor: the clause's share it held and needed.
    recipes = rt.explain("list the plants in the beds", tool="kitchen__list_recipes")["why_not"]
    assert recipes["rank"] is None and [w["term"] for w in recipes["words"]] == ["list"]
    clause = recipes["floor"]["clauses"][0]
    assert clause["held"] < clause["needed"] and recipes["floor"]["telling word"] is None
    assert "did not pass the floor" in recipes["why"]
    # Returned: its rank.
    bread = rt.explain("bake bread", tool="kitchen__bake_bread")["why_not"]
    assert bread["returned"] is True and bread["rank"] == 1 and "why" not in bread
    assert rt.explain("bake bread", tool="attic__nothing")["why_not"]["known"] is False


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    def fake_load() -> PluginSet:
        plugin_set = PluginSet(strict=True)
        plugin_set.add(kitchen())
        plugin_set.add(garden())
        return plugin_set

    monkeypatch.setattr("junior_core.cli._common.load_plugins", fake_load)
    yield CliRunner()


def test_junior_search_explain_tool_prints_why_not(runner: CliRunner) -> None:
    result = runner.invoke(cli_module.build_cli(),
                           ["search", "list the plants in the beds", "--explain", "--tool", "kitchen__list_recipes"])
    assert "kitchen__list_recipes: not returned: it did not pass the floor" in result.output, result.output
    assert "   holds list in name" in result.output and "   lacks: plants, beds" in result.output
    assert re.search(r"floor, clause 0: held [\d.]+ of [\d.]+ needed", result.output)
    refused = runner.invoke(cli_module.build_cli(), ["search", "bake", "--tool", "kitchen__bake_bread"])
    assert refused.exit_code == 2 and "--explain" in refused.output


def test_a_search_asked_again_after_a_rebuild_records_only_the_second_attempt(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import junior_core._discovery.index as index_module

    real, calls = index_module.admit, []

    def damaged_once(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("damaged block")
        return real(*args, **kwargs)

    monkeypatch.setattr(index_module, "admit", damaged_once)
    with Runtime(plugins=[garden()], index_cache=False) as rt:
        explained = rt.explain("water the plants", max_results=5)
    assert len(calls) >= 2, "the search was not asked again"
    tool = explained["tools"][0]
    assert sum(w["added"] for w in tool["words"]) == pytest.approx(tool["score"], abs=2e-3), tool
