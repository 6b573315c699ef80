"""`junior slack serve` under connection hoarding: signed events acknowledged while hoarders hold the port.

The server runs as its own process under an open-file limit of 1024 (`ulimit -n`, systemd's usual soft limit),
against a local stand-in of Slack's Web API. 1,100 keep-alive connections each send `GET /healthz` every 5
seconds, and open a new connection whenever the server closes theirs; meanwhile 15 signed events (message edits:
acknowledged, no turn) are delivered over the run, each on a new connection as Slack delivers them. Measured: how
many are acknowledged within Slack's 3 seconds, the slowest acknowledgement, and how many lines the server wrote
to standard error. Targets: 15 of 15 within 3 s; under 100 lines.

    python benchmarks/slack_serve.py                       # 1,100 connections, 40 s
    python benchmarks/slack_serve.py --hoarders 300 --files 256 --seconds 20
"""

from __future__ import annotations

import argparse
import json
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BIN = Path(sys.executable).parent
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
HEALTH = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def hoard(port: int, count: int, period: float, stop: threading.Event, counts: dict[str, int]) -> None:
    """``count`` keep-alive connections asking ``GET /healthz`` every ``period`` s; a closed one is opened again."""
    selector = selectors.DefaultSelector()
    due: dict[socket.socket, float] = {}

    def open_one() -> None:
        conn = socket.socket()
        conn.setblocking(False)
        conn.connect_ex(("127.0.0.1", port))
        selector.register(conn, selectors.EVENT_READ)
        due[conn] = time.monotonic()
        counts["opened"] += 1

    for _ in range(count):
        open_one()
    while not stop.is_set():
        now = time.monotonic()
        for conn, when in list(due.items()):
            if when <= now:
                due[conn] = now + period
                try:
                    conn.send(HEALTH)
                except OSError:
                    pass
        for key, _ in selector.select(0.05):
            conn = key.fileobj
            assert isinstance(conn, socket.socket)
            try:
                data = conn.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if data:
                counts["answers"] += data.count(b" 200 ")
                continue
            selector.unregister(conn)
            del due[conn]
            conn.close()
            open_one()
    for conn in due:
        conn.close()


def deliver(port: int, n: int) -> tuple[int, float]:
    """A signed message edit on a new connection: its status (0: none within 3 s) and the seconds it took."""
    from slack_sdk.signature import SignatureVerifier

    body = json.dumps({"type": "event_callback", "team_id": "T0TEAM001", "api_app_id": "A0JUNIOR1",
                       "event_id": f"Ev0BENCH{n:03d}", "event_time": 1700000000,
                       "event": {"type": "message", "subtype": "message_changed", "channel": "D0ALICE01",
                                 "channel_type": "im", "user": "U0ALICE01", "text": f"edit {n}",
                                 "ts": f"1700000{n:03d}.000100"}})
    timestamp = str(int(time.time()))
    signature = SignatureVerifier(SECRET).generate_signature(timestamp=timestamp, body=body)
    request = (f"POST /slack/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\nConnection: close\r\nX-Slack-Request-Timestamp: {timestamp}\r\n"
               f"X-Slack-Signature: {signature}\r\n\r\n{body}").encode()
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3.0) as conn:
            conn.sendall(request)
            reply = conn.recv(100)
        return int(reply.split(b" ", 2)[1]) if reply else 0, time.monotonic() - started
    except OSError:
        return 0, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hoarders", type=int, default=1100)
    parser.add_argument("--files", type=int, default=1024, help="the server's open-file limit")
    parser.add_argument("--seconds", type=float, default=40.0)
    args = parser.parse_args()
    from junior_slack.testing import FakeSlack

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < args.hoarders + 100:  # this process holds the hoarders
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, args.hoarders + 100), hard))

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (args.files, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    slack = FakeSlack()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "junior.toml").write_text("")
        env = {k: v for k, v in __import__("os").environ.items() if not k.startswith(("JUNIOR_", "SLACK_"))}
        env.update(JUNIOR_CONFIG=f"{tmp}/junior.toml", XDG_DATA_HOME=f"{tmp}/data", SLACK_BOT_TOKEN="xoxb-test-token",
                   SLACK_SIGNING_SECRET=SECRET, SLACK_API_URL=slack.url, JUNIOR_MEMORY_URL=f"sqlite:///{tmp}/j.db",
                   JUNIOR_MODEL="openai-compatible:http://127.0.0.1:9/v1#local")
        server = subprocess.Popen([str(BIN / "junior"), "slack", "serve", "--port", str(port)], env=env, cwd=tmp,
                                  preexec_fn=limit, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        lines: list[str] = []

        def read() -> None:
            assert server.stderr is not None
            for line in server.stderr:
                lines.append(line)

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + 60
        while not any("listening on" in line for line in lines):
            if server.poll() is not None or time.monotonic() > deadline:
                print("".join(lines[-20:]))
                return 1
            time.sleep(0.1)
        stop = threading.Event()
        counts = {"opened": 0, "answers": 0}
        hoarder = threading.Thread(target=hoard, args=(port, args.hoarders, 5.0, stop, counts), daemon=True)
        started = time.monotonic()
        hoarder.start()
        acks: list[tuple[int, float]] = []
        try:
            time.sleep(min(10.0, args.seconds / 4))
            gap = (args.seconds - (time.monotonic() - started)) / 15
            for n in range(15):
                acks.append(deliver(port, n))
                time.sleep(max(gap, 0.0))
        finally:
            stop.set()
            hoarder.join(30)
            server.kill()
            server.wait(30)
            slack.close()
        took = time.monotonic() - started
    within = sum(1 for status, seconds in acks if status == 200 and seconds < 3.0)
    print(f"{args.hoarders} hoarding connections (opened {counts['opened']} times, {counts['answers']} answers), "
          f"open-file limit {args.files}, {took:.0f} s")
    print(f"signed events acknowledged within 3 s: {within} of {len(acks)}; slowest {max(s for _, s in acks):.3f} s")
    print(f"server's standard error: {len(lines)} lines, {sum('Traceback' in line for line in lines)} tracebacks")
    return 0 if within == len(acks) and len(lines) < 100 else 1


if __name__ == "__main__":
    sys.exit(main())
