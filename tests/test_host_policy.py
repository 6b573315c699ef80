"""Host policy: exposure rules from junior.toml and the API, tools hidden per actor, host calls to hidden tools."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from junior_core import Actor, Conversation, Runtime, Tool, ToolContext, hookimpl
from junior_core._base.config import ConfigError
from junior_core.testing import assert_error, assert_ok
from tests.helpers import notes_plugin, weather_plugin

ALICE = ToolContext(
    Actor("slack", "T1", "U1"),
    Conversation("slack", "T1", "C1", thread_ts="1700000000.000100", visibility="public"),
    "call-1",
)
BOB = attrs.evolve(ALICE, actor=Actor("slack", "T1", "U2"))


def names(answer: dict[str, Any]) -> list[str]:
    return [t["tool_name"] for t in answer["tools"]]


def direct(rt: Runtime, context: ToolContext | None = None) -> list[str]:
    return [t["name"] for t in rt.model_tools(context)[2:]]


def config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "junior.toml"
    path.write_text(text)
    return path


class HideFromBob:
    """Hides the given tool_names (or whole sources) from actor U2 only."""

    def __init__(self, *hidden: str) -> None:
        self.hidden = set(hidden)
        self.asked = 0
        self.fail = False

    @hookimpl
    def tool_visible(self, tool_name: str, source: str, context: ToolContext) -> bool | None:
        self.asked += 1
        if self.fail:
            raise RuntimeError("directory service down")
        if context.actor is not None and context.actor.user_id == "U2":
            return not (tool_name in self.hidden or source in self.hidden)
        return None


# -- exposure by configuration ----------------------------------------------------------------------
def test_junior_toml_tools_table_sets_exposure_over_the_tools_own(
    make_runtime: Callable[..., Runtime], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = config(tmp_path, '[tools]\ndirect = ["notes__find_*"]\nhidden = ["weather"]\n[mcp.servers]\n')
    monkeypatch.setenv("JUNIOR_CONFIG", str(path))
    rt = make_runtime(notes_plugin(), weather_plugin())
    assert direct(rt) == ["notes__find_notes", "notes__quick_note"]
    assert rt.search_tools("weather forecast for a city")["tools"] == []
    assert rt.search_tools(None, "weather")["total_eligible_tools"] == 0
    assert_error(rt.execute_tool("weather__get_forecast", {"city": "Oslo"}), "not_permitted")
    assert rt.exposure_of("weather__get_forecast") == "hidden"
    assert rt.exposure_of("notes__add_note") == "deferred"


def test_junior_toml_in_the_current_directory_and_config_false(
    make_runtime: Callable[..., Runtime], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JUNIOR_CONFIG", raising=False)
    config(tmp_path, '[tools]\nhidden = ["notes__add_note"]\n')
    monkeypatch.chdir(tmp_path)
    assert make_runtime(notes_plugin()).exposure_of("notes__add_note") == "hidden"
    assert make_runtime(notes_plugin(), config=False).exposure_of("notes__add_note") == "deferred"
    (tmp_path / "other").mkdir()
    other = config(tmp_path / "other", '[tools]\ndirect = ["notes"]\n')
    assert make_runtime(notes_plugin(), config=other).exposure_of("notes__add_note") == "direct"


def test_the_most_specific_rule_wins(make_runtime: Callable[..., Runtime], tmp_path: Path) -> None:
    path = config(
        tmp_path,
        '[tools]\nhidden = ["notes", "weather__*"]\ndeferred = ["notes__add_note"]\n'
        'direct = ["weather__get_forecast", "notes__find_*"]\n',
    )
    rt = make_runtime(notes_plugin(), weather_plugin(), config=path)
    # An exact tool_name beats a glob and a source; a longer glob beats a source id.
    assert rt.exposure_of("notes__add_note") == "deferred"
    assert rt.exposure_of("notes__find_notes") == "direct"
    assert rt.exposure_of("notes__delete_note") == "hidden"
    assert rt.exposure_of("weather__get_forecast") == "direct"
    assert rt.exposure_of("weather__getCurrentConditions") == "hidden"
    rt.set_exposure("weather__g*", "deferred")  # more literal characters than the file's "weather__*"
    assert rt.exposure_of("weather__getCurrentConditions") == "deferred"
    assert rt.exposure_of("weather__get_forecast") == "direct"  # the exact name still wins
    # Equally specific (11 literal characters each): the rule set later wins; setting a pattern again moves it last.
    rt.set_exposure("weather__ge*", "hidden")
    rt.set_exposure("weather_?get*", "deferred")
    assert rt.exposure_of("weather__getCurrentConditions") == "deferred"
    rt.set_exposure("weather__ge*", "hidden")
    assert rt.exposure_of("weather__getCurrentConditions") == "hidden"
    # The exact name wins even over a later glob with as many literal characters.
    rt.set_exposure("notes__find_notes", "deferred")
    rt.set_exposure("notes__find_notes*", "hidden")
    assert rt.exposure_of("notes__find_notes") == "deferred"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[tools]\nvisible = ["a"]\n', r"\[tools\] visible: unknown field; use deferred, direct, hidden"),
        ('[tools]\ndirect = "notes"\n', r"\[tools\] direct: must be a list"),
        ('[tools]\ndirect = ["notes"]\nhidden = ["notes"]\n', r"\[tools\] hidden: 'notes' is also in direct"),
        ('[tools]\nhidden = ["no spaces"]\n', r"\[tools\] hidden: invalid tool pattern 'no spaces'"),
        ("tools = 3\n", r"\[tools\] must be a table"),
        ("[tools\n", r"not valid TOML"),
    ],
)
def test_a_bad_tools_table_is_refused_naming_the_file_and_field(
    make_runtime: Callable[..., Runtime], tmp_path: Path, text: str, message: str
) -> None:
    path = config(tmp_path, text)
    with pytest.raises(ConfigError, match=f"^{path}: .*{message}" if "TOML" not in message else message):
        make_runtime(notes_plugin(), config=path)


# -- exposure by API --------------------------------------------------------------------------------
def test_exposure_argument_and_set_exposure_pin_hide_and_unhide(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes_plugin(), weather_plugin(), exposure={"notes__find_notes": "direct", "weather": "hidden"})
    assert direct(rt) == ["notes__find_notes", "notes__quick_note"]
    assert "weather" not in json.dumps(names(rt.search_tools("forecast for a city")))
    assert_error(rt.execute_tool("weather__get_forecast", {"city": "Oslo"}), "not_permitted")
    rt.set_exposure("weather__get_forecast", "deferred")
    rt.wait_for_index()
    assert names(rt.search_tools("forecast for a city"))[0] == "weather__get_forecast"
    assert assert_ok(rt.execute_tool("weather__get_forecast", {"city": "Oslo"})) == {"city": "Oslo",
                                                                                    "forecast": "sunny"}
    rt.set_exposure("notes__admin_purge", "direct")  # a tool hidden by its plugin, given to the model by the host
    assert "notes__admin_purge" in direct(rt)
    assert assert_ok(rt.call_model_tool("notes__admin_purge", {})) == {"echo": {}}
    with pytest.raises(ValueError, match="exposure must be one of"):
        rt.set_exposure("notes", "public")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="invalid tool pattern"):
        Runtime(plugins=[], exposure={"a b": "direct"}, config=False)


def test_hidden_by_the_host_counts_nowhere(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes_plugin(), weather_plugin())
    before = rt.search_tools(None, "notes", 20)
    rt.set_exposure("notes__add_note", "hidden")
    after = rt.search_tools(None, "notes", 20)
    assert after["total_catalog_tools"] == before["total_catalog_tools"] - 1
    assert after["total_eligible_tools"] == before["total_eligible_tools"] - 1
    assert "notes__add_note" in names(before) and "notes__add_note" not in names(after)


# -- hidden per actor (tool_visible) ----------------------------------------------------------------
def test_a_tool_hidden_for_an_actor_answers_exactly_like_an_unknown_name(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes_plugin(), weather_plugin(), HideFromBob("notes__delete_note", "weather__get_forecast"))
    calls = (lambda n: rt.execute_tool(n, {"id": "1"}, BOB), lambda n: rt.call_model_tool(n, '{"id": "1"}', BOB))
    # Byte for byte apart from the name, against names that never existed (suggestions included).
    for hidden, unknown in [("weather__get_forecast", "weather__forecast_get")]:
        for call in calls:
            refused, missing = call(hidden), call(unknown)
            assert_error(refused, "unknown_tool")
            assert json.dumps(refused).replace(hidden, "NAME") == json.dumps(missing).replace(unknown, "NAME")
    # And the same answer as a runtime whose catalog never had the tool.
    plugin = notes_plugin()
    plugin.tools = [t for t in plugin.tools if t.name != "delete_note"]
    without = make_runtime(plugin, weather_plugin())
    assert rt.execute_tool("notes__delete_note", {"id": "1"}, BOB) == without.execute_tool(
        "notes__delete_note", {"id": "1"}, BOB
    )
    # Alice still reaches it.
    assert_error(rt.execute_tool("notes__delete_note", {"id": "1"}, ALICE), "not_found")


def test_a_hidden_tool_is_never_suggested(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes_plugin(), HideFromBob("notes__add_note"))
    assert "notes__add_note" in assert_error(rt.execute_tool("notes__add_notes", {}, ALICE), "unknown_tool")[
        "suggestions"]
    told = assert_error(rt.execute_tool("notes__add_notes", {}, BOB), "unknown_tool")
    assert "add_note" not in json.dumps(told).replace("notes__add_notes", "")


def test_exact_name_and_local_name_searches_do_not_reveal_a_hidden_tool(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes_plugin(), HideFromBob("notes__add_note"))
    assert names(rt.search_tools("notes__add_note", context=ALICE))[0] == "notes__add_note"
    for answer in (rt.search_tools("notes__add_note", context=BOB), rt.search_tools("add_note", "notes", context=BOB)):
        assert "notes__add_note" not in names(answer)
        assert "add_note" not in json.dumps(answer.get("hint", ""))


def test_search_through_the_model_tool_uses_the_callers_context(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes_plugin(), HideFromBob("notes"))
    assert rt.call_model_tool("searchTools", '{"query": "write a note"}', BOB)["total_catalog_tools"] == 0
    assert rt.call_model_tool("searchTools", {"query": "write a note"}, ALICE)["total_matches"] > 0
    answer = asyncio.run(rt.asearch_tools("write a note", context=BOB))
    assert answer["tools"] == [] and answer["total_matches"] == 0


def test_visibility_is_asked_once_per_actor_and_version(make_runtime: Callable[..., Runtime]) -> None:
    hook = HideFromBob("notes__add_note")
    rt = make_runtime(notes_plugin(), hook)
    reachable = len(rt.visible_tools(ALICE))
    assert hook.asked == reachable
    for query in ("write a note", "find notes", "delete", ""):
        rt.search_tools(query, context=BOB)
        rt.execute_tool("notes__find_notes", {"query": "x"}, attrs.evolve(BOB, tool_call_id=query))
    assert hook.asked == 2 * reachable  # Bob asked once, whatever his tool_call_id
    rt.set_exposure("notes__delete_note", "hidden")  # a new policy version: asked again, without the hidden tool
    rt.search_tools("x", context=BOB)
    assert hook.asked == 3 * reachable - 1


def test_a_failing_visibility_hook_hides_everything_and_is_asked_again(make_runtime: Callable[..., Runtime]) -> None:
    hook = HideFromBob()
    rt = make_runtime(notes_plugin(), hook)
    hook.fail = True
    assert rt.search_tools("write a note", context=ALICE)["total_catalog_tools"] == 0
    assert_error(rt.execute_tool("notes__find_notes", {"query": "x"}, ALICE), "unknown_tool")
    assert direct(rt, ALICE) == []
    hook.fail = False
    assert assert_ok(rt.execute_tool("notes__find_notes", {"query": "x"}, ALICE)) == {"echo": {"query": "x"}}


# -- host calls -------------------------------------------------------------------------------------
def test_call_tool_runs_hidden_tools_for_host_code(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes_plugin(), HideFromBob("notes__find_notes"))
    assert_error(rt.execute_tool("notes__admin_purge", {}, ALICE), "not_permitted")
    assert assert_ok(rt.call_tool("notes__admin_purge", {}, ALICE)) == {"echo": {}}
    assert assert_ok(asyncio.run(rt.acall_tool("notes__admin_purge"))) == {"echo": {}}
    assert assert_ok(rt.call_tool("notes__find_notes", {"query": "x"}, BOB)) == {"echo": {"query": "x"}}
    assert_error(rt.call_tool("notes__find_notes", {}, BOB), "invalid_arguments")  # still validated
    with pytest.raises(KeyError, match="notes__nope"):
        rt.call_tool("notes__nope", {})


def test_call_tool_still_asks_the_policies(make_runtime: Callable[..., Runtime]) -> None:
    class Deny:
        @hookimpl
        def before_tool_execute(self, tool: Tool) -> str | None:
            return "Purges need an approval." if tool.name == "admin_purge" else None

    rt = make_runtime(notes_plugin(), Deny())
    assert assert_error(rt.call_tool("notes__admin_purge", {}), "not_permitted")["message"] == (
        "Purges need an approval."
    )


def test_the_anthropic_adapter_follows_the_host_policy(make_runtime: Callable[..., Runtime]) -> None:
    from junior_core.llm.anthropic import AnthropicToolSearch

    rt = make_runtime(notes_plugin(), HideFromBob("notes__find_notes"), exposure={"notes__admin_purge": "deferred",
                                                                                "notes__add_note": "hidden"})
    search = AnthropicToolSearch(rt)
    offered = {t["name"] for t in search.model_tools(ALICE) if t.get("defer_loading")}
    assert "notes__admin_purge" in offered and "notes__add_note" not in offered and "notes__find_notes" in offered
    assert "notes__find_notes" not in {t["name"] for t in search.model_tools(BOB)}
    assert_error(search.call("notes__find_notes", {"query": "x"}, BOB).answer, "unknown_tool")


def test_a_turn_offers_the_model_only_what_its_actor_may_see(make_runtime: Callable[..., Runtime]) -> None:
    from junior_core import Message
    from junior_core.llm.agent import run_turn
    from junior_core.llm.types import say
    from junior_core.testing import ScriptedModel, ScriptView

    offered: list[list[str]] = []

    def script(view: ScriptView) -> Any:
        offered.append(view.tool_names)
        return say("ok")

    rt = make_runtime(notes_plugin(), HideFromBob("notes__quick_note"), exposure={"notes__find_notes": "direct"})
    for who in (ALICE, BOB):
        run_turn(ScriptedModel(script), rt, who, [Message("user", "hi", actor=who.actor)])
    assert offered == [["searchTools", "executeTool", "notes__find_notes", "notes__quick_note"],
                       ["searchTools", "executeTool", "notes__find_notes"]]
