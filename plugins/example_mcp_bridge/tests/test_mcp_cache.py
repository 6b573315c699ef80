"""Tool lists cached across processes: a search needs no running server; the first call of a tool starts it."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from junior_mcp_bridge import MCPBridge, load_config
from junior_mcp_bridge.cache import MAX_ENTRY_BYTES, CachedListing, ToolCache
from junior_mcp_bridge.config import server_config
from mcp_bridge_helpers import misbehaving, unmarked, write_toml

from junior_core import Runtime
from junior_core.testing import wait_until

JUNIOR = str(Path(sys.executable).parent / "junior")


def junior(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([JUNIOR, *args], env=env, capture_output=True, text=True, timeout=90)


def starts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def setup(tmp_path: Path, plugin_table: str = "", **server: Any) -> tuple[dict[str, str], Path]:
    log = tmp_path / "starts.log"
    config = write_toml(tmp_path / "junior.toml",
                        {"counted": misbehaving("crash", env={"MISBEHAVING_START_LOG": str(log)}, **server)})
    if plugin_table:
        config.write_text(config.read_text() + f"\n[plugins.mcp]\n{plugin_table}\n")
    env = {**os.environ, "JUNIOR_CONFIG": str(config), "JUNIOR_LOAD_PLUGINS": "mcp",
           "JUNIOR_CACHE_DIR": str(tmp_path / "cache")}
    return env, log


@pytest.mark.slow
def test_a_second_process_searches_without_starting_the_server(tmp_path: Path, no_orphans: None) -> None:
    env, log = setup(tmp_path)
    first = junior(env, "search", "echo", "--source", "mcp:counted")
    assert "mcp__counted__echo" in first.stdout, first.stderr
    assert starts(log) == 1
    for args in (("search", "echo", "--source", "mcp:counted"), ("search", "echo"), ("show", "mcp__counted__echo")):
        again = junior(env, *args)
        assert "mcp__counted__echo" in again.stdout, again.stderr
    assert starts(log) == 1  # three more processes, no start
    ran = junior(env, "exec", "mcp__counted__echo", "--args", '{"text": "hi"}')
    assert unmarked(json.loads(ran.stdout)) == {"text": "hi"}
    assert starts(log) == 2  # the first call of one of its tools
    assert junior(env, "mcp", "check").returncode == 0
    assert starts(log) == 3
    cached = list((tmp_path / "cache" / "mcp-tools").glob("counted-*.json"))
    assert len(cached) == 1 and stat.S_IMODE(cached[0].stat().st_mode) == 0o600
    assert stat.S_IMODE(cached[0].parent.stat().st_mode) == 0o700
    assert "MISBEHAVING_START_LOG" not in cached[0].read_text() and str(log) not in cached[0].read_text()


@pytest.mark.slow
def test_without_the_cache_every_search_starts_the_server(tmp_path: Path, no_orphans: None) -> None:
    env, log = setup(tmp_path, "tool_cache = false")
    for _ in range(2):
        assert "mcp__counted__echo" in junior(env, "search", "echo", "--source", "mcp:counted").stdout
    assert starts(log) == 2


@pytest.mark.slow
def test_an_old_entry_or_another_configuration_asks_the_server(tmp_path: Path, no_orphans: None) -> None:
    env, log = setup(tmp_path, "tool_cache_max_age_s = 60")
    junior(env, "search", "echo", "--source", "mcp:counted")
    junior(env, "search", "echo", "--source", "mcp:counted")
    assert starts(log) == 1  # younger than its minute, however slow the machine: the entry is used
    # Older than its minute: the entry's time written moved back, rather than a minute waited out.
    for entry in (tmp_path / "cache" / "mcp-tools").glob("counted-*.json"):
        data = json.loads(entry.read_text())
        data["written"] -= 61
        entry.write_text(json.dumps(data))
    junior(env, "search", "echo", "--source", "mcp:counted")
    assert starts(log) == 2
    env2, _ = setup(tmp_path, cwd=str(tmp_path))  # the same server started elsewhere: its own entry
    junior(env2, "search", "echo", "--source", "mcp:counted")
    assert starts(log) == 3


@pytest.mark.slow
def test_an_entry_others_could_write_is_not_used(tmp_path: Path, no_orphans: None) -> None:
    env, log = setup(tmp_path)
    junior(env, "search", "echo", "--source", "mcp:counted")
    (entry,) = (tmp_path / "cache" / "mcp-tools").glob("counted-*.json")
    entry.chmod(0o666)
    planted = json.loads(entry.read_text())
    planted["tools"][0]["description"] = "PLANTED"
    entry.write_text(json.dumps(planted))
    shown = junior(env, "search", "echo", "--source", "mcp:counted")
    assert "PLANTED" not in shown.stdout and starts(log) == 2
    assert "it is not yours alone" in shown.stderr


def test_a_runtime_starts_from_the_cache_and_follows_list_changed(tmp_path: Path, no_orphans: None) -> None:
    log = tmp_path / "starts.log"
    path = write_toml(tmp_path / "junior.toml",
                      {"changing": misbehaving("changing", env={"MISBEHAVING_START_LOG": str(log)})})
    configs = load_config(environ={"JUNIOR_CONFIG": str(path)})
    cache = tmp_path / "cache"

    def runtime() -> Runtime:
        os.environ["JUNIOR_CACHE_DIR"] = str(cache)
        return Runtime(plugins=[MCPBridge(configs, tool_cache=True)], config=False, index_cache=False)

    saved = os.environ.get("JUNIOR_CACHE_DIR")
    try:
        with runtime() as rt:
            assert starts(log) == 1
            assert rt.execute_tool("mcp__changing__add_tool", {"text": "zebra_lookup"})["ok"] is True
            wait_until(lambda: rt.catalog_tool("mcp__changing__zebra_lookup"), timeout=10,
                       what="the added tool to be listed")
        with runtime() as rt:  # a bot's start: the cached list, the added tool included, no server started
            assert starts(log) == 1
            assert rt.catalog_tool("mcp__changing__zebra_lookup") is not None
            assert rt.search_tools("zebra", source="mcp:changing")["tools"][0]["tool_name"] == (
                "mcp__changing__zebra_lookup")
            assert starts(log) == 1
            assert rt.execute_tool("mcp__changing__add_tool", {"text": "again"})["ok"] is True
            assert starts(log) == 2
    finally:
        if saved is None:
            os.environ.pop("JUNIOR_CACHE_DIR", None)
        else:
            os.environ["JUNIOR_CACHE_DIR"] = saved


def _listing() -> CachedListing:
    return CachedListing(tools=[{"name": "echo", "inputSchema": {"type": "object"}}], server_name="s",
                         written=time.time())


def test_an_entry_written_for_another_server_is_ignored(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cache = ToolCache(tmp_path / "cache")
    ours = server_config("test", "docs", {"url": "https://docs.example.com/mcp"})
    theirs = server_config("test", "docs", {"command": "evil-server", "args": ["--lie"]})
    cache.store(theirs, _listing())
    assert cache.load(theirs) is not None
    cache.path(theirs).rename(cache.path(ours))  # another server's entry under this server's name
    with caplog.at_level(logging.INFO, logger="junior.mcp"):
        assert cache.load(ours) is None
    assert f"not using the cached tool list {cache.path(ours)}: it was written for another server" in caplog.text


@pytest.mark.parametrize(("tools", "kind"), [({"echo": {"name": "echo", "inputSchema": {}}}, "dict"),
                                            ("echo", "str"), (None, "NoneType")])
def test_cached_tools_that_are_not_a_list_are_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, tools: Any, kind: str
) -> None:
    cache = ToolCache(tmp_path / "cache")
    config = server_config("test", "docs", {"url": "https://docs.example.com/mcp"})
    cache.store(config, _listing())
    path = cache.path(config)
    path.write_text(json.dumps({**json.loads(path.read_text()), "tools": tools}))
    with caplog.at_level(logging.INFO, logger="junior.mcp"):
        assert cache.load(config) is None
    assert f"its tools are a {kind}, not a list; the server will be asked" in caplog.text


def test_an_entry_over_the_size_cap_is_neither_read_nor_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = ToolCache(tmp_path / "cache")
    config = server_config("test", "docs", {"url": "https://docs.example.com/mcp"})
    cache.store(config, _listing())
    path = cache.path(config)
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "instructions": "x" * MAX_ENTRY_BYTES}))
    with caplog.at_level(logging.INFO, logger="junior.mcp"):
        assert cache.load(config) is None
    assert "larger than 4 MB" in caplog.text
    path.unlink()
    huge = CachedListing(tools=[{"name": "echo", "inputSchema": {"type": "object"}}], instructions="x" * MAX_ENTRY_BYTES)
    cache.store(config, huge)
    assert not path.exists()


@pytest.mark.slow
def test_a_cache_directory_others_can_write_is_made_private(tmp_path: Path, no_orphans: None) -> None:
    directory = tmp_path / "cache" / "mcp-tools"
    directory.mkdir(parents=True)
    directory.chmod(0o777)
    env = {**os.environ, "JUNIOR_CONFIG": str(write_toml(tmp_path / "junior.toml", {"e": misbehaving("crash")})),
           "JUNIOR_LOAD_PLUGINS": "mcp", "JUNIOR_CACHE_DIR": str(tmp_path / "cache")}
    listed = junior(env, "mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert f"the MCP tool cache directory {directory} could be entered or changed by other users (mode 777); " \
           "made it private (700)" in listed.stderr, listed.stderr
    assert json.loads(junior(env, "mcp", "list", "--json").stdout)[0]["state"] == "cached"  # and used
