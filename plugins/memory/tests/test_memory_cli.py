"""`junior memory ...`: the click group from register_commands, and the real `junior` command."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import click
import pytest
from click.testing import CliRunner
from junior_memory import MemoryPlugin
from junior_memory.config import display_url
from junior_memory.store import HEAD_REVISION
from memory_helpers import ctx, ok

from junior_core import Runtime


def cli_for(plugin: MemoryPlugin) -> click.Group:
    @click.group()
    def junior() -> None:
        pass

    plugin.register_commands(cli=junior)
    return junior


def invoke(group: click.Group, *args: str) -> Any:
    result = CliRunner().invoke(group, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output) if "--json" in args else result.output


def test_hook_register_commands(empty_db_url: str) -> None:
    plugin = MemoryPlugin(url=empty_db_url)
    group = cli_for(plugin)
    assert sorted(group.commands["memory"].commands) == [
        "forget", "history", "info", "list", "make-private", "migrate", "purge", "reindex", "show", "stats",
    ]
    info = invoke(group, "memory", "info", "--json")
    assert info["revision"] is None and info["reachable"] is True
    assert invoke(group, "memory", "migrate", "--json")["to"] == HEAD_REVISION
    assert invoke(group, "memory", "info", "--json")["revision"] == HEAD_REVISION


def test_list_show_forget_purge_stats(db_url: str) -> None:
    plugin = MemoryPlugin(url=db_url)
    with Runtime(plugins=[plugin]) as rt:
        memory = ok(rt.execute_tool("memory__remember", {"content": "I prefer tea", "kind": "preference"}, ctx()))
        ok(rt.execute_tool("memory__remember", {"content": "Standup at 9:30", "kind": "knowledge"}, ctx()))
    group = cli_for(plugin)
    listed = invoke(group, "memory", "list", "--json")["memories"]
    assert {m["scope_key"] for m in listed} == {"slack:T1:UALICE", "slack:T1"}
    assert "I prefer tea" in invoke(group, "memory", "list")

    shown = invoke(group, "memory", "show", memory["id"][:10], "--json")
    assert shown["id"] == memory["id"] and [e["event"] for e in shown["events"]] == ["created"]

    forgotten = invoke(group, "memory", "forget", memory["id"], "--json")["forgotten"]
    assert forgotten["archive_reason"] == "admin_removed"
    assert len(invoke(group, "memory", "list", "--json")["memories"]) == 1
    assert len(invoke(group, "memory", "list", "--archived", "--json")["memories"]) == 2

    stats = invoke(group, "memory", "stats", "--json")
    assert stats["total"] == 2 and stats["by_state"] == {"active": 1, "archived": 1}
    assert invoke(group, "memory", "purge", "--archived-before", "2000-01-01", "--json")["purged"] == 0
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    assert invoke(group, "memory", "purge", "--archived-before", tomorrow, "--json")["purged"] == 1
    assert invoke(group, "memory", "stats", "--json")["by_state"] == {"active": 1}

    missing = CliRunner().invoke(group, ["memory", "show", "ffffffff"])
    assert missing.exit_code != 0 and "no memory with id" in missing.output


def test_unreachable_database_is_a_clear_cli_error() -> None:
    group = cli_for(MemoryPlugin(url="postgresql+psycopg://postgres@127.0.0.1:1/test"))
    result = CliRunner().invoke(group, ["memory", "stats"])
    assert result.exit_code == 1
    assert "unavailable" in result.output and "JUNIOR_MEMORY_URL" in result.output
    info = CliRunner().invoke(group, ["memory", "info", "--json"])
    assert info.exit_code == 1 and json.loads(info.output)["reachable"] is False


def test_an_unusable_database_url_is_a_clear_cli_error() -> None:
    group = cli_for(MemoryPlugin(url="notadb://x"))
    result = CliRunner().invoke(group, ["memory", "stats"])
    assert result.exit_code == 1
    assert "notadb://x" in result.output and "JUNIOR_MEMORY_URL" in result.output
    assert "unavailable" not in result.output


@pytest.mark.slow
def test_real_junior_command_uses_the_installed_plugin(db_url: str) -> None:
    env = {**os.environ, "JUNIOR_LOAD_PLUGINS": "memory", "JUNIOR_MEMORY_URL": db_url}
    junior = [sys.executable, "-c", "from junior_core.cli import main; main()"]

    def run(*args: str) -> Any:
        proc = subprocess.run([*junior, *args], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr + proc.stdout
        return json.loads(proc.stdout)

    run("exec", "memory__remember", "--json", "--args", json.dumps({"content": "I prefer short answers", "kind": "preference"}))
    stats = run("memory", "stats", "--json")
    assert stats["by_scope"] == {"personal": 1} and stats["by_origin"] == {"tool": 1}
    (row,) = run("memory", "list", "--json")["memories"]
    assert row["scope_key"].startswith("local:local:") and row["source_key"] == "local:local:cli:main"


# A password with '@' and ':' in it, and another secret in the query string; port 1 refuses connections.
SECRET_URL = "postgresql+psycopg://junior:p@ss:w0rd@127.0.0.1:1/test?sslmode=disable&password=qu3ry-s3cret"
SECRETS = ("p@ss", "ss:w0rd", "w0rd", "qu3ry-s3cret")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (SECRET_URL, "postgresql+psycopg://junior:***@127.0.0.1:1/test?password=***&sslmode=disable"),
        ("postgresql://junior:p%40ss@db/app", "postgresql://junior:***@db/app"),
        ("postgresql://db/app?user=junior&sslpassword=w0rd", "postgresql://db/app?sslpassword=***&user=junior"),
        ("sqlite:////var/lib/junior/memory.sqlite3", "sqlite:////var/lib/junior/memory.sqlite3"),
    ],
)
def test_display_url_masks_every_secret(url: str, shown: str) -> None:
    assert display_url(url) == shown


def test_secrets_in_the_url_never_reach_info_errors_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    plugin = MemoryPlugin(url=SECRET_URL)
    group = cli_for(plugin)
    for args in (["memory", "info", "--json"], ["memory", "info"], ["memory", "stats"]):
        result = CliRunner().invoke(group, args)
        assert result.exit_code == 1, result.output
        assert "junior:***@127.0.0.1:1/test" in result.output
        assert not [s for s in SECRETS if s in result.output], result.output
    info = json.loads(CliRunner().invoke(group, ["memory", "info", "--json"]).output)
    assert info["url"] == display_url(SECRET_URL) and "unavailable" in info["error"]
    assert repr(plugin) == f"<MemoryPlugin {display_url(SECRET_URL)}>"

    caplog.clear()
    with caplog.at_level(logging.DEBUG), Runtime(plugins=[plugin]) as rt:
        assert rt.prompt_context(ctx(), "tea", host=False) == []
        rt.execute_tool("memory__list", {}, ctx())
    logged = [r.getMessage() + (caplog.text if r.exc_info else "") for r in caplog.records]
    assert any("memory recall skipped" in line for line in logged)
    assert not [line for line in logged if any(s in line for s in SECRETS)]


@pytest.mark.parametrize("url", ["notadb://junior:p@ss:w0rd@db/x?password=qu3ry-s3cret",
                                 "postgresql://junior:p@ss:w0rd@db:port/x?password=qu3ry-s3cret"])
def test_an_unusable_url_with_secrets_is_reported_masked(url: str, caplog: pytest.LogCaptureFixture) -> None:
    group = cli_for(MemoryPlugin(url=url))
    with caplog.at_level(logging.DEBUG):
        result = CliRunner().invoke(group, ["memory", "stats"])
    assert result.exit_code == 1 and "JUNIOR_MEMORY_URL" in result.output
    assert "junior:***@" in result.output
    assert not [s for s in SECRETS if s in result.output + caplog.text], result.output + caplog.text


def test_make_private_moves_a_private_channels_workspace_rows_to_it(db_url: str, rows: Any) -> None:
    from memory_helpers import ALICE

    from junior_core import Conversation

    # What an older version stored: a private channel read as public put its knowledge in the workspace scope.
    said_there = Conversation("slack", "T1", "CSECRET", thread_ts="1700000000.000100", visibility="public")
    elsewhere = Conversation("slack", "T1", "CPUBLIC", thread_ts="1700000000.000200", visibility="public")
    plugin = MemoryPlugin(url=db_url)
    with Runtime(plugins=[plugin]) as rt:
        for text in ("The acquisition closes in March", "The board meets on Fridays"):
            ok(rt.execute_tool("memory__remember", {"content": text, "kind": "knowledge"}, ctx(ALICE, said_there)))
        ok(rt.execute_tool("memory__remember", {"content": "The board meets on Fridays", "kind": "knowledge"},
                           ctx(ALICE, Conversation("slack", "T1", "CSECRET", thread_ts="1700000001.000100",
                                                   visibility="private"))))
        ok(rt.execute_tool("memory__remember", {"content": "Lunch is at noon", "kind": "knowledge"},
                           ctx(ALICE, elsewhere)))
        group = cli_for(plugin)
        out = invoke(group, "memory", "make-private", "slack:T1:CSECRET", "--json")
        assert out == {"channel": "slack:T1:CSECRET", "moved": 2, "merged": 1}
        stored = {(r["content"], r["scope_key"], r["subject_type"], r["archive_reason"]) for r in rows(
            "SELECT content, scope_key, subject_type, archive_reason FROM junior_memory_memories")}
        assert stored == {
            ("The acquisition closes in March", "slack:T1:CSECRET", "channel", None),
            ("The board meets on Fridays", "slack:T1:CSECRET", "channel", None),
            ("The board meets on Fridays", "slack:T1:CSECRET", "channel", "merged"),
            ("Lunch is at noon", "slack:T1", "workspace", None),
        }
        public = ok(rt.execute_tool("memory__list", {}, ctx(ALICE, elsewhere)))
        assert [m["content"] for m in public["memories"]] == ["Lunch is at noon"]
        assert invoke(group, "memory", "make-private", "slack:T1:CSECRET", "--json")["moved"] == 0
        bad = CliRunner().invoke(group, ["memory", "make-private", "CSECRET"])
        assert bad.exit_code == 2 and "not a channel key" in bad.output
