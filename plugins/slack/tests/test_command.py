"""The ``/junior`` slash command on the real ``junior slack serve`` process: an ephemeral answer through the
command's response_url, and memory written as in the caller's DM with the app."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from junior_slack.testing import TEAM, command, dm, event_body, mention, send
from test_serve_command import Served, serving, wait_for_line

pytestmark = pytest.mark.slow

ALICE, BOB, PUBLIC = "U0ALICE01", "U0BOB0001", "C0PUBLIC1"
ALICE_DM = "D0ALICE01"  # what conversations.open answers for Alice


def responses(served: Served) -> list[dict[str, Any]]:
    return served.slack.of("response_url")


def test_the_command_answers_only_the_caller_and_keeps_what_it_saves_in_their_dm(db_url: str,
                                                                                 tmp_path: Path) -> None:
    with serving(db_url, tmp_path) as served:
        served.slack.channels[PUBLIC] = {"id": PUBLIC, "is_channel": True, "is_private": False, "name": "general"}
        assert command(served.url, served.slack, "remember that the standup moved to ten", ALICE, PUBLIC) == 200
        served.slack.wait_for(lambda calls: any(m == "response_url" for m, _ in calls))
        (saved,) = responses(served)
        assert (saved["text"], saved["response_type"]) == ("Saved (everyone in this direct message).", "ephemeral")
        assert served.slack.of("conversations.open")[0]["users"] == ALICE
        assert served.slack.posts() == []  # nothing said in the channel for everyone
        wait_for_line(served, f"event /junior:1.2.3 team={TEAM} channel={PUBLIC} kind=dm retry=0 outcome=answered ")
        # In Alice's DM the memory is there; in the public channel it is not.
        assert send(served.url, event_body(dm(ALICE, ALICE_DM, "how do we run the standup?", "1700000100.000100"),
                                           "Ev0CMD0001")) == 200
        used = served.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM)
        assert used["text"] == 'From memory: "the standup moved to ten"'
        assert send(served.url, event_body(mention(BOB, PUBLIC, "how do we run the standup?", "1700000200.000100"),
                                           "Ev0CMD0002")) == 200
        assert served.slack.wait_for_post(lambda p: p["channel"] == PUBLIC)["text"] == "I don't know that yet."
        # Nothing after the command: how to use it, to the caller alone, and no turn.
        asked = len(served.model.requests)
        assert command(served.url, served.slack, "  ", BOB, PUBLIC, trigger="4.5.6") == 200
        served.slack.wait_for(lambda calls: sum(1 for m, _ in calls if m == "response_url") == 2)
        usage = responses(served)[-1]
        assert usage["text"].startswith("Ask me something after the command") and usage["response_type"] == "ephemeral"
        assert len(served.model.requests) == asked
        # Slack cannot open the DM: the caller is told, and no turn runs.
        served.slack.fail_next("conversations.open", (200, {}, {"ok": False, "error": "user_disabled"}))
        assert command(served.url, served.slack, "remember that x", BOB, PUBLIC, trigger="7.8.9") == 200
        served.slack.wait_for(lambda calls: sum(1 for m, _ in calls if m == "response_url") == 3)
        assert responses(served)[-1]["text"].startswith("Sorry, I couldn't open our direct message")
        assert len(served.model.requests) == asked
        assert served.stop() == 0
    assert not [line for line in served.stderr if "Traceback" in line], "\n".join(served.stderr)
