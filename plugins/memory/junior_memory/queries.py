"""Every statement the store runs, built once per store for its dialect so each call only binds parameters."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from sqlalchemy import Column, Table
    from sqlalchemy.sql.elements import ColumnElement

    from junior_memory.scope import Scope

__all__ = ["Statements"]

Match = Literal["any", "all"]


class Statements:
    """The statements for one dialect: Postgres full-text search, SQLite FTS5, or ``LIKE`` elsewhere."""

    def __init__(self, backend: str) -> None:
        from sqlalchemy import Integer, and_, bindparam, delete, func, insert, or_, select, update

        from junior_memory.tables import Event, Memory, UTCDateTime, Vector

        t: Table = Memory.__table__  # type: ignore[assignment]
        events: Table = Event.__table__  # type: ignore[assignment]
        vectors: Table = Vector.__table__  # type: ignore[assignment]
        self.vectors_table = vectors
        self.backend = backend
        self.t = t
        self.events_table = events
        # Generated columns (Postgres search_vector) are never read back nor written.
        self.columns: list[Column[Any]] = [c for c in t.c if c.computed is None]
        self._cache: dict[tuple[Any, ...], Any] = {}
        self._limit = bindparam("limit", type_=Integer())
        self.existing = select(*self.columns).where(
            or_(
                t.c.idempotency_key == bindparam("idem"),
                and_(
                    t.c.scope == bindparam("scope"),
                    t.c.scope_key == bindparam("scope_key"),
                    t.c.kind == bindparam("kind"),
                    t.c.content_hash == bindparam("hash"),
                    t.c.archived_at.is_(None),
                ),
            )
        )
        self.insert_memory = insert(t)
        self.insert_event = insert(events)
        self.insert_memory_and_event: Any = None
        if backend == "postgresql":
            values = {c.name: bindparam(f"m_{c.name}", type_=c.type) for c in self.columns}
            new_memory = insert(t).values(values).cte("new_memory")
            self.insert_memory_and_event = insert(events).add_cte(new_memory)
        self.by_id = select(*self.columns).where(t.c.id == bindparam("mid"))
        self.by_idempotency_key = select(*self.columns).where(t.c.idempotency_key == bindparam("idem"))
        self.archive = (
            update(t)
            .where(t.c.id == bindparam("mid"), t.c.archived_at.is_(None))
            .values(archived_at=bindparam("at", type_=UTCDateTime()), archive_reason=bindparam("reason"))
        )
        # Only a current memory of the writer's scope is superseded: the scope is checked again under the write lock.
        self.supersede = (
            update(t)
            .where(t.c.id == bindparam("mid"), t.c.archived_at.is_(None), t.c.scope == bindparam("in_scope"),
                   t.c.scope_key == bindparam("in_scope_key"))
            .values(archived_at=bindparam("at", type_=UTCDateTime()), archive_reason="superseded",
                    superseded_by=bindparam("new_id"))
        )
        self.predecessors = select(*self.columns).where(t.c.superseded_by == bindparam("mid")).order_by(t.c.id)
        self.set_expiry = (
            update(t).where(t.c.id == bindparam("mid")).values(expires_at=bindparam("new_expiry", type_=UTCDateTime()))
        )
        # -- semantic recall
        self.insert_vector = insert(vectors)
        self.delete_vectors = delete(vectors).where(vectors.c.memory_id.in_(bindparam("ids", expanding=True)))
        self.delete_other_models = delete(vectors).where(
            vectors.c.memory_id.in_(bindparam("ids", expanding=True)), vectors.c.model != bindparam("model")
        )
        self.embedded_ids = select(vectors.c.memory_id).where(
            vectors.c.memory_id.in_(bindparam("ids", expanding=True)), vectors.c.model == bindparam("model")
        )
        self.current_ids = select(t.c.id).where(t.c.id.in_(bindparam("ids", expanding=True)), t.c.archived_at.is_(None))
        self.vectors_after = (
            select(vectors.c.seq, vectors.c.memory_id, vectors.c.vector, t.c.scope, t.c.scope_key)
            .join(t, t.c.id == vectors.c.memory_id)
            .where(vectors.c.model == bindparam("model"), vectors.c.seq > bindparam("after"),
                   t.c.archived_at.is_(None))
            .order_by(vectors.c.seq)
            .limit(bindparam("batch", type_=Integer()))
        )
        self.unembedded = (
            select(t.c.id, t.c.content)
            .outerjoin(vectors, and_(vectors.c.memory_id == t.c.id, vectors.c.model == bindparam("model")))
            .where(vectors.c.seq.is_(None), t.c.archived_at.is_(None), t.c.id > bindparam("after_id"))
            .order_by(t.c.id)
            .limit(bindparam("batch", type_=Integer()))
        )
        # -- admin
        self.ids_by_prefix = (
            select(t.c.id)
            .where(t.c.id >= bindparam("low"), t.c.id < bindparam("high"),
                   t.c.id.like(bindparam("pattern"), escape="\\"))
            .order_by(t.c.id)
            .limit(10)
        )
        self.events_of = select(events).where(events.c.memory_id == bindparam("mid")).order_by(events.c.id)
        self.archived_before = select(t.c.id).where(
            t.c.archived_at.is_not(None), t.c.archived_at < bindparam("before", type_=UTCDateTime())
        )
        self.delete_ids = delete(t).where(t.c.id.in_(bindparam("ids", expanding=True)))
        self.count_events = select(func.count()).select_from(events)

    def _cached(self, key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
        statement = self._cache.get(key)
        if statement is None:
            statement = self._cache[key] = build()
        return statement

    # -- what the live context may read ----------------------------------------------------------
    def _visible(self, scopes: int, kinds: bool = False) -> list[ColumnElement[bool]]:
        """In one of ``scopes`` and current; with ``kinds``, also of one of the kinds bound as ``kinds``."""
        from sqlalchemy import and_, bindparam, or_

        t = self.t
        return [
            or_(*(and_(t.c.scope == bindparam(f"s{i}"), t.c.scope_key == bindparam(f"k{i}")) for i in range(scopes))),
            *self._current(),
            *self._of_kinds(kinds),
        ]

    def _of_kinds(self, kinds: bool) -> list[ColumnElement[bool]]:
        from sqlalchemy import bindparam

        return [self.t.c.kind.in_(bindparam("kinds", expanding=True))] if kinds else []

    def _current(self) -> list[ColumnElement[bool]]:
        """Not archived and not expired at ``now``."""
        from sqlalchemy import bindparam, or_

        t = self.t
        return [t.c.archived_at.is_(None), or_(t.c.expires_at.is_(None), t.c.expires_at > bindparam("now"))]

    @staticmethod
    def scope_params(scopes: Sequence[Scope], now: Any, kinds: Sequence[str] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"now": now}
        if kinds:
            params["kinds"] = list(kinds)
        for i, scope in enumerate(scopes):
            params[f"s{i}"], params[f"k{i}"] = scope.scope, scope.scope_key
        return params

    def visible(self, scopes: int, kinds: bool = False) -> Any:
        from sqlalchemy import select

        t = self.t
        return self._cached(
            ("visible", scopes, kinds),
            lambda: select(*self.columns).where(*self._visible(scopes, kinds)).order_by(t.c.observed_at.desc(), t.c.id)
            .limit(self._limit),
        )

    def by_ids(self, scopes: int, kinds: bool = False) -> Any:
        """Visible memories among ``ids``: similarity candidates pass the same filter as every other read."""
        from sqlalchemy import bindparam, select

        t = self.t
        return self._cached(
            ("ids", scopes, kinds),
            lambda: select(*self.columns).where(t.c.id.in_(bindparam("ids", expanding=True)))
            .where(*self._visible(scopes, kinds)),
        )

    def by_prefix(self, scopes: int) -> Any:
        from sqlalchemy import bindparam, select

        t = self.t
        return self._cached(
            ("prefix", scopes),
            lambda: select(*self.columns)
            .where(t.c.id >= bindparam("low"), t.c.id < bindparam("high"), t.c.id.like(bindparam("pattern")))
            .where(*self._visible(scopes))
            .order_by(t.c.id)
            .limit(self._limit),
        )

    def count_visible(self, scopes: int, kinds: bool = False) -> Any:
        """How many memories the caller may read (list's total, an empty search's count)."""
        from sqlalchemy import select

        return self._cached(("count", scopes, kinds), lambda: select(self._live_count(scopes, kinds)))

    def kind_counts(self, scopes: int) -> Any:
        """How many memories the caller may read of each kind: rows of (kind, count)."""
        from sqlalchemy import func, select

        t = self.t
        return self._cached(("kind_counts", scopes), lambda: select(t.c.kind, func.count()).where(
            *self._visible(scopes)).group_by(t.c.kind).order_by(t.c.kind))

    def _live_count(self, scopes: int, kinds: bool = False) -> Any:
        """How many memories ``scopes`` may read, as an expression: one count per scope, summed (a scope named twice
        counts once).

        Each is answered from the index of current memories by scope and expiry alone (migration 0005); one count
        over the scopes' ``OR`` made Postgres read every matching row's page (43 ms for 70,000 memories, against
        9 ms for the index-only scans).
        """
        from sqlalchemy import and_, bindparam, func, literal, not_, select

        t = self.t

        def scope(i: int) -> ColumnElement[bool]:
            return and_(t.c.scope == bindparam(f"s{i}"), t.c.scope_key == bindparam(f"k{i}"))

        counts = [
            select(func.count()).select_from(t)
            .where(scope(i), *(not_(scope(j)) for j in range(i)), *self._current(), *self._of_kinds(kinds))
            .scalar_subquery()
            for i in range(scopes)
        ]
        total: Any = counts[0] if counts else literal(0)
        for count in counts[1:]:
            total = total + count
        return total

    def page(self, scopes: int, kinds: bool = False) -> Any:
        """``visible`` after a cursor: the memories that sort after (observed_at, id) of the last one shown."""
        from sqlalchemy import and_, bindparam, or_, select

        from junior_memory.tables import UTCDateTime

        t = self.t

        def build() -> Any:
            after = bindparam("after_at", type_=UTCDateTime())
            return (select(*self.columns).where(*self._visible(scopes, kinds))
                    .where(or_(t.c.observed_at < after,
                               and_(t.c.observed_at == after, t.c.id > bindparam("after_id"))))
                    .order_by(t.c.observed_at.desc(), t.c.id).limit(self._limit))

        return self._cached(("page", scopes, kinds), build)

    def term_counts(self, scopes: int, terms: int, kinds: bool = False) -> Any:
        """One row: how many visible memories there are, then how many hold each of ``terms`` (``q0``, ``q1``...).

        Each count is its own indexed look-up (the GIN index, FTS5), so it costs what its matches cost.
        """
        from sqlalchemy import String, bindparam, column, func, literal_column, select, table, text

        t = self.t

        def one(i: int) -> Any:
            statement = select(func.count()).select_from(t).where(*self._visible(scopes, kinds))
            if self.backend == "postgresql":
                config: ColumnElement[Any] = literal_column("'english'::regconfig")
                tsquery = func.to_tsquery(config, bindparam(f"q{i}", type_=String()))
                return statement.where(t.c.search_vector.op("@@")(tsquery)).scalar_subquery()
            if self.backend == "sqlite":
                fts = table("junior_memory_fts", column("memory_id"))
                return (statement.join(fts, fts.c.memory_id == t.c.id)
                        .where(text(f"junior_memory_fts MATCH :q{i}")).scalar_subquery())
            return statement.where(t.c.content.ilike(bindparam(f"q{i}"))).scalar_subquery()

        return self._cached(("term_counts", scopes, terms, kinds), lambda: select(
            self._live_count(scopes, kinds), *(one(i) for i in range(terms)),
        ))

    def term_params(self, terms: Sequence[str]) -> dict[str, Any]:
        """``term_counts``' parameters: each term as the dialect's one-word query."""
        if self.backend == "postgresql":
            return {f"q{i}": term for i, term in enumerate(terms)}
        if self.backend == "sqlite":
            return {f"q{i}": f'"{term}"' for i, term in enumerate(terms)}
        return {f"q{i}": f"%{term}%" for i, term in enumerate(terms)}

    # -- keyword search --------------------------------------------------------------------------
    def search_params(self, terms: Sequence[str], match: Match) -> dict[str, Any]:
        """The dialect's parameters for ``terms``: a tsquery, an FTS5 query, or ``LIKE`` patterns."""
        if self.backend == "postgresql":
            return {"tsquery": (" | " if match == "any" else " & ").join(terms)}
        if self.backend == "sqlite":
            return {"fts_query": (" OR " if match == "any" else " AND ").join(f'"{term}"' for term in terms)}
        return {f"t{i}": f"%{term}%" for i, term in enumerate(terms)}

    def search(self, scopes: int, match: Match, terms: int, kinds: bool = False) -> Any:
        return self._cached(
            ("search", scopes, match, terms if self.backend not in ("postgresql", "sqlite") else 0, kinds),
            lambda: self._build_search(scopes, match, terms, kinds))

    def fused_search(self, scopes: int, terms: int, kinds: bool = False) -> Any:
        """The keyword half of a fused search (match any), each row also carrying ``newest_seq``: the last vector
        of the model in the table, so a search learns whether anything is new without a query of its own."""
        from sqlalchemy import bindparam, func, select

        def build() -> Any:
            vectors = self.vectors_table
            newest = (select(func.max(vectors.c.seq)).where(vectors.c.model == bindparam("model"))
                      .scalar_subquery().label("newest_seq"))
            return self.search(scopes, "any", terms, kinds).add_columns(newest)

        return self._cached(("fused", scopes, terms if self.backend not in ("postgresql", "sqlite") else 0, kinds),
                            build)

    def _build_search(self, scopes: int, match: Match, terms: int, kinds: bool = False) -> Any:
        from sqlalchemy import Integer, String, and_, bindparam, column, func, literal_column, or_, select, table, text

        t = self.t
        # Only the columns the ranking needs are read for every match; whole rows only for those returned.
        statement = select(t.c.id, t.c.actor_key, t.c.observed_at).where(*self._visible(scopes, kinds))
        rank: ColumnElement[Any]
        if self.backend == "postgresql":
            config: ColumnElement[Any] = literal_column("'english'::regconfig")
            vector: ColumnElement[Any] = t.c.search_vector
            tsquery = func.to_tsquery(config, bindparam("tsquery", type_=String()))
            statement = statement.where(vector.op("@@")(tsquery))
            rank = -func.ts_rank(vector, tsquery)
        elif self.backend == "sqlite":
            fts = table("junior_memory_fts", column("memory_id"))
            statement = statement.join(fts, fts.c.memory_id == t.c.id).where(text("junior_memory_fts MATCH :fts_query"))
            rank = literal_column("bm25(junior_memory_fts)")
        else:
            like = [t.c.content.ilike(bindparam(f"t{i}")) for i in range(terms)]
            statement = statement.where(or_(*like) if match == "any" else and_(*like))
            rank = literal_column("0")
        # Each author (the saving actor; no known actor is one author) brings at most ``per_author`` candidates,
        # their best, so one author's volume cannot fill the pool (see ``spread``).
        # The rank is read in a query of its own: SQLite's bm25() cannot be used inside a window.
        matched = statement.add_columns(rank.label("search_rank")).subquery()
        author_rank = func.row_number().over(partition_by=func.coalesce(matched.c.actor_key, ""),
                                             order_by=(matched.c.search_rank, matched.c.observed_at.desc(),
                                                       matched.c.id))
        ranked = select(matched, author_rank.label("author_rank")).subquery()
        best = (
            select(ranked.c.id, ranked.c.search_rank)
            .where(ranked.c.author_rank <= bindparam("per_author", type_=Integer()))
            .order_by(ranked.c.search_rank, ranked.c.observed_at.desc(), ranked.c.id)
            .limit(self._limit)
            .subquery()
        )
        return (
            select(*self.columns).join_from(t, best, best.c.id == t.c.id)
            .order_by(best.c.search_rank, t.c.observed_at.desc(), t.c.id)
        )

    # -- the operator's view ---------------------------------------------------------------------
    def list_all(self, *, include_archived: bool, scope: bool, kind: bool) -> Any:
        from sqlalchemy import bindparam, select

        t = self.t

        def build() -> Any:
            statement = select(*self.columns)
            if not include_archived:
                statement = statement.where(t.c.archived_at.is_(None))
            if scope:
                statement = statement.where(t.c.scope == bindparam("scope"))
            if kind:
                statement = statement.where(t.c.kind == bindparam("kind"))
            return statement.order_by(t.c.created_at.desc(), t.c.id).limit(self._limit)

        return self._cached(("list_all", include_archived, scope, kind), build)

    def counts(self) -> dict[str, Any]:
        """``{label: statement}`` counting memories by state, scope, kind and origin."""
        from sqlalchemy import bindparam, case, func, select

        from junior_memory.tables import UTCDateTime

        t = self.t

        def build() -> dict[str, Any]:
            now = bindparam("now", type_=UTCDateTime())
            state = case(
                (t.c.archived_at.is_not(None), "archived"),
                (t.c.expires_at.is_not(None) & (t.c.expires_at <= now), "expired"),
                else_="active",
            )
            groups = {"by_state": state, "by_scope": t.c.scope, "by_kind": t.c.kind, "by_origin": t.c.origin}
            return {label: select(col, func.count()).group_by(col) for label, col in groups.items()}

        counts: dict[str, Any] = self._cached(("counts",), build)
        return counts
