"""``junior slack serve`` as an admin watches it, in its own process: quiet at start, one timestamped line per
event, ``/healthz``, the event lease it is told, and SIGTERM finishing the turns under way within a grace period."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from junior_slack.app import STOPPED
from junior_slack.testing import TEAM, dm, event_body, send
from test_serve_command import (
    ALICE,
    ALICE_DM,
    JUNIOR,
    StallingBrain,
    clean_env,
    finished,
    free_port,
    serving,
    wait_for_line,
)

from junior_core.testing import wait_until

pytestmark = pytest.mark.slow

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


def http(port: int, path: str, method: str = "GET") -> tuple[int, bytes]:
    """An unsigned request: the status and the body."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                     data=b"{}" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), response.read()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read()


def no_traceback(lines: list[str]) -> None:
    assert not [line for line in lines if "Traceback" in line], "\n".join(lines)


def test_serve_starts_quietly_logs_each_event_in_a_timestamped_line_and_answers_healthz(
    db_url: str, tmp_path: Path
) -> None:
    with serving(db_url, tmp_path) as served:
        # Nothing before it says where it listens: no warning from Bolt about the token, nothing else.
        assert served.stderr[0] == f"junior-slack: listening on http://127.0.0.1:{served.port}/slack/events"
        assert http(served.port, "/healthz") == (200, b"ok\n")  # no signature needed
        assert http(served.port, "/healthz", "HEAD") == (200, b"")
        assert http(served.port, "/healthz", "POST")[0] == 405
        body = event_body(dm(ALICE, ALICE_DM, "how do we deploy?", "1700000100.000100"), "Ev0WATCH01")
        assert send(served.url, body) == 200
        assert served.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM)["text"] == "I don't know that yet."
        wait_for_line(served, "retry=0 outcome=answered")  # logged once the answer is posted
        assert send(served.url, body, retry=1) == 200
        wait_for_line(served, "retry=1 outcome=duplicate")
        assert served.stop() == 0
    no_traceback(served.stderr)
    logged = served.stderr[1:]
    assert logged, "nothing was logged"
    assert [line for line in logged if not re.match(STAMP + " (INFO|WARNING|ERROR) ", line)] == []
    where = f"team={TEAM} channel={ALICE_DM} kind=dm"
    assert [re.sub(STAMP, "<time>", re.sub(r"took=\d+\.\d{3}s", "took=<s>", line)) for line in logged] == [
        f"<time> INFO junior.slack: event Ev0WATCH01 {where} retry=0 outcome=answered took=<s>",
        f"<time> INFO junior.slack: event Ev0WATCH01 {where} retry=1 outcome=duplicate took=<s>",
        "<time> INFO junior.slack: stopping (SIGINT): no turn under way",
        "<time> INFO junior.slack: stopped: every turn finished",
    ]


def test_a_log_level_chosen_for_junior_is_kept_and_still_timestamped(db_url: str, tmp_path: Path) -> None:
    with serving(db_url, tmp_path, JUNIOR_LOG_LEVEL="WARNING") as served:
        assert send(served.url, event_body(dm(ALICE, ALICE_DM, "hello", "1700000100.000100"), "Ev0LEVEL01")) == 200
        served.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM)
        other = event_body(dm(ALICE, ALICE_DM, "hello", "1700000200.000100"), "Ev0LEVEL02", team="T0OTHER01")
        assert send(served.url, other) == 200
        wait_for_line(served, "Ev0LEVEL02")
        assert served.stop() == 0
    logged = served.stderr[1:]
    assert len(logged) == 1 and re.fullmatch(
        STAMP + r" WARNING junior.slack: event Ev0LEVEL02 team=T0OTHER01 channel=D0ALICE01 kind=dm retry=0 "
                r"outcome=dropped why=other-team took=\d+\.\d{3}s", logged[0]), logged


def test_sigterm_lets_the_turn_under_way_finish_then_stops(db_url: str, tmp_path: Path) -> None:
    brain = StallingBrain()
    try:
        with serving(db_url, tmp_path, brain=brain) as served:
            assert send(served.url, event_body(dm(ALICE, ALICE_DM, "how do we deploy? (stall)",
                                                  "1700000100.000100"), "Ev0TERM001")) == 200
            assert brain.reached.wait(60), "the turn never reached the model"
            served.process.send_signal(signal.SIGTERM)
            wait_for_line(served, "stopping (SIGTERM): waiting up to 25 s for 1 turn under way")
            # It takes nothing new while it finishes, and has not stopped.
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection(("127.0.0.1", served.port), timeout=5).close()
            assert served.process.poll() is None and served.slack.posts() == []
            brain.release.set()
            assert served.process.wait(timeout=60) == 0
            answer = served.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM, timeout=5)
            assert answer["text"] == "I don't know that yet."
    finally:
        brain.release.set()
    assert finished(db_url, "Ev0TERM001")
    assert any(re.search(r"event Ev0TERM001 .* outcome=answered ", line) for line in served.stderr)
    assert served.stderr[-1].endswith(" INFO junior.slack: stopped: every turn finished")
    no_traceback(served.stderr)


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


@pytest.mark.parametrize("cut", ["grace", "second signal", "second signal while it stops"])
def test_sigterm_gives_up_a_turn_that_outlasts_the_grace_and_tells_the_person(
    db_url: str, tmp_path: Path, cut: str
) -> None:
    brain = StallingBrain()
    grace = "1" if cut == "grace" else "120"
    try:
        with serving(db_url, tmp_path, "--grace", grace, "--read-timeout", "5", brain=brain) as served:
            assert send(served.url, event_body(dm(ALICE, ALICE_DM, "how do we deploy? (stall)",
                                                  "1700000100.000100"), "Ev0TERM002")) == 200
            assert brain.reached.wait(60), "the turn never reached the model"
            # A request still being sent: the server, stopping, waits for it (up to the read timeout).
            with socket.create_connection(("127.0.0.1", served.port), timeout=30) as stalled:
                stalled.sendall(b"POST /slack/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
                served.process.send_signal(signal.SIGTERM)
                if cut == "second signal while it stops":
                    # The first signal was taken: it is stopping.
                    wait_until(lambda: refused(served.port), timeout=30, what="it to stop accepting")
                    served.process.send_signal(signal.SIGTERM)
                elif cut == "second signal":  # the supervisor, or the person at Ctrl-C, will not wait out the grace
                    wait_for_line(served, "stopping (SIGTERM): waiting up to 120 s for 1 turn under way")
                    served.process.send_signal(signal.SIGTERM)
                assert served.process.wait(timeout=60) == 1
            assert [p["text"] for p in served.slack.posts()] == [STOPPED]
    finally:
        brain.release.set()
    assert not finished(db_url, "Ev0TERM002")  # a later delivery after its lease runs it
    after = "the 1 s grace" if cut == "grace" else "a second signal"  # never the default action of SIGTERM
    assert served.stderr[-1].endswith(
        f" WARNING junior.slack: stopped with 1 turn unfinished after {after} (events Ev0TERM002); each person "
        "was told to ask again")
    no_traceback(served.stderr)


def test_the_lease_option_sets_the_event_claim_lease(db_url: str, tmp_path: Path) -> None:
    from sqlalchemy import create_engine, text

    with serving(db_url, tmp_path, "--lease", "90") as served:
        assert send(served.url, event_body(dm(ALICE, ALICE_DM, "hello", "1700000100.000100"), "Ev0LEASE01")) == 200
        served.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM)
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            received, until = conn.execute(text("SELECT received_at, lease_until FROM junior_slack_events "
                                                "WHERE event_id = 'Ev0LEASE01'")).one()
    finally:
        engine.dispose()
    # SQLite gives the text it stores, Postgres a datetime.
    received, until = (v if isinstance(v, datetime) else datetime.fromisoformat(v) for v in (received, until))
    assert until - received == timedelta(seconds=90)


@pytest.mark.parametrize("value", ["0", "3601", "soon"])
def test_a_lease_out_of_range_is_refused_before_anything_starts(tmp_path: Path, value: str) -> None:
    env = clean_env(tmp_path, SLACK_BOT_TOKEN="xoxb-test-token", SLACK_SIGNING_SECRET="secret",
                    JUNIOR_MODEL="openai:gpt-4.1")
    done = subprocess.run([str(JUNIOR), "slack", "serve", "--port", str(free_port()), "--lease", value], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    expected = ("'soon' is not a valid integer range" if value == "soon" else f"{value} is not in the range 1<=x<=3600")
    assert done.stderr.strip().splitlines()[-1] == f"Error: Invalid value for '--lease': {expected}."
