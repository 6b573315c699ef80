"""The CLI words errors for a person at a terminal, shows one tool in full, and says what to do with nothing installed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from junior_core import Runtime, Source, Tool, hookimpl
from junior_core import cli as cli_module
from junior_core.plugins import PluginSet
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

    monkeypatch.setattr(cli_module, "_load", fake_load)


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
    assert result.output.startswith("error: QUERY: 'xxxx") and "(1200 characters) is too long" in result.output
    assert "input_schema" not in result.output


def test_bad_args_name_the_option_and_point_to_show(notes: None) -> None:
    result = invoke("exec", "shelf__find_book", "--args", json.dumps({"q": LONG}))
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].startswith("error (invalid_arguments): --args at 'q': 'xxxx")
    assert lines[0].endswith("(1200 characters) is too long")
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
        assert err["details"][0]["message"].endswith("(1200 characters) is too long")
        assert len(err["message"]) <= 300
