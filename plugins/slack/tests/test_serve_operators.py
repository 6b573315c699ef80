"""What ``junior slack serve`` tells its operator: refusals logged at WARNING at a bounded rate, a wrong signing
secret named once, Slack out of reach at start in one line; and the rate limits themselves on an injected clock."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
from junior_slack.server import SIGNATURE_RUN, LogLimit, _loop_errors, asgi_app
from junior_slack.testing import SECRET, dm, event_body, send
from test_serve_command import ALICE, ALICE_DM, JUNIOR, clean_env, free_port, serving
from test_serve_open_port import answered, exchange, no_traceback, read_to_close, request, status

from junior_core.testing import ManualClock

pytestmark = pytest.mark.slow

WRONG = "a-secret-from-another-app-000000"


def test_a_wrong_signing_secret_is_named_once_and_each_kind_of_refusal_is_a_bounded_warning(
    db_url: str, tmp_path: Path
) -> None:
    with serving(db_url, tmp_path, "--read-timeout", "1") as served:
        for n in range(20):  # every event Slack sends, signed with a secret this server does not have
            body = event_body(dm(ALICE, ALICE_DM, f"hello {n}", f"1700000{n:03d}.000100"), f"Ev0WRONG{n:03d}")
            assert send(served.url, body, secret=WRONG) == 401
        assert status(exchange(served.port, request(b"", length=30 * 1024 * 1024))) == 413
        with socket.create_connection(("127.0.0.1", served.port), timeout=30) as stalled:
            stalled.sendall(request(b'{"type": ', length=2000))  # a body that never finishes
            assert status(read_to_close(stalled)) == 408
        answered(served, "Ev0REAL0001", "1700000200.000100")  # a correctly signed one still gets its answer
    lines = served.stderr
    named = [line for line in lines if "check SLACK_SIGNING_SECRET" in line]
    assert len(named) == 1 and " ERROR junior.slack: " in named[0], "\n".join(lines)
    assert f"the last {SIGNATURE_RUN} requests signed as Slack signs them all failed" in named[0]
    refused = [line for line in lines if "refused POST /slack/events from 127.0.0.1: invalid request signature "
                                         "(401)" in line]
    assert 1 <= len(refused) <= 6 and all(" WARNING junior.slack: " in line for line in refused), "\n".join(lines)
    assert [line.split("junior.slack: ", 1)[1] for line in lines if "(413)" in line] == [
        "refused POST /slack/events from 127.0.0.1: request body too large (413)"]
    assert [line.split(" ", 1)[1] for line in lines if "(408)" in line] == [
        "WARNING junior.slack: refused POST /slack/events from 127.0.0.1: request body not sent in time (408)"]
    no_traceback(lines)


def test_slack_out_of_reach_at_start_is_one_error_line(tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        api = f"http://127.0.0.1:{closed.getsockname()[1]}/api/"
        env = clean_env(tmp_path, SLACK_BOT_TOKEN="xoxb-test-token", SLACK_SIGNING_SECRET=SECRET,
                        SLACK_API_URL=api, JUNIOR_MODEL="openai-compatible:http://127.0.0.1:9/v1#local")
        done = subprocess.run([str(JUNIOR), "slack", "serve", "--port", str(free_port())], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"Error: cannot reach Slack at {api} to check SLACK_BOT_TOKEN (auth.test): Connection refused"]


# -- the rate limits, on a clock the test moves -------------------------------------------------------------------


def call(application: Any, headers: list[tuple[bytes, bytes]], body: bytes) -> int:
    """One ``POST /slack/events`` through the ASGI application; its status."""
    sent: list[dict[str, Any]] = []
    scope = {"type": "http", "method": "POST", "path": "/slack/events", "query_string": b"",
             "headers": [(b"content-length", b"%d" % len(body)), *headers], "client": ("192.0.2.7", 50000)}
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def respond(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(application(scope, receive, respond))
    return int(sent[0]["status"])


def test_refusals_are_logged_at_most_five_at_once_then_one_each_ten_seconds_with_a_count_of_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from slack_bolt import App

    clock = ManualClock(1000.0)
    app = App(token="xoxb-test-token", signing_secret=SECRET, token_verification_enabled=False)
    application = asgi_app(app, SECRET, clock=clock.now)
    body = json.dumps({"type": "event_callback"}).encode()
    caplog.set_level(logging.WARNING, logger="junior.slack")
    for _ in range(12):
        assert call(application, [], body) == 401
    lines = [r.getMessage() for r in caplog.records if r.name == "junior.slack"]
    unsigned = ("refused POST /slack/events from 192.0.2.7: invalid request signature (no X-Slack-Signature and "
                "X-Slack-Request-Timestamp) (401)")
    assert lines == [unsigned] * 5
    assert all(r.levelno == logging.WARNING for r in caplog.records)
    caplog.clear()
    clock.advance(9.9)
    assert call(application, [], body) == 401
    assert caplog.records == []
    clock.advance(0.1)  # ten seconds: one more line, which counts those held back
    assert call(application, [], body) == 401
    assert [r.getMessage() for r in caplog.records] == [f"{unsigned} (and 8 more like this since, not logged)"]
    # Unsigned requests are not Slack's: however many, SLACK_SIGNING_SECRET is not blamed.
    assert not [r for r in caplog.records if "SLACK_SIGNING_SECRET" in r.getMessage()]


def test_a_run_of_failed_signatures_is_said_once_until_a_valid_one_arrives_and_stale_ones_name_the_clock(caplog: pytest.LogCaptureFixture) -> None:
    import time

    from slack_bolt import App
    from slack_sdk.signature import SignatureVerifier

    app = App(token="xoxb-test-token", signing_secret=SECRET, token_verification_enabled=False)
    application = asgi_app(app, SECRET, clock=ManualClock().now)
    body = json.dumps({"type": "url_verification", "challenge": "c"}).encode()

    def signed_with(secret: str, skew: int = 0) -> list[tuple[bytes, bytes]]:
        timestamp = str(int(time.time()) + skew)
        signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body.decode()) or ""
        return [(b"x-slack-request-timestamp", timestamp.encode()), (b"x-slack-signature", signature.encode())]

    def named() -> int:
        return sum("check SLACK_SIGNING_SECRET" in r.getMessage() for r in caplog.records)

    caplog.set_level(logging.WARNING, logger="junior.slack")
    for _ in range(SIGNATURE_RUN - 1):
        assert call(application, signed_with(WRONG), body) == 401
    assert named() == 0  # a few forged requests are not a wrong secret
    assert call(application, signed_with(WRONG), body) == 401
    assert named() == 1
    for _ in range(3 * SIGNATURE_RUN):
        assert call(application, signed_with(WRONG), body) == 401
    assert named() == 1  # said once for the whole run
    assert call(application, signed_with(SECRET), body) == 200
    for _ in range(SIGNATURE_RUN):
        assert call(application, signed_with(WRONG), body) == 401
    assert named() == 2  # a new run after a valid one
    # The right secret and a clock ten minutes out: the clock is named, once, and not the secret.
    for _ in range(2 * SIGNATURE_RUN):
        assert call(application, signed_with(SECRET, skew=-600), body) == 401
    clock = [r.getMessage() for r in caplog.records if "check the clock" in r.getMessage()]
    assert named() == 2 and len(clock) == 1 and clock[0].startswith(
        f"the last {SIGNATURE_RUN} requests signed as Slack signs them all had a timestamp more than 5 minutes")
    stale = [r.getMessage() for r in caplog.records if "more than 5 minutes from this machine's clock) (401)" in
             r.getMessage()]
    assert stale and all(r.levelno == logging.WARNING for r in caplog.records if r.getMessage() in stale)


def test_failed_accepts_are_one_line_each_ten_seconds(caplog: pytest.LogCaptureFixture) -> None:
    clock = ManualClock()
    log = logging.getLogger("junior.slack")
    handler = _loop_errors(LogLimit(log, burst=1, clock=clock.now), LogLimit(logging.getLogger("asyncio"),
                                                                            clock=clock.now))
    loop = asyncio.new_event_loop()
    try:
        loop.set_exception_handler(handler)
        out_of_files = OSError(errno.EMFILE, "Too many open files")
        caplog.set_level(logging.WARNING)
        for _ in range(2048):  # what asyncio reports when accept() fails with a full queue of connections
            loop.call_exception_handler({"message": "socket.accept() out of system resource",
                                         "exception": out_of_files})
        assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
            ("ERROR", "cannot accept connections: Too many open files; asyncio retries each second (the open-file "
                      "limit, `ulimit -n`, is too low for --max-connections and what turns open)")]
        assert caplog.records[0].exc_info is None  # no traceback
        caplog.clear()
        clock.advance(10)
        loop.call_exception_handler({"message": "socket.accept() out of system resource", "exception": out_of_files})
        assert [r.getMessage().endswith("(and 2047 more like this since, not logged)") for r in caplog.records] == [
            True]
    finally:
        loop.close()
