"""Feedback buttons under answers, a press recorded and logged, and ``junior slack feedback`` listing them: on the
real ``junior slack serve`` process, presses sent as Slack sends interactions."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from junior_slack.testing import TEAM, event_body, mention, press, send
from slack_helpers import LONG_ANSWER
from test_serve_command import JUNIOR, clean_env, serving, wait_for_line

pytestmark = pytest.mark.slow

ALICE, BOB, PUBLIC = "U0ALICE01", "U0BOB0001", "C0PUBLIC1"


def listed(db_url: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(JUNIOR), "slack", "feedback", *args], env=clean_env(tmp_path, JUNIOR_MEMORY_URL=db_url),
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_answers_carry_feedback_buttons_and_each_press_is_recorded_logged_and_listed(db_url: str,
                                                                                      tmp_path: Path) -> None:
    with serving(db_url, tmp_path) as served:
        served.slack.channels[PUBLIC] = {"id": PUBLIC, "is_channel": True, "is_private": False, "name": "general"}
        assert send(served.url, event_body(mention(ALICE, PUBLIC, "hello", "1700000100.000100"), "Ev0FEED001")) == 200
        assert send(served.url, event_body(mention(ALICE, PUBLIC, "write at length", "1700000200.000100"),
                                           "Ev0FEED002")) == 200
        served.slack.wait_for(lambda calls: any(m == "chat.stopStream" for m, _ in calls))
        served.slack.wait_for_post(lambda p: p["channel"] == PUBLIC)
        replies = {r["text"]: r for r in served.slack.replies(PUBLIC)}
        assert sorted(replies) == sorted(["echo: hello (after 0 earlier)", LONG_ANSWER])
        posted, streamed = replies["echo: hello (after 0 earlier)"], replies[LONG_ANSWER]
        # The posted answer shows its text above the buttons; the streamed one gets them when it stops.
        assert posted["blocks"][0] == {"type": "section", "text": {"type": "mrkdwn", "text": posted["text"]}}
        for reply, event_id in ((posted, "Ev0FEED001"), (streamed, "Ev0FEED002")):
            (buttons,) = [b for b in reply["blocks"] if b["type"] == "context_actions"]
            element = buttons["elements"][0]
            assert element["type"] == "feedback_buttons" and element["action_id"] == "junior_feedback"
            assert (element["positive_button"]["value"], element["negative_button"]["value"]) == (
                f"good:{event_id}", f"bad:{event_id}")
        asked = len(served.model.requests)
        assert press(served.url, posted, "good", BOB, channel=PUBLIC) == 200
        assert press(served.url, streamed, "bad", ALICE, channel=PUBLIC) == 200
        wait_for_line(served, f"feedback Ev0FEED002 team={TEAM} channel={PUBLIC} user={ALICE} value=bad "
                              "outcome=recorded took=")
        wait_for_line(served, f"feedback Ev0FEED001 team={TEAM} channel={PUBLIC} user={BOB} value=good "
                              "outcome=recorded took=")
        assert len(served.model.requests) == asked  # no model call for a press
        # A forged press is refused before anything is recorded.
        assert press(served.url, posted, "bad", BOB, channel=PUBLIC, secret="not-the-signing-secret") == 401
        assert served.stop() == 0
    rows = [json.loads(line) for line in listed(db_url, tmp_path, "--json").stdout.splitlines()]
    assert sorted((r["event_id"], r["user_id"], r["value"], r["team_id"], r["channel_id"], r["message_ts"])
                  for r in rows) == [("Ev0FEED001", BOB, "good", TEAM, PUBLIC, posted["ts"]),
                                     ("Ev0FEED002", ALICE, "bad", TEAM, PUBLIC, streamed["ts"])]
    table = listed(db_url, tmp_path, "--limit", "1")
    assert table.returncode == 0 and len(table.stdout.splitlines()) == 1 and "Ev0FEED00" in table.stdout


def test_failure_lines_carry_no_buttons_and_an_empty_list_says_so(db_url: str, tmp_path: Path) -> None:
    with serving(db_url, tmp_path) as served:
        served.slack.channels[PUBLIC] = {"id": PUBLIC, "is_channel": True, "is_private": False, "name": "general"}
        served.model.fail(503)
        assert send(served.url, event_body(mention(ALICE, PUBLIC, "hello", "1700000100.000100"), "Ev0FEED011")) == 200
        sorry = served.slack.wait_for_post(lambda p: p["channel"] == PUBLIC)
        assert sorry["text"].startswith("Sorry") and "blocks" not in sorry
    done = listed(db_url, tmp_path)
    assert (done.returncode, done.stdout) == (0, "no feedback yet\n")
