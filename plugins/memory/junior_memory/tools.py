"""The four memory tools: remember, forget, list, search. Identity and scope come only from the ToolContext."""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from concurrent import futures
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

from junior_core import Param, Source, Tool, ToolContext, ToolError, tool
from junior_memory.content import check_content, format_time, normalise, parse_expires, utcnow
from junior_memory.limits import check_write
from junior_memory.relevance import Hit, holds
from junior_memory.replay import forgotten_answer, forgotten_by_call
from junior_memory.review import Review
from junior_memory.rules import refuse_query_operators, search_terms
from junior_memory.scope import KINDS, Kind, Scope, read_scopes, source_key, write_scope

if TYPE_CHECKING:
    from datetime import datetime

    from junior_memory.review import MemoryReviewer
    from junior_memory.store import MemoryRecord, MemoryStore

__all__ = ["SOURCE", "MemoryTools", "entry", "unavailable"]

log = logging.getLogger("junior.memory")

SOURCE = Source(
    "memory",
    "This workspace's long-term memory, the assistant's own: people's preferences, team procedures and facts saved "
    "here, to remember, recall, list and forget (delete).",
)

MAX_LIMIT = 50
# How many related memories remember offers: enough to spot a contradiction, few enough to read.
RELATED = 3
_HEX_PREFIX = re.compile(r"^[0-9a-f]{4,32}$")

READS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
ADDS = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
ARCHIVES = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False,
            "title": "Delete a memory"}

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


def entry(record: MemoryRecord) -> dict[str, Any]:
    """A memory as the model sees it, compact: ``observed_at`` only when it differs from ``created_at``,
    ``expires_at`` only when the memory expires."""
    out = record.public()
    if out.get("observed_at") == out.get("created_at"):
        del out["observed_at"]
    if out.get("expires_at") is None:
        out.pop("expires_at", None)
    return out


def _candidate(hit: Hit | MemoryRecord) -> dict[str, Any]:
    if isinstance(hit, Hit):
        return {**entry(hit.record), "matched": list(hit.matched)}
    return entry(hit)


def _related(hit: Hit) -> dict[str, Any]:
    """A memory close to another: its id and content, the words they share, and how close their meaning is."""
    out: dict[str, Any] = {"id": hit.record.id, "content": hit.record.content, "matched": list(hit.matched)}
    if hit.similarity is not None:
        out["similarity"] = hit.similarity
    return out


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


def _closest(store: MemoryStore, scopes: list[Scope], text: str) -> dict[str, Any] | None:
    """The memory nearest to ``text`` that the floor turned away, to name (never to act on): the one closest in
    meaning when vectors exist, else the keyword candidate holding the most of its words."""
    near = store.find(scopes, text, limit=1, semantic=True).hits
    if near:
        return _related(near[0])
    terms = search_terms(text)
    best = max(((len(holds(terms, r.content)), r) for r in store.search(scopes, text, limit=5)),
               key=lambda pair: pair[0], default=None)
    if best is None or best[0] == 0:
        return None
    return _related(Hit(best[1], holds(terms, best[1].content)))


def _replace_not_found(what: str) -> ToolError:
    return ToolError(
        "not_found",
        f"No memory to replace {what}: a preference replaces one of the speaker's own preferences, a procedure or "
        "knowledge one of this conversation's. Nothing was saved. Use memory__search to find the id, or call "
        "memory__remember without replaces to add a new memory.",
    )


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
            "Decides who sees it. preference (about the speaker): only the person who said it. procedure (how the "
            "team does a task) or knowledge (a durable fact about the shared environment): in a public channel, "
            "everyone in this workspace's public channels; in a direct message, everyone in this direct message; "
            "in a private channel, everyone in this private conversation.",
        ],
        expires_at: Annotated[
            str | None,
            "When the memory stops being used: 'never' (default); a date alone, '2027-03-31', meaning through the "
            "end of that day (UTC); or a date and time, '2027-03-31T17:00:00Z' (no offset means UTC). Today's date "
            "is in your instructions.",
        ] = None,
        replaces: Annotated[
            str | None, "The id, an id prefix, or words of the memory this one replaces; it is archived."
        ] = None,
        *,
        context: ToolContext,
    ) -> dict[str, Any]:
        """Remember (save, store) a fact, preference or procedure in this workspace's long-term memory. Who sees it:
        a preference, only the person who said it; the rest, everyone here.

        Use when the user asks to remember, save, store or keep something in mind ("remember that I prefer terse PR
        summaries", "save my preference for dark mode", "note that deploys need two approvals") or states
        something lasting that will matter again. The answer says who sees the memory (visible_to), in words you
        can repeat to the person.

        kind: 'preference' is about the speaker personally (their tastes, how they like answers, their health or
        circumstances): only the person who said it sees it. 'procedure' is how the team does a task (release
        steps, review rules); 'knowledge' is a durable fact about the shared environment (which service owns what,
        where things live). A procedure or knowledge said in a public channel is seen by everyone in this
        workspace's public channels; said in a direct message, by everyone in this direct message; said in a
        private channel, by everyone in this private conversation. Anything personal about someone is a
        preference, never knowledge in a public channel.

        Who is speaking and where come from the conversation, never from arguments: do not pass user ids, names or
        scopes. Write content as one self-contained statement naming who it is about ("Dana prefers ..."), at most
        4,000 characters. Credentials (tokens, passwords, keys, connection strings) are refused. Saying the same
        thing twice returns the existing memory with created false. expires_at is 'never' (default), a date alone
        ('2027-03-31': kept through the end of that day, UTC) or an ISO-8601 date and time. Tell the user it was
        saved only when this call returns ok.

        When something already remembered has changed ("actually, answers in German now", "deploys moved to
        Thursdays"), pass replaces (the old memory's id from memory__search, or its words) instead of adding a
        second memory: the new one is saved and the old one archived in one step, so only the new one is recalled.
        A preference replaces one of the speaker's own preferences; a procedure or knowledge replaces one of this
        conversation's. Several matches answer ambiguous with the candidates, and nothing is saved. The answer's
        related lists up to three memories already kept for the same people that are close to the new one: each
        with id, content, the words they share (matched) and, when found by meaning, how close (similarity, up to
        1): if one says the same or the opposite, call again with replaces set to its id, or tell the person;
        nothing is replaced unless you ask.
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
            # With semantic recall, a new memory is embedded once, from here, when the model is free: its vector
            # finds the memories close in meaning below, and the vector writer stores the same vector after the
            # commit. A duplicate or a retried call is answered from the database: the model is not asked.
            semantic = store.semantic
            begun = (semantic.start([content], idle=True) if semantic is not None and not store.kept(
                content=content, kind=kind, scope=scope, idempotency_key=idempotency_key) else None)
            old = None
            # A retried replacement finds its target archived already: the replay below answers it instead.
            if replaces is not None and (idempotency_key is None or store.replayed(idempotency_key) is None):
                old = self.replaced(store, scope, replaces)
            check_write(store, context.actor.key if context.actor else None, idempotency_key)
            # Read before the write, so the weights of the words are those of the memories already kept: in a
            # scope of few memories the new one would make every word it shares with an old one look common. The
            # write waits for the model at most ``semantic.related_wait``; without its answer, by keyword. Not
            # answering that soon is no failure of the model (a first load takes seconds): the vector writer waits
            # for it longer.
            vector = None
            if semantic is not None and begun is not None:
                futures.wait([begun], timeout=semantic.related_wait)
                vector = semantic.finish(begun, wait=0) if begun.done() else None
            near = store.related(scope, content, limit=RELATED + 2, now=now, vector=vector[0] if vector else None)
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
                    vector=begun,
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
        result = {**entry(record), "created": created}
        if old is not None and old.id != record.id:
            result["replaced"] = entry(old)
        elif not created:
            result["note"] = "This was already remembered; the existing memory was kept and no duplicate was made."
        gone = {record.id, old.id if old is not None else ""}
        related = [_related(hit) for hit in near if hit.record.id not in gone][:RELATED]
        if related:
            result["related"] = related
            result["related_note"] = (
                "Memories kept for the same people that look close to this one. If one says the same thing or "
                "contradicts it, call memory__remember again with replaces set to its id (confirm with the user if "
                "unsure), or tell the user; none was changed."
            )
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
        """Forget (delete, remove) one memory from this workspace's long-term memory, by id or words: archived for
        everyone who saw it. A memory sharing one common word is never forgotten.

        Use when the user says "forget that", "that is no longer true", or asks to delete or remove a saved
        preference, procedure or fact.

        Pass id (from memory__list or memory__search; a unique prefix of at least 4 characters works) or query
        (words from the memory). Exactly one match is forgotten; when several match, or memories hold only some of
        the words, nothing is forgotten and the candidates come back, each with the words it holds (matched), so
        you can call again with the right id. No memory holding the query's telling words answers not_found, which
        names the closest memory (closest) when one is near: ask the person before forgetting that one by id.
        Only memories visible here can be forgotten: the speaker's own preferences and this conversation's shared
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
                close = _closest(store, scopes, query) if query is not None else None
                if close is not None:
                    raise ToolError(
                        "not_found",
                        f"No memory you can see here {what}; nothing was forgotten. The closest one is in closest: "
                        "if it is the one the user means, confirm with them, then call memory__forget with its id.",
                        closest=close,
                    )
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
        kind: Annotated[
            list[Kind] | None,
            Param("Only memories of these kinds, e.g. [\"preference\"] for what you know about the speaker or "
                  "[\"procedure\"] for how the team does things; default every kind.", min_items=1, max_items=3),
        ] = None,
        *,
        context: ToolContext,
    ) -> dict[str, Any]:
        """List (show) the memories this workspace's long-term memory holds about the user and here, newest first:
        kind picks preferences, procedures or knowledge; each says who sees it.

        Use to show everything kept about the user ("what do you remember about me?", "show me everything you
        have on me") or to find an id before forgetting. The speaker's own preferences plus the procedures and
        knowledge of this conversation (the workspace in a public channel, the whole channel in a private one).
        kind (a list) keeps only those kinds: ["preference"] for what you know about the speaker. total counts
        every memory listed; when next_cursor is not null there are more: call again with cursor set to it (and the
        same kind). An empty list says which kinds are here (kinds_here). Each memory's visible_to says who sees
        it: only the person who said it, or everyone in this workspace's public channels, this direct message or
        this private conversation. Archived and expired memories are not shown; other people's personal memories
        and memories saved in other conversations (direct messages, private channels) never are.
        """
        scopes = read_scopes(context)
        kinds = _kinds(kind)
        after = _read_cursor(cursor) if cursor is not None else None
        with unavailable("no memories could be read"):
            store = self._store()
            records, total = store.page(scopes, limit=limit + 1, after=after, kinds=kinds)
            here = store.kind_counts(scopes) if kinds and not records and after is None else None
        shown = records[:limit]
        more = len(records) > limit
        answer: dict[str, Any] = {
            "memories": [entry(r) for r in shown],
            "total": total,
            "next_cursor": _make_cursor(shown[-1]) if more else None,
        }
        if here is not None:
            answer["kinds_here"] = here
            answer["note"] = _no_kind(kinds or [], here)
        return answer

    @tool(keywords=SEARCH_KEYWORDS, annotations=READS)
    def search(
        self,
        query: Annotated[str, Param("The words to look for: a name, a topic, a few telling words.", min_length=1,
                                    max_length=1000)],
        limit: Annotated[int, Param("At most 50; default 10.", minimum=1, maximum=MAX_LIMIT)] = 10,
        kind: Annotated[
            list[Kind] | None,
            Param("Only memories of these kinds, e.g. [\"preference\"] for what you know about the speaker or "
                  "[\"procedure\"] for how the team does things; default every kind.", min_items=1, max_items=3),
        ] = None,
        *,
        context: ToolContext,
    ) -> dict[str, Any]:
        """Search (look up, find) this workspace's long-term memory by words and meaning, all kinds or only
        preferences, procedures or knowledge; each result says who sees it.

        Use when the user asks what they told you or what is saved about something ("what did I tell you about
        how I like code reviews?", "do you have anything saved about deploys?"), before answering when a
        remembered procedure or fact may apply, or to find the id of a memory to forget. Covers the speaker's own
        preferences and this conversation's shared memories, never other people's. Most relevant first. A memory
        that shares only a common word with a query of several words is not returned; matched lists the query
        words a result holds, similarity (0 to 1) how close its meaning is when semantic recall is on. kind (a
        list) keeps only those kinds: ["procedure"] for "the team procedure for ...". An empty answer says how many
        memories are visible here and of which kinds (kinds_here). Memories can be stale: weigh them against what
        the user says now.
        """
        scopes = read_scopes(context)
        kinds = _kinds(kind)
        with unavailable("no memories could be read"):
            store = self._store()
            found = store.find(scopes, query, limit=limit, semantic=True, kinds=kinds)
            here = store.kind_counts(scopes) if not found.hits else {}
        memories = []
        for hit in found.hits:
            item = {**entry(hit.record), "matched": list(hit.matched)}
            if hit.similarity is not None:
                item["similarity"] = hit.similarity
            memories.append(item)
        if memories:
            return {"memories": memories}
        visible = sum(here.values())
        note = _nothing_found(visible) if not kinds else _no_kind(kinds, here, searched=True)
        return {"memories": [], "visible_here": visible, "kinds_here": here, "note": note}


def _nothing_found(visible: int) -> str:
    """What an empty search tells the model: how many memories it could have found, never what other ones say."""
    elsewhere = ("Memories saved in other conversations (direct messages, private channels) and other people's "
                 "preferences are not visible here.")
    if visible == 0:
        return f"No memory is visible in this conversation yet. {elsewhere}"
    held = "The 1 memory visible here does not" if visible == 1 else f"None of the {visible} memories visible here"
    return (f"{held} match this query (a match holds the query's telling words, not just one common word). "
            f"{elsewhere} memory__list shows what is visible here.")


def _kinds(kind: Sequence[str] | None) -> list[str] | None:
    """The kinds asked for, each once, in the usual order; None for every kind."""
    if kind is None:
        return None
    return [k for k in KINDS if k in kind]


def _no_kind(kinds: Sequence[str], here: dict[str, int], *, searched: bool = False) -> str:
    """What an empty answer filtered by kind says: which kinds are here instead, and how many of each."""
    asked = " or ".join(kinds)
    held = sum(here.get(k, 0) for k in kinds)
    if searched and held:
        lead = f"None of the {held} {asked} memories visible here match this query."
    else:
        lead = f"No {asked} memory is visible here."
    if not here:
        return f"{lead} No memory of any kind is visible here yet."
    others = ", ".join(f"{n} {k}" for k, n in here.items())
    return (f"{lead} Visible here: {others} (kinds_here); search or list without kind, or with another kind, "
            "to see them.")


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
