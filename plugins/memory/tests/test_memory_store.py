"""The store under pressure: concurrent writers, concurrent migrations, unreachable databases, purge."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from junior_memory import MemoryPlugin, MemoryStore
from junior_memory.scope import personal_scope, read_scopes
from junior_memory.store import HEAD_REVISION
from memory_helpers import ALICE, PUBLIC, admin_conninfo, ctx, err, ok, schema_url
from sqlalchemy import create_engine, text

from junior_core import Runtime, Source, Tool, hookimpl


def _together(n: int, fn: Callable[[int], Any]) -> list[Any]:
    """Run ``fn(i)`` on ``n`` threads released at the same instant."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        results[i] = fn(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def test_eight_threads_same_tool_call_id_make_one_row(rt: Runtime, rows: Any) -> None:
    context = ctx(ALICE, PUBLIC, "call-concurrent")
    args = {"content": "I prefer squash merges", "kind": "preference"}
    results = _together(8, lambda i: rt.execute_tool("memory__remember", args, context))
    ids = {ok(r)["id"] for r in results}
    assert len(ids) == 1
    assert sorted(ok(r)["created"] for r in results) == [False] * 7 + [True]
    assert len(rows("SELECT id FROM junior_memory_memories")) == 1


def test_eight_runtimes_racing_on_one_database_make_one_row(make_runtime: Any, rows: Any) -> None:
    runtimes = [make_runtime() for _ in range(8)]
    context = ctx(ALICE, PUBLIC, "call-race")
    args = {"content": "Releases are cut on Mondays", "kind": "procedure"}
    results = _together(8, lambda i: runtimes[i].execute_tool("memory__remember", args, context))
    assert len({ok(r)["id"] for r in results}) == 1
    assert len(rows("SELECT id FROM junior_memory_memories")) == 1


def test_concurrent_different_calls_with_the_same_content_make_one_row(make_runtime: Any, rows: Any) -> None:
    runtimes = [make_runtime() for _ in range(4)]
    args = {"content": "Standup is at 9:30", "kind": "knowledge"}
    results = _together(4, lambda i: runtimes[i].execute_tool("memory__remember", args, ctx(call=f"c{i}")))
    assert len({ok(r)["id"] for r in results}) == 1
    assert len(rows("SELECT id FROM junior_memory_memories")) == 1


@pytest.mark.slow
def test_processes_migrating_at_once_leave_one_schema(empty_db_url: str) -> None:
    script = "import sys; from junior_memory import MemoryStore; print(MemoryStore(sys.argv[1]).migrate())"
    procs = [
        subprocess.Popen([sys.executable, "-c", script, empty_db_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], outputs
    assert [out.strip() for out, _ in outputs] == [HEAD_REVISION] * 4
    engine = create_engine(empty_db_url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM junior_memory_alembic_version")).all() == [(HEAD_REVISION,)]
    engine.dispose()


def test_head_revision_constant_matches_the_migrations() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", "junior_memory:migrations")
    assert ScriptDirectory.from_config(config).get_heads() == [HEAD_REVISION]


def test_data_survives_a_new_store_on_the_same_database(db_url: str) -> None:
    store = MemoryStore(db_url)
    record, created = store.remember(
        content="Our CI runs on self-hosted runners", kind="knowledge", scope=personal_scope("slack:T1:U1"),
        actor_key="slack:T1:U1", source_key=None, origin="api",
    )
    store.close()
    reopened = MemoryStore(db_url)
    try:
        assert created
        assert [r.id for r in reopened.visible([personal_scope("slack:T1:U1")])] == [record.id]
    finally:
        reopened.close()


def test_purge_deletes_archived_memories_for_good(db_url: str, rows: Any) -> None:
    store = MemoryStore(db_url)
    try:
        scope = personal_scope("slack:T1:U1")
        old, _ = store.remember(content="Old fact about kettles", kind="knowledge", scope=scope,
                                actor_key=None, source_key=None, origin="api")
        kept, _ = store.remember(content="Current fact about kettles", kind="knowledge", scope=scope,
                                 actor_key=None, source_key=None, origin="api")
        store.archive(old.id, reason="tool_removed", now=datetime.now(UTC) - timedelta(days=40))
        assert store.purge(archived_before=datetime.now(UTC) - timedelta(days=30)) == 1
        assert store.get(old.id) is None
        assert [r.id for r in store.search([scope], "kettles")] == [kept.id]
        assert [e["event"] for e in store.events(old.id)] == ["created", "archived", "purged"]
        if store.backend == "sqlite":
            assert rows("SELECT memory_id FROM junior_memory_fts") == [{"memory_id": kept.id}]
    finally:
        store.close()


def test_restating_an_expired_memory_archives_it_and_creates_a_new_one(db_url: str) -> None:
    store = MemoryStore(db_url)
    try:
        scope = personal_scope("slack:T1:U1")
        past = datetime.now(UTC) - timedelta(days=10)
        first, _ = store.remember(content="Desk 4 is mine", kind="preference", scope=scope, actor_key=None,
                                  source_key=None, origin="tool", now=past, expires_at=past + timedelta(days=1))
        second, created = store.remember(content="Desk 4 is mine", kind="preference", scope=scope, actor_key=None,
                                         source_key=None, origin="tool")
        assert created and second.id != first.id
        old = store.get(first.id)
        assert old is not None and old.archive_reason == "expired"
        assert "expired" in [e["event"] for e in store.events(first.id)]
    finally:
        store.close()


class EchoPlugin:
    junior_plugin_name = "echo"

    @hookimpl
    def register_sources(self, register: Any) -> None:
        schema = {"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": False}
        register(Source("echo", "Echo text back."), tools=[Tool("say", "Echo text back.", schema, self.say)])

    @staticmethod
    def say(arguments: dict[str, Any], context: Any) -> dict[str, Any]:
        return {"said": arguments.get("text", "")}


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_unreachable_database_is_unavailable_and_other_sources_keep_working(backend: str) -> None:
    url = (
        "sqlite:////dev/null/no-such-dir/memory.sqlite3"
        if backend == "sqlite"
        else "postgresql+psycopg://postgres@127.0.0.1:1/test"
    )
    from junior_core import Message

    with Runtime(plugins=[MemoryPlugin(url=url), EchoPlugin()]) as rt:
        error = err(rt.execute_tool("memory__remember", {"content": "I like tea", "kind": "preference"}, ctx()),
                    "unavailable")
        assert "nothing was saved" in error["message"] and "try again later" in error["message"]
        for name, args in (("memory__list", {}), ("memory__search", {"query": "tea"}), ("memory__forget",
                                                                                          {"query": "tea"})):
            err(rt.execute_tool(name, args, ctx()), "unavailable")
        assert rt.prompt_context(ctx(), "tea", host=False) == []
        rt.after_turn(ctx(), [Message("user", "I like tea", actor=ALICE)])
        assert ok(rt.execute_tool("echo__say", {"text": "still here"}, ctx())) == {"said": "still here"}
        assert rt.plugins[0].status == "loaded"


def test_unavailable_tools_never_claim_a_save(db_url: str) -> None:
    """Once the database comes back, the same call succeeds: the plugin does not cache the outage."""
    plugin = MemoryPlugin(url=db_url)
    with Runtime(plugins=[plugin]) as rt:
        real = plugin.store()
        plugin._store = MemoryStore("sqlite:////dev/null/no-such-dir/memory.sqlite3")
        err(rt.execute_tool("memory__remember", {"content": "I like tea", "kind": "preference"}, ctx()),
            "unavailable")
        plugin._store = real
        assert ok(rt.execute_tool("memory__remember", {"content": "I like tea", "kind": "preference"}, ctx()))[
            "created"
        ]
        assert len(real.visible(read_scopes(ctx()))) == 1


@pytest.mark.parametrize("backend", ["postgres"])
def test_a_connection_dropped_by_the_server_is_retried_not_reported_unavailable(
    backend: str, postgres_schema: str
) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    app = f"jm-drop-{postgres_schema}"
    url = make_url(schema_url(postgres_schema)).update_query_dict({"application_name": app})
    plugin = MemoryPlugin(url=url.render_as_string(hide_password=False))
    with Runtime(plugins=[plugin]) as rt:
        ok(rt.execute_tool("memory__remember", {"content": "I like tea", "kind": "preference"}, ctx()))
        with psycopg.connect(admin_conninfo(), autocommit=True) as admin:
            killed = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s", (app,)
            ).fetchone()
        assert killed is not None and killed[0] >= 1
        assert len(ok(rt.execute_tool("memory__list", {}, ctx()))["memories"]) == 1
        ok(rt.execute_tool("memory__remember", {"content": "I like coffee too", "kind": "preference"}, ctx()))


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_the_embedded_database_is_readable_by_its_owner_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask_022: None
) -> None:
    from junior_memory.config import default_path

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("JUNIOR_MEMORY_URL", raising=False)
    path = default_path()
    assert str(path).startswith(str(tmp_path))
    store = MemoryStore()
    try:
        store.remember(content="Desk 4 is mine", kind="preference", scope=personal_scope("slack:T1:U1"),
                       actor_key=None, source_key=None, origin="api")
        assert _mode(path.parent) == 0o700
        # While a connection is open, WAL mode keeps the -wal and -shm files next to the database.
        for name in (path.name, path.name + "-wal", path.name + "-shm"):
            assert _mode(path.with_name(name)) == 0o600, name
    finally:
        store.close()


def test_an_existing_default_directory_and_database_are_tightened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask_022: None
) -> None:
    from junior_memory.config import default_path

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("JUNIOR_MEMORY_URL", raising=False)
    path = default_path()
    path.parent.mkdir(parents=True, mode=0o755)
    path.touch(mode=0o644)
    store = MemoryStore()
    try:
        assert store.visible([personal_scope("slack:T1:U1")]) == []
        assert (_mode(path.parent), _mode(path)) == (0o700, 0o600)
    finally:
        store.close()


def test_a_new_database_file_at_an_explicit_path_is_0600(tmp_path: Path, umask_022: None) -> None:
    path = tmp_path / "shared" / "memory.sqlite3"
    path.parent.mkdir(mode=0o755)
    store = MemoryStore(f"sqlite:///{path}")
    try:
        assert store.visible([personal_scope("slack:T1:U1")]) == []
        assert [_mode(path.with_name(path.name + s)) for s in ("", "-wal", "-shm")] == [0o600] * 3
        assert _mode(path.parent) == 0o755  # a directory the operator chose is theirs to set
    finally:
        store.close()


@pytest.mark.parametrize("mode", [0o755, 0o1777])
def test_a_path_from_junior_memory_url_keeps_its_directorys_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask_022: None, mode: int
) -> None:
    # JUNIOR_MEMORY_URL is the operator's choice too: a file straight in a shared directory (mode 1777, as /tmp)
    # must never make that directory private to one user.
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(mode)
    monkeypatch.setenv("JUNIOR_MEMORY_URL", f"sqlite:///{shared / 'memory.sqlite3'}")
    with Runtime(plugins=[MemoryPlugin()]) as rt:
        ok(rt.execute_tool("memory__remember", {"content": "I like tea", "kind": "preference"}, ctx()))
    assert _mode(shared) == mode
    assert _mode(shared / "memory.sqlite3") == 0o600


def test_the_table_metadata_equals_the_migrated_schema(db_url: str) -> None:
    """The ORM metadata the queries are built from is exactly what the migrations create, on each dialect."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext
    from junior_memory.store import VERSION_TABLE
    from junior_memory.tables import Base, include_object
    from sqlalchemy import inspect

    store = MemoryStore(db_url)
    try:
        store.ensure_schema()
        dialect = store.backend

        def compare(conn: Any) -> dict[str, Any]:
            context = MigrationContext.configure(conn, opts={
                "version_table": VERSION_TABLE, "include_object": include_object(dialect), "compare_type": True,
                "compare_server_default": True,
            })
            inspector = inspect(conn)
            tables = [t.name for t in Base.metadata.sorted_tables]
            return {
                "diff": compare_metadata(context, Base.metadata),
                "checks": {t: sorted(c["name"] for c in inspector.get_check_constraints(t)) for t in tables},
                "columns": {t: {c["name"]: c.get("computed") for c in inspector.get_columns(t)} for t in tables},
            }

        found = store.db.unit(compare, write=False)
    finally:
        store.close()
    assert found["diff"] == []
    expected_checks = {
        t.name: sorted(str(c.name) for c in t.constraints if c.__class__.__name__ == "CheckConstraint")
        for t in Base.metadata.sorted_tables
    }
    assert expected_checks["junior_memory_memories"] == [
        "ck_junior_memory_memories_kind", "ck_junior_memory_memories_origin", "ck_junior_memory_memories_scope",
    ]
    assert found["checks"] == expected_checks
    memories = found["columns"]["junior_memory_memories"]
    if dialect == "postgresql":
        assert memories["search_vector"]["persisted"] is True
        assert "to_tsvector('english'::regconfig, content)" in memories["search_vector"]["sqltext"]
    else:
        assert "search_vector" not in memories
