"""The Bolt app end to end: signed events over HTTP, a local Slack Web API, a scripted model over the OpenAI wire.

Every test runs on SQLite and on Postgres (memory and the event log share the database). Bolt acknowledges each
event and runs its turn on a worker; the app here gets one worker, so events are handled in the order sent and a
"ping" answered last proves every event before it was handled.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import count
from typing import Any

import pytest
from junior_memory import MemoryPlugin
from junior_slack import EventLog, create_app, make_server
from junior_slack.app import MODEL_DOWN, SOMETHING_BROKE
from junior_slack.testing import BOT_ID, BOT_USER, TEAM, FakeSlack, command, dm, event_body, mention, send
from slack_helpers import Brain, manifest, manifest_scopes

from junior_core import Actor, Conversation, Message, Runtime, ToolContext, hookimpl
from junior_core.llm import model_from_spec
from junior_core.testing import ChatCompletionsServer

ALICE, BOB = "U0ALICE01", "U0BOB0001"
ALICE_DM, BOB_DM, PING_DM = "D0ALICE01", "D0BOB0001", "D0PING001"
PUBLIC, PRIVATE, GROUP_DM = "C0PUBLIC1", "C0PRIVATE", "G0GROUPDM"
# A Slack Connect channel, shared with another organisation, and a person of that organisation.
SHARED, PARTNER, PARTNER_TEAM = "C0SHARED1", "U0EXTERN1", "T0OTHER01"
# The scope each event subscription needs (Slack's event pages).
EVENT_SCOPES = {"app_mention": "app_mentions:read", "message.im": "im:history",
                "assistant_thread_started": "assistant:write", "assistant_thread_context_changed": "assistant:write"}


class Recorder:
    """Every turn ``after_turn`` saw, with its context."""

    junior_plugin_name = "recorder"

    def __init__(self) -> None:
        self.turns: list[tuple[ToolContext, list[Message]]] = []

    @hookimpl
    def after_turn(self, context: ToolContext, transcript: list[Message]) -> None:
        self.turns.append((context, list(transcript)))

    def in_channel(self, channel: str) -> list[list[Message]]:
        return [t for c, t in self.turns if c.conversation is not None and c.conversation.channel_id == channel]


class Clock:
    """The bot's clock, moved only by the scripted model: each model request takes 1.25 s."""

    def __init__(self) -> None:
        self.now = 1000.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds


@dataclass
class Bot:
    url: str
    slack: FakeSlack
    model: ChatCompletionsServer
    recorder: Recorder
    runtime: Runtime
    events: EventLog
    sleeps: list[float] = field(default_factory=list)  # every wait between two tries of a post
    ids: Any = field(default_factory=lambda: count(1))

    def event(self, event: dict[str, Any], **kwargs: Any) -> tuple[str, int]:
        event_id = f"Ev0{next(self.ids):08d}"
        return event_id, send(self.url, event_body(event, event_id), **kwargs)

    def ping(self) -> None:
        """Send a DM and wait for its answer: every event sent before it has been handled."""
        n = next(self.ids)
        before = len(self.posts_to(PING_DM))
        assert self.event(dm("U0PING001", PING_DM, f"ping {n}", f"17000{n:05d}.000900"))[1] == 200
        self.slack.wait_for_post(lambda p: p["channel"] == PING_DM, skip=before)

    def posts_to(self, channel: str) -> list[dict[str, Any]]:
        return [p for p in self.slack.posts() if p["channel"] == channel]

    def turns_started_with(self, text: str) -> int:
        """Model requests that open a turn on a user message containing ``text`` (later steps end in a tool)."""
        return sum(1 for body in self.model.requests
                   if body["messages"][-1]["role"] == "user" and text in body["messages"][-1]["content"])


@pytest.fixture(scope="module")
def stopping() -> Iterator[list[Any]]:
    """The bots' HTTP servers, each told to stop as its test ends and waited for once, here, at the module's end:
    uvicorn takes a tenth of a second or more to stop, which each test would otherwise wait out on its own."""
    servers: list[Any] = []
    yield servers
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def bot(db_url: str, monkeypatch: pytest.MonkeyPatch, stopping: list[Any]) -> Iterator[Bot]:
    slack = FakeSlack()
    slack.channels = {
        PUBLIC: {"id": PUBLIC, "is_channel": True, "is_private": False, "name": "general"},
        PRIVATE: {"id": PRIVATE, "is_channel": True, "is_private": True, "name": "ops"},
        GROUP_DM: {"id": GROUP_DM, "is_mpim": True, "is_private": True, "name": "mpdm-alice--bob-1"},
        SHARED: {"id": SHARED, "is_channel": True, "is_private": False, "is_shared": True, "is_ext_shared": True,
                 "name": "acme-partners"},
    }
    brain = Brain()
    clock = Clock()

    def timed(view: Any) -> Any:
        clock.advance(1.25)
        return brain.script(view)

    model = ChatCompletionsServer(timed, model="local")
    brain.server = model
    monkeypatch.setenv("SLACK_API_URL", slack.url)  # how `junior slack serve` points slack-sdk at a Web API
    recorder = Recorder()
    runtime = Runtime(plugins=[MemoryPlugin(url=db_url), recorder])
    listeners = ThreadPoolExecutor(1)
    events = EventLog(db_url)
    sleeps: list[float] = []
    app = create_app(runtime, model_from_spec(model.spec, env={}), events=events, token="xoxb-test-token",
                     signing_secret="8f742231b10e8888abcd99yyyzzz85a5", listener_executor=listeners,
                     clock=clock, sleep=sleeps.append)
    server = make_server(app, "127.0.0.1", 0, signing_secret="8f742231b10e8888abcd99yyyzzz85a5")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield Bot(f"http://127.0.0.1:{server.server_port}/slack/events", slack, model, recorder, runtime, events,
                  sleeps)
    finally:
        server.stop_soon()  # no request is under way: `send` returns once the event is answered
        stopping.append(server)
        listeners.shutdown(wait=True)  # a turn still running finishes before the database goes
        runtime.close()
        events.close()
        model.close()
        slack.close()


def test_a_dm_remembered_is_used_at_the_next_dm_message(bot: Bot) -> None:
    bot.event(dm(ALICE, ALICE_DM, "remember that deploys go through the release channel", "1700000100.000100"))
    saved = bot.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM)
    assert saved["text"] == "Saved (everyone in this direct message)." and "thread_ts" not in saved
    # A new top-level message of the same DM: its own timestamp, and the memory is recalled into the turn.
    bot.event(dm(ALICE, ALICE_DM, "how do we deploy?", "1700000200.000100"))
    used = bot.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM and p["text"] != saved["text"])
    assert used["text"] == 'From memory: "deploys go through the release channel"'
    # Negative control: another person's DM does not see it.
    bot.event(dm(BOB, BOB_DM, "how do we deploy?", "1700000300.000100"))
    assert bot.slack.wait_for_post(lambda p: p["channel"] == BOB_DM)["text"] == "I don't know that yet."
    assert bot.slack.count("conversations.info") == 0  # a DM says it is private in the event itself
    (first, _second) = bot.recorder.in_channel(ALICE_DM)
    assert [m.tool_name for m in first if m.role == "tool"] == ["searchTools", "memory__remember"]
    assert first[0].actor == Actor("slack", "T0TEAM001", ALICE)


def test_a_mention_in_a_public_thread_answers_in_that_thread_with_its_history(bot: Bot) -> None:
    parent = "1700000400.000100"
    bot.slack.threads[(PUBLIC, parent)] = [
        {"type": "message", "user": ALICE, "text": "the build is red", "ts": parent},
        {"type": "message", "user": BOB, "text": "since this morning", "ts": "1700000401.000100"},
        {"type": "message", "bot_id": "B0OTHER01", "subtype": "bot_message", "text": "CI: 3 failures",
         "ts": "1700000402.000100"},
        {"type": "message", "user": BOT_USER, "bot_id": BOT_ID, "text": "Looking.", "ts": "1700000403.000100"},
    ]
    bot.event(mention(BOB, PUBLIC, "what now?", "1700000404.000100", thread_ts=parent))
    reply = bot.slack.wait_for_post(lambda p: p["channel"] == PUBLIC)
    assert reply["thread_ts"] == parent and reply["text"] == "echo: what now? (after 2 earlier)"
    (transcript,) = bot.recorder.in_channel(PUBLIC)
    assert transcript[0].text == "what now?"  # the mention of the bot is stripped
    sent = bot.model.requests[-1]["messages"]
    assert [(m["role"], m["content"]) for m in sent[1:]] == [
        ("user", f"<@{ALICE}>: the build is red"), ("user", f"<@{BOB}>: since this morning"),
        ("assistant", "Looking."), ("user", f"<@{BOB}>: what now?")]
    # A top-level mention gets its answer in a new thread under it; the channel's visibility was asked once.
    bot.event(mention(ALICE, PUBLIC, "hello", "1700000500.000100"))
    top = bot.slack.wait_for_post(lambda p: p["channel"] == PUBLIC and p["thread_ts"] == "1700000500.000100")
    assert top["text"] == "echo: hello (after 0 earlier)"
    assert bot.slack.count("conversations.info") == 1
    context = bot.recorder.turns[-1][0]
    assert context.conversation == Conversation("slack", "T0TEAM001", PUBLIC, message_ts="1700000500.000100",
                                                visibility="public")


def test_a_private_channel_mention_is_private_and_its_memory_reaches_its_threads(bot: Bot) -> None:
    bot.event(mention(ALICE, PRIVATE, "remember that the ops rota is on the wiki", "1700000600.000100"))
    saved = bot.slack.wait_for_post(lambda p: p["channel"] == PRIVATE)
    assert saved["text"] == "Saved (everyone in this private conversation)."
    bot.event(mention(BOB, PRIVATE, "how do we find the rota?", "1700000700.000200", thread_ts="1700000700.000100"))
    used = bot.slack.wait_for_post(lambda p: p["channel"] == PRIVATE and p.get("thread_ts") == "1700000700.000100")
    assert used["text"] == 'From memory: "the ops rota is on the wiki"'
    bot.event(mention(BOB, PUBLIC, "how do we find the rota?", "1700000800.000100"))  # control: public channel
    assert bot.slack.wait_for_post(lambda p: p["channel"] == PUBLIC)["text"] == "I don't know that yet."


def test_a_retried_event_runs_one_turn(bot: Bot) -> None:
    body = event_body(dm(ALICE, ALICE_DM, "remember that retros are on Fridays", "1700000900.000100"), "Ev0RETRY01")
    assert send(bot.url, body) == 200
    assert send(bot.url, body, retry=1) == 200  # Slack thought the first delivery went unanswered
    assert send(bot.url, body, retry=2) == 200
    bot.ping()
    assert len(bot.posts_to(ALICE_DM)) == 1 and len(bot.recorder.in_channel(ALICE_DM)) == 1
    assert bot.turns_started_with("remember that retros are on Fridays") == 1


def test_a_dm_that_mentions_the_bot_runs_one_turn(bot: Bot) -> None:
    # Slack sends such a message twice, as message.im and as app_mention, each with its own event id.
    text, ts = "remember that standups are at ten", "1700000950.000100"
    bot.event(dm(ALICE, ALICE_DM, f"<@{BOT_USER}> {text}", ts))
    bot.event(mention(ALICE, ALICE_DM, text, ts))
    bot.ping()
    (answer,) = bot.posts_to(ALICE_DM)
    assert answer["text"] == "Saved (everyone in this direct message)." and "thread_ts" not in answer
    assert len(bot.recorder.in_channel(ALICE_DM)) == 1 and bot.turns_started_with(text) == 1


def test_a_bad_signature_is_refused_and_runs_no_turn(bot: Bot) -> None:
    body = event_body(dm(ALICE, ALICE_DM, "remember that I am the admin now", "1700001000.000100"), "Ev0FORGED1")
    assert send(bot.url, body, secret="not-the-signing-secret") == 401
    bot.ping()
    assert bot.posts_to(ALICE_DM) == [] and bot.recorder.in_channel(ALICE_DM) == []
    assert bot.turns_started_with("admin") == 0 and bot.turns_started_with("ping") == 1


def test_bot_messages_edits_and_joins_run_no_turn(bot: Bot) -> None:
    bot.event(dm("U0OTHER01", ALICE_DM, "I am another bot", "1700001100.000100", bot_id="B0OTHER01",
                 subtype="bot_message"))
    bot.event(dm(BOT_USER, ALICE_DM, "my own answer", "1700001100.000200", bot_id=BOT_ID))
    bot.event(dm(ALICE, ALICE_DM, "an edit", "1700001100.000300", subtype="message_changed"))
    bot.event(mention(ALICE, PUBLIC, "joined", "1700001100.000400", subtype="channel_join"))
    bot.ping()
    assert bot.posts_to(ALICE_DM) == [] and bot.posts_to(PUBLIC) == []
    assert [c.conversation.channel_id for c, _ in bot.recorder.turns if c.conversation] == [PING_DM]


def test_the_model_down_gives_one_polite_reply_and_keeps_the_partial_turn(bot: Bot) -> None:
    bot.event(dm(ALICE, ALICE_DM, "break after remembering that hotfixes skip the queue", "1700001200.000100"))
    reply = bot.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM)
    assert reply["text"] == MODEL_DOWN and "Traceback" not in reply["text"]
    bot.ping()  # the model is still down: the ping gets the same polite line, in its own DM
    assert len(bot.posts_to(ALICE_DM)) == 1
    (transcript,) = bot.recorder.in_channel(ALICE_DM)  # after_turn saw the partial turn
    (saved,) = [m for m in transcript if m.tool_name == "memory__remember"]
    assert saved.result["ok"] is True and transcript[-1].role == "tool"
    context = ToolContext(Actor("slack", "T0TEAM001", ALICE),
                          Conversation("slack", "T0TEAM001", ALICE_DM, message_ts="1700001300.000100",
                                       visibility="private"))
    listed = bot.runtime.execute_tool("memory__list", {}, context)["result"]["memories"]
    assert [m["content"] for m in listed] == ["hotfixes skip the queue"]


def test_the_manifest_asks_for_exactly_the_scopes_and_events_the_app_uses(bot: Bot) -> None:
    # The fake Web API grants only the manifest's scopes; every kind of conversation, top level and in a thread.
    sent = [
        dm(ALICE, ALICE_DM, "top level", "1700001400.000100"),
        dm(ALICE, ALICE_DM, "in a thread", "1700001400.000300", thread_ts="1700001400.000200"),
        mention(ALICE, PUBLIC, "in a thread", "1700001500.000200", thread_ts="1700001500.000100"),
        mention(ALICE, PRIVATE, "in a thread", "1700001600.000200", thread_ts="1700001600.000100"),
        mention(ALICE, GROUP_DM, "in a thread", "1700001700.000200", thread_ts="1700001700.000100"),
        *({"type": kind, "event_ts": "1700001800.000100",
           "assistant_thread": {"user_id": ALICE, "channel_id": ALICE_DM, "thread_ts": "1700001800.000050",
                                "context": {"channel_id": PUBLIC, "team_id": TEAM}}}
          for kind in ("assistant_thread_started", "assistant_thread_context_changed")),
    ]
    for event in sent:
        bot.event(event)
    assert command(bot.url, bot.slack, "top level", ALICE, PUBLIC) == 200
    bot.slack.wait_for(lambda calls: any(m == "response_url" for m, _ in calls))
    bot.ping()
    assert bot.slack.refused == []
    expected = {ALICE_DM: ["echo: top level", "echo: in a thread"], PUBLIC: ["echo: in a thread"],
                PRIVATE: ["echo: in a thread"], GROUP_DM: ["echo: in a thread"]}
    assert {c: [p["text"].split(" (")[0] for p in bot.posts_to(c)] for c in expected} == expected
    assert [(c.conversation.channel_id, c.conversation.visibility) for c, _ in bot.recorder.turns
            if c.conversation and c.conversation.channel_id != PING_DM] == [
        (ALICE_DM, "private"), (ALICE_DM, "private"), (PUBLIC, "public"), (PRIVATE, "private"), (GROUP_DM, "private"),
        (ALICE_DM, "private")]
    answered = {f"message.{e['channel_type']}" if e["type"] == "message" else e["type"] for e in sent}
    events = manifest()["settings"]["event_subscriptions"]["bot_events"]
    assert sorted(events) == sorted(answered)
    assert [c["command"] for c in manifest()["features"]["slash_commands"]] == ["/junior"]
    # `commands` is what lets Slack send the command at all; no Web API method checks it.
    assert bot.slack.used_scopes | {EVENT_SCOPES[e] for e in events} | {"commands"} == manifest_scopes()


def test_an_event_log_that_cannot_be_written_gives_one_polite_reply_and_no_turn(bot: Bot) -> None:
    bot.ping()  # the event log's table exists and is in use
    from sqlalchemy import text

    engine, _table = bot.events._ready()
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE junior_slack_events"))
    bot.event(mention(ALICE, PUBLIC, "remember that the queue is frozen", "1700001800.000200",
                      thread_ts="1700001800.000100"))
    reply = bot.slack.wait_for_post(lambda p: p["channel"] == PUBLIC)
    assert reply["text"] == SOMETHING_BROKE and reply["thread_ts"] == "1700001800.000100"
    # Without the log a retry could not be told from a new event, so no turn ran.
    assert bot.recorder.in_channel(PUBLIC) == [] and bot.turns_started_with("the queue is frozen") == 0


def partner_mention(channel: str, text: str, ts: str) -> dict[str, Any]:
    """A mention by a person of the other organisation, as Slack Connect delivers it: their team on the event."""
    return mention(PARTNER, channel, text, ts, team=PARTNER_TEAM, user_team=PARTNER_TEAM, source_team=PARTNER_TEAM)


def test_a_shared_channel_is_its_own_conversation_and_the_workspace_stays_outside(bot: Bot) -> None:
    bot.event(mention(ALICE, PUBLIC, "remember that deploys go out on Tuesdays", "1700002000.000100"))
    saved = bot.slack.wait_for_post(lambda p: p["channel"] == PUBLIC)
    assert saved["text"] == "Saved (everyone in this workspace's public channels)."
    # The workspace's knowledge is never recalled in the shared channel, to them or to us.
    bot.event(partner_mention(SHARED, "how do we deploy?", "1700002100.000100"))
    assert bot.slack.wait_for_post(lambda p: p["channel"] == SHARED)["text"] == "I don't know that yet."
    bot.event(mention(ALICE, SHARED, "how do we deploy?", "1700002150.000100"))
    assert bot.slack.wait_for_post(lambda p: p["channel"] == SHARED, skip=1)["text"] == "I don't know that yet."
    # What is said there stays there: keyed to the channel, not to the workspace.
    bot.event(partner_mention(SHARED, "remember that invoices go to the billing team by the fifth",
                              "1700002200.000100"))
    assert bot.slack.wait_for_post(lambda p: p["channel"] == SHARED, skip=2)["text"] == (
        "Saved (everyone in this private conversation).")
    bot.event(mention(BOB, PUBLIC, "how do we send invoices?", "1700002300.000100"))
    assert bot.slack.wait_for_post(lambda p: p["channel"] == PUBLIC, skip=1)["text"] == "I don't know that yet."
    bot.event(mention(BOB, SHARED, "how do we send invoices?", "1700002400.000100"))  # control: it was saved
    assert bot.slack.wait_for_post(lambda p: p["channel"] == SHARED, skip=3)["text"] == (
        'From memory: "invoices go to the billing team by the fifth"')
    # The partner speaks as a person of their own organisation, in a conversation of ours.
    (partner_context,) = [c for c, m in bot.recorder.turns if "invoices go to" in m[0].text]
    assert partner_context.actor == Actor("slack", PARTNER_TEAM, PARTNER)
    assert partner_context.conversation == Conversation("slack", TEAM, SHARED, message_ts="1700002200.000100",
                                                        visibility="private")


def test_each_sign_of_a_shared_channel_makes_it_private_on_its_own(bot: Bot) -> None:
    newly_shared = "C0NEWSHRD"  # conversations.info (cached, or not yet updated) still calls it public
    bot.slack.channels[newly_shared] = {"id": newly_shared, "is_channel": True, "is_private": False, "name": "new"}
    body = event_body(mention(ALICE, newly_shared, "the envelope says shared", "1700002500.000100"), "Ev0SHARE01")
    sent = [
        send(bot.url, event_body(mention(ALICE, PUBLIC, "an ordinary channel", "1700002500.000050"), "Ev0SHARE00")),
        send(bot.url, event_body(mention(ALICE, SHARED, "conversations.info says shared", "1700002500.000060"),
                                 "Ev0SHARE02")),
        send(bot.url, {**body, "is_ext_shared_channel": True}),
        send(bot.url, event_body(partner_mention(newly_shared, "a partner speaks", "1700002500.000200"),
                                 "Ev0SHARE03")),
    ]
    assert sent == [200] * 4
    bot.ping()
    seen = [(c.conversation.channel_id, c.conversation.visibility, m[-2].text if len(m) > 1 else m[0].text)
            for c, m in bot.recorder.turns if c.conversation and c.conversation.channel_id != PING_DM]
    assert sorted(seen) == sorted([
        (PUBLIC, "public", "an ordinary channel"), (SHARED, "private", "conversations.info says shared"),
        (newly_shared, "private", "the envelope says shared"), (newly_shared, "private", "a partner speaks"),
    ])


def test_an_event_for_another_team_is_not_answered_with_our_token(bot: Bot) -> None:
    other = event_body(mention(ALICE, PUBLIC, "answer me with their token", "1700002600.000100"), "Ev0OTHER01",
                       team=PARTNER_TEAM)
    assert send(bot.url, other) == 200  # acknowledged, as Slack expects, and nothing more
    # Control: an envelope naming the other team but authorized for this installation is answered.
    ours = {**event_body(mention(ALICE, PUBLIC, "answer me in the shared way", "1700002700.000100"), "Ev0OTHER02",
                         team=PARTNER_TEAM),
            "authorizations": [{"enterprise_id": None, "team_id": TEAM, "user_id": BOT_USER, "is_bot": True,
                                "is_enterprise_install": False}]}
    assert send(bot.url, ours) == 200
    bot.ping()
    assert [p["text"].split(" (")[0] for p in bot.posts_to(PUBLIC)] == ["echo: answer me in the shared way"]
    assert bot.turns_started_with("their token") == 0
    (context,) = [c for c, _ in bot.recorder.turns if c.conversation and c.conversation.channel_id == PUBLIC]
    assert context.conversation is not None and context.conversation.team_id == TEAM
    assert context.conversation.visibility == "private"  # the envelope's other team says the channel is shared


# -- watching it: a line per event, posts tried again ------------------------------------------------------------
def event_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    """(level, message) of each per-event line, in order."""
    return [(r.levelname, r.getMessage()) for r in caplog.records
            if r.name == "junior.slack" and r.getMessage().startswith("event ") and " outcome=" in r.getMessage()]


def line_of(caplog: pytest.LogCaptureFixture, event_id: str) -> tuple[str, str]:
    (line,) = [(level, text) for level, text in event_lines(caplog) if text.startswith(f"event {event_id} ")]
    return line


def test_each_event_gets_one_line_saying_where_it_came_from_and_what_became_of_it(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="junior.slack")
    answered = event_body(dm(ALICE, ALICE_DM, "hello", "1700003000.000100"), "Ev0LINE001")
    assert send(bot.url, answered) == 200
    assert send(bot.url, answered, retry=2) == 200  # Slack's second retry of it
    sent = {
        "Ev0LINE002": mention(ALICE, PUBLIC, "hi all", "1700003100.000100"),
        "Ev0LINE003": mention(ALICE, PRIVATE, "hi ops", "1700003200.000100"),
        "Ev0LINE004": partner_mention(SHARED, "hi partners", "1700003300.000100"),
        "Ev0LINE005": dm(ALICE, ALICE_DM, "an edit", "1700003400.000100", subtype="message_changed"),
        "Ev0LINE006": mention(ALICE, ALICE_DM, "in a DM", "1700003500.000100"),
    }
    for event_id, event in sent.items():
        assert send(bot.url, event_body(event, event_id)) == 200
    assert send(bot.url, event_body(mention(ALICE, PUBLIC, "theirs", "1700003600.000100"), "Ev0LINE007",
                                    team=PARTNER_TEAM)) == 200
    bot.ping()  # one worker: each event before it has been handled, and logged, by the time it is answered
    team = f"team={TEAM}"
    assert [line for line in event_lines(caplog) if PING_DM not in line[1]] == [
        ("INFO", f"event Ev0LINE001 {team} channel={ALICE_DM} kind=dm retry=0 outcome=answered took=1.250s"),
        ("INFO", f"event Ev0LINE001 {team} channel={ALICE_DM} kind=dm retry=2 outcome=duplicate took=0.000s"),
        ("INFO", f"event Ev0LINE002 {team} channel={PUBLIC} kind=public retry=0 outcome=answered took=1.250s"),
        ("INFO", f"event Ev0LINE003 {team} channel={PRIVATE} kind=private retry=0 outcome=answered took=1.250s"),
        ("INFO", f"event Ev0LINE004 {team} channel={SHARED} kind=shared retry=0 outcome=answered took=1.250s"),
        ("INFO", f"event Ev0LINE005 {team} channel={ALICE_DM} kind=dm retry=0 outcome=ignored "
                 "why=subtype:message_changed took=0.000s"),
        ("INFO", f"event Ev0LINE006 {team} channel={ALICE_DM} kind=dm retry=0 outcome=ignored why=dm-mention "
                 "took=0.000s"),
        ("WARNING", f"event Ev0LINE007 team={PARTNER_TEAM} channel={PUBLIC} kind=public retry=0 outcome=dropped "
                    "why=other-team took=0.000s"),
    ]


def test_a_turn_that_fails_is_a_warning_line_with_why(bot: Bot, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="junior.slack")
    assert send(bot.url, event_body(dm(ALICE, ALICE_DM, "break after remembering that the VPN is down",
                                       "1700003700.000100"), "Ev0DOWN001")) == 200
    assert bot.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM)["text"] == MODEL_DOWN
    bot.ping()  # its line is logged once its answer is posted
    level, text = line_of(caplog, "Ev0DOWN001")
    assert level == "WARNING" and " outcome=failed why=model-down " in text and "kind=dm retry=0" in text


def rate_limited(seconds: str) -> tuple[int, dict[str, str], dict[str, Any]]:
    return 429, {"Retry-After": seconds}, {"ok": False, "error": "ratelimited"}


def test_a_rate_limited_post_waits_as_long_as_slack_asks_and_is_posted(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="junior.slack")
    bot.slack.fail_next("chat.postMessage", rate_limited("7"), (503, {}, "upstream unavailable"))
    assert send(bot.url, event_body(dm(ALICE, ALICE_DM, "hello", "1700003800.000100"), "Ev0POST001")) == 200
    posted = bot.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM)
    assert posted["text"] == "echo: hello (after 0 earlier)"
    assert len(bot.slack.failed) == 2 and len(bot.posts_to(ALICE_DM)) == 1
    assert bot.sleeps == [7.0, 2.0]  # Retry-After, then the back-off of the second try
    bot.ping()
    assert line_of(caplog, "Ev0POST001")[1].endswith(" outcome=answered took=1.250s")
    tries = [r.getMessage() for r in caplog.records if r.getMessage().startswith("posting to")]
    assert tries == [f"posting to {ALICE_DM} (event Ev0POST001) failed: ratelimited (HTTP 429); trying again in 7 s",
                     f"posting to {ALICE_DM} (event Ev0POST001) failed: error (HTTP 503); trying again in 2 s"]


def test_a_post_that_keeps_failing_is_given_up_after_bounded_tries_in_one_line(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="junior.slack")
    bot.slack.fail_next("chat.postMessage", *[(500, {}, "oops")] * 4)
    assert send(bot.url, event_body(dm(ALICE, ALICE_DM, "hello", "1700003900.000100"), "Ev0POST002")) == 200
    bot.ping()
    assert bot.sleeps == [1.0, 2.0, 4.0] and len(bot.slack.failed) == 4 and bot.posts_to(ALICE_DM) == []
    given_up = [r for r in caplog.records if r.getMessage().startswith("could not post")]
    assert [(r.levelname, r.getMessage(), r.exc_info) for r in given_up] == [
        ("WARNING", f"could not post to {ALICE_DM} (event Ev0POST002) after 4 tries: error (HTTP 500)", None)]
    assert "Traceback" not in caplog.text
    assert line_of(caplog, "Ev0POST002") == (
        "WARNING", f"event Ev0POST002 team={TEAM} channel={ALICE_DM} kind=dm retry=0 outcome=failed why=post-failed "
                   "took=1.250s")
    # The turn ran: a retry of the event runs no second one.
    assert send(bot.url, event_body(dm(ALICE, ALICE_DM, "hello", "1700003900.000100"), "Ev0POST002"), retry=1) == 200
    bot.ping()
    assert bot.turns_started_with("hello") == 1


def test_a_post_slack_refuses_for_good_or_asks_to_wait_too_long_for_is_not_tried_again(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="junior.slack")
    bot.slack.fail_next("chat.postMessage", (200, {}, {"ok": False, "error": "not_in_channel"}), rate_limited("120"))
    bot.event(dm(ALICE, ALICE_DM, "first", "1700004000.000100"))
    bot.event(dm(ALICE, ALICE_DM, "second", "1700004100.000100"))
    bot.ping()
    assert bot.sleeps == [] and len(bot.slack.failed) == 2 and bot.posts_to(ALICE_DM) == []
    assert [r.getMessage().split(": ", 1)[1] for r in caplog.records if r.getMessage().startswith("could not post")] \
        == ["not_in_channel (HTTP 200)", "ratelimited (HTTP 429); Slack asked to wait 120 s, longer than 30 s"]


def test_the_system_prompt_says_what_kind_of_conversation_each_turn_is_in(bot: Bot) -> None:
    cases = [
        (PUBLIC, mention(ALICE, PUBLIC, "kind check one", "1700003000.000100"), "a public channel"),
        (PRIVATE, mention(ALICE, PRIVATE, "kind check two", "1700003000.000200"), "a private channel"),
        (GROUP_DM, mention(ALICE, GROUP_DM, "kind check three", "1700003000.000300"), "a private channel"),
        (ALICE_DM, dm(ALICE, ALICE_DM, "kind check four", "1700003000.000400"), "a direct message"),
        (SHARED, partner_mention(SHARED, "kind check five", "1700003000.000500"),
         "a channel shared with another organisation"),
    ]
    for channel, event, _ in cases:
        bot.event(event)
        bot.slack.wait_for_post(lambda p, channel=channel: p["channel"] == channel)  # type: ignore[misc]
    for _, event, kind in cases:
        text = event["text"].rsplit("> ", 1)[-1]
        (request,) = [r for r in bot.model.requests if r["messages"][-1]["content"].endswith(text)]
        system = request["messages"][0]["content"]
        assert f"This conversation is {kind}:" in system, (text, kind)
        assert re.search(r"Today is \w+day \d{4}-\d\d-\d\d \(UTC\)", system)
