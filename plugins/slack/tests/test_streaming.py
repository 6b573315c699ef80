"""Replies streamed into their thread (chat.startStream / appendStream / stopStream) on the real
``junior slack serve`` process, with one chat.postMessage of the whole reply when a stream cannot be finished."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from junior_slack.testing import TEAM, dm, event_body, mention, send
from slack_helpers import LONG_ANSWER
from test_serve_command import Served, serving

pytestmark = pytest.mark.slow

ALICE, ALICE_DM, PUBLIC = "U0ALICE01", "D0ALICE01", "C0PUBLIC1"


@pytest.fixture
def served(db_url: str, tmp_path: Path) -> Iterator[Served]:
    with serving(db_url, tmp_path) as running:
        running.slack.channels[PUBLIC] = {"id": PUBLIC, "is_channel": True, "is_private": False, "name": "general"}
        yield running


def methods(served: Served) -> list[str]:
    return [m for m, _ in served.slack.calls if m.startswith("chat.")]


def cleared(served: Served, channel: str) -> None:
    served.slack.wait_for(lambda calls: any(m == "assistant.threads.setStatus" and p["channel_id"] == channel
                                            and p["status"] == "" for m, p in calls))


def test_a_long_answer_is_streamed_into_its_thread_in_batches_and_assembled_once(served: Served) -> None:
    assert send(served.url, event_body(mention(ALICE, PUBLIC, "write at length about deploys",
                                               "1700000100.000100"), "Ev0STREAM01")) == 200
    cleared(served, PUBLIC)
    (reply,) = served.slack.replies(PUBLIC)
    assert reply["text"] == LONG_ANSWER and not reply["streaming"] and reply["thread_ts"] == "1700000100.000100"
    calls = methods(served)
    appends = calls.count("chat.appendStream")
    # Batched: a few appends of 256 characters or more, not one per piece the model sent (16 characters).
    assert calls[0] == "chat.startStream" and calls[-1] == "chat.stopStream" and 1 <= appends <= len(LONG_ANSWER) // 256
    assert "chat.postMessage" not in calls
    (start,) = served.slack.of("chat.startStream")
    assert (start["recipient_user_id"], start["recipient_team_id"]) == (ALICE, TEAM)
    assert served.model.requests[-1]["stream"] is True


def test_a_stream_that_fails_midway_is_replaced_by_one_post_of_the_whole_reply(served: Served) -> None:
    served.slack.fail_next("chat.appendStream",
                           (429, {"Retry-After": "30"}, {"ok": False, "error": "ratelimited"}))
    assert send(served.url, event_body(mention(ALICE, PUBLIC, "write at length about deploys",
                                               "1700000200.000100"), "Ev0STREAM02")) == 200
    cleared(served, PUBLIC)
    (reply,) = served.slack.replies(PUBLIC)  # the part streamed before the failure is gone
    assert reply["text"] == LONG_ANSWER and "streaming" not in reply
    assert [m for m in methods(served) if m != "chat.appendStream"] == [
        "chat.startStream", "chat.delete", "chat.postMessage"]
    assert served.stop() == 0
    assert any("Ev0STREAM02: streaming to C0PUBLIC1 stopped (ratelimited (HTTP 429))" in line
               for line in served.stderr)
    assert any("Ev0STREAM02" in line and "outcome=answered" in line for line in served.stderr)


def test_a_stop_slack_refuses_is_replaced_by_one_post_too(served: Served) -> None:
    served.slack.fail_next("chat.stopStream", (200, {}, {"ok": False, "error": "streaming_state_conflict"}))
    assert send(served.url, event_body(mention(ALICE, PUBLIC, "write at length about deploys",
                                               "1700000300.000100"), "Ev0STREAM03")) == 200
    cleared(served, PUBLIC)
    assert [r["text"] for r in served.slack.replies(PUBLIC)] == [LONG_ANSWER]


def test_short_answers_and_top_level_dms_are_posted_in_one_message(served: Served) -> None:
    assert send(served.url, event_body(mention(ALICE, PUBLIC, "hello", "1700000400.000100"), "Ev0STREAM04")) == 200
    assert send(served.url, event_body(dm(ALICE, ALICE_DM, "write at length about deploys", "1700000500.000100"),
                                       "Ev0STREAM05")) == 200
    served.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM)
    cleared(served, PUBLIC)
    assert [r["text"] for r in served.slack.replies(PUBLIC)] == ["echo: hello (after 0 earlier)"]
    assert [r["text"] for r in served.slack.replies(ALICE_DM)] == [LONG_ANSWER]
    assert not [m for m in methods(served) if "Stream" in m]
