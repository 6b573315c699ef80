"""The analysis and ranking behaviour that the retrieval benchmark relies on."""

from __future__ import annotations

from typing import Any

import pytest

from junior_core import Runtime, Source, Tool, ToolContext, hookimpl
from junior_core._discovery.analysis import split_identifier, summarize
from junior_core._discovery.index import SearchIndex


def _noop(arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    return {}


def _tool(name: str, description: str, **schema_props: Any) -> Tool:
    schema: dict[str, Any] = {"type": "object", "properties": schema_props}
    return Tool(name, description, schema, _noop)


class _Plugin:
    def __init__(self, sources: dict[Source, list[Tool]]) -> None:
        self.sources = sources

    @hookimpl
    def register_sources(self, register: Any) -> None:
        for source, tools in self.sources.items():
            register(source, tools=tools)


def _runtime(sources: dict[Source, list[Tool]]) -> Runtime:
    return Runtime(plugins=[_Plugin(sources)])


def _names(rt: Runtime, query: str, source: str | None = None, limit: int = 10) -> list[str]:
    answer = rt.search_tools(query, source, limit)
    return [tool["tool_name"] for tool in answer["tools"]]


# -- identifier splitting -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("identifier", "parts"),
    [
        ("getWeatherForecast", ["get", "Weather", "Forecast"]),
        ("get_weather_forecast", ["get", "weather", "forecast"]),
        ("get-weather-forecast", ["get", "weather", "forecast"]),
        ("getHTTPResponse", ["get", "HTTP", "Response"]),
        ("utf8Decode", ["utf", "8", "Decode"]),
        ("s3_bucket2list", ["s", "3", "bucket", "2", "list"]),
    ],
)
def test_split_identifier_handles_camel_snake_kebab_and_digits(identifier: str, parts: list[str]) -> None:
    assert split_identifier(identifier) == parts


def test_analyzer_indexes_identifier_parts_and_the_whole_identifier() -> None:
    terms = SearchIndex().analyze("getWeatherForecast")
    assert terms[:3] == ["get", "weather", "forecast"]
    assert "getweatherforecast" in terms


def test_camel_case_tool_found_by_plain_words() -> None:
    rt = _runtime({Source("web", "Web tools."): [
        _tool("fetchPageContent", "Download a URL."),
        _tool("listBookmarks", "Saved links."),
    ]})
    assert _names(rt, "page content")[0] == "web__fetchPageContent"


# -- stemming and stop words --------------------------------------------------------------------
def test_stemming_matches_inflections() -> None:
    index = SearchIndex()
    assert index.analyze("searching")[0] == index.analyze("searches")[0] == index.analyze("search")[0]
    rt = _runtime({Source("docs", "Documents."): [
        _tool("finder", "Searches indexed documents."),
        _tool("printer", "Prints a page."),
    ]})
    assert _names(rt, "searching documents")[0] == "docs__finder"


@pytest.mark.parametrize("word", ["the", "and", "can", "you", "please", "what", "how", "my", "want"])
def test_stop_words_are_not_indexed(word: str) -> None:
    assert SearchIndex().analyze(word) == []


def test_a_query_of_stop_words_only_matches_nothing() -> None:
    rt = _runtime({Source("docs", "Documents."): [_tool("finder", "Can you find the documents for me?")]})
    answer = rt.search_tools("can you please help me with the", None, 5)
    assert answer["tools"] == []
    assert answer["total_matches"] == 0


# -- ranking guarantees -------------------------------------------------------------------------
def test_exact_tool_name_ranks_first_even_when_other_tools_mention_it_more() -> None:
    rt = _runtime({Source("mail", "Email."): [
        _tool("send", "Deliver an email."),
        _tool("draft", "Write a draft to send later. Send send send: the send button sends it."),
    ]})
    assert _names(rt, "mail__send")[0] == "mail__send"
    assert _names(rt, "send", source="mail")[0] == "mail__send"


def test_name_match_outranks_a_description_only_match() -> None:
    rt = _runtime({Source("tools", "Misc."): [
        _tool("weather", "Current conditions for a city."),
        _tool("calendar", "Events, and the weather icon shown next to each."),
    ]})
    assert _names(rt, "weather")[0] == "tools__weather"


def test_ties_are_broken_by_tool_name_and_order_is_stable() -> None:
    tools = [_tool(name, "Convert a unit of measure.") for name in ("zeta", "alpha", "mid", "beta")]
    rt = _runtime({Source("units", "Units."): tools})
    first = _names(rt, "convert unit")
    assert first == ["units__alpha", "units__beta", "units__mid", "units__zeta"]
    assert all(_names(rt, "convert unit") == first for _ in range(3))


def test_ties_at_the_limit_boundary_keep_the_first_names() -> None:
    tools = [_tool(f"t{i:02d}", "Same text.") for i in range(30)]
    rt = _runtime({Source("same", "Same."): tools})
    assert _names(rt, "same text", limit=3) == ["same__t00", "same__t01", "same__t02"]


def test_parameter_descriptions_are_searchable() -> None:
    rt = _runtime({Source("geo", "Geography."): [
        _tool("lookup", "Look something up.", postcode={"type": "string", "description": "A postal zip code."}),
        _tool("other", "Look something else up."),
    ]})
    assert _names(rt, "zip code")[0] == "geo__lookup"


def test_source_filter_only_returns_that_source() -> None:
    rt = _runtime({
        Source("a", "First."): [_tool("search", "Search the web.")],
        Source("b", "Second."): [_tool("search", "Search files.")],
    })
    assert _names(rt, "search", source="b") == ["b__search"]
    assert sorted(_names(rt, "search")) == ["a__search", "b__search"]


# -- non-English text ---------------------------------------------------------------------------
def test_chinese_descriptions_are_searchable_by_chinese_words() -> None:
    rt = _runtime({Source("cn", "中文工具。"): [
        _tool("bing_search", "使用必应搜索指定的关键词，并返回搜索结果列表"),
        _tool("train_tickets", "查询12306火车票余票信息"),
    ]})
    assert _names(rt, "火车票")[0] == "cn__train_tickets"
    assert _names(rt, "必应搜索")[0] == "cn__bing_search"


def test_accented_latin_text_is_one_term_per_word() -> None:
    assert SearchIndex().analyze("café résumé") == ["café", "résumé"]


# -- summaries ----------------------------------------------------------------------------------
def test_summary_is_the_first_paragraph_with_whitespace_collapsed() -> None:
    assert summarize("Find  files\nby name.\n\nSecond paragraph.") == "Find files by name."


def test_summary_is_cut_at_180_characters_with_an_ellipsis() -> None:
    text = "word " * 100
    summary = summarize(text)
    assert len(summary) <= 180
    assert summary.endswith("...")
    assert summarize("x" * 180) == "x" * 180
    assert summarize("x" * 181) == "x" * 177 + "..."


def test_analysis_cache_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import junior_core._discovery.analysis as analysis

    monkeypatch.setattr(analysis, "_CACHE_LIMIT", 50)
    index = SearchIndex()
    index.analyze(" ".join(f"word{i}" for i in range(500)))
    assert len(index.analyzer._cache) <= 50
    assert index.analyze("word7") == ["word", "7", "word7"]
