"""The store's domain rules: what a memory row is, what counts as a replay, dedup and expiry, search words."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

from junior_core import ToolError
from junior_memory.content import format_time
from junior_memory.scope import Scope

__all__ = [
    "SNOWBALL_STOP_WORDS", "STOP_WORDS", "IdempotencyConflict", "MemoryRecord", "ReplaceTargetGone", "extended_expiry",
    "is_same_memory", "record", "refuse_query_operators", "search_terms",
]

STOP_WORDS = frozenset(
    """a about an and are as at be but by can do does for from had has have he her his how i i'd i'm in is it its
    me my of on or our she so that the their them they this to us was we were what when where which who why will
    with you your remember forget memory memories please""".split()
)
# The Snowball English stop words: the words Postgres's ``english`` configuration leaves out of every memory and
# every query. Search leaves them out on every backend, so the floor weighs the words the database searches for:
# Postgres would count "did" as held by no memory (the rarest weight), SQLite as held by a few.
SNOWBALL_STOP_WORDS = frozenset(
    """i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself
    it its itself they them their theirs themselves what which who whom this that these those am is are was were be
    been being have has had having do does did doing a an the and but if or because as until while of at by for with
    about against between into through during before after above below to from up down in out on off over under
    again further then once here there when where why how all any both each few more most other some such no nor not
    only own same so than too very s t can will just don should now""".split()
)
# Extraction keeps STOP_WORDS alone: there a stop word is one a memory may add to what was said, and "not" may not.
_SEARCH_STOP_WORDS = STOP_WORDS | SNOWBALL_STOP_WORDS
_WORD = re.compile(r"[^\W_]+")
_MAX_TERMS = 24


class IdempotencyConflict(Exception):
    """The idempotency key already belongs to a memory with another scope, kind or content; nothing was written."""


class ReplaceTargetGone(Exception):
    """The memory to replace was archived, purged or moved out of the scope before the write; nothing was written."""


@attrs.frozen
class MemoryRecord:
    """A memory row, detached from any connection."""

    id: str
    scope: str
    scope_key: str
    kind: str
    subject_type: str
    subject_key: str
    content: str
    actor_key: str | None
    source_key: str | None
    origin: str
    tool_call_id: str | None
    created_at: datetime
    observed_at: datetime
    expires_at: datetime | None
    archived_at: datetime | None
    archive_reason: str | None
    superseded_by: str | None

    def public(self) -> dict[str, Any]:
        """What a model may see, including who else can see it: never scope keys or platform ids."""
        return {
            "id": self.id,
            "content": self.content,
            "kind": self.kind,
            "visible_to": Scope(self.scope, self.scope_key, self.subject_type).visible_to,  # type: ignore[arg-type]
            "created_at": format_time(self.created_at),
            "observed_at": format_time(self.observed_at),
            "expires_at": format_time(self.expires_at),
        }

    def admin(self) -> dict[str, Any]:
        """Every column, for the operator's CLI."""
        out = attrs.asdict(self)
        for key, value in out.items():
            if isinstance(value, datetime):
                out[key] = format_time(value)
        return out


_RECORD_FIELDS = tuple(field.name for field in attrs.fields(MemoryRecord))


def record(row: Mapping[str, Any]) -> MemoryRecord:
    """The one row mapper: a result row (or a row about to be inserted) as a ``MemoryRecord``."""
    return MemoryRecord(**{name: row[name] for name in _RECORD_FIELDS})


def is_same_memory(held: Mapping[str, Any], scope: Scope, kind: str, digest: str) -> bool:
    """Whether a replayed idempotency key asks for the memory that holds it: same scope, kind and content.

    Anything else is a different request reusing the key, and must never be handed the held row.
    """
    return (held["scope"], held["scope_key"], held["kind"], held["content_hash"]) == (
        scope.scope, scope.scope_key, kind, digest,
    )


def extended_expiry(held: datetime | None, requested: datetime | None) -> tuple[bool, datetime | None]:
    """Restating a fact keeps it at least as long as the new statement asks: ``(changed, new expiry)``."""
    if held is not None and (requested is None or requested > held):
        return True, requested
    return False, held


def search_terms(text: str) -> list[str]:
    """Lower-cased words of ``text`` for keyword search, stop words dropped unless nothing else is left."""
    words = list(dict.fromkeys(_WORD.findall(text.casefold())))
    kept = [word for word in words if word not in _SEARCH_STOP_WORDS]
    return (kept or words)[:_MAX_TERMS]


# Search syntax that excludes words: "-deploy", "!deploy", "NOT deploy", "not deploy". Words are matched as
# held, so such a query would archive the very memory it means to spare.
_EXCLUDING_WORD = re.compile(r"(?:^|\s)[-!](?=[^\W_])")
_NOT_OPERATOR = re.compile(r"(?:^|\s)NOT(?=\s|$)")
_LEADING_NOT = re.compile(r"^\s*not\s", re.IGNORECASE)


def refuse_query_operators(text: str, undone: str) -> None:
    """Raise ``rejected`` when ``text`` (words naming a memory to forget or replace) uses exclusion syntax."""
    words = text.strip()
    operator = None
    if found := _EXCLUDING_WORD.search(words):
        operator = words[found.end() - 1]
    elif _NOT_OPERATOR.search(words) and not words.isupper():  # "DO NOT DEPLOY ON FRIDAYS" is a memory's words
        operator = "NOT"
    elif _LEADING_NOT.match(words):
        operator = "not"
    if operator is None:
        return
    raise ToolError(
        "rejected",
        f"The words {words[:80]!r} use {operator!r} to leave something out, but memories are matched by the words "
        f"they hold, with no operators or negation, so nothing was {undone}. Pass words that are in the memory you "
        "mean (or its id, from memory__search or memory__list).",
        operator=operator,
    )
