"""Servers that send what they should not: colliding names, notification storms, secrets in URLs, escapes."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from junior_mcp_bridge import MCPBridge
from mcp_bridge_helpers import misbehaving, unmarked, write_toml

from junior_core import Runtime
from junior_core.testing import wait_until

JUNIOR = str(Path(sys.executable).parent / "junior")


def junior(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([JUNIOR, *args], env=env, capture_output=True, text=True, timeout=60)


def _names(rt: Runtime, source: str) -> dict[str, str]:
    """``{tool_name: the server's name it calls}``, read by calling each tool (the server answers its name)."""
    called = {}
    for entry in rt.catalog_tools(source):
        answer = rt.execute_tool(entry.tool_name, {})
        assert answer["ok"] is True, answer
        called[entry.tool_name] = answer["result"]["text"]
    return called


def test_names_that_collide_once_sanitised_keep_every_tool_in_any_order(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime({"forward": misbehaving("colliding"), "backward": misbehaving("colliding", args=[
        misbehaving("colliding")["args"][0], "colliding", "reversed"])})
    forward, backward = _names(rt, "mcp:forward"), _names(rt, "mcp:backward")
    server_names = {"a.b", "a b", "a_b", "a-b", "a_b_2e7336"}
    assert set(forward.values()) == server_names, forward  # none vanished, each calls its own
    assert {k.removeprefix("mcp__forward__"): v for k, v in forward.items()} == {
        k.removeprefix("mcp__backward__"): v for k, v in backward.items()}  # the same mapping whatever the order
    assert forward["mcp__forward__a_b"] == "a_b" and forward["mcp__forward__a_b_2e7336"] == "a_b_2e7336"


def test_a_list_changed_storm_is_a_few_refreshes(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime({"storm": misbehaving("storm")})
    before = int(rt.execute_tool("mcp__storm__listings", {})["result"]["text"])
    assert rt.execute_tool("mcp__storm__storm", {"count": 300})["ok"] is True
    # The last change is the one kept.
    wait_until(lambda: rt.catalog_tool("mcp__storm__wave_299"), timeout=20, what="the last wave's tool")
    plugin = rt.plugin("mcp")
    assert isinstance(plugin, MCPBridge) and plugin.bridge is not None
    storm = plugin.bridge.connections["storm"]
    wait_until(lambda: not storm.relisting, timeout=20, what="any re-listing still queued to have run")
    listings = int(rt.execute_tool("mcp__storm__listings", {})["result"]["text"]) - before
    assert 1 <= listings <= 4, f"{listings} tools/list requests for 300 notifications"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_a_password_in_a_server_url_is_masked_in_list_and_check(tmp_path: Path) -> None:
    url = f"http://deploy:s3cret-pw@127.0.0.1:{_closed_port()}/mcp?api_key=k3y-value&team=ops"
    config = write_toml(tmp_path / "junior.toml", {"remote": {"url": url, "startup_timeout_s": 1}})
    env = {**os.environ, "JUNIOR_CONFIG": str(config), "JUNIOR_LOAD_PLUGINS": "mcp"}
    listed = junior(env, "mcp", "list")
    as_json = junior(env, "mcp", "list", "--json")
    checked = junior(env, "mcp", "check")
    assert checked.returncode == 1, checked.stderr
    for done in (listed, as_json, checked):
        out = done.stdout + done.stderr
        assert "s3cret-pw" not in out and "k3y-value" not in out, out
    [row] = json.loads(as_json.stdout)
    assert row["target"].startswith("http://deploy:***@127.0.0.1:") and "api_key=***&team=ops" in row["target"]
    assert "deploy:***@127.0.0.1" in listed.stdout and "FAILED  mcp:remote" in checked.stdout


def _hostile_characters(text: str) -> list[str]:
    """The escape, control (but newline and tab), bidi and zero-width characters in ``text``, as code points."""
    return sorted({f"U+{ord(ch):04X}" for ch in text
                   if ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cf", "Cs")})


def _seen(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def test_escapes_bidi_and_zero_width_characters_never_reach_an_answer(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime({"hostile": misbehaving("hostile")})
    found = rt.search_tools("weather forecast city")
    listed = rt.search_tools(source="mcp:hostile", max_results=20)
    exact = rt.search_tools("mcp__hostile__forecast", max_results=1)
    named = rt.call_model_tool("searchTools", {"tool_names": ["mcp__hostile__forecast", "mcp__hostile__blank"]})
    called = rt.execute_tool("mcp__hostile__forecast", {"city": "Oslo"})
    failed = rt.execute_tool("mcp__hostile__fail", {})
    searched = rt.call_model_tool("searchTools", {"query": "\x1b]52;c;eA==\x07forecast\u202e"})
    answers = {"found": found, "listed": listed, "exact": exact, "named": named, "called": called, "failed": failed,
               "searched": searched, "model_tools": rt.model_tools()}
    for name, answer in answers.items():
        assert _hostile_characters(_seen(answer)) == [], (name, answer)
    # The words around what was removed are kept, so the checks above did not pass on emptied text.
    [forecast] = [t for t in named["tools"] if t["tool_name"] == "mcp__hostile__forecast"]
    assert forecast["description"] == "Weather forecast for a city. eslaf read-only."
    assert forecast["annotations"] == {"title": "Forecast", "readOnlyHint": True}
    assert forecast["input_schema"]["properties"]["city"] == {
        "type": "string", "description": "The city name.", "enum": ["Paris", "Oslo"]}
    assert forecast["input_schema"]["properties"]["unit"] == {"type": "string", "title": "Unit"}
    [blank] = [t for t in named["tools"] if t["tool_name"] == "mcp__hostile__blank"]
    assert {t["tool_name"] for t in listed["tools"]} >= {"mcp__hostile__forecast", "mcp__hostile__blank"}
    assert blank["description"] == "Blank title"  # a description of only invisible characters is none
    assert found["tools"][0]["tool_name"] == exact["tools"][0]["tool_name"] == "mcp__hostile__forecast"
    assert searched["tools"][0]["tool_name"] == "mcp__hostile__forecast" and searched["query"] == "forecast"
    assert called["ok"] is True and called["result"]["text"] == "Sunny in Paris!", called
    assert called["result"]["structured_content"] == {"sky": "Sunny in Paris!", "city": "Oslo"}
    assert failed["ok"] is False and "broken widget" in failed["error"]["message"], failed
    assert "Misbehaving test server (hostile)." in answers["model_tools"][0]["description"]
    entry = rt.catalog_tool("mcp__hostile__forecast")
    assert entry is not None and "More details here\n; hidden text." in entry.tool.description  # what is indexed


@pytest.mark.slow  # six `junior` processes; the answers' own check above runs in process
def test_escapes_bidi_and_zero_width_characters_never_reach_the_terminal(tmp_path: Path) -> None:
    config = write_toml(tmp_path / "junior.toml", {"hostile": misbehaving("hostile")})
    env = {**os.environ, "JUNIOR_CONFIG": str(config), "JUNIOR_LOAD_PLUGINS": "mcp",
           "JUNIOR_CACHE_DIR": str(tmp_path / "cache")}
    runs = {
        "search": junior(env, "search", "weather forecast"),
        "show": junior(env, "show", "mcp__hostile__forecast"),
        "exec": junior(env, "exec", "mcp__hostile__forecast", "--args", '{"city": "Paris"}'),
        "exec fail": junior(env, "exec", "mcp__hostile__fail"),
        "mcp list": junior(env, "mcp", "list"),
        "mcp check": junior(env, "mcp", "check"),
    }
    for name, done in runs.items():
        assert _hostile_characters(done.stdout + done.stderr) == [], (name, done.stdout, done.stderr)
    assert "Weather forecast for a city" in runs["search"].stdout
    assert "Weather forecast for a city. eslaf read-only." in runs["show"].stdout
    assert '"city": "Paris"' in runs["exec"].stdout and "Sunny in Paris!" in runs["exec"].stdout
    assert "broken widget" in runs["exec fail"].stderr
    assert "ok      mcp:hostile: misbehaving-hostile 1.0, 3 tools" in runs["mcp check"].stdout


def test_a_5000_digit_integer_is_invalid_arguments_not_a_broken_schema(
    make_runtime: Callable[..., Runtime], caplog: pytest.LogCaptureFixture
) -> None:
    rt = make_runtime({"e": misbehaving("crash")})
    with caplog.at_level(logging.WARNING):
        typed = rt.execute_tool("mcp__e__echo", {"text": 10**5000})  # a string is wanted here
        untyped = rt.call_model_tool("executeTool", {"tool_name": "mcp__e__echo",
                                                     "arguments": {"text": "x", "more": [1, -(10**5000)]}})
    assert typed["error"]["code"] == "invalid_arguments", typed
    assert typed["error"]["details"] == [{"path": "text", "message": "an integer of more than 4,000 digits"}]
    assert untyped["error"]["code"] == "invalid_arguments", untyped
    assert untyped["error"]["details"][0]["path"] == "more/1"
    assert "input_schema is broken" not in caplog.text
    # The server never saw the call, and still answers.
    assert unmarked(rt.execute_tool("mcp__e__echo", {"text": "still here"})["result"]) == {"text": "still here"}
