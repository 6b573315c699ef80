"""The system prompt's host context: today's date from the injected clock, and the conversation's kind."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone

import pytest

from junior_core import Actor, Conversation, Message, Runtime, ToolContext
from junior_core.llm.agent import CONVERSATION_KINDS, arun_turn, implied_kind, run_turn
from junior_core.llm.types import say
from junior_core.testing import ScriptedModel

ALICE = Actor("slack", "T1", "U1")
TS = "1700000000.000001"


def _context(channel: str, visibility: str) -> ToolContext:
    return ToolContext(ALICE, Conversation("slack", "T1", channel, message_ts=TS, visibility=visibility))  # type: ignore[arg-type]


def _clock() -> datetime:
    # 23:30 on 31 March in UTC-5 is already 1 April in UTC: the prompt's date is UTC's.
    return datetime(2026, 3, 31, 23, 30, tzinfo=timezone(timedelta(hours=-5)))


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_system_prompt_says_today_in_utc_from_the_clock(wire: str) -> None:
    model = ScriptedModel(lambda view: say("ok"), wire=wire)  # type: ignore[arg-type]
    with Runtime(plugins=[]) as rt:
        turn = run_turn(model, rt, _context("C1", "public"), [Message("user", "hi", actor=ALICE)], clock=_clock)
    assert "Today is Wednesday 2026-04-01 (UTC); the time is 04:30 UTC." in turn.system
    first = model.requests[0]
    sent = first["messages"][0]["content"] if wire == "openai" else first["system"]
    assert "Today is Wednesday 2026-04-01 (UTC)" in sent


@pytest.mark.parametrize(
    ("channel", "visibility", "kind"),
    [("C1", "public", "public_channel"), ("G1", "private", "private_channel"), ("D1", "private", "direct_message")],
)
def test_the_kind_follows_from_the_conversation_when_the_host_does_not_say(
    channel: str, visibility: str, kind: str
) -> None:
    context = _context(channel, visibility)
    assert implied_kind(context) == kind
    with Runtime(plugins=[]) as rt:
        turn = run_turn(ScriptedModel(lambda view: say("ok")), rt, context, [Message("user", "hi", actor=ALICE)],
                        clock=_clock)
    assert CONVERSATION_KINDS[kind] in turn.system
    others = [text for other, text in CONVERSATION_KINDS.items() if other != kind]
    assert not [text for text in others if text in turn.system]


def test_the_hosts_kind_wins_a_shared_channel_says_workspace_memories_are_not_here() -> None:
    with Runtime(plugins=[]) as rt:
        turn = asyncio.run(arun_turn(ScriptedModel(lambda view: say("ok")), rt, _context("C9", "private"),
                                     [Message("user", "hi", actor=ALICE)], conversation_kind="shared_channel",
                                     clock=lambda: datetime(2026, 12, 3, 9, 0, tzinfo=UTC)))
    assert "shared with another organisation" in turn.system
    assert "Workspace memories are not available here" in turn.system
    assert CONVERSATION_KINDS["private_channel"] not in turn.system
    assert "Today is Thursday 2026-12-03 (UTC)" in turn.system


def test_an_unknown_kind_is_refused_naming_the_kinds() -> None:
    with Runtime(plugins=[]) as rt, pytest.raises(ValueError, match="direct_message, private_channel"):
        run_turn(ScriptedModel(lambda view: say("ok")), rt, _context("C1", "public"),
                 [Message("user", "hi", actor=ALICE)], conversation_kind="group")  # type: ignore[arg-type]


def test_without_a_conversation_only_the_date_is_said() -> None:
    with Runtime(plugins=[]) as rt:
        turn = run_turn(ScriptedModel(lambda view: say("ok")), rt, ToolContext(ALICE),
                        [Message("user", "hi", actor=ALICE)], clock=_clock)
    assert "Today is Wednesday 2026-04-01 (UTC)" in turn.system
    assert not [text for text in CONVERSATION_KINDS.values() if text in turn.system]
