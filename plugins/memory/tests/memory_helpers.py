"""Shared constants and helpers for the memory tests (imported by name: the basename is unique).

``ok`` and ``err`` are the testing kit's ``assert_ok`` and ``assert_error``.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, TypeVar

from junior_core import Actor, Conversation, ToolContext
from junior_core.testing import assert_error, assert_ok

T = TypeVar("T")

POSTGRES_URL = os.environ.get("JUNIOR_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")

ALICE = Actor("slack", "T1", "UALICE")
BOB = Actor("slack", "T1", "UBOB")
PUBLIC = Conversation("slack", "T1", "CPUBLIC", thread_ts="1700000000.000100", visibility="public")
PUBLIC_OTHER_THREAD = Conversation("slack", "T1", "CGENERAL", thread_ts="1700000500.000200", visibility="public")
PRIVATE = Conversation("slack", "T1", "GPRIVATE", thread_ts="1700000100.000300", visibility="private")
PRIVATE_OTHER = Conversation("slack", "T1", "GPRIVATE", thread_ts="1700000200.000400", visibility="private")


def ctx(actor: Actor | None = ALICE, conversation: Conversation | None = PUBLIC, call: str | None = None) -> ToolContext:
    """A live context; a fresh tool_call_id unless one is given."""
    return ToolContext(actor=actor, conversation=conversation, tool_call_id=call or f"call-{uuid.uuid4().hex[:8]}")


ok = assert_ok
err = assert_error


class ScriptedExtractor:
    """An extractor that proposes exactly the candidates it was given, and counts its calls."""

    def __init__(self, candidates: list[Any] | None = None) -> None:
        self.candidates = list(candidates or [])
        self.calls = 0

    def extract(self, transcript: Any, context: Any) -> list[Any]:
        self.calls += 1
        return list(self.candidates)


class EnvExtractor(ScriptedExtractor):
    """Loaded through ``JUNIOR_MEMORY_EXTRACTOR=memory_helpers:EnvExtractor``."""

    def __init__(self) -> None:
        from junior_memory import Candidate

        super().__init__([Candidate("Prefers terse PR summaries", "preference", [0], about_speaker=True)])


def admin_conninfo() -> str:
    from sqlalchemy.engine import make_url

    return make_url(POSTGRES_URL).set(drivername="postgresql").render_as_string(hide_password=False)


def schema_url(schema: str) -> str:
    """``POSTGRES_URL`` with every connection's search_path set to ``schema``."""
    from sqlalchemy.engine import make_url

    url = make_url(POSTGRES_URL).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False)


# What a reused schema must still be for a test to get it as if new: its tables, columns, indexes, constraints,
# triggers and schema revision. A test that changed any of them leaves a schema that is dropped, not reused.
_SHAPE = """
SELECT string_agg(line, E'\\n' ORDER BY line) FROM (
  SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' '
         || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '') AS line
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
  WHERE n.nspname = %(schema)s AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL SELECT 'relation ' || c.relkind::text || ' ' || c.relname
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %(schema)s
  UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = %(schema)s
  UNION ALL SELECT 'constraint ' || conname || ' ' || pg_get_constraintdef(k.oid)
  FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace WHERE n.nspname = %(schema)s
  UNION ALL SELECT 'trigger ' || tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %(schema)s AND NOT t.tgisinternal
  UNION ALL SELECT 'function ' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname = %(schema)s
) AS shape
"""


class ReusedSchema:
    """One Postgres schema, migrated once and emptied between tests instead of made and migrated for each.

    ``fresh(migrate)`` hands it out with no rows and its sequences restarted, as a new schema migrated by
    ``migrate(url)`` would be. When a test left it another shape or revision (or a lock that stops emptying it),
    it is dropped and a new one made, so nothing one test did reaches the next.
    """

    def __init__(self, conn: Any, prefix: str) -> None:
        self.conn, self.prefix = conn, prefix
        self.schema: str | None = None
        self.shape: str | None = None
        self.made: list[str] = []

    def fresh(self, migrate: Callable[[str], None]) -> str:
        if self.schema is None or not self._emptied():
            self._make(migrate)
        assert self.schema is not None
        return self.schema

    def _make(self, migrate: Callable[[str], None]) -> None:
        self.schema = f"{self.prefix}_{uuid.uuid4().hex[:12]}"
        self.made.append(self.schema)
        self.conn.execute(f'CREATE SCHEMA "{self.schema}"')
        migrate(schema_url(self.schema))
        self.shape = self._shape()

    def _shape(self) -> str:
        versions = self.conn.execute(
            "SELECT string_agg(c.relname, ',') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %(schema)s AND c.relname LIKE '%%alembic_version'", {"schema": self.schema}).fetchone()
        revisions = [self.conn.execute(f'SELECT array_agg(version_num) FROM "{self.schema}"."{table}"').fetchone()[0]
                     for table in (versions[0] or "").split(",") if table]
        shape = self.conn.execute(_SHAPE, {"schema": self.schema}).fetchone()[0]
        return f"{shape}\nrevisions {revisions}"

    def _emptied(self) -> bool:
        """Empty the schema's tables and restart its sequences; False when it is no longer as migrated."""
        try:
            if self._shape() != self.shape:
                return False
            with self.conn.transaction():
                self.conn.execute("SET LOCAL lock_timeout = '2s'")
                tables = self.conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %(schema)s "
                                           "AND tablename NOT LIKE '%%alembic_version'", {"schema": self.schema})
                for (table,) in tables.fetchall():
                    self.conn.execute(f'DELETE FROM "{self.schema}"."{table}"')
                sequences = self.conn.execute("SELECT sequencename FROM pg_sequences WHERE schemaname = %(schema)s",
                                              {"schema": self.schema})
                for (sequence,) in sequences.fetchall():
                    self.conn.execute(f'ALTER SEQUENCE "{self.schema}"."{sequence}" RESTART')
            return True
        except Exception:  # noqa: BLE001 - a schema that cannot be emptied is replaced, whatever the reason
            return False

    def close(self) -> None:
        for schema in self.made:
            self.conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


class ThrowawayPostgres:
    """A private Postgres cluster on a free port, started for a test that freezes it (never the shared server)."""

    def __init__(self) -> None:
        import glob
        import shutil
        import socket
        import subprocess
        import tempfile
        from pathlib import Path

        bindirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
        pg_config = shutil.which("pg_config")
        if pg_config:
            bindirs.append(subprocess.run([pg_config, "--bindir"], capture_output=True, text=True).stdout.strip())
        bindir = next((Path(d) for d in reversed(bindirs) if (Path(d) / "initdb").exists()), None)
        if bindir is None:
            raise RuntimeError("no Postgres server binaries (initdb, pg_ctl) found")
        self.root = Path(tempfile.mkdtemp(prefix="junior-pg-"))
        self.data = self.root / "data"
        # initdb refuses to run as root: run the server as the postgres user, which owns the directory.
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as:
            shutil.chown(self.root, "postgres")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._pg_ctl = str(bindir / "pg_ctl")
        self._run([str(bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync",
                   "-E", "UTF8", "--locale=C"])
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c full_page_writes=off -c shared_buffers=16MB -c max_connections=20")
        self._run([self._pg_ctl, "-D", str(self.data), "-l", str(self.root / "log"), "-o", options, "-w", "-t",
                   "60", "start"])
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, command: list[str]) -> None:
        import subprocess

        proc = subprocess.run([*self._as, *command], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {proc.stderr or proc.stdout}")

    def pids(self) -> list[int]:
        """The postmaster and every process it started."""
        from pathlib import Path

        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == postmaster:
                children.append(int(stat.parent.name))
        return [postmaster, *children]

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """Stop every process of this cluster (as in a network partition: nothing answers), then resume them."""
        import signal

        pids = self.pids()
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        try:
            yield
        finally:
            for pid in pids:
                os.kill(pid, signal.SIGCONT)

    def close(self) -> None:
        import shutil

        try:
            self._run([self._pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop"])
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def within(seconds: float, fn: Callable[[], T]) -> T:
    """``fn()``, which must return within ``seconds``: a guard against hangs, not a speed measurement."""
    import threading

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s: the database wait is not bounded"
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


class ConceptEmbedder:
    """A small deterministic embedder for tests: words of one concept share a dimension, other words get their own.

    So "who is responsible for payments?" is close to "Dana owns the billing service" (owner, money) while the
    two share no keyword, which is exactly what full-text search cannot find.
    """

    CONCEPTS: ClassVar[dict[str, tuple[str, ...]]] = {
        "owner": ("owns", "owner", "responsible", "maintains", "runs"),
        "money": ("billing", "payments", "invoices", "payment", "invoice"),
        "release": ("deploys", "deploy", "ship", "release", "releases", "shipping"),
        "weekend": ("fridays", "friday", "week"),
        "language": ("german", "english", "language", "french"),
        "reply": ("answers", "reply", "respond", "answer"),
    }
    STOP = frozenset("a an the is are who for of in at on to can i you should what which do my me end".split())

    def __init__(self, name: str = "test/concepts", dimensions: int = 64) -> None:
        self.name = name
        self.dimensions = dimensions
        self.calls = 0
        self._concept = {word: i for i, words in enumerate(self.CONCEPTS.values()) for word in words}

    def embed(self, texts: Any) -> list[list[float]]:
        import hashlib

        self.calls += 1
        out = []
        for text in texts:
            vector = [0.0] * self.dimensions
            for word in "".join(c if c.isalnum() else " " for c in text.casefold()).split():
                if word in self.STOP:
                    continue
                index = self._concept.get(word)
                if index is None:
                    index = len(self.CONCEPTS) + int(hashlib.sha256(word.encode()).hexdigest(), 16) % (
                        self.dimensions - len(self.CONCEPTS))
                vector[index] += 1.0
            if not any(vector):
                vector[-1] = 1.0
            out.append(vector)
        return out


class BrokenEmbedder:
    """A model that cannot load: every call raises, as a missing or corrupt model file would."""

    name = "test/broken"

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Any) -> list[list[float]]:
        self.calls += 1
        raise OSError("model.onnx: no such file")


class BlockingEmbedder(ConceptEmbedder):
    """A model that holds every call until ``release`` is set (at most ``hold`` seconds): a slow model, on cue."""

    def __init__(self, hold: float = 60.0) -> None:
        import threading

        super().__init__("test/blocking")
        self.hold = hold
        self.started = threading.Event()
        self.release = threading.Event()

    def embed(self, texts: Any) -> list[list[float]]:
        self.started.set()
        self.release.wait(self.hold)
        return super().embed(texts)
