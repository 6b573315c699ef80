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


class _Recall:
    from junior_core import hookimpl

    @hookimpl
    def prompt_context(self, context: ToolContext, user_text: str) -> str:
        return "recalled"


def test_a_host_embedding_the_runtime_gets_the_date_and_kind_from_the_runtimes_clock() -> None:
    from junior_core.testing import ManualClock

    clock = ManualClock(utc=datetime(2027, 3, 30, 23, 59, tzinfo=UTC))
    with Runtime(plugins=[_Recall()], clock=clock) as rt:
        host, recalled = rt.prompt_context(_context("D1", "private"), "until March 31")
        assert host.startswith("Today is Tuesday 2027-03-30 (UTC); the time is 23:59 UTC.")
        assert CONVERSATION_KINDS["direct_message"] in host and recalled == "recalled"
        clock.advance(120)  # the runtime reads its own clock each time: past midnight, the next day
        assert rt.prompt_context(_context("D1", "private"), "hi")[0].startswith("Today is Wednesday 2027-03-31")
        shared = rt.prompt_context(_context("C1", "private"), "hi", conversation_kind="shared_channel")[0]
        assert CONVERSATION_KINDS["shared_channel"] in shared
        assert rt.prompt_context(_context("C1", "public"), "hi", host=False) == ["recalled"]
        first, *_ = asyncio.run(rt.aprompt_context(_context("C1", "public"), "hi"))
        assert CONVERSATION_KINDS["public_channel"] in first and "2027-03-31" in first


def test_the_agent_loop_says_the_date_once_from_the_runtimes_clock() -> None:
    from junior_core.testing import ManualClock

    clock = ManualClock(utc=datetime(2027, 3, 31, 8, 0, tzinfo=UTC))
    with Runtime(plugins=[_Recall()], clock=clock) as rt:
        turn = run_turn(ScriptedModel(lambda view: say("ok")), rt, _context("C1", "public"),
                        [Message("user", "hi", actor=ALICE)])
    assert turn.system.count("Today is Wednesday 2027-03-31 (UTC)") == 1
    assert turn.context_blocks == ("recalled",)


def test_a_clocks_naive_time_is_read_as_utc_not_as_the_machines_local_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from junior_core.testing import ManualClock

    monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # UTC+14: a naive time read as local would be the day before
    time.tzset()
    try:
        class Naive(ManualClock):  # a host's own clock, as it might be written
            def utcnow(self) -> datetime:
                return datetime(2027, 3, 31, 8, 0)

        clock = Naive()
        with Runtime(plugins=[_Recall()], clock=clock) as rt:
            assert rt.utcnow() == datetime(2027, 3, 31, 8, 0, tzinfo=UTC)
            assert rt.prompt_context(_context("C1", "public"), "hi")[0].startswith("Today is Wednesday 2027-03-31")
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
