"""Any JSON a model sends to searchTools or executeTool gets a documented, serialisable answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from junior_core import Runtime
from tests.helpers import examples, notes_plugin, weather_plugin

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
NAMES = (
    st.sampled_from(
        [
            "notes__add_note",
            "notes__find_notes",
            "weather__get_forecast",
            "notes__admin_purge",
            "notes__crash_note",
            "notes__weird_note",
            "notes__delete_note",
            "nope",
            "",
        ]
    )
    | st.text()
)
SEARCH_INPUT = JSON | st.fixed_dictionaries(
    {},
    optional={
        "query": JSON | st.text(),
        "source": JSON | st.sampled_from(["notes", "weather", ""]),
        "max_results": JSON | st.integers(-3, 30),
    },
)
EXECUTE_INPUT = JSON | st.fixed_dictionaries({}, optional={"tool_name": NAMES | JSON, "arguments": JSON, "text": JSON})
SEARCH_KEYS = {"ok", "total_catalog_tools", "total_eligible_tools", "total_matches", "tools"}
"""The keys of every searchTools answer; query, source and sources are left out when null or empty."""
CODES = {"unknown_tool", "invalid_arguments", "not_permitted", "unavailable", "timeout", "tool_failed", "not_found"}


@pytest.fixture(scope="module")
def runtime() -> Iterator[Runtime]:
    with Runtime(plugins=[notes_plugin(), weather_plugin()]) as rt:
        yield rt


def _is_error(out: dict[str, Any]) -> bool:
    return out.get("ok") is False and isinstance(out["error"]["code"], str) and isinstance(out["error"]["message"], str)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(arguments=SEARCH_INPUT)
def test_search_tools_answers_any_json(runtime: Runtime, arguments: Any) -> None:
    out = runtime.call_model_tool("searchTools", arguments)
    json.dumps(out, allow_nan=False)
    if "error" in out:
        assert _is_error(out) and out["error"]["code"] == "invalid_arguments"
    else:
        assert SEARCH_KEYS <= set(out) and out["ok"] is True
        assert len(out["tools"]) <= 20


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(arguments=EXECUTE_INPUT)
def test_execute_tool_answers_any_json(runtime: Runtime, arguments: Any) -> None:
    out = runtime.call_model_tool("executeTool", arguments)
    json.dumps(out, allow_nan=False)
    if out["ok"]:
        assert set(out) == {"ok", "tool_name", "result"}
    else:
        assert _is_error(out) and out["error"]["code"] in CODES
        assert "Traceback" not in json.dumps(out)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=JSON, arguments=JSON)
def test_call_model_tool_answers_any_name(runtime: Runtime, name: Any, arguments: Any) -> None:
    out = runtime.call_model_tool(name, arguments)
    json.dumps(out, allow_nan=False)
    assert isinstance(out, dict)
