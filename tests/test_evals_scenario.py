"""Slack-style scenario fixtures: strict timestamps, batching of thread messages into a mention's turn."""

from __future__ import annotations

import pytest

from evals.scenario import Place, Scenario, Seed, Timeline, mention, thread_message


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


def test_a_timeline_hands_each_turn_its_own_conversation_and_only_its_threads_history() -> None:
    dm, ops_a, ops = Place("D1", "private"), Place("G1", "private", thread="a"), Place("G1", "private")
    general = Place("C1", "public", thread="a")
    timeline = Timeline([
        (dm, mention("U1", "remember that deploys go through the release channel")),
        (dm, mention("U1", "how do we deploy?")),
        (ops_a, thread_message("U2", "the hotfix is ready")),
        (ops_a, mention("U1", "who reviews it?")),
        (ops_a, mention("U2", "and after that?")),
        (ops, mention("U2", "a new top-level question")),
        (general, mention("U3", "in a public thread")),
    ])
    assert timeline.source_key == "slack:T1:D1:1700000000.000001" and timeline.shared_key == "slack:T1:D1"
    answers: list[str] = []
    turns = []
    for turn in timeline.turns(answers):
        turns.append(turn)
        answers.append(f"answer {turn.index}")
    seen = [(t.context.conversation.channel_id, t.context.conversation.thread_ts, t.context.conversation.message_ts,
             t.context.conversation.visibility, t.context.actor.user_id)
            for t in turns if t.context.conversation and t.context.actor]
    assert seen == [
        ("D1", None, "1700000000.000001", "private", "U1"),
        ("D1", None, "1700000000.000002", "private", "U1"),  # the DM's next message: top-level, no thread
        ("G1", "1700000000.000003", "1700000000.000004", "private", "U1"),
        ("G1", "1700000000.000003", "1700000000.000005", "private", "U2"),
        ("G1", None, "1700000000.000006", "private", "U2"),
        ("C1", None, "1700000000.000007", "public", "U3"),  # a thread's first message is itself top-level
    ]
    # A top-level message carries nothing before it; a thread carries its own messages and answers only.
    assert [m.text for m in turns[1].messages] == ["how do we deploy?"]
    assert [(m.role, m.text) for m in turns[3].messages] == [
        ("user", "the hotfix is ready"), ("user", "who reviews it?"), ("assistant", "answer 2"),
        ("user", "and after that?")]
    assert [m.text for m in turns[4].messages] == ["a new top-level question"]
    assert timeline.where(3) == "private channel G1 (thread 'a')" and timeline.where(1) == "DM D1 (top level)"
    public = Timeline([(general, thread_message("U2", "root")), (general, mention("U1", "remember"))])
    assert public.source_key == "slack:T1:C1:1700000000.000001" and public.shared_key == "slack:T1"


def test_a_timeline_refuses_what_slack_cannot_send() -> None:
    with pytest.raises(ValueError, match="a direct message is private"):
        Place("D1", "public")
    with pytest.raises(ValueError, match="Slack channel id"):
        Place("general", "public")
    with pytest.raises(ValueError, match="never reaches it"):
        Timeline([(Place("G1", "private"), thread_message("U1", "not to the bot")), (Place("D1", "private"),
                                                                                      mention("U1", "hi"))])
    with pytest.raises(ValueError, match="both private and public"):
        Timeline([(Place("G1", "private"), mention("U1", "a")), (Place("G1", "public", thread="x"), mention("U1", "b"))])
    with pytest.raises(ValueError, match="invalid Slack timestamp"):
        Timeline([(Place("D1", "private"), mention("U1", "a", ts="1700000000.x"))])


def test_a_private_scenarios_shared_scope_is_its_channel() -> None:
    assert Scenario([mention("U1", "a")], visibility="private").shared_key == "slack:T1:C1"
    assert Scenario([mention("U1", "a")]).shared_key == "slack:T1"
