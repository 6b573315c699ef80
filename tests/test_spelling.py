"""Typos: a word no tool uses is searched as the tools' word it clearly misspells, for less, and the answer says so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import junior_core._discovery.whoosh_parts
from junior_core import Runtime, Source, Tool
from junior_core._discovery.index import RankingConfig, SearchIndex
from junior_core._discovery.spelling import candidates
from junior_core._protocol import corrected_note
from tests.helpers import OBJECT, SourcePlugin, echo


def kit(*tools: tuple[str, str]) -> SourcePlugin:
    return SourcePlugin(Source("kit", "Assorted tools."), [Tool(name, text, OBJECT, echo) for name, text in tools])


def names(answer: dict[str, Any]) -> list[str]:
    return [tool["tool_name"] for tool in answer["tools"]]


def test_a_misspelt_word_is_searched_as_the_tools_word_and_the_answer_says_so(
        make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(kit(("keep", "Remember a fact for later."), ("paint", "Choose a colour palette.")))
    answer = rt.search_tools("pls rember my birthday")
    assert names(answer) == ["kit__keep"]
    assert answer["note"] == "Searched for remember (you wrote rember)."
    assert answer["query"] == "pls rember my birthday", "the answer echoes the request as written"
    swapped = rt.search_tools("remmeber this and the paltete")
    assert swapped["note"] == "Searched for remember (you wrote remmeber), palette (you wrote paltete)."
    assert set(names(swapped)) == {"kit__keep", "kit__paint"}


def test_a_word_the_tools_use_is_never_corrected(make_runtime: Callable[..., Runtime]) -> None:
    # "plan" is one letter short of "plane": as a tools' word it is searched as written.
    rt = make_runtime(kit(("schedule", "Plan the week."), ("fly", "Book a plane seat.")))
    answer = rt.search_tools("plan")
    assert names(answer) == ["kit__schedule"]
    assert "note" not in answer


def test_two_equally_good_corrections_correct_nothing(make_runtime: Callable[..., Runtime]) -> None:
    # "stoe" is one letter short of both "store" and "stove", each used by one tool: neither is clearly meant.
    rt = make_runtime(kit(("shop", "Open the store."), ("cook", "Light the stove.")))
    answer = rt.search_tools("stoe")
    assert names(answer) == []
    assert "note" not in answer
    assert "hint" in answer, "answered as a request nothing matched"


def test_the_correction_more_tools_use_wins(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(kit(("shop", "Open the store."), ("stock", "Count the store shelves."),
                          ("price", "Price items in the store."), ("cook", "Light the stove.")))
    answer = rt.search_tools("stoe")
    assert answer["note"] == "Searched for store (you wrote stoe)."
    assert "kit__cook" not in names(answer)


def test_a_corrected_word_weighs_less_than_a_word_spelled_right(make_runtime: Callable[..., Runtime]) -> None:
    # Two tools alike but for one word each: the request spells one right and the other wrong (neither word
    # opens the request, so neither is its verb, which would weigh again against the tool's action words).
    rt = make_runtime(kit(("alpha", "Remember."), ("beta", "Palette.")))
    assert names(rt.search_tools("the rember palette")) == ["kit__beta", "kit__alpha"]
    assert names(rt.search_tools("the remember paltete")) == ["kit__alpha", "kit__beta"]


def test_a_tools_word_is_never_corrected_to_a_stop_word(make_runtime: Callable[..., Runtime]) -> None:
    # "form" is "from" with two letters swapped, but a tool uses it.
    rt = make_runtime(kit(("team", "Fill in a form with names and roles.")))
    answer = rt.search_tools("the form")
    assert "note" not in answer
    assert names(answer) == ["kit__team"]


def test_a_misspelt_grammar_word_is_read_as_the_word(make_runtime: Callable[..., Runtime]) -> None:
    # "taht" is "that" with two letters swapped: read as "that".
    rt = make_runtime(kit(("keep", "Remember (save, store) a fact for later."),
                          ("planner", "Sprint planning: plan the sprint's days.")))
    answer = rt.search_tools("save taht our sprint planning is every other tuesday")
    assert answer["note"] == "Searched for that (you wrote taht)."
    assert names(rt.search_tools("sprint planning"))[0] == "kit__planner"
    found = rt.search_tools("thier roles")
    assert found["note"] == "Searched for their (you wrote thier)."


@pytest.mark.parametrize(
    "query",
    [
        "fetch https://exmaple.com/pgae",  # a URL
        "open www.exmaple.com now",
        "mail bob@exmaple.com",
        "get_wether",  # an identifier
        "getWether",
        "v2beta 1234 4real",  # digits
        "ask Lena",  # a name inside a sentence
        "rmb the tab",  # shorter than 4 letters
        "don't",
        "東京タワー",
    ],
)
def test_what_cannot_be_a_typo_is_not_a_candidate(query: str) -> None:
    assert [word for _, word in candidates(query, RankingConfig().typo_length) if word not in {"fetch", "open", "mail"}] == []


def test_a_word_that_could_be_a_typo_is_a_candidate() -> None:
    found = candidates("Rember this, pls: memroy (frget) and Lena. Lsit all!", RankingConfig().typo_length)
    assert [word for _, word in found] == ["Rember", "this", "memroy", "frget", "Lsit"]


def test_a_stored_index_corrects_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     make_runtime: Callable[..., Runtime]) -> None:
    monkeypatch.setenv("JUNIOR_CACHE_DIR", str(tmp_path))
    plugin = kit(("keep", "Remember a fact for later."), ("paint", "Choose a colour palette."))
    assert make_runtime(plugin).search_tools("rember")["note"] == "Searched for remember (you wrote rember)."

    def fail(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the index was rebuilt")

    monkeypatch.setattr(junior_core._discovery.whoosh_parts, "write_documents", fail)
    answer = make_runtime(plugin).search_tools("rember")
    assert names(answer) == ["kit__keep"]
    assert answer["note"] == "Searched for remember (you wrote rember)."


def test_typo_weight_zero_corrects_nothing() -> None:
    rt_tools = kit(("keep", "Remember a fact for later."))
    with Runtime(plugins=[rt_tools], index_cache=False) as rt:
        entries = list(rt.catalog_tools())
    index = SearchIndex(RankingConfig(typo_weight=0))
    index.build(entries, {"kit": "Assorted tools."}, 1)
    assert index.search("rember", limit=5).tool_names == []
    index = SearchIndex()
    index.build(entries, {"kit": "Assorted tools."}, 1)
    found = index.search("rember", limit=5)
    assert (found.tool_names, found.corrections) == (["kit__keep"], (("rember", "remember"),))


def test_the_note_names_every_correction() -> None:
    assert corrected_note([("rember", "remember"), ("memroy", "memory")]) == (
        "Searched for remember (you wrote rember), memory (you wrote memroy).")


def test_an_english_word_no_tool_uses_is_never_corrected(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(kit(("herd", "Count the cattle in a field."),
                          ("timer", "Set a timer to repeat at an interval.")))
    # "castle" is one letter from the tools' "cattle", and neither the tools nor the reference catalog use it:
    # English does, so it is what the person meant.
    answer = rt.search_tools("count the rooms of the castle")
    assert "note" not in answer and answer["query"] == "count the rooms of the castle"
    # "internal" is one letter from "interval"; the reference catalog knows it too.
    assert "note" not in rt.search_tools("search internal wiki documents")
    # A typo English does not know is still corrected.
    assert rt.search_tools("count the catle")["note"] == "Searched for cattle (you wrote catle)."
