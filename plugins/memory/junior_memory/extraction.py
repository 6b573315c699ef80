"""Passive extraction: an extractor proposes memories from a finished turn, and a strict gate decides."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from junior_core import Actor, Message, ToolContext, ToolError
from junior_memory.content import check_content, content_hash
from junior_memory.scope import KINDS, Kind, Scope, personal_scope, write_scope

__all__ = ["MAX_PER_TURN", "Candidate", "MemoryExtractor", "accept", "skip_reason", "turn_key"]

log = logging.getLogger("junior.memory")

MAX_PER_TURN = 5


def _indices(value: Iterable[int]) -> tuple[int, ...]:
    return tuple(value)


@attrs.frozen
class Candidate:
    """A memory an extractor proposes.

    ``cites`` are indices into the turn's transcript of the messages it rests on; ``about_speaker`` is the
    extractor's claim that a preference is the speaker's own, said about themself. ``replaces`` (the id, an id
    prefix, or words of one of the speaker's own preferences) proposes that this preference supersedes it.
    """

    content: str
    kind: Kind
    cites: tuple[int, ...] = attrs.field(converter=_indices)
    about_speaker: bool = False
    replaces: str | None = None


@runtime_checkable
class MemoryExtractor(Protocol):
    """Turns a finished turn's transcript into candidate memories (model-backed, or scripted in tests)."""

    def extract(self, transcript: Sequence[Message], context: ToolContext) -> Iterable[Candidate]: ...


def _used_memory_tool(message: Message) -> bool:
    name = message.tool_name or ""
    if name.startswith("memory__"):
        return True
    args = message.arguments
    return name == "executeTool" and isinstance(args, dict) and str(args.get("tool_name", "")).startswith("memory__")


def skip_reason(transcript: Sequence[Message], context: ToolContext) -> str | None:
    """Why this turn gets no extraction at all, or None."""
    conversation = context.conversation
    if conversation is None:
        return "no conversation"
    if conversation.visibility != "public":
        return "private conversation"
    if conversation.source_key is None:
        return "no source_key"
    if any(m.role == "tool" and _used_memory_tool(m) for m in transcript):
        return "the turn already used a memory tool"
    return None


def _speakers(transcript: Sequence[Message]) -> set[Actor]:
    return {m.actor for m in transcript if m.role == "user" and m.actor is not None}


def _successful_tool(message: Message) -> bool:
    if message.role != "tool":
        return False
    result = message.result
    if isinstance(result, dict) and "ok" in result:
        return result["ok"] is True
    return result is not None


def _admit(candidate: Any, transcript: Sequence[Message], context: ToolContext) -> tuple[str, Scope] | str:
    """The content and scope to store, or why the candidate is dropped."""
    if not isinstance(candidate, Candidate):
        return f"not a Candidate: {type(candidate).__name__}"
    if candidate.kind not in KINDS:
        return f"unknown kind {candidate.kind!r}"
    try:
        content = check_content(candidate.content)
    except ToolError as exc:
        return exc.message
    cited = []
    for index in candidate.cites:
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(transcript):
            return f"cites message {index!r}, which is not in the turn"
        cited.append(transcript[index])
    if not cited:
        return "cites no message"
    if candidate.replaces is not None and candidate.kind != "preference":
        # Shared memories change only when someone asks: a turn's gist must not overwrite the team's.
        return f"only a preference may replace a memory, not a {candidate.kind}"
    if candidate.replaces is not None and not candidate.replaces.strip():
        return "replaces is empty"
    if candidate.kind == "preference":
        speakers = _speakers(transcript)
        if len(speakers) != 1:
            return f"a preference needs exactly one speaker in the turn, found {len(speakers)}"
        (speaker,) = speakers
        if context.actor is None:
            return "a preference needs an actor in context"
        if context.actor != speaker:
            return "the turn's speaker is not the context's actor"
        if not candidate.about_speaker:
            return "a preference must be the speaker's own, said about themself"
        if not all(m.role == "user" and m.actor == speaker for m in cited):
            return "a preference must rest only on the speaker's own messages"
        return content, personal_scope(speaker.key)
    if not any(m.role == "user" or _successful_tool(m) for m in cited):
        return f"a {candidate.kind} needs a cited user message or successful tool result"
    try:
        return content, write_scope(candidate.kind, context)
    except ToolError as exc:
        return exc.message


def accept(
    candidates: Iterable[Any], transcript: Sequence[Message], context: ToolContext
) -> list[tuple[Candidate, str, Scope]]:
    """The candidates that pass the gate (at most ``MAX_PER_TURN``, no duplicates), with content and scope."""
    kept: list[tuple[Candidate, str, Scope]] = []
    seen: set[tuple[str, str, str]] = set()
    for candidate in candidates:
        admitted = _admit(candidate, transcript, context)
        if isinstance(admitted, str):
            log.info("memory extraction dropped a candidate: %s", admitted)
            continue
        content, scope = admitted
        key = (scope.scope_key, candidate.kind, content_hash(content))
        if key in seen:
            continue
        seen.add(key)
        kept.append((candidate, content, scope))
        if len(kept) == MAX_PER_TURN:
            break
    return kept


def turn_key(transcript: Sequence[Message]) -> str:
    """A digest of the turn, so re-running extraction on the same turn writes nothing new."""
    parts = [
        [m.role, m.text, m.actor.key if m.actor else None, m.tool_name]
        for m in transcript
    ]
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()[:24]
