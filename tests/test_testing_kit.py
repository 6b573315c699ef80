"""The testing kit: fixtures from the installed pytest plugin, contexts, answer assertions, the scripted model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import junior_example_units
import pytest

from junior_core import Message, Source, Tool, ToolContext
from junior_core.context import parse_slack_ts
from junior_core.llm.agent import run_turn
from junior_core.testing import (
    ContextFactory,
    RuntimeFactory,
    ScriptedModel,
    ScriptView,
    assert_error,
    assert_found,
    assert_ok,
    call,
    make_context,
    say,
)
from tests.helpers import OBJECT, SourcePlugin, text_plugin

INSTALLED_TEST = '''

def test_installed(junior_runtime):
    rt = junior_runtime(entry_points=["junior-example-units"])
    assert [s["id"] for s in rt.sources] == ["units"]
'''


def documented_test() -> str:
    """The test shown in docs/authoring-sources.md, so the docs cannot drift from the kit."""
    text = (Path(__file__).parent.parent / "docs" / "authoring-sources.md").read_text()
    section = text.split("## Testing with junior's pytest plugin", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.slow
def test_a_plugin_authors_test_runs_with_the_installed_pytest_plugin(tmp_path: Path) -> None:
    # A separate pytest process in a directory without this repository's conftest: the fixtures can only come
    # from the ``pytest11`` entry point of the installed junior-core.
    (tmp_path / "test_units_plugin.py").write_text(documented_test() + INSTALLED_TEST)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUNIOR_", "PYTEST_")) or k in ("JUNIOR_CACHE_DIR", "JUNIOR_CONFIG_DIR")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout


def test_runtime_factory_mixes_entry_points_and_given_plugins() -> None:
    before = os.environ.get("JUNIOR_LOAD_PLUGINS")
    factory = RuntimeFactory()
    extra = SourcePlugin(Source("extra", "An in-process source."), [Tool("ping", "Answer pong.", OBJECT, lambda a, c: "pong")])
    rt = factory(extra, entry_points=["units"])
    try:
        assert [s["id"] for s in rt.sources] == ["extra", "units"]
        assert os.environ.get("JUNIOR_LOAD_PLUGINS") == before  # the allowlist applied to this load only
        assert assert_ok(rt.execute_tool("extra__ping")) == "pong"
    finally:
        factory.close()
    assert rt.closed


def test_runtime_factory_with_given_plugins_only(junior_runtime: RuntimeFactory) -> None:
    rt = junior_runtime(junior_example_units)
    assert [s["id"] for s in rt.sources] == ["units"]
    assert [p.name for p in rt.plugins] == ["junior_example_units"]


def test_contexts_are_slack_shaped_and_numbered(junior_context: ContextFactory) -> None:
    first, second = junior_context(), junior_context(channel="C0PRIVATE1", visibility="private", thread_ts="1700000001.5")
    assert first.actor is not None and first.actor.key.startswith("slack:T")
    assert first.conversation is not None and first.conversation.source_key == "slack:T024BE7LD:C024BE91L:1700000000.000100"
    assert parse_slack_ts(first.conversation.message_ts or "") == "1700000000.000100"
    assert (first.tool_call_id, second.tool_call_id) == ("call_0001", "call_0002")
    assert second.conversation is not None and second.conversation.visibility == "private"
    assert second.conversation.source_key == "slack:T024BE7LD:C0PRIVATE1:1700000001.5"
    assert junior_context(tool_call_id="mine").tool_call_id == "mine"
    assert make_context(None, channel=None) == ToolContext()


def test_assert_ok_returns_the_result_and_fails_on_an_error() -> None:
    assert assert_ok({"ok": True, "tool_name": "a__b", "result": {"n": 1}}) == {"n": 1}
    failed = {"ok": False, "tool_name": "a__b", "error": {"code": "not_found", "message": "No such note."}}
    with pytest.raises(AssertionError, match=r"expected an ok answer.*not_found.*No such note"):
        assert_ok(failed)
    with pytest.raises(AssertionError, match="expected an ok answer"):
        assert_ok({"tools": []})  # a searchTools answer is not an executeTool success


def test_assert_error_checks_code_and_message() -> None:
    failed = {"ok": False, "tool_name": "a__b", "error": {"code": "not_found", "message": "No such note."}}
    assert assert_error(failed, "not_found")["message"] == "No such note."
    with pytest.raises(AssertionError, match="expected error code 'ambiguous', got 'not_found'"):
        assert_error(failed, "ambiguous")
    with pytest.raises(AssertionError, match="expected an error 'not_found'"):
        assert_error({"ok": True, "result": None}, "not_found")
    with pytest.raises(AssertionError, match="no message"):
        assert_error({"ok": False, "error": {"code": "not_found", "message": " "}}, "not_found")


def test_assert_found_names_what_came_back(junior_runtime: RuntimeFactory) -> None:
    rt = junior_runtime(junior_example_units)
    assert assert_found(rt.search_tools("mile to metre"), "units__convert_length")["source"] == "units"
    with pytest.raises(AssertionError, match=r"expected 'units__convert_length' first, got \['units__convert_temperature'"):
        assert_found(rt.search_tools("fahrenheit", max_results=1), "units__convert_length", first=True)


def test_assert_found_searches_a_plugin_beside_memory_and_a_background_catalog(
        junior_runtime: RuntimeFactory) -> None:
    from junior_core.testing.crowd import BACKGROUND_PREFIX, crowd

    units = junior_runtime(junior_example_units)
    # Alone, the temperature tool is the only one that holds "fahrenheit": the plugin's own test would pass.
    assert_found(units, "units__convert_temperature", query="fahrenheit", alone=True, first=True)
    # Beside other tools that convert temperatures it is not first: its author finds out here, not from a user.
    with pytest.raises(AssertionError, match=r"background-\d+__.*alone=True searches the plugin by itself"):
        assert_found(units, "units__convert_temperature", query="fahrenheit", first=True)
    rt = junior_runtime(text_plugin())
    assert_found(rt, "text__count_words", query="how many words are in this paragraph")
    assert_found(rt, "text__reverse_text", query="reverse a string")
    ids = [s["id"] for s in crowd(rt).sources]
    assert "text" in ids and "memory" in ids and sum(i.startswith(BACKGROUND_PREFIX) for i in ids) > 50
    assert len(crowd(rt).catalog_tools()) > 600


def test_assert_found_builds_its_background_once(junior_runtime: RuntimeFactory) -> None:
    from junior_core.testing.crowd import background, crowd

    first = junior_runtime(junior_example_units)
    again = junior_runtime(junior_example_units)  # a runtime per test, as fixtures make them
    assert background() is background() and crowd(first) is crowd(again)
    assert crowd(junior_runtime(text_plugin())) is not crowd(first)
    with pytest.raises(TypeError, match="query="):
        assert_found(first, "units__convert_length")


def test_scripted_model_drives_a_turn_through_the_kit(junior_runtime: RuntimeFactory, junior_context: ContextFactory) -> None:
    rt = junior_runtime(junior_example_units)

    def script(view: ScriptView) -> object:
        found = yield call("searchTools", {"query": "fahrenheit"})
        tool_name = found["tools"][0]["tool_name"]
        result = yield call("executeTool", {"tool_name": tool_name, "arguments": {"value": 212, "from_unit": "fahrenheit", "to_unit": "celsius"}})
        return say(f"{assert_ok(result)['value']:g} degrees")

    context = junior_context()
    turn = run_turn(ScriptedModel(script), rt, context, [Message("user", "212F in C?", actor=context.actor)])
    assert turn.text == "100 degrees"
    assert [r.tool_name for r in turn.tool_calls] == ["searchTools", "units__convert_temperature"]


def test_wait_until_returns_the_first_true_answer_and_fails_naming_what_it_waited_for() -> None:
    from junior_core.testing import wait_until

    answers = iter([None, 0, "", "ready", "later"])
    assert wait_until(lambda: next(answers), interval=0) == "ready"
    with pytest.raises(AssertionError, match=r"gave up after 0.05 s waiting for the server to listen"):
        wait_until(lambda: False, timeout=0.05, what="the server to listen")
