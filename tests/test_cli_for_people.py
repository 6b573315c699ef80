"""The CLI words errors for a person at a terminal, shows one tool in full, and says what to do with nothing installed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from junior_core import Runtime, Source, Tool, ToolError, hookimpl
from junior_core import cli as cli_module
from junior_core._plugins.plugin_set import PluginSet
from tests.helpers import echo, notes_plugin, weather_plugin

LONG = "x" * 1200


class BrokenStart:
    junior_plugin_name = "broken-start"

    @hookimpl
    def startup(self, runtime: Any) -> None:
        raise RuntimeError("the configuration file says port 5432 but nothing listens there; " + "detail " * 20 + "END")


class Direct:
    junior_plugin_name = "direct"

    @hookimpl
    def register_sources(self, register: Any) -> None:
        schema = {"type": "object", "properties": {"q": {"type": "string", "maxLength": 10}}, "additionalProperties": False}
        register(
            Source("shelf", "A shelf of books."),
            tools=[Tool("find_book", "Find a book.\n\nSecond paragraph of the full description.", schema, echo,
                        annotations={"readOnlyHint": True}, exposure="direct")],
        )


def use(monkeypatch: pytest.MonkeyPatch, *plugins: object) -> None:
    def fake_load() -> PluginSet:
        plugin_set = PluginSet(strict=False)
        for plugin in plugins:
            plugin_set.add(plugin)
        return plugin_set

    monkeypatch.setattr("junior_core.cli._common.load_plugins", fake_load)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli_module.build_cli(), list(args))


@pytest.fixture
def notes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    use(monkeypatch, notes_plugin(), weather_plugin(), Direct())
    yield


def test_unknown_source_names_the_option_not_the_model_field(notes: None) -> None:
    result = invoke("search", "x", "--source", "nope")
    assert result.exit_code == 1
    assert "--source" in result.output and "Known sources: notes, shelf, weather" in result.output
    assert "searchTools" not in result.output and "source null" not in result.output


def test_a_long_query_says_it_is_too_long(notes: None) -> None:
    result = invoke("search", "x" * 1200)
    assert result.exit_code == 2
    assert result.output.startswith("error: QUERY: 'xxxx")
    assert "(1200 characters) is too long: at most 1,000 characters" in result.output
    assert "input_schema" not in result.output


def test_bad_args_name_the_option_and_point_to_show(notes: None) -> None:
    result = invoke("exec", "shelf__find_book", "--args", json.dumps({"q": LONG}))
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].startswith("error (invalid_arguments): --args at 'q': 'xxxx")
    assert lines[0].endswith("(1200 characters) is too long: at most 10 characters")
    assert lines[-1] == "See what shelf__find_book takes with `junior show shelf__find_book`."
    assert "call again" not in result.output


def test_show_prints_the_whole_tool(notes: None) -> None:
    result = invoke("show", "shelf__find_book")
    assert result.exit_code == 0, result.output
    assert "Second paragraph of the full description." in result.output
    assert "source:      shelf (plugin direct)" in result.output
    assert "exposure:    direct" in result.output
    assert "annotations: readOnlyHint=true" in result.output
    assert '"maxLength": 10' in result.output
    data = json.loads(invoke("show", "shelf__find_book", "--json").output)
    assert (data["tool_name"], data["source"], data["exposure"]) == ("shelf__find_book", "shelf", "direct")
    assert data["input_schema"]["properties"]["q"] == {"type": "string", "maxLength": 10}


def test_show_an_unknown_tool_suggests_close_names(notes: None) -> None:
    result = invoke("show", "shelf__find_bok")
    assert result.exit_code == 1
    assert "no tool named 'shelf__find_bok'. Did you mean shelf__find_book?" in result.output


def test_plugin_errors_are_printed_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    use(monkeypatch, notes_plugin(), BrokenStart())
    result = invoke("plugins")
    assert result.exit_code == 0
    assert "nothing listens there" in result.output and "END" in result.output


def test_core_only_sources_says_how_to_install_a_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    use(monkeypatch)
    result = invoke("sources")
    assert result.exit_code == 0
    assert "pip install -e plugins/memory" in result.output
    assert "pip install --find-links dist junior-memory" in result.output
    assert json.loads(invoke("sources", "--json").output) == []


def test_long_values_keep_the_reason_for_the_model() -> None:
    with Runtime(plugins=[Direct()]) as rt:
        searched = rt.search_tools(LONG)
        executed = rt.execute_tool("shelf__find_book", {"q": LONG})
    for answer in (searched, executed):
        err = answer["error"]
        assert err["code"] == "invalid_arguments"
        assert "(1200 characters) is too long" in err["message"], err["message"]
        assert err["details"][0]["message"].endswith("(1200 characters) is too long: at most 10 characters") or (
            err["details"][0]["message"].endswith("(1200 characters) is too long: at most 1,000 characters"))
        assert len(err["message"]) <= 300


DOWN = "the server exited: " + "it said something long " * 10 + "END"


class Down:
    junior_plugin_name = "down"

    @hookimpl
    def register_sources(self, register: Any) -> None:
        register(Source("mcp:down", "A server that is down."), provider=lambda: [])

    @hookimpl
    def startup(self, runtime: Any) -> None:
        runtime.set_source_unavailable("mcp:down", DOWN)


class Ambiguous:
    junior_plugin_name = "picky"

    @hookimpl
    def register_sources(self, register: Any) -> None:
        def forget(arguments: dict[str, Any], context: Any) -> None:
            raise ToolError("ambiguous", "2 memories match, so nothing was forgotten; call again with an id.",
                            candidates=[{"id": "a1", "content": "I prefer tabs", "kind": "preference",
                                         "matched": ["tabs"]},
                                        {"id": "b2", "content": "Tabs in Go", "matched": ["tabs", "go"]}])

        register(Source("picky", "Forgets one thing at a time."),
                 tools=[Tool("forget", "Forget a thing.", {"type": "object"}, forget)])


def test_an_ambiguous_answer_lists_each_candidate(monkeypatch: pytest.MonkeyPatch) -> None:
    use(monkeypatch, Ambiguous())
    result = invoke("exec", "picky__forget", "--args", '{"query": "tabs"}')
    assert result.exit_code == 1
    assert result.output.splitlines()[1:] == [
        "  a1  I prefer tabs  (matched: tabs)",
        "  b2  Tabs in Go  (matched: tabs, go)",
        """Run it again with one id: junior exec picky__forget --args '{"id": "ID"}'""",
    ]


def test_sources_gives_a_down_sources_reason_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    use(monkeypatch, notes_plugin(), Down())
    result = invoke("sources")
    assert result.exit_code == 0
    assert f"\nmcp:down is unavailable: {DOWN}\n" in result.output
    assert "notes is unavailable" not in result.output


def test_a_search_never_offers_a_source_that_is_down(monkeypatch: pytest.MonkeyPatch) -> None:
    use(monkeypatch, notes_plugin(), Down())
    answer = json.loads(invoke("search", "server", "--json").output)
    assert [s["id"] for s in answer["sources"]] == ["mcp:down"]  # what the model is told: the nearest source
    result = invoke("search", "server")
    assert result.output == "No tools matched (7 searched). Try other words.\n"
    sample = invoke("search", "")
    assert "SOURCE one of: notes." in sample.output and "mcp:down" not in sample.output


def test_an_empty_search_says_how_to_see_the_rest(notes: None) -> None:
    result = invoke("search", "")
    assert result.exit_code == 0
    assert result.output.splitlines()[-2:] == [
        'A sample of 5 of 10 tools. List one source\'s tools with `junior search "" --source SOURCE`, SOURCE one '
        "of: notes, shelf, weather.",
        "Run one with `junior exec TOOL_NAME`.",
    ]
    listed = invoke("search", "", "--source", "notes", "--limit", "2")
    assert "2 of 7 tools; the next page: `junior search '' --source notes --limit 2 --cursor o2`." in listed.output
    following = invoke("search", "", "--source", "notes", "--limit", "2", "--cursor", "o2")
    assert following.output.split() != listed.output.split() and "--cursor o4" in following.output


def test_a_real_ambiguous_forget_lists_the_memories(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("JUNIOR_LOAD_PLUGINS", "memory")
    monkeypatch.setenv("JUNIOR_MEMORY_EMBEDDING_MODEL", "off")
    monkeypatch.setenv("JUNIOR_MEMORY_URL", f"sqlite:///{tmp_path / 'memory.sqlite3'}")
    for content in ("Ada prefers tabs", "Ada prefers tabs in Go"):
        saved = invoke("exec", "memory__remember", "--args", json.dumps({"content": content, "kind": "preference"}))
        assert saved.exit_code == 0, saved.output
    result = invoke("exec", "memory__forget", "--args", '{"query": "tabs"}')
    assert result.exit_code == 1 and result.output.startswith("error (ambiguous): 2 memories match")
    listed = result.output.splitlines()[1:3]
    assert [line.split("  ")[2:] for line in listed] == [["Ada prefers tabs", "(matched: tabs)"],
                                                       ["Ada prefers tabs in Go", "(matched: tabs)"]]
