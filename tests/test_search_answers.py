"""searchTools' answers as a model reads them: small (nothing at its default, nearest sources only when nothing
matched), with match evidence (``matched``, ``weak``), several queries per call, and summaries that end cleanly."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from junior_core import Runtime, Source, Tool
from junior_core._discovery.analysis import SUMMARY_LIMIT, summarize, summary_cut_early
from junior_core._discovery.answers import fit_no_match
from junior_core._discovery.floor import nearest_sources
from junior_core._protocol import NO_MATCH_CHARS, SEARCH_SCHEMA
from junior_core.testing import SummaryWarning, summary_warnings
from tests.helpers import KeptIndex, SourcePlugin, echo, notes_plugin, weather_plugin

OBJECT: dict[str, Any] = {"type": "object"}


def _size(answer: dict[str, Any]) -> int:
    return len(json.dumps(answer))


def _many_sources() -> list[SourcePlugin]:
    """Twelve sources with long descriptions: a catalog whose full source list is far over 1,000 characters."""
    topics = ["calendar events and meetings", "email inbox and drafts", "git repositories and commits",
              "weather forecasts for cities", "stock prices and markets", "docker containers and images",
              "pdf documents and pages", "maps, routes and places", "translation between languages",
              "kubernetes pods and deployments", "spreadsheets and their cells", "news headlines and articles"]
    plugins = []
    for i, topic in enumerate(topics):
        words = topic.split()[0].strip(",")
        long = f"Tools for {topic}: read, create, update and remove them, with paging, filters and sorting. " * 2
        plugins.append(SourcePlugin(Source(f"src-{i:02d}", long.strip()),
                                    [Tool(f"{words}_tool", f"Work with {topic}.", OBJECT, echo)]))
    return plugins


# -- sizes ------------------------------------------------------------------------------------------
def test_a_no_match_answer_names_at_most_three_nearest_sources_within_1000_characters(
        make_runtime: Callable[..., Runtime]) -> None:
    kept = KeptIndex()
    rt = make_runtime(*_many_sources(), index_factory=kept)
    listing = rt.search_tools()
    assert len(listing["sources"]) == 12 and _size({"sources": listing["sources"]}) > NO_MATCH_CHARS
    answer = rt.search_tools("zebra xylophone quartet")  # no tool and no source says any of these
    assert answer["tools"] == [] and "sources" not in answer and "No installed tool holds" in answer["hint"]
    assert _size(answer) <= NO_MATCH_CHARS
    # The sources nearest to a query: those whose description shares its rarest words, at most three.
    index = kept.index
    ids = [info.id for info in rt.source_info()]
    assert sorted(nearest_sources(index, "weather in docker and stock markets", ids, 3)) == ["src-03", "src-04",
                                                                                           "src-05"]
    assert nearest_sources(index, "weather in docker and stock markets", ids, 2) != []
    assert nearest_sources(index, "zebra xylophone", ids, 3) == []
    # However long the query and the nearest sources' descriptions, the answer stays within the limit.
    big = {"ok": True, "query": "q" * 1000, "hint": "h" * 300, "sources": listing["sources"], "tools": []}
    fitted = fit_no_match(big)
    assert _size(fitted) <= NO_MATCH_CHARS and fitted["sources"] == listing["sources"][: len(fitted["sources"])]


def test_an_answer_leaves_out_what_is_at_its_default(make_runtime: Callable[..., Runtime]) -> None:
    plugin = SourcePlugin(Source("files", "Read and write files."), [
        Tool("read_file", "Read a file's text.", {"type": "object", "properties": {"path": {"type": "string"}}},
             echo, annotations={"readOnlyHint": True, "destructiveHint": True, "openWorldHint": True}),
        Tool("write_file", "Write text to a file.", OBJECT, echo,
             annotations={"readOnlyHint": False, "destructiveHint": False, "title": "Write"}),
        Tool("plain_file", "Touch a file.", OBJECT, echo),
    ])
    rt = make_runtime(plugin, weather_plugin())
    listing = rt.search_tools(None, source="files", max_results=5)  # a listing: compact rows
    assert all("input_schema" not in row and "annotations" not in row for row in listing["tools"])
    assert [s["id"] for s in listing["sources"]] == ["files"]
    answer = rt.call_model_tool("searchTools", {"tool_names": [e.tool_name for e in rt.catalog_tools("files")]})
    rows = {t["tool_name"]: t for t in answer["tools"]}
    assert rows["files__read_file"]["annotations"] == {"readOnlyHint": True}
    assert rows["files__write_file"]["annotations"] == {"destructiveHint": False, "title": "Write"}
    assert "annotations" not in rows["files__plain_file"]
    # Every schema complete; no counts at their default.
    for entry in rt.catalog_tools("files"):
        assert rows[entry.tool_name]["input_schema"] == entry.tool.input_schema
    assert {"weak", "hint", "unknown", "sources", "query"}.isdisjoint(answer)
    ranked = rt.search_tools("file", max_results=5)
    assert not {"returned_tools", "execution_tool", "source", "hint", "weak", "note", "sources"} & set(ranked)


def test_a_ranked_answer_shows_its_first_tool_in_full_and_the_rest_in_one_line(rt: Runtime) -> None:
    answer = rt.search_tools("note", source="notes")
    first, *rest = answer["tools"]
    assert first["input_schema"] == rt.catalog_tool(first["tool_name"]).tool.input_schema  # type: ignore[union-attr]
    assert rest and all(set(row) <= {"tool_name", "description", "matched", "params"} for row in rest)
    assert "tool_names" in answer["schemas"]
    # What the answer says to do gets any of them in full: tool_names, or a query that is its exact tool_name.
    again = rt.call_model_tool("searchTools", {"tool_names": [row["tool_name"] for row in rest]})
    assert [t["tool_name"] for t in again["tools"]] == [row["tool_name"] for row in rest]
    for row in rest:
        assert next(t for t in again["tools"] if t["tool_name"] == row["tool_name"])["input_schema"] == \
            rt.catalog_tool(row["tool_name"]).tool.input_schema  # type: ignore[union-attr]
        exact = rt.call_model_tool("searchTools", {"query": row["tool_name"]})
        assert [t["tool_name"] for t in exact["tools"]] == [row["tool_name"]] and "input_schema" in exact["tools"][0]
    # A listing asks what is there: compact rows, and the note.
    listing = rt.search_tools(None, source="notes")
    assert all("input_schema" not in row for row in listing["tools"]) and "tool_names" in listing["schemas"]


# -- summaries --------------------------------------------------------------------------------------
def test_a_summary_ends_at_a_sentence_within_the_cap_else_at_a_word() -> None:
    first = "Lists the memories visible in this conversation, newest first, with their ids and kinds."
    text = first + " It shows the workspace in a public channel, the channel itself in a private one, and more of it."
    assert len(text) > SUMMARY_LIMIT and summarize(text) == first
    one = "Lists the memories visible here " + "and in every other place the speaker can see " * 5
    cut = summarize(one)
    assert cut.endswith("...") and len(cut) <= SUMMARY_LIMIT
    assert one.startswith(cut[:-3]) and one[len(cut) - 3] == " "  # ends where a word ends
    # "e.g." inside a sentence is not its end.
    abbrev = "Search, e.g. by name, " + "for the notes and lists the speaker keeps in this workspace " * 4
    assert not summarize(abbrev).startswith("Search, e.g.") or summarize(abbrev).endswith("...")


def test_an_author_is_warned_of_a_summary_cut_before_its_first_sentence_ends(
        make_runtime: Callable[..., Runtime]) -> None:
    long = "Lists every memory " + "that the speaker and the workspace can see in this conversation " * 4 + "."
    fine = "Lists memories. " + "It shows more detail about each memory than fits here " * 4 + "."
    assert summary_cut_early(long) is not None and summary_cut_early(fine) is None
    plugin = SourcePlugin(Source("mem", "Memories."), [Tool("list_all", long, OBJECT, echo),
                                                        Tool("list_some", fine, OBJECT, echo)], name="memplug")
    with pytest.warns(SummaryWarning, match=r"plugin 'memplug', tool 'mem__list_all'"):
        rt = make_runtime(plugin)
    assert len(summary_warnings(rt)) == 1


# -- match evidence ---------------------------------------------------------------------------------
def test_each_tool_carries_the_query_words_its_text_holds(rt: Runtime) -> None:
    answer = rt.search_tools("Weather forecast for Lisbon")
    top = answer["tools"][0]
    assert top["tool_name"] == "weather__get_forecast" and top["matched"] == ["Weather", "forecast"]
    fixed = rt.search_tools("wether forecast")
    assert "note" in fixed and fixed["tools"][0]["matched"] == ["weather", "forecast"]


def test_an_answer_whose_tools_miss_the_telling_words_is_weak(rt: Runtime) -> None:
    served = rt.search_tools("weather forecast")
    assert "weak" not in served and served["tools"]
    # "get the city" reaches the weather tools by coverage of its clause; none holds "book" or "flights". (The
    # words of "find flights to Boston" are ones many functions of the reference catalog use: it matches nothing.)
    weak = rt.search_tools("get the city and book flights to Boston")
    assert weak["tools"] and weak["weak"] is True and "'flights'" in weak["hint"]
    assert "nothing installed" not in weak["hint"] and weak["unmatched"] == ["book", "flights", "Boston"]
    exact = rt.search_tools("weather__get_forecast")
    assert "weak" not in exact
    # Inside a source the model chose where to look: never weak there.
    assert "weak" not in rt.search_tools("get the city and book flights to Boston", source="weather")


# -- several queries ----------------------------------------------------------------------------------
def test_queries_answers_each_search_in_one_answer(rt: Runtime) -> None:
    assert "queries" in SEARCH_SCHEMA["properties"] and SEARCH_SCHEMA["properties"]["queries"]["maxItems"] == 5
    answer = rt.call_model_tool("searchTools", {"queries": ["weather forecast", "add a note", "zebra xylophone",
                                                            "forecast"]})
    assert answer["ok"] is True and [r["query"] for r in answer["results"]] == [
        "weather forecast", "add a note", "zebra xylophone", "forecast"]
    first, note, nothing, again = answer["results"]
    assert first["tools"][0]["tool_name"] == "weather__get_forecast" and "input_schema" in first["tools"][0]
    assert note["tools"][0]["tool_name"] == "notes__add_note" and nothing["tools"] == [] and "hint" in nothing
    # A tool an earlier query showed is named again without its schema.
    repeated = next(t for t in again["tools"] if t["tool_name"] == "weather__get_forecast")
    assert repeated == {"tool_name": "weather__get_forecast", "matched": ["forecast"], "shown_above": True}
    assert "sources" not in answer and all("schemas" not in r for r in answer["results"]) and answer["schemas"]
    alone = rt.search_tools("weather forecast")
    assert first["tools"] == alone["tools"]


def test_a_batch_gives_the_schema_of_a_tool_an_earlier_query_showed_in_one_line(rt: Runtime) -> None:
    answer = rt.call_model_tool("searchTools", {"queries": ["add a note", "delete a note", "delete note"]})
    added, deleted, removed = answer["results"]
    brief = next(t for t in added["tools"] if t["tool_name"] == "notes__delete_note")
    assert "input_schema" not in brief and "shown_above" not in brief  # one line in the first answer
    assert deleted["tools"][0]["tool_name"] == "notes__delete_note" and "input_schema" in deleted["tools"][0]
    # Once shown in full, it is named again without its schema.
    assert removed["tools"][0] == {"tool_name": "notes__delete_note", "matched": ["delete", "note"],
                                   "shown_above": True}


@pytest.mark.parametrize(("arguments", "path"), [
    ({"query": "notes", "queries": ["notes"]}, "query"),
    ({"queries": ["a", "b", "c", "d", "e", "f"]}, "queries"),
    ({"queries": []}, "queries"),
    ({"queries": ["notes"], "cursor": "o5"}, "cursor"),
])
def test_queries_refuses_what_it_cannot_answer(rt: Runtime, arguments: dict[str, Any], path: str) -> None:
    answer = rt.call_model_tool("searchTools", arguments)
    assert answer["ok"] is False and answer["error"]["code"] == "invalid_arguments"
    assert answer["error"]["details"][0]["path"] == path


def test_queries_share_the_size_limit(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes_plugin(), weather_plugin(), max_search_chars=4_000)
    queries = ["note", "weather", "forecast city", "delete", "find"]
    alone = [_size(rt.search_tools(q, max_results=20)) for q in queries]
    answer = rt.call_model_tool("searchTools", {"queries": queries, "max_results": 20})
    assert sum(alone) > 4_000 >= _size(answer) and len(answer["results"]) == 5


def test_junior_plugins_warns_of_a_summary_cut_mid_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from junior_core import cli as cli_module
    from junior_core._plugins.plugin_set import PluginSet

    long = "Lists every memory " + "that the speaker and the workspace can see in this conversation " * 4 + "."

    def fake_load() -> PluginSet:
        plugin_set = PluginSet(strict=True)
        plugin_set.add(SourcePlugin(Source("mem", "Memories."), [Tool("list_all", long, OBJECT, echo)],
                                    name="memplug"))
        plugin_set.add(weather_plugin())
        return plugin_set

    monkeypatch.setattr("junior_core.cli._common.load_plugins", fake_load)
    result = CliRunner().invoke(cli_module.build_cli(), ["plugins"])
    assert result.exit_code == 0
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and "plugin 'memplug', tool 'mem__list_all'" in warned[0]


# -- the documented examples --------------------------------------------------------------------------
def test_the_answers_docs_architecture_shows_are_real_and_their_sizes_true() -> None:
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text[text.index("## searchTools' answers"):text.index("## A bot turn")]
    examples = re.findall(r"\*\*([^*]+)\*\* \(([\d,]+) characters\)\..*?<!-- searchTools (\{.*?\}) -->\n```json\n(.*?)\n```",
                          section, re.S)
    assert [title for title, *_ in examples] == ["A match", "A match inside a source", "A weak match", "No match", "A batch"]
    with Runtime(plugins=[notes_plugin(), weather_plugin()], index_cache=False) as rt:
        for title, size, arguments, shown in examples:
            answer = rt.call_model_tool("searchTools", json.loads(arguments))
            assert json.loads(shown) == answer, title
            assert int(size.replace(",", "")) == _size(answer), title


def test_a_word_every_tool_of_one_source_holds_is_matched_not_weak(make_runtime: Callable[..., Runtime]) -> None:
    books = SourcePlugin(Source("books", "Bookkeeping."), [
        Tool(f"ledger_{i:02d}", f"Ledger task {i}: post entries to the ledger.", OBJECT, echo) for i in range(12)])
    others = [SourcePlugin(Source(f"other-{i}", f"Other tools {i}."), [Tool(f"thing_{i}", f"Thing {i}.", OBJECT, echo)],
                           name=f"other{i}") for i in range(10)]
    rt = make_runtime(books, *others)
    # 12 of 22 tools use "ledger": common here, and still the word the returned tools hold.
    answer = rt.search_tools("ledger entries")
    assert answer["tools"] and "weak" not in answer and answer["unmatched"] == []


def test_a_replaced_view_is_freed_when_dropped_not_at_the_next_collection() -> None:
    # Its caches hold the view's tables, not the view: a view (every cached row) goes as soon as nothing uses it.
    import gc
    import weakref

    from junior_core._catalog.catalog import Catalog
    from junior_core._catalog.exposure import ExposurePolicy, Table
    from junior_core._discovery.answers import View

    catalog = Catalog()
    view = View(catalog, Table(catalog, ExposurePolicy(), 1))
    assert view.eligible(None, frozenset()) == []
    ref = weakref.ref(view)
    gc.disable()
    try:
        del view
        assert ref() is None
    finally:
        gc.enable()
