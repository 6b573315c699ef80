"""The relevance floor, fair action words, keyword phrases and clauses: which tools may answer at all, and in
what order (``junior_core._discovery.scoring``, ``junior_core._discovery.index``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from junior_core import Runtime, Source, Tool
from junior_core._discovery.analysis import leading_verbs, phrase_words
from junior_core._discovery.index import SearchIndex
from junior_core._discovery.settings import RankingConfig
from tests.helpers import OBJECT, READS, REMOVES, WRITES, KeptIndex, SourcePlugin, echo, names, notebook


def floorless(**changes: object) -> Callable[[], SearchIndex]:
    return lambda: SearchIndex(RankingConfig(relevance_floor=0, telling_share=0, **changes))  # type: ignore[arg-type]


def passed(rt: Runtime, query: str) -> list[str]:
    """The tools past the relevance floor for ``query`` across every source, as the index ranks them; the answer
    may show tools below the floor, but then flagged: weak, with the words they lack in ``unmatched``."""
    answer = rt.search_tools(query)
    admitted = [row["tool_name"] for row in rt.explain(query, max_results=5)["tools"]
                if row["admitted"]["by"] != "partial match"]
    if not admitted and answer["tools"]:
        assert answer["weak"] is True and "unmatched" in answer and "Partial matches" in answer["hint"], answer
    return admitted


@pytest.mark.parametrize("request_text", [
    "what time is it in Tokyo right now?",
    "delete the old docker images",
    "remove all stopped docker containers",
    "list the files in the docs folder",
    "send an email to the team saying the release is delayed",
    "search GitHub issues for 'timeout on checkout'",
    "store this CSV in the S3 bucket analytics-raw",
])
def test_a_request_no_tool_serves_answers_no_match(make_runtime: Callable[..., Runtime], request_text: str) -> None:
    rt = make_runtime(notebook(), index_cache=False)
    assert passed(rt, request_text) == []
    answer = rt.search_tools(request_text)
    # Only a source whose description shares the request's words is named (here at most the one installed).
    assert answer.get("sources", []) in ([], [{"id": "notebook", "description": "Long-term notebook: saving, "
                                               "listing and removing notes."}])
    assert "nothing installed" not in str(answer["hint"])
    # The same words without the floor: every one of them reaches a notebook tool through an incidental word.
    bare = make_runtime(notebook(), index_cache=False, index_factory=floorless())
    assert names(bare.search_tools(request_text)), request_text


@pytest.mark.parametrize(("request_text", "tool"), [
    ("forget the Friday merge rule", "notebook__forget"),          # the verb the tool is named for
    ("remember my wifi password is hunter2", "notebook__remember"),
    ("list my notes", "notebook__list"),                            # most of the request's words
    ("show all my notes", "notebook__list"),
    ("keep in mind that the standup moved to 10", "notebook__remember"),  # a declared phrase
])
def test_a_request_a_tool_serves_passes_the_floor(make_runtime: Callable[..., Runtime], request_text: str,
                                                 tool: str) -> None:
    rt = make_runtime(notebook(), index_cache=False)
    assert names(rt.search_tools(request_text))[:1] == [tool]


def test_a_tool_that_holds_most_of_the_request_passes_without_a_telling_word(
    make_runtime: Callable[..., Runtime],
) -> None:
    places = SourcePlugin(Source("places", "Places."), [
        Tool("get_location", "Get the current location of a user.", OBJECT, echo, annotations=READS),
    ])
    rt = make_runtime(places, notebook(), index_cache=False)
    # "get", "current" and "location" are words many tools use (each in more than 5% of the reference catalog's
    # functions): none is telling, but the tool holds all three.
    assert names(rt.search_tools("get my current location")) == ["places__get_location"]
    telling_only = make_runtime(places, notebook(), index_cache=False,
                                index_factory=lambda: SearchIndex(RankingConfig(relevance_floor=0)))
    assert passed(telling_only, "get my current location") == []


def test_a_verb_admits_only_the_tools_it_names(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notebook(), index_cache=False)
    # "delete" is in the forget tool's summary, not its name: on its own it proves nothing about docker images.
    assert passed(rt, "delete the old docker images") == []
    # Named by its tool, the same verb passes: the request said what it wants done.
    assert names(rt.search_tools("forget the old docker images"))[:1] == ["notebook__forget"]
    admitting = make_runtime(notebook(), index_cache=False,
                             index_factory=lambda: SearchIndex(RankingConfig(relevance_floor=0)))
    assert names(admitting.search_tools("forget the old docker images"))[:1] == ["notebook__forget"]
    assert passed(admitting, "delete the old docker images") == []

def test_a_word_counts_toward_the_floor_as_strongly_as_the_tool_holds_it(make_runtime: Callable[..., Runtime]) -> None:
    # A word a tool states as its action counts fully, however long its description.
    usage = " ".join(f"Step {n}: pass the path of the file, its owner and the shelf it goes on." for n in range(12))
    shelf = SourcePlugin(Source("shelf", "Files put away."), [
        Tool("archive", f"Archive (stow) a file so it is kept.\n\n{usage} Ledger files are kept longer.", OBJECT,
             echo, annotations=WRITES),
        Tool("open_file", "Open a file by its path.", OBJECT, echo, annotations=READS),
    ])
    rt = make_runtime(shelf, notebook(), index_cache=False)
    assert names(rt.search_tools("stow it"))[:1] == ["shelf__archive"]
    assert passed(rt, "ledger") == []


def test_a_source_admitted_by_one_tool_competes_with_all_its_matching_tools(
    make_runtime: Callable[..., Runtime],
) -> None:
    rt = make_runtime(notebook(), index_cache=False)
    # "remembered" is the remember tool's word; the request asks to see, which the list tool does.
    found = names(rt.search_tools("can I see everything you've remembered so far?"))
    assert found[0] == "notebook__list" and "notebook__remember" in found


def test_inside_one_source_every_matching_tool_is_ranked(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notebook(), index_cache=False)
    assert passed(rt, "what time is it in Tokyo right now?") == []
    # The caller chose the source: the floor is for the whole catalog, and "time" is the list tool's word.
    assert names(rt.search_tools("what time is it in Tokyo right now?", source="notebook")) == ["notebook__list"]


def test_rarity_counts_the_reference_catalog(make_runtime: Callable[..., Runtime]) -> None:
    # "list" is common among tools in general, "forget" rare; in a four-tool catalog only the reference knows.
    kept = KeptIndex()
    rt = make_runtime(notebook(), index_cache=False, index_factory=kept)
    assert names(rt.search_tools("forget it"))
    index = kept.index
    from junior_core._discovery.scoring import rarity

    idf = rarity(index.config, index.analyzer, 4)
    assert idf("forget", 1) > idf("list", 1) + 1
    alone = rarity(RankingConfig(reference_tools=0), index.analyzer, 4)
    assert alone("forget", 1) == alone("list", 1)


def test_a_tool_whose_name_says_the_request_beats_declared_keywords(make_runtime: Callable[..., Runtime]) -> None:
    loud = SourcePlugin(Source("loud", "A plugin that declares generic verbs."), [
        Tool("everything", "Keep directory listings, web pages and git history for later.", OBJECT, echo,
             annotations=WRITES, keywords=("list", "fetch", "log", "find", "delete", "show", "export")),
    ])
    fs = SourcePlugin(Source("mcp:fs", "Files and the web."), [
        Tool("list_directory", "List a directory's entries.", OBJECT, echo, annotations=READS),
        Tool("fetch_url", "Fetch a web page by URL and return its text.", OBJECT, echo, annotations=READS),
        Tool("git_log", "Show the commit history of a repository.", OBJECT, echo, annotations=READS),
    ])
    rt = make_runtime(loud, fs, index_cache=False)
    assert names(rt.search_tools("list the directory /var/log"))[0] == "mcp__fs__list_directory"
    assert names(rt.search_tools("fetch https://example.com/page"))[0] == "mcp__fs__fetch_url"
    assert names(rt.search_tools("show the git log for main"))[0] == "mcp__fs__git_log"

def test_the_ask_can_sit_in_any_clause(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notebook(), index_cache=False)
    for text in ("ugh, long week. so the standup is at 10 now, remember that",
                 "Separately: please forget the Friday merge rule",
                 "the note about the Friday freeze is wrong, forget it"):
        assert names(rt.search_tools(text))[:1] in (["notebook__remember"], ["notebook__forget"]), text
        want = "notebook__remember" if "remember" in text else "notebook__forget"
        assert names(rt.search_tools(text))[0] == want, text


def test_a_word_tools_use_elsewhere_is_not_corrected_as_a_typo(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notebook(), index_cache=False)
    # "saying" is one letter from the source's "saving", but it is a word (the reference catalog uses "say").
    answer = rt.search_tools("send an email to the team saying the release is delayed")
    assert "note" not in answer and passed(rt, "send an email to the team saying the release is delayed") == []
    assert rt.search_tools("rember the standup time")["note"] == "Searched for remember (you wrote rember)."


def test_the_verb_a_description_opens_with_decides_between_siblings(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(SourcePlugin(Source("pad", "A notepad."), [
        Tool("archive", "Archive (delete) a note.", OBJECT, echo, annotations=REMOVES),
        Tool("details", "Details of a note about a topic, and whether it was deleted.", OBJECT, echo,
             annotations=READS),
    ]), index_cache=False)
    assert names(rt.search_tools("delete the topic note", source="pad"))[0] == "pad__archive"


def test_without_the_reference_catalog_search_still_answers(make_runtime: Callable[..., Runtime],
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    from junior_core._discovery.scoring import Reference

    monkeypatch.setattr(Reference, "resource", ("data", "no-such-file.txt"))
    monkeypatch.setattr(Reference, "_loaded", {})
    rt = make_runtime(notebook(), index_cache=False)
    with caplog.at_level("WARNING", logger="junior.search"):
        assert names(rt.search_tools("forget the Friday merge rule"))[:1] == ["notebook__forget"]
    assert any("reference_tools.txt could not be read" in r.getMessage() for r in caplog.records)


def test_a_description_opening_verb_is_the_tools_action() -> None:
    assert leading_verbs("Forget (delete, remove) a memory: archive it.") == "Forget delete, remove"
    assert leading_verbs("Get the weather for a city.") == "Get"
    assert leading_verbs("  Search (look up) notes") == "Search look up"
    assert leading_verbs("42 answers") == ""


def games() -> SourcePlugin:
    """Tools whose names hold a word that is chat filler elsewhere ("lol")."""
    return SourcePlugin(Source("mcp:opgg", "League of Legends statistics."), [
        Tool(f"lol-{what}", f"Get League of Legends {what} for a player, a team or a champion.", OBJECT, echo,
             annotations=READS)
        for what in ("summoner-search", "champion-analysis", "team-standings", "schedules")
    ])


def test_only_an_action_word_in_a_verbs_place_is_the_requests_verb(make_runtime: Callable[..., Runtime]) -> None:
    kept = KeptIndex()
    rt = make_runtime(notebook(), games(), index_cache=False, index_factory=kept)
    # "lol" opens the first clause, but no tool says it does "lol": it is filler, not what is asked.
    assert names(rt.search_tools("lol sorry. forget the Friday merge rule"))[0] == "notebook__forget"
    index = kept.index
    from junior_core._discovery import scoring, spelling
    from junior_core._discovery.scoring import read_request

    snapshot = index.snapshot
    assert snapshot is not None
    request = read_request("lol sorry. forget the Friday merge rule", index.analyzer, spelling.Correction(""),
                           scoring.action_words(snapshot, index.config, index.analyzer), index.config)
    assert request is not None and request.verb_terms == ("forget",)
    assert {"lol", "forget"} <= request.placed  # both still admit only the tools naming them


def test_a_word_tools_in_general_share_is_not_telling(make_runtime: Callable[..., Runtime]) -> None:
    # Two hundred tools that never say "list": among them the notebook's "list" looks rare, yet a tenth of the
    # reference catalog's tools use it.
    weather = SourcePlugin(Source("weather", "Weather forecasts."), [
        Tool(f"forecast_{n}", f"Forecast the weather for region {n}: temperature, rain and wind.", OBJECT, echo,
             annotations=READS)
        for n in range(200)
    ])
    rt = make_runtime(notebook(), weather, index_cache=False)
    assert passed(rt, "could you give me a list of affordable homes for sale in Toronto?") == []
    assert names(rt.search_tools("list my notes"))[:1] == ["notebook__list"]


def test_common_function_words_are_not_searched() -> None:
    index = SearchIndex()
    assert index.analyze("the most popular songs, and only those") == ["popular", "song"]


def test_the_words_of_a_declared_phrase_are_the_phrases(make_runtime: Callable[..., Runtime]) -> None:
    chart = SourcePlugin(Source("mcp:chart", "Charts and diagrams."), [
        Tool("generate_mind_map", "Generate a mind map diagram from a topic and its branches.", OBJECT, echo,
             annotations=READS),
    ])
    rt = make_runtime(notebook(), chart, index_cache=False)
    # "keep in mind" is the remember tool's declared phrase: said whole, it finds the tool.
    assert "notebook__remember" in names(rt.search_tools("please keep in mind that Lena owns billing"))
    # Said on its own, the word is the mind map's.
    assert names(rt.search_tools("draw a mind map of the release"))[0] == "mcp__chart__generate_mind_map"

def test_a_phrase_reads_a_negation_as_not(make_runtime: Callable[..., Runtime]) -> None:
    assert phrase_words("that isn't true, don't, can't, won't") == [
        "that", "is", "not", "true", "do", "not", "can", "not", "will", "not"]
    notes = SourcePlugin(Source("notes", "Notes kept for later."), [
        Tool("remember", "Remember a note.", OBJECT, echo, annotations=WRITES, keywords=("remember", "don't forget")),
        Tool("forget", "Forget a note.", OBJECT, echo, annotations=REMOVES, keywords=("forget", "not true anymore")),
    ])
    rt = make_runtime(notes, index_cache=False)
    # The phrase is said whichever way the negation is written.
    for text, tool in (("the Friday freeze isn't true anymore", "notes__forget"),
                       ("that thing about the Friday freeze isn't true anymore", "notes__forget"),
                       ("the Friday freeze is not true anymore", "notes__forget"),
                       ):
        assert names(rt.search_tools(text))[:1] == [tool], text

def test_a_hyphenated_compound_is_one_word_of_a_source_description(make_runtime: Callable[..., Runtime]) -> None:
    # "Long-term notebook" says nothing about "long": a request about battery life is not for the notebook.
    rt = make_runtime(notebook(), index_cache=False)
    assert passed(rt, "which phone has a long battery life?") == []
    # The compound written whole still is the source's word.
    found = names(rt.search_tools("long-term please"))
    assert found and all(name.startswith("notebook__") for name in found), found
