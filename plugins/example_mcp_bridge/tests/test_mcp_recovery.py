"""A server whose session breaks is restarted; no process a server started outlives the runtime."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp_bridge_helpers import alive, misbehaving, misbehaving_runtime, unmarked

from junior_core import Runtime
from junior_core.testing import wait_until


def test_a_server_that_writes_invalid_utf8_is_restarted(
    make_runtime: Callable[..., Runtime], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("WARNING", logger="junior.mcp")
    rt = make_runtime({"garbly": misbehaving("garble", timeout_s=20)})
    assert unmarked(rt.execute_tool("mcp__garbly__echo", {"text": "before"})["result"]) == {"text": "before"}
    garbled = rt.execute_tool("mcp__garbly__garble", {})
    # Not a stalled session waiting out its timeout: the broken session is dropped and the call told so.
    assert garbled["ok"] is False and garbled["error"]["code"] == "unavailable", garbled
    meanwhile = rt.execute_tool("mcp__garbly__echo", {"text": "meanwhile"})
    assert meanwhile.get("ok") is True or meanwhile["error"]["code"] == "unavailable", meanwhile
    assert "MCP server 'garbly' broke its session (it wrote a line that is not JSON-RPC: '\ufffd')" in caplog.text

    def answered() -> dict[str, object] | None:
        answer = rt.execute_tool("mcp__garbly__echo", {"text": "after"})
        if answer.get("ok"):
            return answer
        assert answer["error"]["code"] == "unavailable", answer  # type: ignore[index]
        return None

    answer = wait_until(answered, timeout=20, what="the restarted server to answer")
    assert (answer["ok"], answer["tool_name"], unmarked(answer["result"])) == (True, "mcp__garbly__echo", {"text": "after"})
    assert "MCP server 'garbly' restarted (attempt 1)" in caplog.text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finding a daemonised child needs /proc")
def test_a_daemonised_child_of_a_server_does_not_outlive_close(tmp_path: Path, no_orphans: None) -> None:
    pid_file = tmp_path / "daemon.pid"
    rt = misbehaving_runtime("daemon", "daemon", pid_file)
    try:
        assert unmarked(rt.execute_tool("mcp__daemon__echo", {"text": "hi"})["result"]) == {"text": "hi"}
        daemon = int(pid_file.read_text())
        assert alive(daemon)
        assert os.getsid(daemon) == daemon  # it left the server's session and process group
    finally:
        rt.close()
    assert not alive(daemon)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a subreaper is a Linux feature")
@pytest.mark.parametrize("how", ["close", "server exits"])
def test_a_detached_child_with_a_cleared_environment_ends_with_its_server(
    tmp_path: Path, no_orphans: None, how: str
) -> None:
    """A daemon that left the server's session and process group and cleared its environment (no marker of
    junior's left in it) still ends: with the runtime, or when its server exits."""
    pid_file = tmp_path / "detached.pid"
    rt = misbehaving_runtime("detach", "detach", pid_file)
    try:
        assert unmarked(rt.execute_tool("mcp__detach__echo", {"text": "hi"})["result"]) == {"text": "hi"}
        detached = int(pid_file.read_text())
        assert alive(detached)
        assert os.getsid(detached) == detached  # it left the server's session and process group
        assert b"JUNIOR_MCP_RUN" not in Path(f"/proc/{detached}/environ").read_bytes()
        if how == "server exits":
            crashed = rt.execute_tool("mcp__detach__crash", {})
            assert crashed["error"]["code"] == "unavailable", crashed
            wait_until(lambda: not alive(detached), timeout=20, what="the detached child to end with its server")
    finally:
        rt.close()
    assert not alive(detached)

