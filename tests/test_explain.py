"""Why a tool ranked: ``Runtime.explain`` and ``junior search --explain`` read out the one scoring pass's figures."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from junior_core import Runtime, Source, Tool
from junior_core import cli as cli_module
from junior_core._plugins.plugin_set import PluginSet
from tests.helpers import OBJECT, SourcePlugin, echo, notes_plugin


def kitchen() -> SourcePlugin:
    return SourcePlugin(
        Source("kitchen", "Cooking helpers."),
        [
            Tool("bake_bread", "Make a loaf in the oven.", OBJECT, echo),
            Tool("boil_water", "Heat a pot on the stove until it bubbles.", OBJECT, echo),
            Tool("list_recipes", "Every recipe, one per line.", OBJECT, echo, annotations={"readOnlyHint": True}),
        ],
    )


def garden() -> SourcePlugin:
    return SourcePlugin(
        Source("garden", "Plants and beds outside."),
        [Tool("water_plants", "Give the plants in a bed water; bread crumbs are no fertiliser.", OBJECT, echo)],
    )


def names(answer: dict[str, Any]) -> list[str]:
    return [t["tool_name"] for t in answer["tools"]]


@pytest.fixture
def rt(make_runtime: Callable[..., Runtime]) -> Runtime:
    return make_runtime(kitchen(), garden(), index_cache=False)


def test_a_tool_ranked_by_its_name_shows_its_names_words(rt: Runtime) -> None:
    explained = rt.explain("bake bread")
    assert names(explained) == names(rt.search_tools("bake bread"))
    first = explained["tools"][0]
    assert first["tool_name"] == "kitchen__bake_bread"
    words = {w["term"]: w for w in first["words"]}
    assert set(words) == {"bake", "bread"}
    assert words["bake"]["fields"] == ["name"] and words["bake"]["said"] == ["bake"]
    assert words["bread"]["fields"] == ["name"]
    assert all(w["added"] > 0 for w in words.values())
    verbs = sum(v["added"] for v in first.get("verbs", []))
    assert sum(w["added"] for w in words.values()) + verbs == pytest.approx(first["score"], abs=1e-3)
    assert first["admitted"]["by"] == "telling word" and first["admitted"]["term"] in {"bake", "bread"}


def test_a_word_in_the_description_alone_shows_that_field_and_adds_less(rt: Runtime) -> None:
    tools = {t["tool_name"]: t for t in rt.explain("bake bread")["tools"]}
    assert "garden__water_plants" in tools, "bread is in its description"
    words = {w["term"]: w for w in tools["garden__water_plants"]["words"]}
    assert set(words) == {"bread"}
    assert words["bread"]["fields"] == ["description"]
    ranked_by_name = {w["term"]: w for w in tools["kitchen__bake_bread"]["words"]}
    assert words["bread"]["added"] < ranked_by_name["bread"]["added"]


def test_common_words_admit_by_coverage_of_the_clause(rt: Runtime) -> None:
    # "list" is a word tools in general share: it tells no tool apart, so only coverage lets list_recipes in.
    # ("list files" no longer does: "files" is rare among the reference catalog's functions, so "list" alone
    # covers too little of that clause.)
    explained = rt.explain("list all")
    assert names(explained) == ["kitchen__list_recipes"]
    admitted = explained["tools"][0]["admitted"]
    assert admitted["by"] == "coverage" and admitted["clause"] == 0
    assert admitted["held"] >= admitted["needed"] > 0


def test_a_sibling_is_admitted_by_its_sources_telling_word(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes_plugin(), index_cache=False)
    tools = {t["tool_name"]: t for t in rt.explain("delete the list")["tools"]}
    assert tools["notes__delete_note"]["admitted"] == {"by": "telling word", "term": "delet"}
    assert tools["notes__find_notes"]["admitted"] == {
        "by": "its source", "source": "notes", "tool": "notes__delete_note", "term": "delet",
    }

def test_inside_a_source_no_floor_is_applied(rt: Runtime) -> None:
    explained = rt.explain("water", source="kitchen")
    assert names(explained) == ["kitchen__boil_water"]
    assert explained["tools"][0]["admitted"] == {"by": "source chosen"}


def test_an_exact_name_is_first_and_says_so(rt: Runtime) -> None:
    explained = rt.explain("kitchen__list_recipes")
    assert names(explained)[0] == "kitchen__list_recipes"
    assert explained["tools"][0]["order"] == "first: the query is its name"


def test_a_typo_is_explained_as_searched(rt: Runtime) -> None:
    explained = rt.explain("boil watter")
    assert explained["searched"] == "boil water"
    assert names(explained)[0] == "kitchen__boil_water"


def test_bad_input_is_answered_as_searchtools_answers_it(rt: Runtime) -> None:
    assert rt.explain("bread\x00")["error"]["code"] == "invalid_arguments"
    unknown = rt.explain("bread", source="attic")
    assert unknown["tools"] == [] and "kitchen" in unknown["hint"]
    assert rt.explain("   ", source="kitchen")["tools"] == []


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    def fake_load() -> PluginSet:
        plugin_set = PluginSet(strict=True)
        plugin_set.add(kitchen())
        plugin_set.add(garden())
        return plugin_set

    monkeypatch.setattr("junior_core.cli._common.load_plugins", fake_load)
    yield CliRunner()


def test_junior_search_explain_prints_each_tools_reasons(runner: CliRunner) -> None:
    result = runner.invoke(cli_module.build_cli(), ["search", "bake bread", "--explain"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("1. kitchen__bake_bread  score ")
    assert any(line.startswith("   bake in name: +") for line in lines[1:4])
    assert any(line.startswith("   bread in name: +") for line in lines[1:4])
    assert "   admitted by telling word: term b" in result.output
    assert any(line.startswith("2. garden__water_plants") for line in lines)
    assert "   bread in description: +" in result.output
    inside = runner.invoke(cli_module.build_cli(), ["search", "water", "--source", "kitchen", "--explain"])
    assert inside.output.splitlines()[0].startswith("1. kitchen__boil_water")
    assert "admitted by source chosen" in inside.output
