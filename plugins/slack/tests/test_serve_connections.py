"""``junior slack serve`` under connection hoarding: the real process, its open-file limit lowered, held open by
hundreds of keep-alive connections each asking ``GET /healthz`` over and over (and opening a new one whenever
the server closes theirs), still acknowledges Slack's signed events, and says so in a bounded number of lines."""

from __future__ import annotations

import json
import re
import selectors
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from junior_slack.server import FD_RESERVE
from junior_slack.testing import dm, event_body
from test_serve_command import ALICE, ALICE_DM, serving
from test_serve_open_port import answered, exchange, no_traceback, request, signed, status

from junior_core.testing import wait_until

pytestmark = pytest.mark.slow

FILES = 256  # the server's open-file limit: its connection cap is sized from it
HOARDERS = 320  # more connections than the server can hold open


def lower_open_files() -> None:
    """In the child, before it starts: an open-file limit of ``FILES``, as ``ulimit -n`` would set."""
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILES, hard if hard == resource.RLIM_INFINITY else max(FILES, hard)))


HEALTH = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


class Hoard:
    """``count`` keep-alive connections, each sending ``GET /healthz`` every ``period`` seconds, a new one opened
    whenever the server closes one (at most ``reopen_limit`` times); one thread, stopped on leaving ``running``."""

    def __init__(self, port: int, count: int, period: float = 0.5, reopen_limit: int = 50_000) -> None:
        self.port, self.count, self.period, self.reopen_limit = port, count, period, reopen_limit
        self.answers = 0
        self.reopened = 0
        self.opened = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @contextmanager
    def running(self, deadline_s: float = 180.0) -> Iterator[Hoard]:
        self._deadline = time.monotonic() + deadline_s
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._thread.join(30)

    def _open(self, selector: selectors.BaseSelector, due: dict[socket.socket, float]) -> None:
        conn = socket.socket()
        conn.setblocking(False)
        conn.connect_ex(("127.0.0.1", self.port))
        selector.register(conn, selectors.EVENT_READ)
        due[conn] = time.monotonic()
        self.opened += 1

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        due: dict[socket.socket, float] = {}
        try:
            for _ in range(self.count):
                self._open(selector, due)
            while not self._stop.is_set() and time.monotonic() < self._deadline:
                now = time.monotonic()
                for conn, when in list(due.items()):
                    if when <= now:
                        due[conn] = now + self.period
                        try:
                            conn.send(HEALTH)
                        except (BlockingIOError, OSError):
                            pass  # not connected yet, or its buffer is full: try again next period
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
                        self.answers += data.count(b"HTTP/1.1 200")
                        continue
                    selector.unregister(conn)
                    del due[conn]
                    conn.close()
                    if self.reopened < self.reopen_limit:
                        self.reopened += 1
                        self._open(selector, due)
        finally:
            for conn in due:
                conn.close()
            selector.close()


def edit(n: int) -> bytes:
    """A signed message edit: acknowledged by Bolt and given no turn, so only the server is measured."""
    return json.dumps(event_body(dm(ALICE, ALICE_DM, f"edit {n}", f"1700001{n:03d}.000100",
                                    subtype="message_changed"), f"Ev0HOARD{n:03d}")).encode()


def closed(conn: socket.socket) -> bool:
    """The server has closed ``conn`` (an end of file, or a reset)."""
    try:
        return conn.recv(100) == b""
    except ConnectionResetError:
        return True


def keep_alive_request(body: bytes) -> bytes:
    return request(body, signed(body)).replace(b"Connection: close\r\n", b"")


def read_answer(conn: socket.socket) -> bytes:
    """One HTTP answer (headers and a ``content-length`` body) from a keep-alive connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        assert chunk, f"the server closed the connection: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(
        b"content-length:"))
    while len(body) < length:
        chunk = conn.recv(65536)
        assert chunk, "the server closed the connection mid-answer"
        body += chunk
    return head + b"\r\n\r\n" + body


def test_signed_events_are_acknowledged_while_hoarded_connections_exceed_the_open_file_limit(
    db_url: str, tmp_path: Path
) -> None:
    with serving(db_url, tmp_path, preexec_fn=lower_open_files) as served:
        # Slack's own keep-alive connection, which has delivered a signed event; and an idle one that has not.
        slack_conn = socket.create_connection(("127.0.0.1", served.port), timeout=30)
        idle_conn = socket.create_connection(("127.0.0.1", served.port), timeout=30)
        try:
            slack_conn.sendall(keep_alive_request(edit(0)))
            assert status(read_answer(slack_conn)) == 200
            idle_conn.sendall(HEALTH)
            assert status(read_answer(idle_conn)) == 200
            with Hoard(served.port, HOARDERS).running() as hoard:
                wait_until(lambda: hoard.opened >= HOARDERS and hoard.answers >= FILES,  # all connected, many answered
                           what=f"{HOARDERS} hoarders connected and {FILES} answers")
                for n in range(1, 15):  # 14 deliveries, each on a new connection, as Slack makes them
                    body = edit(n)
                    # How fast is benchmarks/slack_serve.py's to measure; here each is answered at all.
                    reply = exchange(served.port, request(body, signed(body)), timeout=30)
                    assert status(reply) == 200, reply[:200]
                # The 15th on Slack's connection, kept open through it all: idle hoarders were closed first.
                slack_conn.sendall(keep_alive_request(edit(15)))
                assert status(read_answer(slack_conn)) == 200
                reopened = hoard.reopened
            # The oldest idle connection, which never sent a signed request, was closed to let others in.
            assert idle_conn.recv(100) == b""
            answered(served, "Ev0REAL0001", "1700000200.000100")
        finally:
            slack_conn.close()
            idle_conn.close()
    # Hoarders were closed to make room (and connected again), and operators were told in a few lines.
    assert reopened > 0
    # The cap, sized from the open-file limit, is said at start.
    caps = [int(m[1]) for line in served.stderr if (m := re.search(r"at most (\d+) connections open at once", line))]
    assert len(caps) == 1 and FILES - FD_RESERVE - 64 < caps[0] <= FILES - FD_RESERVE, caps
    cap_lines = [line for line in served.stderr if "connections open, the most allowed" in line]
    assert cap_lines and all(" WARNING " in line for line in cap_lines), "\n".join(served.stderr[-20:])
    assert len(served.stderr) < 40 and len(cap_lines) <= 6, "\n".join(served.stderr[:60])
    no_traceback(served.stderr)


def test_accepts_failing_for_want_of_file_descriptors_are_one_line_not_a_traceback_each(
    db_url: str, tmp_path: Path
) -> None:
    import resource

    with serving(db_url, tmp_path) as served:
        pid = served.process.pid
        before = resource.prlimit(pid, resource.RLIMIT_NOFILE)
        # The open-file limit lowered under the running server (as another process's descriptors might use up the
        # system's): 10 more files, whatever its connection cap says; then 200 connections at once.
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (len(list(Path(f"/proc/{pid}/fd").iterdir())) + 10,
                                                       before[1]))
        conns: list[socket.socket] = []
        try:
            for _ in range(200):
                conn = socket.socket()
                conn.setblocking(False)
                conn.connect_ex(("127.0.0.1", served.port))
                conns.append(conn)
            time.sleep(2.5)  # asyncio retries the accept each second: a few rounds of failures
            failed = [line for line in served.stderr if "accept" in line]
        finally:
            for conn in conns:
                conn.close()
            resource.prlimit(pid, resource.RLIMIT_NOFILE, before)
        answered(served, "Ev0REAL0001", "1700000200.000100")  # served again once descriptors are free
    assert len(failed) == 1 and " ERROR junior.slack: cannot accept connections: Too many open files" in failed[0]
    assert len(served.stderr) < 20, "\n".join(served.stderr[:40])
    no_traceback(served.stderr)


def test_max_connections_is_the_cap_and_a_number_the_file_limit_cannot_hold_is_lowered_with_a_warning(
    db_url: str, tmp_path: Path
) -> None:
    (tmp_path / "three").mkdir()
    (tmp_path / "many").mkdir()
    # Idle keep-alive connections are otherwise kept 60 s: closed before that, one was closed for the cap.
    with serving(db_url, tmp_path / "three", "--max-connections", "3", "--read-timeout", "60") as served:
        held = [socket.create_connection(("127.0.0.1", served.port), timeout=30) for _ in range(3)]
        try:
            for conn in held:
                conn.sendall(HEALTH)
                assert status(read_answer(conn)) == 200
            held[0].sendall(b"GET /healthz HTTP/1.1\r\nHost: 12")  # then half of its next request's headers
            for n in (3, 4):  # a fourth, then a fifth connection past the cap of three
                held.append(socket.create_connection(("127.0.0.1", served.port), timeout=30))
                held[n - 3].settimeout(15)
                held[n].sendall(HEALTH)
                assert status(read_answer(held[n])) == 200
                assert closed(held[n - 3])  # the fourth closes the half-sent one, the fifth the one idle longest
            for conn in (held[2], held[3], held[4]):  # the others are still served
                conn.sendall(HEALTH)
                assert status(read_answer(conn)) == 200
        finally:
            for conn in held:
                conn.close()
        made_room = [line.split("closed the one waiting longest for a request ")[1] for line in served.stderr
                     if "the most allowed" in line]
        assert [re.sub(r"\d+ s\)", "N s)", line) for line in made_room] == [
            "(half-sent, N s) to let a new one in", "(idle, N s) to let a new one in"]
        assert not any("connections open at once" in line for line in served.stderr)  # the cap was chosen
    with serving(db_url, tmp_path / "many", "--max-connections", "5000", preexec_fn=lower_open_files) as served:
        answered(served, "Ev0REAL0001", "1700000200.000100")
    lowered = [line for line in served.stderr if "--max-connections: 5000 connections do not fit" in line]
    assert len(lowered) == 1 and " WARNING junior.slack: " in lowered[0], "\n".join(served.stderr)
    assert re.search(rf"the open-file limit \({FILES}, `ulimit -n`; \d+ open now and {FD_RESERVE} kept for turns\): "
                     r"at most \d+$", lowered[0]), lowered[0]
