"""Assistant threads and the status while a turn works, on the real ``junior slack serve`` process: signed events
over HTTP, the local Web API stand-in, and the scripted model over the OpenAI wire."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from junior_slack.testing import TEAM, dm, event_body, mention, send
from test_serve_command import Served, serving, wait_for_line

pytestmark = pytest.mark.slow

ALICE, ALICE_DM = "U0ALICE01", "D0ALICE01"
PUBLIC = "C0PUBLIC1"
THREAD = "1700000100.000050"
STATUSES_OF_A_REMEMBER = ["is thinking…", "is searching tools…", "is running memory__remember…", ""]


def thread_event(kind: str, channel: str, thread_ts: str, viewing: str, ts: str) -> dict[str, Any]:
    """An ``assistant_thread_started`` or ``assistant_thread_context_changed`` event, as Slack sends it."""
    return {"type": kind, "event_ts": ts,
            "assistant_thread": {"user_id": ALICE, "channel_id": channel, "thread_ts": thread_ts,
                                 "context": {"channel_id": viewing, "team_id": TEAM, "enterprise_id": None}}}


def statuses(served: Served, channel: str) -> list[str]:
    return [p["status"] for p in served.slack.of("assistant.threads.setStatus") if p["channel_id"] == channel]


def calls_in(served: Served, channel: str) -> list[str]:
    """The Web API methods called about ``channel``, in order (status, posts, titles...)."""
    return [m for m, p in served.slack.calls if channel in (p.get("channel"), p.get("channel_id"))
            and m != "conversations.replies"]


def wait_until_cleared(served: Served, channel: str, count: int = 1) -> None:
    served.slack.wait_for(lambda calls: sum(1 for m, p in calls if m == "assistant.threads.setStatus"
                                            and p["channel_id"] == channel and p["status"] == "") >= count)


@pytest.fixture
def served(db_url: str, tmp_path: Path) -> Any:
    with serving(db_url, tmp_path) as running:
        yield running


def test_an_assistant_thread_gets_prompts_a_title_and_a_status_per_tool_and_keeps_dm_memory(served: Served) -> None:
    started = thread_event("assistant_thread_started", ALICE_DM, THREAD, PUBLIC, "1700000100.000060")
    assert send(served.url, event_body(started, "Ev0ASSIST01")) == 200
    served.slack.wait_for(lambda calls: any(m == "assistant.threads.setSuggestedPrompts" for m, _ in calls))
    (prompts,) = served.slack.of("assistant.threads.setSuggestedPrompts")
    assert prompts["channel_id"] == ALICE_DM and prompts["thread_ts"] == THREAD
    assert [p["title"] for p in prompts["prompts"]] == ["What can you do?", "Remember something",
                                                         "What do you remember?"]
    # The first message: the thread's title, a status per tool call (names only), then the answer and a clear.
    first = dm(ALICE, ALICE_DM, "remember that deploys go through the release channel",
               "1700000110.000100", thread_ts=THREAD)
    assert send(served.url, event_body(first, "Ev0ASSIST02")) == 200
    wait_until_cleared(served, ALICE_DM)
    assert statuses(served, ALICE_DM) == STATUSES_OF_A_REMEMBER
    assert all("deploy" not in status for status in statuses(served, ALICE_DM))  # no argument leaks
    (titled,) = served.slack.of("assistant.threads.setTitle")
    assert (titled["channel_id"], titled["thread_ts"], titled["title"]) == (
        ALICE_DM, THREAD, "remember that deploys go through the release channel")
    (saved,) = [p for p in served.slack.posts() if p["channel"] == ALICE_DM]
    # Viewing a public channel never widens memory: what was saved is this DM's.
    assert saved["thread_ts"] == THREAD and saved["text"] == "Saved (everyone in this direct message)."
    assert calls_in(served, ALICE_DM)[-3:] == ["assistant.threads.setStatus", "chat.postMessage",
                                               "assistant.threads.setStatus"]
    system = served.model.requests[0]["messages"][0]["content"]
    assert f"viewing the Slack channel <#{PUBLIC}>" in system
    # The person moves to another channel: the next turn is told so; no second title.
    moved = thread_event("assistant_thread_context_changed", ALICE_DM, THREAD, "C0OTHER01", "1700000120.000060")
    assert send(served.url, event_body(moved, "Ev0ASSIST03")) == 200
    wait_for_line(served, f"event Ev0ASSIST03 team={TEAM} channel={ALICE_DM} kind=dm retry=0 outcome=noted ")
    second = dm(ALICE, ALICE_DM, "how do we deploy?", "1700000130.000100", thread_ts=THREAD)
    assert send(served.url, event_body(second, "Ev0ASSIST04")) == 200
    used = served.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM, skip=1)
    assert used["text"] == 'From memory: "deploys go through the release channel"'
    wait_until_cleared(served, ALICE_DM, count=2)
    assert "viewing the Slack channel <#C0OTHER01>" in served.model.requests[-1]["messages"][0]["content"]
    assert len(served.slack.of("assistant.threads.setTitle")) == 1
    assert served.stop() == 0
    lines = [line for line in served.stderr if "event Ev0ASSIST01" in line]
    assert len(lines) == 1 and f"team={TEAM} channel={ALICE_DM} kind=dm retry=0 outcome=welcomed" in lines[0]
    assert not [line for line in served.stderr if "Traceback" in line], "\n".join(served.stderr)


def test_the_status_is_cleared_when_the_model_goes_down_mid_turn(served: Served) -> None:
    started = thread_event("assistant_thread_started", ALICE_DM, THREAD, PUBLIC, "1700000100.000060")
    assert send(served.url, event_body(started, "Ev0ASSIST11")) == 200
    broken = dm(ALICE, ALICE_DM, "break after remembering that the wiki moved", "1700000110.000100",
                thread_ts=THREAD)
    assert send(served.url, event_body(broken, "Ev0ASSIST12")) == 200
    wait_until_cleared(served, ALICE_DM)
    assert statuses(served, ALICE_DM) == STATUSES_OF_A_REMEMBER
    (sorry,) = [p for p in served.slack.posts() if p["channel"] == ALICE_DM]
    assert sorry["text"].startswith("Sorry, I couldn't finish answering")
    assert calls_in(served, ALICE_DM)[-2:] == ["chat.postMessage", "assistant.threads.setStatus"]


def test_a_mention_shows_a_status_on_its_thread_and_one_slack_refuses_stops_quietly(served: Served) -> None:
    served.slack.channels[PUBLIC] = {"id": PUBLIC, "is_channel": True, "is_private": False, "name": "general"}
    assert send(served.url, event_body(mention(ALICE, PUBLIC, "hello", "1700000200.000100"), "Ev0ASSIST21")) == 200
    wait_until_cleared(served, PUBLIC)
    assert [(p["thread_ts"], p["status"]) for p in served.slack.of("assistant.threads.setStatus")] == [
        ("1700000200.000100", "is thinking…"), ("1700000200.000100", "")]
    # Slack refuses the status on this thread: no further try in the turn, and the answer still comes.
    served.slack.fail_next("assistant.threads.setStatus", (200, {}, {"ok": False, "error": "channel_not_found"}))
    again = mention(ALICE, PUBLIC, "remember that the build queue is frozen", "1700000300.000100")
    assert send(served.url, event_body(again, "Ev0ASSIST22")) == 200
    reply = served.slack.wait_for_post(lambda p: p["channel"] == PUBLIC and p["thread_ts"] == "1700000300.000100")
    assert reply["text"].startswith("Saved (")  # two tool calls ran, with no status shown for them
    assert len(served.slack.failed) == 1 and len(served.slack.of("assistant.threads.setStatus")) == 2
    assert served.stop() == 0
    assert not [line for line in served.stderr if "Traceback" in line], "\n".join(served.stderr)


def test_the_suggested_prompts_are_the_ones_configured(db_url: str, tmp_path: Path) -> None:
    chosen = '["Summarise this channel", {"title": "Remember", "message": "Remember that "}]'
    with serving(db_url, tmp_path, JUNIOR_SLACK_PROMPTS=chosen) as running:
        started = thread_event("assistant_thread_started", ALICE_DM, THREAD, PUBLIC, "1700000100.000060")
        assert send(running.url, event_body(started, "Ev0ASSIST31")) == 200
        running.slack.wait_for(lambda calls: any(m == "assistant.threads.setSuggestedPrompts" for m, _ in calls))
        (prompts,) = running.slack.of("assistant.threads.setSuggestedPrompts")
        assert prompts["prompts"] == [{"title": "Summarise this channel", "message": "Summarise this channel"},
                                      {"title": "Remember", "message": "Remember that "}]


def test_prompts_that_are_not_a_list_of_prompts_stop_the_start_with_one_line(tmp_path: Path) -> None:
    import subprocess

    from test_serve_command import JUNIOR, clean_env, free_port

    env = clean_env(tmp_path, SLACK_BOT_TOKEN="xoxb-test-token", SLACK_SIGNING_SECRET="s", JUNIOR_MODEL="openai:x",
                    OPENAI_API_KEY="k", JUNIOR_SLACK_PROMPTS='{"title": "one"}')
    done = subprocess.run([str(JUNIOR), "slack", "serve", "--port", str(free_port())], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: JUNIOR_SLACK_PROMPTS: give a JSON list of at most 4 prompts (Slack shows no more)"]
