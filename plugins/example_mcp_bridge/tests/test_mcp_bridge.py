"""The bridge against real MCP servers as subprocesses: the reference time and git servers, and misbehaving ones."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from junior_mcp_bridge import MCPBridge, load_config
from mcp_bridge_helpers import gated, misbehaving, time_server, unmarked, write_toml

from junior_core import Runtime
from junior_core.testing import wait_until


@pytest.fixture(scope="module")
def time_rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    """One runtime bridging mcp-server-time, shared by the tests that only read and call."""
    path = write_toml(tmp_path_factory.mktemp("time") / "junior.toml", {"time": time_server()})
    with Runtime(plugins=[MCPBridge(load_config(environ={"JUNIOR_CONFIG": str(path)}))]) as rt:
        yield rt


def tools_of(rt: Runtime, source: str) -> dict[str, object]:
    return {entry.tool_name: entry for entry in rt.catalog_tools(source)}


def test_time_server_tools_are_searchable_and_callable(time_rt: Runtime) -> None:
    rt = time_rt
    found = rt.search_tools("convert a time between timezones", source="mcp:time")
    assert found["tools"][0]["tool_name"] == "mcp__time__convert_time"
    assert found["tools"][0]["annotations"]["readOnlyHint"] is True
    assert "source_timezone" in found["tools"][0]["input_schema"]["properties"]

    answer = rt.execute_tool("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"})
    assert answer["ok"] is True, answer
    assert answer["result"]["structured_content"]["timezone"] == "Asia/Tokyo"
    # The text block only repeats the structured content, so it is not carried twice.
    assert "text" not in answer["result"]


def test_server_is_error_is_tool_failed_with_its_message(time_rt: Runtime) -> None:
    rt = time_rt
    answer = rt.execute_tool("mcp__time__get_current_time", {"timezone": "Mars/Olympus"})
    assert answer["ok"] is False
    assert answer["error"]["code"] == "tool_failed"
    assert "Mars/Olympus" in answer["error"]["message"]


def test_schema_is_enforced_before_the_server_is_called(time_rt: Runtime) -> None:
    rt = time_rt
    answer = rt.execute_tool("mcp__time__get_current_time", {})
    assert answer["error"]["code"] == "invalid_arguments"


def test_source_description_comes_from_config_else_the_server(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime({
        "time": time_server(description="Clock and timezone conversion."),
        "errs": misbehaving("error"),
        "clock": time_server(),
    })
    described = {s["id"]: s["description"] for s in rt.sources}
    assert described["mcp:time"] == "Clock and timezone conversion."
    # First paragraph of the server's instructions.
    assert described["mcp:errs"] == "MCP server 'errs', in its own words: \"Misbehaving test server (error).\""
    # No instructions: serverInfo's name.
    assert "mcp-time" in described["mcp:clock"]
    assert "mcp:errs: MCP server 'errs', in its own words: \"Misbehaving test server (error).\"" in rt.model_tools()[0]["description"]


async def test_async_host_calls_through_its_own_loop(time_rt: Runtime) -> None:
    rt = time_rt
    answer = await rt.aexecute_tool("mcp__time__get_current_time", {"timezone": "UTC"})
    assert answer["ok"] is True, answer
    assert answer["result"]["structured_content"]["timezone"] == "UTC"


def test_git_server_on_a_temporary_repository(make_runtime: Callable[..., Runtime], git_repo: Path) -> None:
    bin_dir = Path(__import__("sys").executable).parent
    rt = make_runtime({"git": {"command": str(bin_dir / "mcp-server-git"), "args": ["--repository", str(git_repo)]}})
    assert "mcp__git__git_status" in tools_of(rt, "mcp:git")
    status = rt.execute_tool("mcp__git__git_status", {"repo_path": str(git_repo)})
    assert status["ok"] is True, status
    assert "README.md" in str(status["result"])
    log = rt.execute_tool("mcp__git__git_log", {"repo_path": str(git_repo)})
    assert "first commit" in str(log["result"])


def test_allowed_tools_limits_what_is_bridged(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime({"time": time_server(allowed_tools=["get_current_time"])})
    assert list(tools_of(rt, "mcp:time")) == ["mcp__time__get_current_time"]
    assert rt.execute_tool("mcp__time__convert_time", {})["error"]["code"] == "unknown_tool"


def test_all_pages_are_listed_and_odd_names_map_back(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime({"paged": misbehaving("paged")})
    names = tools_of(rt, "mcp:paged")
    assert len(names) == 151
    assert "mcp__paged__tool_000" in names and "mcp__paged__tool_149" in names
    dotted = [name for name in names if name.startswith("mcp__paged__dotted_name_")]
    assert len(dotted) == 1, names
    answer = rt.execute_tool(dotted[0], {"text": "via the dotted tool"})
    assert (answer["ok"], answer["tool_name"], unmarked(answer["result"])) == (True, dotted[0], {"text": "via the dotted tool"})


def test_other_content_blocks_are_carried(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime({"errs": misbehaving("error")})
    answer = rt.execute_tool("mcp__errs__image", {})
    assert answer["result"]["text"] == "a picture"
    assert answer["result"]["structured_content"] == {"width": 1, "height": 1}
    assert answer["result"]["content"] == [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]
    failed = rt.execute_tool("mcp__errs__fail", {})
    assert failed["error"]["code"] == "tool_failed"
    assert "the widget is broken" in failed["error"]["message"]


def test_list_changed_refreshes_the_catalog_and_the_index(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime({"changing": misbehaving("changing")})
    assert rt.search_tools("zebra_lookup", source="mcp:changing")["tools"] == [] or all(
        t["tool_name"] != "mcp__changing__zebra_lookup" for t in rt.search_tools("zebra", source="mcp:changing")["tools"]
    )
    assert rt.execute_tool("mcp__changing__add_tool", {"text": "zebra_lookup"})["ok"] is True
    wait_until(lambda: "mcp__changing__zebra_lookup" in tools_of(rt, "mcp:changing"), timeout=5,
               what="the added tool to be listed")
    found = rt.search_tools("zebra_lookup", source="mcp:changing")
    assert found["tools"][0]["tool_name"] == "mcp__changing__zebra_lookup"
    assert unmarked(rt.execute_tool("mcp__changing__zebra_lookup", {"text": "new"})["result"]) == {"text": "new"}


def test_crash_mid_call_is_unavailable_then_reconnects(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime({"crashy": misbehaving("crash")})
    assert unmarked(rt.execute_tool("mcp__crashy__echo", {"text": "one"})["result"]) == {"text": "one"}
    crashed = rt.execute_tool("mcp__crashy__crash", {})
    assert crashed["ok"] is False
    assert crashed["error"]["code"] == "unavailable"
    assert "stopped during the call" in crashed["error"]["message"]
    # The next call starts the server again.
    again = rt.execute_tool("mcp__crashy__echo", {"text": "two"})
    assert (again["ok"], again["tool_name"], unmarked(again["result"])) == (True, "mcp__crashy__echo", {"text": "two"})


def test_hung_and_missing_servers_do_not_stop_the_others(make_runtime: Callable[..., Runtime]) -> None:
    # Start-up gives up on the hung server after its own 1 s, not the default: the reason names that limit.
    rt = make_runtime({
        "hung": misbehaving("hang", startup_timeout_s=1, allowed_tools=["echo"]),
        "missing": {"command": "/nonexistent/junior-test-server", "allowed_tools": ["echo"]},
        "time": time_server(),
    })
    assert rt.execute_tool("mcp__time__get_current_time", {"timezone": "UTC"})["ok"] is True
    for tool_name in ("mcp__hung__echo", "mcp__missing__echo"):
        answer = rt.execute_tool(tool_name, {})
        assert answer["error"]["code"] == "unavailable", answer
    described = {s["id"]: s["description"] for s in rt.sources}
    assert "its command was not found" in described["mcp:missing"]
    assert "did not answer within 1 s" in described["mcp:hung"]
    (info,) = rt.plugins
    assert info.status == "loaded"
    assert "'missing' is unavailable" in (info.error or "") and "'hung' is unavailable" in (info.error or "")


def test_an_unknown_name_on_a_down_server_says_the_server_is_down(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime({"missing": {"command": "/nonexistent/junior-test-server"}, "time": time_server()})
    down = rt.execute_tool("mcp__missing__git_status", {})["error"]
    assert (down["code"], down["source"]) == ("unavailable", "mcp:missing")
    assert "its command was not found" in down["message"] and "/nonexistent" not in down["message"]
    # Retrying cannot find a command that is not installed, so the model is not told to try again later.
    assert "try again" not in down["message"].lower() and "junior mcp check" in down["message"]
    # A server that is up: an unknown name is just unknown, with no unrelated suggestions.
    unknown = rt.execute_tool("mcp__time__git_status", {})["error"]
    assert unknown["code"] == "unknown_tool" and unknown["suggestions"] == []


def test_server_gets_only_the_safe_environment_plus_its_own(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOST_SECRET", "do-not-leak")
    monkeypatch.setenv("MY_TOKEN", "s3cret")
    rt = make_runtime({"env": misbehaving("env", env={"BRIDGE_TOKEN": "Bearer ${MY_TOKEN}"})},
                      environ={"MY_TOKEN": "s3cret"})
    answer = rt.execute_tool("mcp__env__show_env", {})
    names = answer["result"]["structured_content"]["names"]
    assert "HOST_SECRET" not in names
    assert answer["result"]["structured_content"]["token"] == "Bearer s3cret"
    assert "s3cret" not in str(rt.search_tools(None, "mcp:env")) and "s3cret" not in str(rt.sources)


def test_server_stderr_goes_to_the_log_not_the_terminal(
    make_runtime: Callable[..., Runtime], capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="junior.mcp")
    rt = make_runtime({"crashy": misbehaving("crash")})
    rt.execute_tool("mcp__crashy__crash", {})
    wait_until(lambda: "crashing on purpose" in caplog.text, timeout=3, what="the server's stderr in the log")
    assert "misbehaving server starting" not in capfd.readouterr().err


def test_no_server_process_outlives_the_runtime(make_runtime: Callable[..., Runtime]) -> None:
    from mcp_bridge_helpers import live_children

    before = live_children()
    rt = make_runtime({"a": misbehaving("crash"), "b": misbehaving("error"), "hung": misbehaving("hang",
                                                                                                 startup_timeout_s=1)})
    assert len(live_children() - before) >= 2
    rt.close()
    assert live_children() - before == set()
    assert rt.execute_tool("mcp__a__echo", {})["error"]["code"] == "unavailable"


def test_listed_tools_allow_for_a_reconnect_before_the_call(make_runtime: Callable[..., Runtime]) -> None:
    # A start-up limit a loaded machine meets too: the server must start for its tools to be listed.
    rt = make_runtime({"crashy": misbehaving("crash", startup_timeout_s=60, timeout_s=3)})
    (entry,) = [e for e in rt.catalog_tools("mcp:crashy") if e.tool_name == "mcp__crashy__echo"]
    assert entry.tool.timeout_s == 60 + 3 + 2


async def test_a_cancelled_caller_does_not_leave_the_connect_half_done(no_orphans: None) -> None:
    import asyncio

    from junior_mcp_bridge.config import ServerConfig
    from junior_mcp_bridge.connection import ServerConnection

    spec = misbehaving("crash")
    config = ServerConfig(name="crashy", origin="test", command=spec["command"], args=tuple(spec["args"]))
    conn = ServerConnection(config, lambda _: None)
    try:
        caller = asyncio.create_task(conn.start())
        await asyncio.sleep(0.05)
        caller.cancel()
        deadline = time.monotonic() + 10
        while conn.state == "starting" and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert conn.state == "ready"
        session = conn._session
        assert session is not None
        assert unmarked(await conn.call("echo", {"text": "hi"})) == {"text": "hi"}
        assert conn._session is session  # the call used the session, it did not start another
    finally:
        await conn.stop()


async def test_start_up_gives_up_when_the_runtime_clock_passes_its_limit(no_orphans: None) -> None:
    import asyncio

    from junior_mcp_bridge.config import ServerConfig
    from junior_mcp_bridge.connection import ServerConnection

    from junior_core.testing import ManualClock

    class Watched(ManualClock):
        """Says when the handshake has begun waiting: its deadline is fixed by then."""

        def __init__(self) -> None:
            super().__init__()
            self.waiting = asyncio.Event()

        async def wait_async(self, future: asyncio.Future[object], until: float) -> bool:
            self.waiting.set()
            return await super().wait_async(future, until)

    spec = misbehaving("hang")  # never answers `initialize`
    config = ServerConfig(name="hung", origin="test", command=spec["command"], args=tuple(spec["args"]),
                          startup_timeout_s=60)
    conn = ServerConnection(config, lambda _: None)
    conn.clock = clock = Watched()
    starting = asyncio.create_task(conn.start())
    try:
        await asyncio.wait_for(clock.waiting.wait(), 30)
        clock.advance(59.5)
        await asyncio.sleep(0.05)
        assert conn.state == "starting"  # the limit is a minute on the clock, however long the process took
        clock.advance(0.5)
        await asyncio.wait_for(starting, 20)
        assert conn.state == "failed" and conn.retryable
        assert conn.error is not None and conn.error.startswith("no answer within 60 s of starting"), conn.error
        # It is tried again after the retry interval on the same clock, not before.
        assert conn._retry_at == clock.now() + conn.retry_interval_s
    finally:
        await conn.stop()


def test_failure_details_stay_out_of_what_the_model_sees(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime({
        "gone": {"command": "/nonexistent/secret-path/server"},
        "stubbed": {"command": "/nonexistent/secret-path/server", "allowed_tools": ["echo"]},
    })
    answer = rt.execute_tool("mcp__stubbed__echo", {})
    assert answer["error"]["code"] == "unavailable"
    assert "did not start" in answer["error"]["message"]
    seen = [answer, rt.model_tools(), rt.search_tools(None, "mcp:gone"), rt.search_tools("echo"), rt.sources]
    assert "did not start" in str(rt.sources)
    for item in seen:
        assert "secret-path" not in str(item), item
    # The host still gets the detail.
    assert "'gone' is unavailable: command not found: '/nonexistent/secret-path/server'" in (rt.plugins[0].error or "")


def test_stub_names_match_the_listed_names(make_runtime: Callable[..., Runtime], tmp_path: Path) -> None:
    rt = make_runtime({"paged": gated(tmp_path / "never", allowed_tools=["dotted.name"])})
    stubbed = list(tools_of(rt, "mcp:paged"))
    assert len(stubbed) == 1 and stubbed[0].startswith("mcp__paged__dotted_name_"), stubbed
    rt2 = make_runtime({"paged": misbehaving("paged", allowed_tools=["dotted.name"])})
    assert list(tools_of(rt2, "mcp:paged")) == stubbed


def test_a_server_down_at_start_up_is_retried_in_the_background(tmp_path: Path, no_orphans: None) -> None:
    marker = tmp_path / "up"
    path = write_toml(tmp_path / "junior.toml", {"late": gated(marker)})
    plugin = MCPBridge(load_config(environ={"JUNIOR_CONFIG": str(path)}), retry_interval_s=0.3)
    with Runtime(plugins=[plugin]) as rt:
        assert tools_of(rt, "mcp:late") == {}
        assert "Unavailable: the server exited" in str(rt.sources)
        marker.touch()
        wait_until(lambda: "mcp__late__echo" in tools_of(rt, "mcp:late"), timeout=15, what="the late server's tools")
        assert rt.search_tools("echo", source="mcp:late")["tools"][0]["tool_name"] == "mcp__late__echo"
        assert unmarked(rt.execute_tool("mcp__late__echo", {"text": "late"})["result"]) == {"text": "late"}
        assert "Unavailable" not in str(rt.sources)
