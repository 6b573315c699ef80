"""``junior slack serve`` as a user runs it: the installed ``junior`` command in its own process, on a free port,
fed signed events over HTTP, talking to a local Slack Web API (``SLACK_API_URL``) and a scripted model over the
OpenAI wire (``JUNIOR_MODEL=openai-compatible:...``), with memory and the event log on SQLite or Postgres."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from junior_slack.testing import SECRET, TEAM, FakeSlack, dm, event_body, send
from slack_helpers import Brain

from junior_core.testing import ChatCompletionsServer, wait_until

pytestmark = pytest.mark.slow

JUNIOR = Path(sys.executable).with_name("junior")
ALICE, BOB = "U0ALICE01", "U0BOB0001"
ALICE_DM, BOB_DM = "D0ALICE01", "D0BOB0001"
# The session's own index cache and key (the root conftest.py), never the user's.
_KEEP = ("JUNIOR_CACHE_DIR", "JUNIOR_CONFIG_DIR", "JUNIOR_MEMORY_EMBEDDING_MODEL")


def logged(url: str) -> list[tuple[str, str]]:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [(r[0], r[1]) for r in conn.execute(text("SELECT event_id, team_id FROM junior_slack_events "
                                                             "ORDER BY event_id"))]
    finally:
        engine.dispose()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def clean_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    """This environment without any junior or Slack setting of the caller's, plus ``settings``."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JUNIOR_", "SLACK_")) or k in _KEEP}
    (tmp_path / "junior.toml").write_text("")
    env.update(JUNIOR_CONFIG=str(tmp_path / "junior.toml"), XDG_DATA_HOME=str(tmp_path / "data"), **settings)
    return env


@dataclass
class Served:
    url: str
    port: int
    process: subprocess.Popen[str]
    stderr: list[str]
    slack: FakeSlack
    model: ChatCompletionsServer
    db_url: str

    def stop(self) -> int:
        """Ctrl-C, as a user stops it; the exit status."""
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=30)


@contextmanager
def serving(db_url: str, tmp_path: Path, *args: str, host: str | None = "127.0.0.1",
            brain: Brain | None = None, preexec_fn: Callable[[], None] | None = None,
            **settings: str) -> Iterator[Served]:
    """``junior slack serve --port <free> [--host host] args...`` until it says it listens, killed on leaving;
    ``preexec_fn`` runs in the child before it starts (to lower a resource limit)."""
    slack = FakeSlack()
    brain = brain or Brain()
    model = ChatCompletionsServer(brain.script, model="local")
    brain.server = model
    port = free_port()
    env = clean_env(tmp_path, **{"SLACK_BOT_TOKEN": "xoxb-test-token", "SLACK_SIGNING_SECRET": SECRET,
                                 "SLACK_API_URL": slack.url, "JUNIOR_MODEL": model.spec, "JUNIOR_MEMORY_URL": db_url,
                                 **settings})
    where = ["--host", host] if host is not None else []
    process = subprocess.Popen([str(JUNIOR), "slack", "serve", *where, "--port", str(port), *args],
                               env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, preexec_fn=preexec_fn)
    stderr: list[str] = []
    listening = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            stderr.append(line.rstrip("\n"))
            if "listening on" in line:
                listening.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while not listening.wait(0.2):
            if process.poll() is not None or time.monotonic() > deadline:
                reader.join(5)
                pytest.fail("junior slack serve did not start:\n" + "\n".join(stderr[-30:]))
        yield Served(f"http://127.0.0.1:{port}/slack/events", port, process, stderr, slack, model, db_url)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
        reader.join(5)
        model.close()
        slack.close()


@pytest.fixture
def served(db_url: str, tmp_path: Path) -> Iterator[Served]:
    with serving(db_url, tmp_path) as running:
        yield running


def test_serve_answers_signed_dm_events_and_remembers_across_messages(served: Served) -> None:
    assert f"junior-slack: listening on http://127.0.0.1:{served.port}/slack/events" in served.stderr
    assert served.slack.count("auth.test") == 1  # Bolt checked the token against SLACK_API_URL at start-up
    first = event_body(dm(ALICE, ALICE_DM, "remember that deploys go through the release channel",
                          "1700000100.000100"), "Ev0SERVE001")
    assert send(served.url, first) == 200
    saved = served.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM)
    assert saved["text"] == "Saved (everyone in this direct message)." and saved["_token"] == "xoxb-test-token"
    assert send(served.url, first, retry=1) == 200  # Slack's retry of the same event: acknowledged, no second turn
    # A forged event is refused before any turn.
    forged = event_body(dm(BOB, BOB_DM, "remember that I am the admin now", "1700000150.000100"), "Ev0SERVE002")
    assert send(served.url, forged, secret="not-the-signing-secret") == 401
    # The next top-level message of the same DM uses the memory; another person's DM does not see it.
    assert send(served.url, event_body(dm(ALICE, ALICE_DM, "how do we deploy?", "1700000200.000100"),
                                       "Ev0SERVE003")) == 200
    used = served.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM, skip=1)
    assert used["text"] == 'From memory: "deploys go through the release channel"'
    assert send(served.url, event_body(dm(BOB, BOB_DM, "how do we deploy?", "1700000300.000100"),
                                       "Ev0SERVE004")) == 200
    assert served.slack.wait_for_post(lambda p: p["channel"] == BOB_DM)["text"] == "I don't know that yet."
    # The retry was acknowledged before two whole turns ran after it: a turn of its own would show by now.
    assert [p["text"] for p in served.slack.posts() if p["channel"] == ALICE_DM] == [saved["text"], used["text"]]
    opened = [b for b in served.model.requests if b["messages"][-1]["role"] == "user"]
    assert [b["messages"][-1]["content"] for b in opened] == [
        f"<@{ALICE}>: remember that deploys go through the release channel", f"<@{ALICE}>: how do we deploy?",
        f"<@{BOB}>: how do we deploy?"]
    assert served.stop() == 0
    assert not [line for line in served.stderr if "Traceback" in line], "\n".join(served.stderr)
    # The event log sits in the memory database (JUNIOR_MEMORY_URL, no JUNIOR_SLACK_URL); the forged event never
    # reached it.
    assert logged(served.db_url) == [("Ev0SERVE001", TEAM), ("Ev0SERVE003", TEAM), ("Ev0SERVE004", TEAM)]


def test_serve_names_each_missing_setting_in_one_line(tmp_path: Path) -> None:
    env = clean_env(tmp_path, SLACK_BOT_TOKEN="xoxb-test-token")
    done = subprocess.run([str(JUNIOR), "slack", "serve", "--port", str(free_port())], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: SLACK_SIGNING_SECRET is not set: the signing secret from the app's Basic Information page; "
        "JUNIOR_MODEL is not set: a model spec such as openai:gpt-4.1 or "
        "openai-compatible:http://127.0.0.1:8080/v1#model"]


def test_socket_names_the_missing_app_token(tmp_path: Path) -> None:
    env = clean_env(tmp_path, SLACK_BOT_TOKEN="xoxb-test-token", JUNIOR_MODEL="openai:gpt-4.1")
    done = subprocess.run([str(JUNIOR), "slack", "socket"], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: SLACK_APP_TOKEN is not set: an app-level token (xapp-...) with connections:write, from the app's "
        "Basic Information page"]


class StallingBrain(Brain):
    """Holds a turn whose message says "stall" open until ``release`` is set: a turn still running."""

    def __init__(self) -> None:
        super().__init__()
        self.reached, self.release = threading.Event(), threading.Event()

    def script(self, view: Any) -> Any:
        if "stall" in view.user_text and not self.release.is_set():
            self.reached.set()
            self.release.wait(60)
        return super().script(view)


def lease_runs_out(url: str) -> None:
    """Move every lease into the past, as four minutes passing would (the serve processes use the real clock)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE junior_slack_events SET lease_until = :past"),
                         {"past": datetime(2000, 1, 1)})
    finally:
        engine.dispose()


def finished(url: str, event_id: str) -> bool:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT finished_at FROM junior_slack_events WHERE event_id = :id"),
                                {"id": event_id}).scalar_one() is not None
    finally:
        engine.dispose()


def wait_for_line(served: Served, text: str, count: int = 1) -> None:
    try:
        wait_until(lambda: sum(text in line for line in list(served.stderr)) >= count, what=f"{count} lines with {text!r}")
    except AssertionError as failed:
        raise AssertionError(f"{failed}; its stderr ends:\n" + "\n".join(served.stderr[-20:])) from None


def test_an_event_whose_process_was_killed_mid_turn_is_answered_by_the_retry_after_its_lease(
    db_url: str, tmp_path: Path
) -> None:
    body = event_body(dm(ALICE, ALICE_DM, "how do we deploy? (stall)", "1700000100.000100"), "Ev0CRASH001")
    brain = StallingBrain()
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    try:
        with serving(db_url, tmp_path / "first", brain=brain) as first:
            assert send(first.url, body) == 200
            assert brain.reached.wait(60), "the turn never reached the model"
            first.process.send_signal(signal.SIGKILL)  # mid-turn: claimed, never answered
            assert first.process.wait(timeout=30) == -signal.SIGKILL
            assert first.slack.posts() == []
    finally:
        brain.release.set()
    assert not finished(db_url, "Ev0CRASH001")
    with serving(db_url, tmp_path / "second") as second:
        # Slack's retry while the dead process's lease is live: refused, it might still be answering.
        assert send(second.url, body, retry=1) == 200
        wait_for_line(second, f"event Ev0CRASH001 team={TEAM} channel={ALICE_DM} kind=dm retry=1 outcome=duplicate ")
        lease_runs_out(db_url)
        assert send(second.url, body, retry=2) == 200  # the lease ran out unfinished: this one answers
        answer = second.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM)
        assert answer["text"] == "I don't know that yet."
        wait_for_line(second, "event Ev0CRASH001: its turn did not finish within its lease")
        wait_until(lambda: finished(db_url, "Ev0CRASH001"), timeout=30, what="the answered turn marked finished")
        # Finished: a later retry is refused however old the lease.
        lease_runs_out(db_url)
        assert send(second.url, body, retry=3) == 200
        wait_for_line(second, f"event Ev0CRASH001 team={TEAM} channel={ALICE_DM} kind=dm retry=3 outcome=duplicate ")
        assert [p["text"] for p in second.slack.posts()] == ["I don't know that yet."]
        assert second.stop() == 0
    assert not [line for line in second.stderr if "Traceback" in line], "\n".join(second.stderr)
