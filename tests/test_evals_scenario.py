"""Slack-style scenario fixtures: strict timestamps, batching of thread messages into a mention's turn."""

from __future__ import annotations

import pytest

from evals.scenario import Scenario, Seed, mention, thread_message


def test_timestamps_are_assigned_in_order_and_key_the_thread() -> None:
    scenario = Scenario([mention("U1", "a"), thread_message("U2", "b"), mention("U1", "c")])
    assert [e.ts for e in scenario.events] == ["1700000000.000001", "1700000000.000002", "1700000000.000003"]
    assert scenario.source_key == "slack:T1:C1:1700000000.000001"


@pytest.mark.parametrize("bad", ["17000000.memory-explicit", "", "1700000000.", "abc"])
def test_a_fixture_with_an_invalid_timestamp_fails_at_construction(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid Slack timestamp"):
        mention("U1", "hi", ts=bad)
    with pytest.raises(ValueError, match="invalid Slack timestamp"):
        Seed("U1", "Prefers tea", ts=bad)


def test_a_scenario_without_a_mention_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one mention"):
        Scenario([thread_message("U1", "hello")])


def test_each_mention_is_a_turn_with_the_unanswered_messages_batched() -> None:
    scenario = Scenario(
        [
            mention("U1", "first"),
            thread_message("U2", "aside"),
            mention("U1", "second"),
        ],
        visibility="private",
    )
    answers: list[str] = []
    turns = []
    for turn in scenario.turns(answers):
        turns.append(turn)
        answers.append(f"answer {turn.index}")
    assert [t.context.actor.user_id for t in turns if t.context.actor] == ["U1", "U1"]
    second = turns[1]
    assert second.context.conversation is not None
    assert second.context.conversation.message_ts == "1700000000.000003"
    assert second.context.conversation.thread_ts == "1700000000.000001"
    assert second.context.conversation.visibility == "private"
    assert [(m.role, m.text, m.actor.user_id if m.actor else None) for m in second.messages] == [
        ("user", "first", "U1"),
        ("assistant", "answer 0", None),
        ("user", "aside", "U2"),
        ("user", "second", "U1"),
    ]
