"""Upgrading a database written by junior-memory 0.1 (schema revision 0002) to the private-conversation rule.

The rows are the ones 0.1's tools wrote: a DM under 0.1's default ``visibility="public"`` went to the
workspace scope with the DM's channel id only in its source_key; a private channel's rows were keyed by the
message or thread they were said in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from junior_memory import MemoryPlugin, MemoryStore
from junior_memory.content import content_hash
from junior_memory.engine import HEAD_REVISION, VERSION_TABLE
from junior_memory.tables import UTCDateTime
from memory_helpers import ALICE, BOB, PUBLIC, ctx, ok

from junior_core import Conversation, Runtime

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)

COLUMNS = (
    "id", "scope", "scope_key", "kind", "subject_type", "subject_key", "content", "content_hash", "actor_key",
    "source_key", "origin", "tool_call_id", "idempotency_key", "created_at", "observed_at", "expires_at",
    "archived_at", "archive_reason", "superseded_by",
)
MEMORIES = sa.table("junior_memory_memories", *(
    sa.column(c, UTCDateTime()) if c.endswith("_at") else sa.column(c, sa.String()) for c in COLUMNS
))
EVENTS = sa.table("junior_memory_events", sa.column("memory_id"), sa.column("event"), sa.column("actor_key"),
                  sa.column("source_key"), sa.column("origin"), sa.column("tool_call_id"),
                  sa.column("created_at", UTCDateTime()))


def v01_row(content: str, kind: str, scope: str, scope_key: str, subject_type: str, source_key: str,
            call: str, minutes: int, actor: str = "slack:T1:UALICE") -> dict[str, Any]:
    """A row as 0.1's memory__remember wrote it (idempotency key ``tool:<source_key>:<tool_call_id>``)."""
    at = T0 + timedelta(minutes=minutes)
    return {
        "id": uuid.uuid4().hex, "scope": scope, "scope_key": scope_key, "kind": kind, "subject_type": subject_type,
        "subject_key": scope_key, "content": content, "content_hash": content_hash(content), "actor_key": actor,
        "source_key": source_key, "origin": "tool", "tool_call_id": call,
        "idempotency_key": f"tool:{source_key}:{call}", "created_at": at, "observed_at": at, "expires_at": None,
        "archived_at": None, "archive_reason": None, "superseded_by": None,
    }


ROWS = {
    # A DM marked public (0.1's default): workspace scope, so every public channel recalled it.
    "dm": v01_row("Deploys go out through the release channel", "procedure", "conversation", "slack:T1",
                  "workspace", "slack:T1:D0ALICE:1700000000.000100", "c1", 0),
    "dm_pref": v01_row("Prefers terse PR summaries", "preference", "personal", "slack:T1:UALICE", "actor",
                       "slack:T1:D0ALICE:1700000060.000100", "c2", 1),
    # A private channel: top-level message and a thread, same content twice, and a different fact.
    "private_top": v01_row("Staging is rebuilt on Sundays", "knowledge", "conversation",
                           "slack:T1:GPRIV:1700000100.000100", "thread", "slack:T1:GPRIV:1700000100.000100", "c3", 2),
    "private_thread_dup": v01_row("staging is rebuilt on sundays.", "knowledge", "conversation",
                                  "slack:T1:GPRIV:1700000200.000100", "thread", "slack:T1:GPRIV:1700000200.000100",
                                  "c4", 3, actor="slack:T1:UBOB"),
    "private_thread": v01_row("The VPN config is in the wiki", "knowledge", "conversation",
                              "slack:T1:GPRIV:1700000200.000100", "thread", "slack:T1:GPRIV:1700000200.000100",
                              "c5", 4),
    # Public channel and a non-Slack platform whose channel happens to start with D: both stay as they are.
    "public": v01_row("Releases need two approvals", "procedure", "conversation", "slack:T1", "workspace",
                      "slack:T1:CPUBLIC:1700000300.000100", "c6", 5),
    "local": v01_row("The build cache lives in /var/cache", "knowledge", "conversation", "local:host", "workspace",
                     "local:host:Dev:main", "c7", 6, actor="local:host:alice"),
}


def write_v01_database(url: str) -> None:
    """Schema revision 0002 (0.1's head) and the rows above, with their ``created`` events."""
    from alembic import command
    from alembic.config import Config

    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            config = Config()
            config.set_main_option("script_location", "junior_memory:migrations")
            config.attributes["connection"] = conn
            command.upgrade(config, "0002")
            conn.execute(MEMORIES.insert(), list(ROWS.values()))
            conn.execute(EVENTS.insert(), [
                {"memory_id": r["id"], "event": "created", "actor_key": r["actor_key"], "source_key": r["source_key"],
                 "origin": "tool", "tool_call_id": r["tool_call_id"], "created_at": r["created_at"]}
                for r in ROWS.values()
            ])
    finally:
        engine.dispose()


@pytest.fixture
def db_url(empty_db_url: str) -> str:
    """Every test here starts from a database no junior-memory has migrated yet."""
    return empty_db_url


def read(url: str, sql: str) -> list[dict[str, Any]]:
    """Rows straight from the tables (the ``rows`` fixture would migrate the database before 0.1 writes it)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(sa.text(sql))]
    finally:
        engine.dispose()


def by_id(url: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in read(url, "SELECT * FROM junior_memory_memories")}


def test_the_upgrade_moves_private_rows_to_their_channel_and_0_1_dms_out_of_the_workspace(db_url: str) -> None:
    write_v01_database(db_url)
    assert MemoryStore(db_url).migrate() == HEAD_REVISION
    after = by_id(db_url)

    def where(name: str) -> tuple[Any, ...]:
        r = after[ROWS[name]["id"]]
        return r["scope"], r["scope_key"], r["subject_type"], r["subject_key"], r["archive_reason"]

    assert where("dm") == ("conversation", "slack:T1:D0ALICE", "channel", "slack:T1:D0ALICE", None)
    assert where("private_top") == ("conversation", "slack:T1:GPRIV", "channel", "slack:T1:GPRIV", None)
    assert where("private_thread") == ("conversation", "slack:T1:GPRIV", "channel", "slack:T1:GPRIV", None)
    # The same fact saved in two places of one channel: the older stays, the newer is merged into it.
    dup = after[ROWS["private_thread_dup"]["id"]]
    assert (dup["scope_key"], dup["archive_reason"], dup["superseded_by"]) == (
        "slack:T1:GPRIV", "merged", ROWS["private_top"]["id"])
    assert dup["archived_at"] is not None
    for unchanged in ("dm_pref", "public", "local"):
        row = after[ROWS[unchanged]["id"]]
        assert {k: row[k] for k in ("scope", "scope_key", "subject_type", "archived_at")} == {
            k: ROWS[unchanged][k] for k in ("scope", "scope_key", "subject_type", "archived_at")}
    # Provenance is kept: every row still names the message it was said in, and the move is in its history.
    assert {r["source_key"] for r in after.values()} == {r["source_key"] for r in ROWS.values()}
    history = read(db_url, "SELECT memory_id, event, reason FROM junior_memory_events WHERE event <> 'created'")
    assert sorted((h["memory_id"], h["event"], h["reason"]) for h in history) == sorted([
        (ROWS["dm"]["id"], "rescoped", "direct_message"),
        (ROWS["private_top"]["id"], "rescoped", "private_channel"),
        (ROWS["private_thread"]["id"], "rescoped", "private_channel"),
        (ROWS["private_thread_dup"]["id"], "rescoped", "private_channel"),
        (ROWS["private_thread_dup"]["id"], "archived", "merged"),
    ])


def test_after_the_upgrade_the_tools_read_by_the_new_rule(db_url: str) -> None:
    write_v01_database(db_url)
    runtime = Runtime(plugins=[MemoryPlugin(url=db_url)])
    try:
        def listed(actor: Any, conversation: Conversation) -> list[str]:
            answer = ok(runtime.execute_tool("memory__list", {}, ctx(actor, conversation)))
            return sorted(m["content"] for m in answer["memories"])

        next_dm = Conversation("slack", "T1", "D0ALICE", message_ts="1700009000.000100", visibility="private")
        assert listed(ALICE, next_dm) == ["Deploys go out through the release channel", "Prefers terse PR summaries"]
        # The 0.1 DM procedure no longer reaches the workspace's public channels.
        assert listed(BOB, PUBLIC) == ["Releases need two approvals"]
        new_top_level = Conversation("slack", "T1", "GPRIV", message_ts="1700009000.000200", visibility="private")
        assert listed(BOB, new_top_level) == ["Staging is rebuilt on Sundays", "The VPN config is in the wiki"]
        other_dm = Conversation("slack", "T1", "D0BOB", message_ts="1700009000.000300", visibility="private")
        assert listed(BOB, other_dm) == []
    finally:
        runtime.close()
    assert read(db_url, f"SELECT version_num FROM {VERSION_TABLE}") == [{"version_num": HEAD_REVISION}]


def test_downgrade_puts_channel_rows_back_in_their_thread(db_url: str) -> None:
    from alembic import command
    from alembic.config import Config

    write_v01_database(db_url)
    MemoryStore(db_url).migrate()
    engine = sa.create_engine(db_url)
    try:
        with engine.begin() as conn:
            config = Config()
            config.set_main_option("script_location", "junior_memory:migrations")
            config.attributes["connection"] = conn
            command.downgrade(config, "0002")
    finally:
        engine.dispose()
    after = by_id(db_url)
    assert {after[ROWS[n]["id"]]["scope_key"] for n in ("dm", "private_top", "private_thread")} == {
        ROWS["dm"]["source_key"], ROWS["private_top"]["source_key"], ROWS["private_thread"]["source_key"]}
    assert not [r for r in after.values() if r["subject_type"] == "channel"]


# 0.1 rows said in a group DM (mpim) and in a legacy private channel, both ``G...``, under 0.1's default public
# visibility: in the workspace scope, recalled in every public channel.
GROUP_ROWS = {
    "group_dm": v01_row("The offsite budget is 4000 euros", "knowledge", "conversation", "slack:T1", "workspace",
                        "slack:T1:GMPIM1:1700000400.000100", "g1", 7),
    # The same fact said again in the group DM with 0.1's visibility="private": keyed by its message.
    "group_dm_dup": v01_row("the offsite budget is 4000 euros.", "knowledge", "conversation",
                            "slack:T1:GMPIM1:1700000500.000100", "thread", "slack:T1:GMPIM1:1700000500.000100", "g2",
                            8, actor="slack:T1:UBOB"),
    "legacy_private": v01_row("Layoffs are announced on Friday", "knowledge", "conversation", "slack:T1",
                              "workspace", "slack:T1:GLEGACY:1700000600.000100", "g3", 9),
    # A non-Slack platform whose channel starts with G stays where it is.
    "local_g": v01_row("The GPU box is in rack 4", "knowledge", "conversation", "local:host", "workspace",
                       "local:host:Gpu:main", "g4", 10, actor="local:host:alice"),
}


def write_v01_database_with_groups(url: str) -> None:
    write_v01_database(url)
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(MEMORIES.insert(), list(GROUP_ROWS.values()))
    finally:
        engine.dispose()


def test_0_1_group_conversation_rows_become_private_to_their_channel(db_url: str) -> None:
    write_v01_database_with_groups(db_url)
    assert MemoryStore(db_url).migrate() == HEAD_REVISION
    after = by_id(db_url)

    def where(name: str) -> tuple[Any, ...]:
        r = after[GROUP_ROWS[name]["id"]]
        return r["scope_key"], r["subject_type"], r["archive_reason"], r["superseded_by"]

    # The copy already in the channel (moved there by revision 0003) is kept; the workspace copy merges into it.
    assert where("group_dm_dup") == ("slack:T1:GMPIM1", "channel", None, None)
    assert where("group_dm") == ("slack:T1:GMPIM1", "channel", "merged", GROUP_ROWS["group_dm_dup"]["id"])
    assert where("legacy_private") == ("slack:T1:GLEGACY", "channel", None, None)
    assert where("local_g") == ("local:host", "workspace", None, None)
    history = read(db_url, "SELECT memory_id, reason FROM junior_memory_events WHERE event = 'rescoped'")
    assert sorted(h["memory_id"] for h in history if h["reason"] == "group_conversation") == sorted(
        GROUP_ROWS[n]["id"] for n in ("group_dm", "legacy_private"))

    runtime = Runtime(plugins=[MemoryPlugin(url=db_url)])
    try:
        def listed(actor: Any, conversation: Conversation) -> list[str]:
            return sorted(m["content"] for m in ok(runtime.execute_tool("memory__list", {}, ctx(actor, conversation)))
                          ["memories"])

        assert "Layoffs are announced on Friday" not in listed(BOB, PUBLIC)
        assert "The offsite budget is 4000 euros" not in listed(BOB, PUBLIC)
        group = Conversation("slack", "T1", "GMPIM1", message_ts="1700009000.000400", visibility="private")
        assert listed(BOB, group) == ["the offsite budget is 4000 euros."]
    finally:
        runtime.close()


@pytest.mark.slow
def test_junior_memory_migrate_says_what_it_moved(db_url: str) -> None:
    write_v01_database_with_groups(db_url)
    env = {**os.environ, "JUNIOR_LOAD_PLUGINS": "memory", "JUNIOR_MEMORY_URL": db_url}
    junior = [sys.executable, "-c", "from junior_core.cli import main; main()"]
    proc = subprocess.run([*junior, "memory", "migrate"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "0002 -> " + HEAD_REVISION in proc.stdout
    assert ("moved 7 memories into their channel, private to its members: 1 from direct messages, "
            "2 from group DMs and legacy private channels (G...), 4 from private-channel threads") in proc.stdout
    assert "merged 2 duplicates" in proc.stdout
    again = subprocess.run([*junior, "memory", "migrate", "--json"], capture_output=True, text=True, env=env,
                           timeout=120)
    assert json.loads(again.stdout)["moved"] == {} and "merged" in json.loads(again.stdout)
