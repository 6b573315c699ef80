"""``junior mcp serve --http`` under floods, on loopback against the real gateway process: one token opening
session after session, connections that never finish their request, and a stream of refused requests. The
owner keeps being served; what the others hold, and what they make the gateway log, stays bounded."""

from __future__ import annotations

import asyncio
import collections
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from junior_mcp_bridge.config import ConfigError, bridge_settings
from junior_mcp_bridge.limits import GatewayLimits
from mcp_bridge_helpers import bearer_client

from junior_core.testing import wait_until

JUNIOR = str(Path(sys.executable).parent / "junior")
ALICE = "alice-" + "a1" * 20
BOB = "bob-" + "b2" * 20
TOKENS = ('[mcp.serve.tokens.alice]\ntoken = "${ALICE_TOKEN}"\nuser = "alice"\n'
          '[mcp.serve.tokens.bob]\ntoken = "${BOB_TOKEN}"\nuser = "bob"\n')
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "flood", "version": "0"}}})


class Gateway:
    def __init__(self, proc: subprocess.Popen[bytes], port: int, stderr: Path, owner: str) -> None:
        self.proc, self.port, self.stderr, self.owner = proc, port, stderr, owner
        self.url = f"http://127.0.0.1:{port}/mcp"

    def stop(self) -> str:
        """SIGTERM, wait, and the whole log."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)
        return self.stderr.read_text()


@pytest.fixture
def start_gateway(tmp_path: Path) -> Iterator[Callable[..., Gateway]]:
    """``start_gateway(gateway_toml, open_files=None)``: a gateway with the owner, alice and bob as tokens."""
    gateways: list[Gateway] = []

    def start(gateway_toml: str = "", open_files: int | None = None) -> Gateway:
        config = tmp_path / "junior.toml"
        config.write_text(TOKENS + (f"[plugins.mcp.gateway]\n{gateway_toml}\n" if gateway_toml else ""))
        env = {**os.environ, "JUNIOR_CONFIG": str(config), "JUNIOR_CONFIG_DIR": str(tmp_path / "config"),
               "JUNIOR_CACHE_DIR": str(tmp_path / "cache"), "JUNIOR_LOAD_PLUGINS": "mcp",
               "ALICE_TOKEN": ALICE, "BOB_TOKEN": BOB}
        owner = subprocess.run([JUNIOR, "mcp", "token"], env=env, capture_output=True, text=True, timeout=60,
                               check=True).stdout.strip()
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])

        def limit_files() -> None:
            if open_files is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

        stderr = tmp_path / f"gateway-{port}.log"
        with stderr.open("wb") as err:
            proc = subprocess.Popen([JUNIOR, "mcp", "serve", "--http", str(port)], env=env, stdout=subprocess.DEVNULL,
                                    stderr=err, preexec_fn=limit_files)
        gateway = Gateway(proc, port, stderr, owner)
        gateways.append(gateway)

        def answering() -> bool:
            if proc.poll() is not None:
                pytest.fail(f"gateway exited: {stderr.read_text()}")
            # A probe that completes a request: a bare connect would be one of the half-sent connections.
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
                return True
            except httpx.HTTPError:
                return False

        wait_until(answering, timeout=30, what="the gateway to answer")
        return gateway

    yield start
    for gateway in gateways:
        if gateway.proc.poll() is None:
            gateway.proc.kill()
            gateway.proc.wait(15)


def headers(token: str, session: str | None = None) -> dict[str, str]:
    found = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
             "Accept": "application/json, text/event-stream"}
    return found if session is None else {**found, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}


async def open_sessions(url: str, token: str, count: int) -> list[httpx.Response]:
    """``count`` initialize requests at once, each opening a session if the gateway lets it."""
    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=16)) as client:
        return list(await asyncio.gather(*(client.post(url, content=INITIALIZE, headers=headers(token))
                                           for _ in range(count))))


def statuses(responses: list[httpx.Response]) -> dict[int, int]:
    found: dict[int, int] = {}
    for response in responses:
        found[response.status_code] = found.get(response.status_code, 0) + 1
    return found


async def owner_is_served(gateway: Gateway) -> None:
    """The owner opens a session with the official client and a call through it answers."""
    async with bearer_client(gateway.url, gateway.owner) as client:
        found = await client.call_tool("searchTools", {"query": "anything"})
        assert found.structured_content is not None and "tools" in found.structured_content, found


# -- sessions ---------------------------------------------------------------------------------------------


@pytest.mark.slow
async def test_one_token_flooding_sessions_gets_its_own_share_and_the_owner_is_served(
    start_gateway: Callable[..., Gateway],
) -> None:
    gateway = start_gateway()  # the defaults: 32 sessions for any one token but the owner
    share = GatewayLimits().sessions_per_token
    flood = await open_sessions(gateway.url, ALICE, share + 24)
    assert statuses(flood) == {200: share, 429: 24}
    refused = next(r for r in flood if r.status_code == 429)
    assert int(refused.headers["retry-after"]) >= 1
    assert "this token's 32 sessions are all open" in refused.json()["error"]["message"]
    assert all(r.headers.get("mcp-session-id") for r in flood if r.status_code == 200)
    assert statuses(await open_sessions(gateway.url, BOB, 2)) == {200: 2}  # another token has its own share
    await owner_is_served(gateway)


@pytest.mark.slow
async def test_sessions_are_capped_per_token_and_together_with_room_kept_for_the_owner(
    start_gateway: Callable[..., Gateway],
) -> None:
    gateway = start_gateway("sessions_per_token = 3\nmax_sessions = 4\nowner_sessions = 2\nsession_idle_s = 3")
    alice = await open_sessions(gateway.url, ALICE, 5)
    assert statuses(alice) == {200: 3, 429: 2}
    bob = await open_sessions(gateway.url, BOB, 3)
    assert statuses(bob) == {200: 1, 429: 2}  # the other tokens' 4 are taken: alice 3, bob 1
    assert "other than the owner's are all open" in next(r for r in bob if r.status_code == 429).text
    owner = await open_sessions(gateway.url, gateway.owner, 3)
    assert statuses(owner) == {200: 2, 429: 1}  # the owner's room was there, and is bounded too

    # Ending a session gives its room back, to another token as well.
    mine = [r.headers["mcp-session-id"] for r in alice if r.status_code == 200]
    async with httpx.AsyncClient(timeout=30) as client:
        ended = await client.delete(gateway.url, headers=headers(ALICE, mine[0]))
        assert ended.status_code == 200, ended.text
    assert statuses(await open_sessions(gateway.url, BOB, 2)) == {200: 1, 429: 1}

    # Idle sessions are closed: their ids answer 404 and their room is free again.
    time.sleep(4.5)
    async with httpx.AsyncClient(timeout=30) as client:
        ping = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        gone = await client.post(gateway.url, content=ping, headers=headers(ALICE, mine[1]))
        assert gone.status_code == 404, gone.text
    assert statuses(await open_sessions(gateway.url, ALICE, 4)) == {200: 3, 429: 1}
    await owner_is_served(gateway)


def test_gateway_limits_are_checked_where_they_are_read(tmp_path: Path) -> None:
    path = tmp_path / "junior.toml"
    path.write_text("[plugins.mcp.gateway]\nsessions_per_token = 8\nheader_timeout_s = 2.5\n")
    limits = bridge_settings({"JUNIOR_CONFIG": str(path)}).gateway
    assert (limits.sessions_per_token, limits.header_timeout_s, limits.max_sessions) == (8, 2.5, 256)
    for text, problem in [("max_sesions = 3", "max_sesions: unknown field; use body_timeout_s"),
                          ("body_timeout_s = 0", "body_timeout_s: must be a positive number of seconds"),
                          ("owner_sessions = true", "owner_sessions: must be a positive whole number"),
                          ("sessions_per_token = 9\nmax_sessions = 4", "sessions_per_token: 9 is more than")]:
        path.write_text(f"[plugins.mcp.gateway]\n{text}\n")
        with pytest.raises(ConfigError, match=r"\[plugins.mcp.gateway\] " + problem):
            bridge_settings({"JUNIOR_CONFIG": str(path)})


# -- half-sent requests -----------------------------------------------------------------------------------


def half_sent(port: int, count: int) -> list[socket.socket]:
    """``count`` connections, alternately stopping inside the headers and inside a body announced as 1,000 bytes."""
    socks = []
    for i in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        if i % 2:
            sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {ALICE}\r\n"
                         "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                         "Content-Length: 1000\r\n\r\n{\"jsonrpc\"".encode())
        else:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        socks.append(sock)
    return socks


def closed_by_server(sock: socket.socket, answers: list[bytes] | None = None) -> bool:
    """Whether the server has closed ``sock``; what it sent before goes to ``answers``."""
    sock.setblocking(False)
    received = b""
    try:
        while data := sock.recv(4096):
            received += data
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        if answers is not None:
            answers.append(received)


@pytest.mark.slow
async def test_connections_that_never_finish_cannot_lock_the_owner_out(
    start_gateway: Callable[..., Gateway],
) -> None:
    # 128 open files (the default limits, so the cap is 128 - 64): 200 half-sent requests would take them all.
    gateway = start_gateway(open_files=128)
    socks = half_sent(gateway.port, 200)
    try:
        await asyncio.wait_for(owner_is_served(gateway), 20)
        # The gateway closes the oldest as the newest arrive; a closed socket stays closed, so polling is fair.
        wait_until(lambda: sum(closed_by_server(s) for s in socks) >= 200 - 64, timeout=30,
                   what="the gateway to close the oldest half-sent connections")
    finally:
        for sock in socks:
            sock.close()
    assert "connections open (the most allowed): closed the oldest" in gateway.stop()


ROUNDS = 100  # requests of the owner's, each on a new connection
BATCH = 20  # connections each churning thread opens while one of them is on its way


def churn(port: int, seed: int, rounds: threading.Barrier) -> None:
    """For each of the owner's requests, ``BATCH`` new connections: a third dropped at once, the others left
    half-sent (inside the headers, or inside a body of alice's); at most 40 are held, the oldest dropped first."""
    held: collections.deque[socket.socket] = collections.deque()
    try:
        for r in range(ROUNDS):
            rounds.wait(60)
            for i in range(BATCH):
                kind = (seed + r + i) % 3
                try:
                    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                    if kind == 1:
                        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                    elif kind == 2:
                        sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {ALICE}\r\n"
                                     "Content-Length: 1000\r\n\r\n{".encode())
                except OSError:
                    continue
                if kind == 0:
                    sock.close()
                    continue
                held.append(sock)
                if len(held) > 40:
                    held.popleft().close()
    finally:
        for sock in held:
            sock.close()


@pytest.mark.slow
def test_the_owner_opening_a_connection_per_request_is_served_while_others_churn_connections(
    start_gateway: Callable[..., Gateway],
) -> None:
    # Four threads holding up to 40 half-sent connections each keep the gateway at its cap of 64, so that every
    # new connection, the owner's among them, makes it close one; each owner's request is sent while the threads
    # open their next 80. (The cap is set, not taken from a low open-file limit, where accept() would fail and
    # pause, so that the churn queued up before the gateway rather than reached its cap.)
    gateway = start_gateway("max_connections = 64")
    with httpx.Client(timeout=30) as client:
        opened = client.post(gateway.url, content=INITIALIZE, headers=headers(gateway.owner))
        assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    rounds = threading.Barrier(5)
    churners = [threading.Thread(target=churn, args=(gateway.port, seed, rounds)) for seed in range(4)]
    for thread in churners:
        thread.start()
    answered, failed = 0, []
    try:
        # A client that keeps no connection alive: each request opens a new one, which has sent nothing yet
        # when the gateway first sees it.
        with httpx.Client(timeout=30, limits=httpx.Limits(max_keepalive_connections=0)) as owner:
            for i in range(ROUNDS):
                rounds.wait(60)
                ping = json.dumps({"jsonrpc": "2.0", "id": i + 2, "method": "ping"})
                try:
                    response = owner.post(gateway.url, content=ping, headers=headers(gateway.owner, session))
                except httpx.HTTPError as exc:
                    failed.append(f"{i}: {type(exc).__name__}")
                    continue
                if response.status_code == 200:
                    answered += 1
                else:
                    failed.append(f"{i}: {response.status_code}")
    finally:
        rounds.abort()  # a thread still waiting for a round ends now
        for thread in churners:
            thread.join(60)
    log = gateway.stop()
    assert (answered, failed) == (ROUNDS, []), f"{answered} answered, {len(failed)} failed: {failed[:10]}"
    assert "connections open (the most allowed)" in log  # the churn did keep the gateway at its cap


@pytest.mark.slow
async def test_headers_and_bodies_that_arrive_too_slowly_are_timed_out(start_gateway: Callable[..., Gateway]) -> None:
    gateway = start_gateway("header_timeout_s = 1\nbody_timeout_s = 1.5")
    socks = half_sent(gateway.port, 20)
    # The control: a request sent in pieces, but within its time, is served.
    patient = socket.create_connection(("127.0.0.1", gateway.port), timeout=10)
    request = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{gateway.port}\r\nAuthorization: Bearer {gateway.owner}\r\n"
               "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
               f"Content-Length: {len(INITIALIZE)}\r\n\r\n{INITIALIZE}").encode()
    try:
        for piece in range(0, len(request), len(request) // 4 + 1):
            patient.sendall(request[piece:piece + len(request) // 4 + 1])
            time.sleep(0.2)  # 1 s in all: each phase finishes within its timeout
            for sock in socks:  # the slow ones trickle a byte now and then, which used to keep them open
                try:
                    sock.send(b"a")
                except OSError:
                    pass
        answer = patient.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
        # The gateway's own timeouts (1 s, 1.5 s on its clock, in its process) close the slow ones.
        received = [b""] * len(socks)
        closed = [False] * len(socks)

        def all_closed() -> bool:
            for n, sock in enumerate(socks):
                if not closed[n]:
                    got: list[bytes] = []
                    closed[n] = closed_by_server(sock, got)
                    received[n] += got[0]
            return all(closed)

        try:
            wait_until(all_closed, timeout=30, what="the gateway to time out every half-sent connection")
        except AssertionError:
            raise AssertionError(f"{closed.count(False)} of {len(socks)} half-sent connections are still open") from None
        answers = received
        # Those stopped inside their headers are told why (the others' request is already being answered).
        assert all(a.startswith(b"HTTP/1.1 408 Request Timeout") for a in answers[::2]), answers[:2]
    finally:
        for sock in [*socks, patient]:
            sock.close()
    log = gateway.stop()
    assert "sent no complete request headers within 1 s" in log
    assert "request body did not arrive within 1.5 s" in log


# -- logging ------------------------------------------------------------------------------------------------


@pytest.mark.slow
async def test_refused_requests_are_logged_a_few_times_a_minute(start_gateway: Callable[..., Gateway]) -> None:
    gateway = start_gateway()  # the defaults: 10 lines a minute from each place
    await open_sessions(gateway.url, ALICE, 32 + 150)  # 150 refused sessions
    for _ in range(150):  # and 150 requests that are not HTTP
        with socket.create_connection(("127.0.0.1", gateway.port), timeout=5) as sock:
            sock.sendall(b"\x16\x03\x01 not http\r\n\r\n")
            sock.recv(4096)
    await owner_is_served(gateway)
    log = gateway.stop()
    lines = log.splitlines()
    refused = [line for line in lines if "refused a new MCP session for token 'alice'" in line]
    invalid = [line for line in lines if "Invalid HTTP request received" in line]
    assert 1 <= len(invalid) <= 12, len(invalid)
    assert 1 <= len(refused) <= 12, len(refused)
    assert len(log) < 8000, len(log)
    held = [line for line in lines if "repeated log lines caused by clients were not logged" in line]
    assert len(held) == 1, lines[-5:]
    assert int(held[0].split("WARNING junior.mcp.gateway: ")[1].split()[0]) >= 300 - 24


def test_the_event_loops_errors_under_connection_churn_are_rate_limited_one_line_each() -> None:
    """What asyncio logs when accept() fails or a connection is reset mid-write: 2,000 of them in a burst."""
    import asyncio
    import io
    import logging

    from junior_mcp_bridge.limits import rate_limited_logs

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with rate_limited_logs(10):
            loop = asyncio.new_event_loop()
            try:
                for _ in range(2000):
                    try:
                        raise OSError(24, "Too many open files")
                    except OSError as exc:
                        loop.call_exception_handler({"message": "socket.accept() out of system resource",
                                                     "exception": exc})
            finally:
                loop.close()
    finally:
        root.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert "Traceback" not in stream.getvalue()
    assert lines[0] == "socket.accept() out of system resource: OSError: [Errno 24] Too many open files"
    assert len(lines) == 11  # ten a minute, and the closing count of what was held back
    assert lines[-1] == ("1990 repeated log lines caused by clients were not logged (at most 10 a minute from "
                         "each place)")
