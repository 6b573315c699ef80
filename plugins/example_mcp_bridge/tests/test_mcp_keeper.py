"""A server that kills its keeper: junior notices, says so, and ends the server and everything it started.

The server (``misbehaving.py parricide``) leaves a child in a session of its own with an empty environment, then
kills its parent, the keeper junior started it under, with SIGKILL and serves on. Nothing of junior's marks that
child, and with the keeper gone it is no longer in any tree junior started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_bridge_helpers import MISBEHAVING, alive, misbehaving_runtime, unmarked

from junior_core import Runtime
from junior_core.testing import wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the keeper is Linux only")


def gone_within(pids: list[int], seconds: float) -> bool:
    """Whether every one of ``pids`` ends within ``seconds`` (polled: the processes end on other threads)."""
    try:
        wait_until(lambda: not any(map(alive, pids)), timeout=seconds, interval=0.02)
    except AssertionError:
        return False
    return True


def pids_of(pid_file: Path) -> list[int]:
    """The detached child's pid and the server's, once the server has written both."""
    def written() -> list[int] | None:
        words = pid_file.read_text().split() if pid_file.exists() else []
        return [int(word) for word in words] if len(words) == 2 else None

    return wait_until(written, timeout=20, what=f"the server to write {pid_file}")


@pytest.fixture
def leftovers() -> Iterator[list[int]]:
    """Pids a test expects gone; any still alive afterwards are killed, so a red run leaves nothing behind."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def runtime(pid_file: Path, *extra: str, mode: str = "parricide") -> Runtime:
    rt: Runtime = misbehaving_runtime("parricide", mode, pid_file, *extra)
    return rt


def test_a_server_that_kills_its_keeper_at_start_is_down_and_its_tree_ended(
    tmp_path: Path, leftovers: list[int]
) -> None:
    pid_file = tmp_path / "pids"
    rt = runtime(pid_file)
    try:
        leftovers += pids_of(pid_file)
        answer = rt.execute_tool("mcp__parricide__echo", {"text": "hi"})
        assert answer["ok"] is False and answer["error"]["code"] == "unavailable", answer
        assert "keeper" in answer["error"]["message"], answer
        assert gone_within(leftovers, 10), "the server or its detached child outlived the keeper's death"
    finally:
        rt.close()
    assert not any(map(alive, leftovers))


def test_a_server_that_kills_its_keeper_while_serving_is_noticed_and_ended(
    tmp_path: Path, leftovers: list[int]
) -> None:
    pid_file = tmp_path / "pids"
    rt = runtime(pid_file, "later")
    try:
        leftovers += pids_of(pid_file)
        assert unmarked(rt.execute_tool("mcp__parricide__echo", {"text": "hi"})["result"]) == {"text": "hi"}
        # No call is needed for junior to notice: the tree ends on its own.
        assert gone_within(leftovers, 10), "junior did not notice that the server's keeper was killed"
        answer = rt.execute_tool("mcp__parricide__echo", {"text": "again"})
        assert answer["ok"] is False and answer["error"]["code"] == "unavailable", answer
        assert "keeper" in answer["error"]["message"], answer
    finally:
        rt.close()


def test_a_grandchild_cut_loose_before_the_keeper_was_killed_is_ended_too(
    tmp_path: Path, leftovers: list[int]
) -> None:
    """Its parent exited, it has no marker, and once the keeper is killed it is in no tree of the server's: only
    junior's record of what ran under the keeper finds it."""
    pid_file = tmp_path / "pids"
    rt = runtime(pid_file, mode="orphan")
    try:
        leftovers += pids_of(pid_file)
        grandchild = leftovers[0]
        assert b"JUNIOR_MCP_RUN" not in Path(f"/proc/{grandchild}/environ").read_bytes()
        assert unmarked(rt.execute_tool("mcp__parricide__echo", {"text": "hi"})["result"]) == {"text": "hi"}
        assert gone_within(leftovers, 10), "a process recorded under the keeper outlived the keeper's death"
    finally:
        rt.close()


def test_the_detached_child_is_gone_after_a_normal_exit(tmp_path: Path, leftovers: list[int]) -> None:
    pid_file = tmp_path / "pids"
    rt = runtime(pid_file)
    leftovers += pids_of(pid_file)
    rt.close()
    assert gone_within(leftovers, 5)


def test_the_detached_child_is_gone_after_junior_is_killed(tmp_path: Path, leftovers: list[int]) -> None:
    """junior itself ended with SIGKILL: it had already ended the tree when it saw the keeper gone."""
    pid_file = tmp_path / "pids"
    script = textwrap.dedent(f"""
        import sys, time
        from junior_core import Runtime
        from junior_mcp_bridge import MCPBridge
        from junior_mcp_bridge.config import ServerConfig

        config = ServerConfig(name="parricide", origin="test", command=sys.executable,
                              args=({MISBEHAVING!r}, "parricide", {str(pid_file)!r}))
        rt = Runtime(plugins=[MCPBridge([config])])
        print(rt.execute_tool("mcp__parricide__echo", {{"text": "hi"}})["ok"], flush=True)
        time.sleep(600)
    """)
    junior = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "JUNIOR_LOAD_PLUGINS": ""})
    try:
        leftovers += pids_of(pid_file)
        assert junior.stdout is not None
        junior.stdout.readline()
    finally:
        junior.kill()
        junior.wait()
    assert gone_within(leftovers, 5), "a process the server started outlived junior's SIGKILL"
