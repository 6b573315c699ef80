"""The four memory tools: remember, forget, list, search. Identity and scope come only from the ToolContext."""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

from junior_core import Param, Source, Tool, ToolContext, ToolError, tool
from junior_memory.content import check_content, format_time, normalise, parse_expires, utcnow
from junior_memory.limits import check_write
from junior_memory.relevance import Hit
from junior_memory.replay import forgotten_answer, forgotten_by_call
from junior_memory.review import Review
from junior_memory.rules import refuse_query_operators, search_terms
from junior_memory.scope import KINDS, Kind, Scope, read_scopes, source_key, write_scope

if TYPE_CHECKING:
    from datetime import datetime

    from junior_memory.review import MemoryReviewer
    from junior_memory.store import MemoryRecord, MemoryStore

__all__ = ["SOURCE", "MemoryTools", "unavailable"]

log = logging.getLogger("junior.memory")

SOURCE = Source(
    "memory",
    "The assistant's own memory of this workspace and its people: preferences, team procedures and facts saved in "
    "conversations here, to remember, recall, list and forget.",
)

MAX_LIMIT = 50
_HEX_PREFIX = re.compile(r"^[0-9a-f]{4,32}$")

READS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
ADDS = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
ARCHIVES = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False}

# What people say for each action that only a memory does: memory's own verbs and idioms. Generic verbs (save,
# delete, list, search, find, show, export, ...) are left to the tools' descriptions, where they weigh what their
# rarity across every installed tool says; a phrase matches only as the whole phrase. A word belongs to one tool
# only: "remember" in the search tool's keywords would make "remember ..." a reading verb too.
REMEMBER_KEYWORDS = (
    "remember", "memorize", "memorise", "note down", "make a note", "jot down", "take note", "keep in mind",
    "bear in mind", "for future reference", "from now on", "going forward", "in future", "don't forget",
    "add a memory",
)
FORGET_KEYWORDS = (
    "forget", "unsave", "stop remembering", "no longer true", "not true anymore", "no longer the case",
    "outdated", "obsolete", "disregard",
)
LIST_KEYWORDS = (
    "memories", "all memories", "everything you remember", "what you know about me", "recap",
)
SEARCH_KEYWORDS = (
    "recall", "remind me", "what did I say", "what did I tell you", "do you remember",
)


@contextmanager
def unavailable(doing: str) -> Iterator[None]:
    """Turn an unreachable database into an ``unavailable`` error that says what did not happen."""
    from junior_memory.store import MemorySchemaTooNew, MemoryUnavailable

    try:
        yield
    except MemorySchemaTooNew as exc:
        raise ToolError(
            "unavailable",
            f"Memory cannot be used here: {exc}. So {doing}. Tell the user memory is unavailable until the "
            "operator upgrades junior-memory; do not retry. Other tools still work.",
        ) from None
    except MemoryUnavailable as exc:
        raise ToolError(
            "unavailable",
            f"The memory database is unreachable right now, so {doing}. Tell the user memory is temporarily "
            "unavailable and try again later; other tools still work.",
        ) from exc


def _may_reclassify(requested: str, proposed: str) -> bool:
    """Whether a reviewer may change the kind: never so that more people see it (a preference stays personal)."""
    return requested != "preference" and proposed in KINDS


def _candidate(hit: Hit | MemoryRecord) -> dict[str, Any]:
    if isinstance(hit, Hit):
        return {**hit.record.public(), "matched": list(hit.matched)}
    return hit.public()


def _ambiguous(
    matches: Sequence[Hit | MemoryRecord], lead: str, undone: str, tool_name: str, argument: str
) -> ToolError:
    return ToolError(
        "ambiguous",
        f"{lead}, so nothing was {undone}. Each candidate says which of your words it holds (matched). Call "
        f"{tool_name} again with {argument} (confirm with the user if unsure).",
        candidates=[_candidate(m) for m in matches[:10]],
    )


def _matches(
    store: MemoryStore, scopes: list[Scope], ident: str | None, text: str | None, undone: str, tool_name: str
) -> tuple[list[MemoryRecord], str]:
    """The one memory in ``scopes`` that ``ident`` (id or prefix) or ``text`` (its words) names, and how it was named.

    No match is ``([], what)``; several, or memories that hold only some of the words, raise ``ambiguous``: a
    guess never archives or replaces anything. Words go through the search floor first, so a memory sharing only
    a common word with ``text`` is never a candidate.
    """
    argument = ("the id of the one to forget" if tool_name == "memory__forget"
                else "replaces set to the id of the one to replace")
    if ident is not None:
        prefix = ident.strip().lower()
        records = store.by_id_prefix(scopes, prefix, limit=11) if _HEX_PREFIX.match(prefix) else []
        what = f"with id {ident.strip()[:40]!r}"
        if len(records) > 1:
            count = str(len(records)) if len(records) <= 10 else "More than 10"
            raise _ambiguous(records, f"{count} memories match", undone, tool_name, argument)
        return records, what
    text = text or ""
    refuse_query_operators(text, undone)
    what = f"matching {text.strip()[:80]!r}"
    hits = store.find(scopes, text, limit=11).hits
    target = normalise(text)
    exact = [h for h in hits if normalise(h.record.content) == target]
    terms = search_terms(text)
    whole = exact if len(exact) == 1 else [h for h in hits if len(h.matched) == len(terms)]
    if len(whole) == 1:
        return [whole[0].record], what
    if len(whole) > 1:
        count = str(len(whole)) if len(whole) <= 10 else "More than 10"
        raise _ambiguous(whole, f"{count} memories match", undone, tool_name, argument)
    if hits:
        # Only some words matched: never act on a guess, let the model pick by id.
        raise _ambiguous(hits, "Some memories partly match", undone, tool_name, argument)
    return [], what


def _replace_not_found(what: str) -> ToolError:
    return ToolError(
        "not_found",
        f"No memory to replace {what}: a preference replaces one of the speaker's own preferences, a procedure or "
        "knowledge one of this conversation's. Nothing was saved. Use memory__search to find the id, or call "
        "memory__remember without replaces to add a new memory.",
    )


def _scope_of(record: MemoryRecord) -> Scope:
    return Scope(record.scope, record.scope_key, record.subject_type)  # type: ignore[arg-type]


class MemoryTools:
    """Tool handlers over a store, fetched lazily so the database is opened on first use."""

    def __init__(self, store: Callable[[], MemoryStore], reviewer: MemoryReviewer | None = None) -> None:
        self._store = store
        self._reviewer = reviewer

    def tools(self) -> list[Tool]:
        return [Tool.from_function(method) for method in (self.remember, self.forget, self.list, self.search)]

    @tool(keywords=REMEMBER_KEYWORDS, annotations=ADDS)
    def remember(
        self,
        content: Annotated[
            str,
            "One self-contained statement that names who or what it is about, as read later by someone else: "
            "'Dana prefers terse PR summaries', 'Deploys need two approvals' (not 'I prefer...'). At most 4,000 "
            "characters.",
        ],
        kind: Annotated[
            Kind,
            "Decides who will see it. preference: about the speaker, seen only by the speaker. procedure (how the "
            "team does a task) or knowledge (a durable fact about the shared environment): seen by everyone in this "
            "conversation, which in a public channel is the whole workspace.",
        ],
        expires_at: Annotated[
            str | None, "'never' (default) or an ISO-8601 date/time after which the memory is ignored."
        ] = None,
        replaces: Annotated[
            str | None, "The id, an id prefix, or words of the memory this one replaces; it is archived."
        ] = None,
        *,
        context: ToolContext,
    ) -> dict[str, Any]:
        """Remember (save, store) a fact, preference or procedure for later. kind decides who sees it: a preference
        only the speaker; the others everyone here (public channel: the workspace).

        Use when the user asks to remember, save, store or keep something in mind ("remember that I prefer terse PR
        summaries", "save my preference for dark mode", "note that deploys need two approvals") or states
        something lasting that will matter again. The answer says who can see the memory (visible_to).

        kind: 'preference' is about the speaker personally (their tastes, how they like answers, their health or
        circumstances) and is kept for that person only; 'procedure' is how the team does a task (release steps,
        review rules); 'knowledge' is a durable fact about the shared environment (which service owns what, where
        things live). Procedures and knowledge are shared with the workspace when said in a public channel and kept
        to the conversation itself, all of it, in a private one (a DM or private channel). Anything personal about
        someone is a preference, never knowledge in a public channel.

        Who is speaking and where come from the conversation, never from arguments: do not pass user ids, names or
        scopes. Write content as one self-contained statement naming who it is about ("Dana prefers ..."), at most
        4,000 characters. Credentials (tokens, passwords, keys, connection strings) are refused. Saying the same
        thing twice returns the existing memory with created false. expires_at is 'never' (default) or an ISO-8601
        date/time after which the memory is ignored. Tell the user it was saved only when this call returns ok.

        When something already remembered has changed ("actually, answers in German now", "deploys moved to
        Thursdays"), pass replaces (the old memory's id from memory__search, or its words) instead of adding a
        second memory: the new one is saved and the old one archived in one step, so only the new one is recalled.
        A preference replaces one of the speaker's own preferences; a procedure or knowledge replaces one of this
        conversation's. Several matches answer ambiguous with the candidates, and nothing is saved.
        """
        from junior_memory.store import IdempotencyConflict, ReplaceTargetGone

        content = check_content(content)
        if self._reviewer is not None:
            try:
                review = self._reviewer.review(content, kind, context)
            except Exception:  # fail open, like ModelReviewer: an explicit request is not lost to a broken reviewer
                log.warning("memory reviewer %r failed; storing the write as requested", self._reviewer,
                            exc_info=True)
                review = Review("accept", content, kind)
            if review.verdict == "refuse":
                raise ToolError(
                    "rejected",
                    f"Not saved: {review.reason}. Tell the user it was not remembered and why; "
                    "do not retry with the same content.",
                )
            content = check_content(review.content)
            if review.kind in KINDS and review.kind != kind:
                if _may_reclassify(kind, review.kind):
                    kind = review.kind
                else:
                    log.info("memory reviewer asked to make a %s a %s; kept as %s (it would widen who sees it)",
                             kind, review.kind, kind)
        now = utcnow()
        expires = parse_expires(expires_at, now)
        scope = write_scope(kind, context)
        key = source_key(context)
        idempotency_key = f"tool:{key}:{context.tool_call_id}" if key and context.tool_call_id else None
        with unavailable("nothing was saved"):
            store = self._store()
            old = None
            # A retried replacement finds its target archived already: the replay below answers it instead.
            if replaces is not None and (idempotency_key is None or store.replayed(idempotency_key) is None):
                old = self.replaced(store, scope, replaces)
            check_write(store, context.actor.key if context.actor else None, idempotency_key)
            try:
                record, created = store.remember(
                    content=content,
                    kind=kind,
                    scope=scope,
                    actor_key=context.actor.key if context.actor else None,
                    source_key=key,
                    origin="tool",
                    tool_call_id=context.tool_call_id,
                    idempotency_key=idempotency_key,
                    expires_at=expires,
                    replaces=old.id if old is not None else None,
                    now=now,
                )
            except ReplaceTargetGone:
                raise _replace_not_found(f"with id {old.id if old else ''!r}") from None
            except IdempotencyConflict:
                # Say nothing about the memory that holds the key: it may be another person's.
                raise ToolError(
                    "rejected",
                    "Not saved: this tool_call_id was already used for a different memory. Retry as a new tool "
                    "call (with a new tool_call_id) to remember this.",
                ) from None
        result = {**record.public(), "created": created, "scope": record.scope,
                  "visible_to": _scope_of(record).visible_to}
        if old is not None and old.id != record.id:
            result["replaced"] = old.public()
        elif not created:
            result["note"] = "This was already remembered; the existing memory was kept and no duplicate was made."
        return result

    @staticmethod
    def replaced(store: MemoryStore, scope: Scope, replaces: str) -> MemoryRecord:
        """The current memory of ``scope`` that ``replaces`` names, by id, id prefix, or words."""
        if not replaces.strip():
            raise ToolError("invalid_arguments", "replaces is empty: pass the id or words of the memory to replace, "
                            "or leave replaces out to add a new memory.")
        matches: list[MemoryRecord] = []
        what = ""
        if _HEX_PREFIX.match(replaces.strip().lower()):
            matches, what = _matches(store, [scope], replaces, None, "saved", "memory__remember")
        if not matches:
            matches, what = _matches(store, [scope], None, replaces, "saved", "memory__remember")
        if not matches:
            raise _replace_not_found(what)
        return matches[0]

    @tool(keywords=FORGET_KEYWORDS, annotations=ARCHIVES)
    def forget(
        self,
        id: Annotated[str | None, "The memory's id, or a unique prefix of at least 4 characters."] = None,
        query: Annotated[str | None, "Words from the memory to forget, when you do not have its id."] = None,
        *,
        context: ToolContext,
    ) -> dict[str, Any]:
        """Forget (delete, remove) one memory this conversation can see, by id or words: it is archived for everyone
        who could see it. A memory sharing only a common word is never offered.

        Use when the user says "forget that", "that is no longer true", or asks to delete or remove a saved
        preference, procedure or fact.

        Pass id (from memory__list or memory__search; a unique prefix of at least 4 characters works) or query
        (words from the memory). Exactly one match is forgotten; when several match, or memories hold only some of
        the words, nothing is forgotten and the candidates come back, each with the words it holds (matched), so
        you can call again with the right id. No memory holding the query's telling words answers not_found. Only
        memories visible here can be forgotten: the speaker's own preferences and this conversation's shared
        memories. Identity comes from the conversation, never from arguments.
        """
        if (id is None) == (query is None) or not (id or query or "").strip():
            raise ToolError(
                "invalid_arguments",
                "Pass exactly one of id (from memory__list or memory__search) or query (words from the memory).",
            )
        scopes = read_scopes(context)
        with unavailable("nothing was forgotten"):
            store = self._store()
            replayed = forgotten_by_call(store, scopes, source_key(context), context.tool_call_id, id)
            if replayed is not None:
                return forgotten_answer(replayed)
            matches, what = _matches(store, scopes, id, query, "forgotten", "memory__forget")
            if not matches:
                raise ToolError(
                    "not_found",
                    f"No memory you can see here {what}. Use memory__list or memory__search to find its id; "
                    "nothing was forgotten.",
                )
            record = store.archive(
                matches[0].id,
                reason="tool_removed",
                actor_key=context.actor.key if context.actor else None,
                source_key=source_key(context),
                tool_call_id=context.tool_call_id,
            )
        if record is None:  # purged between the lookup and the archive
            raise ToolError("not_found", f"No memory you can see here {what}; nothing was forgotten.")
        return forgotten_answer(record)

    @tool(keywords=LIST_KEYWORDS, annotations=READS)
    def list(
        self,
        limit: Annotated[int, Param("At most 50; default 20.", minimum=1, maximum=MAX_LIMIT)] = 20,
        cursor: Annotated[
            str | None, Param("next_cursor from the previous page, to see the memories after it.", max_length=200)
        ] = None,
        *,
        context: ToolContext,
    ) -> dict[str, Any]:
        """List (show) every memory this conversation can see, newest first, with the total and a cursor for more;
        each says who can see it (only the speaker, or everyone here).

        Use to show everything kept about the user ("what do you remember about me?", "show me everything you
        have on me") or to find an id before forgetting. The speaker's own preferences plus the procedures and
        knowledge of this conversation (the workspace in a public channel, the whole channel in a private one).
        total counts them all; when next_cursor is not null there are more: call again with cursor set to it.
        Archived and expired memories are not shown; other people's personal memories and memories saved in other
        conversations (direct messages, private channels) never are.
        """
        scopes = read_scopes(context)
        after = _read_cursor(cursor) if cursor is not None else None
        with unavailable("no memories could be read"):
            records, total = self._store().page(scopes, limit=limit + 1, after=after)
        shown = records[:limit]
        more = len(records) > limit
        return {
            "memories": [r.public() for r in shown],
            "total": total,
            "next_cursor": _make_cursor(shown[-1]) if more else None,
        }

    @tool(keywords=SEARCH_KEYWORDS, annotations=READS)
    def search(
        self,
        query: Annotated[str, Param("The words to look for: a name, a topic, a few telling words.", min_length=1,
                                    max_length=1000)],
        limit: Annotated[int, Param("At most 50; default 10.", minimum=1, maximum=MAX_LIMIT)] = 10,
        *,
        context: ToolContext,
    ) -> dict[str, Any]:
        """Search (look up, find) the memories this conversation can see, by words and meaning; each result says
        which of your words it holds and who sees it. Other chats' are not here.

        Use when the user asks what they told you or what is saved about something ("what did I tell you about
        how I like code reviews?", "do you have anything saved about deploys?"), before answering when a
        remembered procedure or fact may apply, or to find the id of a memory to forget. Covers the speaker's own
        preferences and this conversation's shared memories, never other people's. Most relevant first. A memory
        that shares only a common word with a query of several words is not returned; matched lists the query
        words a result holds, similarity (0 to 1) how close its meaning is when semantic recall is on. An empty
        answer says how many memories are visible here. Memories can be stale: weigh them against what the user
        says now.
        """
        scopes = read_scopes(context)
        with unavailable("no memories could be read"):
            found = self._store().find(scopes, query, limit=limit, semantic=True)
        memories = []
        for hit in found.hits:
            item = {**hit.record.public(), "matched": list(hit.matched)}
            if hit.similarity is not None:
                item["similarity"] = hit.similarity
            memories.append(item)
        if memories:
            return {"memories": memories}
        return {"memories": [], "visible_here": found.visible, "note": _nothing_found(found.visible or 0)}


def _nothing_found(visible: int) -> str:
    """What an empty search tells the model: how many memories it could have found, never what other ones say."""
    elsewhere = ("Memories saved in other conversations (direct messages, private channels) and other people's "
                 "preferences are not visible here.")
    if visible == 0:
        return f"No memory is visible in this conversation yet. {elsewhere}"
    held = "The 1 memory visible here does not" if visible == 1 else f"None of the {visible} memories visible here"
    return (f"{held} match this query (a match holds the query's telling words, not just one common word). "
            f"{elsewhere} memory__list shows what is visible here.")


def _make_cursor(last: MemoryRecord) -> str:
    """An opaque cursor: where the next page starts (the last memory shown's observed_at and id)."""
    raw = f"{format_time(last.observed_at)}|{last.id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _read_cursor(cursor: str) -> tuple[datetime, str]:
    from datetime import datetime

    try:
        raw = base64.urlsafe_b64decode(cursor.strip() + "=" * (-len(cursor.strip()) % 4)).decode()
        at, _, memory_id = raw.partition("|")
        when = datetime.fromisoformat(at.replace("Z", "+00:00"))
        if not _HEX_PREFIX.match(memory_id) or when.tzinfo is None:
            raise ValueError(memory_id)
    except (ValueError, UnicodeDecodeError):
        raise ToolError(
            "invalid_arguments",
            "cursor is not a next_cursor this tool returned. Call memory__list without cursor to start again.",
            details=[{"path": "cursor", "message": "unknown cursor"}],
        ) from None
    return when, memory_id
