"""``junior mcp serve --http`` requires a bearer token: the owner's from ``junior mcp token``, or one from config."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import sqlite3
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from junior_mcp_bridge.auth import TokenError, TokenTable, read_or_create_token, rotate_token, token_path
from junior_mcp_bridge.config import ConfigError, ServeToken, load_serve_tokens
from mcp_bridge_helpers import bearer_client

from junior_core.cli import local_context
from junior_core.testing import wait_until

JUNIOR = str(Path(sys.executable).parent / "junior")
ALICE_TOKEN = "alice-" + "a1" * 20
LONG = "b" * 40
needs_memory = pytest.mark.skipif(importlib.util.find_spec("junior_memory") is None,
                                  reason="junior-memory is not installed (make install installs it)")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "junior.toml"
    config.write_text('[mcp.serve.tokens.alice]\ntoken = "${ALICE_TOKEN}"\nuser = "alice"\n')
    return {
        **os.environ,
        "JUNIOR_CONFIG": str(config),
        "JUNIOR_CONFIG_DIR": str(tmp_path / "config" / "junior"),
        "JUNIOR_LOAD_PLUGINS": "mcp,memory",
        "JUNIOR_MEMORY_URL": f"sqlite:///{tmp_path / 'memory.db'}",
        "ALICE_TOKEN": ALICE_TOKEN,
    }


def junior(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([JUNIOR, *args], env=env, capture_output=True, text=True, timeout=60)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def start_gateway(tmp_path: Path) -> Iterator[Callable[..., tuple[str, Path]]]:
    """``start_gateway(env, *flags)`` runs ``junior mcp serve --http PORT`` and returns its URL and stderr file."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(env: dict[str, str], *flags: str) -> tuple[str, Path]:
        port = _free_port()
        stderr = tmp_path / f"gateway-{port}.log"
        with stderr.open("wb") as err:
            proc = subprocess.Popen([JUNIOR, "mcp", "serve", "--http", str(port), *flags], env=env,
                                    stdout=subprocess.DEVNULL, stderr=err)
        procs.append(proc)

        def listening() -> bool:
            if proc.poll() is not None:
                pytest.fail(f"gateway exited: {stderr.read_text()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return True
            except OSError:
                return False

        wait_until(listening, timeout=30, what="the gateway to listen")
        return f"http://127.0.0.1:{port}/mcp", stderr

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(15)


def raw_post(url: str, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}})
    request = urllib.request.Request(url, data=body.encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers)


def remember(content: str) -> tuple[str, dict[str, object]]:
    return "executeTool", {"tool_name": "memory__remember", "arguments": {"content": content, "kind": "preference"}}


def stored_actors(env: dict[str, str]) -> dict[str, str]:
    path = env["JUNIOR_MEMORY_URL"].removeprefix("sqlite:///")
    if not Path(path).exists():
        return {}
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT content, actor_key FROM junior_memory_memories").fetchall())


# -- the token file ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_junior_mcp_token_makes_a_private_token_once(env: dict[str, str]) -> None:
    first = junior(env, "mcp", "token")
    assert first.returncode == 0, first.stderr
    token = first.stdout.strip()
    assert len(token) >= 32
    path = Path(junior(env, "mcp", "token", "--path").stdout.strip())
    assert path == Path(env["JUNIOR_CONFIG_DIR"]) / "mcp-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.read_text().strip() == token
    assert junior(env, "mcp", "token").stdout.strip() == token  # stable: made on first use only
    rotated = junior(env, "mcp", "token", "--rotate").stdout.strip()
    assert len(rotated) >= 32 and rotated != token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    environ = {"JUNIOR_CONFIG_DIR": str(tmp_path / "junior")}
    token = read_or_create_token(environ)
    path = token_path(environ)
    path.chmod(0o644)
    with pytest.raises(TokenError, match="can be read by other users") as info:
        read_or_create_token(environ)
    assert token not in str(info.value)
    assert rotate_token(environ) != token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_token_table_matches_each_token_to_its_own_context(tmp_path: Path) -> None:
    owner = local_context()
    [alice] = _tokens_from(tmp_path, f'[mcp.serve.tokens.alice]\ntoken = "{ALICE_TOKEN}"\nuser = "alice"\nprivate = true\n')
    table = TokenTable("o" * 43, owner, [alice])
    assert table.match("o" * 43) == "owner"
    assert table.match(ALICE_TOKEN) == "alice"
    assert table.match(ALICE_TOKEN[:-1]) is None and table.match("") is None
    context = table.context_of("alice")
    assert context is not None and context.actor is not None and context.conversation is not None
    assert context.actor.key == "local:token-alice:alice"
    assert context.conversation.visibility == "private"
    assert table.context_of("owner") == owner


# -- configured tokens --------------------------------------------------------------------------------------

def _tokens_from(tmp_path: Path, text: str, environ: dict[str, str] | None = None) -> list[ServeToken]:
    path = tmp_path / "junior.toml"
    path.write_text(text)
    path.chmod(0o600)  # a token written in the file is refused unless the file is private (see below)
    return load_serve_tokens(environ={"JUNIOR_CONFIG": str(path), **(environ or {})})


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[mcp.serve.tokens.bob]\ntoken = "short-secret"\nuser = "bob"\n', "at least 32"),
        (f'[mcp.serve.tokens.bob]\ntoken = "{LONG}"\n', "user: required"),
        (f'[mcp.serve.tokens.bob]\ntoken = "{LONG}"\nuser = "bob"\nrole = "admin"\n', "role: unknown"),
        ('[mcp.serve.tokens.bob]\ntoken = "${NOT_SET_ANYWHERE}"\nuser = "bob"\n', "NOT_SET_ANYWHERE"),
        (f'[mcp.serve.tokens.owner]\ntoken = "{LONG}"\nuser = "bob"\n', "name"),
        (f'[mcp.serve.tokens.bob]\ntoken = "{LONG}"\nuser = "b b"\n', "user_id"),
        (f'[mcp.serve.tokens.a]\ntoken = "{LONG}"\nuser = "a"\n[mcp.serve.tokens.b]\ntoken = "{LONG}"\nuser = "b"\n',
         "the same token"),
        ('[mcp.serve]\nopen = true\n', "open: unknown"),
    ],
)
def test_bad_token_config_is_one_error_that_never_echoes_the_token(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem) as info:
        _tokens_from(tmp_path, text)
    assert "short-secret" not in str(info.value) and LONG not in str(info.value)


def test_configured_token_reads_its_value_from_the_environment(tmp_path: Path) -> None:
    [alice] = _tokens_from(tmp_path, '[mcp.serve.tokens.alice]\ntoken = "${ALICE_TOKEN}"\nuser = "alice"\nteam = "T1"\n',
                           {"ALICE_TOKEN": ALICE_TOKEN})
    actor = alice.context().actor
    assert alice.token == ALICE_TOKEN
    assert actor is not None and actor.key == "local:T1:alice"
    assert ALICE_TOKEN not in repr(alice)


# -- the HTTP gateway -----------------------------------------------------------------------------------------


@pytest.mark.slow
async def test_http_gateway_answers_401_without_the_right_token(
    env: dict[str, str], start_gateway: Callable[..., tuple[str, Path]]
) -> None:
    url, _ = start_gateway(env)
    status, headers = raw_post(url, {})
    assert status == 401
    assert headers.get("www-authenticate", headers.get("WWW-Authenticate", "")).startswith("Bearer")
    assert raw_post(url, {"Authorization": "Bearer not-the-token"})[0] == 401
    assert raw_post(url, {"Authorization": f"Basic {ALICE_TOKEN}"})[0] == 401

    for token in (None, "not-the-token", ALICE_TOKEN + "x"):
        statuses: list[int] = []
        with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the refusal in task-group errors
            async with bearer_client(url, token, statuses) as client:
                await client.call_tool(*remember("Prefers green tea"))
        assert statuses and set(statuses) == {401}, (token, statuses)
    assert stored_actors(env) == {}


@pytest.mark.slow
@needs_memory
async def test_each_token_calls_memory_as_its_own_actor(
    env: dict[str, str], start_gateway: Callable[..., tuple[str, Path]]
) -> None:
    owner_token = junior(env, "mcp", "token").stdout.strip()
    url, stderr = start_gateway({**env, "JUNIOR_LOG_LEVEL": "INFO"})  # the start-up line is INFO
    statuses: list[int] = []
    async with bearer_client(url, owner_token, statuses) as client:
        listed = await client.list_tools()
        assert sorted(t.name for t in listed.tools) == ["executeTool", "searchTools"]
        stored = await client.call_tool(*remember("Prefers metric units"))
        assert stored.structured_content is not None and stored.structured_content["ok"] is True, stored
    assert 401 not in statuses
    async with bearer_client(url, ALICE_TOKEN) as client:
        stored = await client.call_tool(*remember("Prefers green tea"))
        assert stored.structured_content is not None and stored.structured_content["ok"] is True, stored
        mine = await client.call_tool("executeTool", {"tool_name": "memory__list", "arguments": {}})
        assert mine.structured_content is not None
        assert [m["content"] for m in mine.structured_content["result"]["memories"]] == ["Prefers green tea"]
    owner = local_context().actor
    assert owner is not None
    assert stored_actors(env) == {"Prefers metric units": owner.key, "Prefers green tea": "local:token-alice:alice"}
    log = stderr.read_text()
    assert "owner, alice" in log and owner_token not in log and ALICE_TOKEN not in log
    assert "INFO junior.mcp.gateway: junior MCP gateway on" in log


@pytest.mark.slow
@needs_memory
async def test_no_auth_takes_the_explicit_flag_and_warns(
    env: dict[str, str], start_gateway: Callable[..., tuple[str, Path]]
) -> None:
    refused = junior(env, "mcp", "serve", "--no-auth")
    assert refused.returncode == 2 and "--no-auth only applies to --http" in refused.stderr
    url, stderr = start_gateway(env, "--no-auth")
    async with bearer_client(url, None) as client:
        stored = await client.call_tool(*remember("Prefers oat milk"))
        assert stored.structured_content is not None and stored.structured_content["ok"] is True, stored
    assert "WITHOUT authentication" in stderr.read_text()


@pytest.mark.slow
def test_serve_refuses_to_start_on_a_bad_token_config(env: dict[str, str]) -> None:
    Path(env["JUNIOR_CONFIG"]).write_text('[mcp.serve.tokens.bob]\ntoken = "short-secret"\nuser = "bob"\n')
    started = junior(env, "mcp", "serve", "--http", str(_free_port()))
    assert started.returncode == 1
    assert "[mcp.serve.tokens.bob] token: must be at least 32" in started.stderr
    assert "short-secret" not in started.stderr and "Traceback" not in started.stderr


def _result(answer: object) -> dict[str, object]:
    structured = getattr(answer, "structured_content", None)
    assert isinstance(structured, dict), answer
    return structured


@pytest.mark.slow
@needs_memory
@pytest.mark.parametrize("shared", [False, True])
async def test_a_second_token_cannot_see_or_archive_the_owners_knowledge(
    env: dict[str, str], start_gateway: Callable[..., tuple[str, Path]], shared: bool
) -> None:
    if shared:  # the positive control: a token configured into the owner's team shares its workspace
        Path(env["JUNIOR_CONFIG"]).write_text('[mcp.serve.tokens.alice]\ntoken = "${ALICE_TOKEN}"\nuser = "alice"\n'
                                              'team = "local"\n')
    owner_token = junior(env, "mcp", "token").stdout.strip()
    url, _ = start_gateway(env)
    fact = "Deploys to production go out on Tuesdays"
    async with bearer_client(url, owner_token) as client:
        stored = _result(await client.call_tool(
            "executeTool", {"tool_name": "memory__remember", "arguments": {"content": fact, "kind": "knowledge"}}))
        assert stored["ok"] is True, stored
    async with bearer_client(url, ALICE_TOKEN) as client:
        listed = _result(await client.call_tool("executeTool", {"tool_name": "memory__list", "arguments": {}}))
        found = _result(await client.call_tool(
            "executeTool", {"tool_name": "memory__search", "arguments": {"query": "deploys Tuesdays"}}))
        forgot = _result(await client.call_tool(
            "executeTool", {"tool_name": "memory__forget", "arguments": {"query": "deploys Tuesdays"}}))
    seen = [m["content"] for m in listed["result"]["memories"]]  # type: ignore[index]
    hits = [m["content"] for m in found["result"]["memories"]]  # type: ignore[index]
    if shared:
        assert seen == [fact] and hits == [fact] and forgot["ok"] is True, (listed, found, forgot)
        return
    assert seen == [] and hits == [], (listed, found)
    assert forgot["ok"] is False and forgot["error"]["code"] == "not_found", forgot  # type: ignore[index]
    async with bearer_client(url, owner_token) as client:
        mine = _result(await client.call_tool("executeTool", {"tool_name": "memory__list", "arguments": {}}))
    assert [m["content"] for m in mine["result"]["memories"]] == [fact]  # type: ignore[index]


# -- secrets written in a readable config ----------------------------------------------------------------------


@pytest.mark.slow
def test_serve_refuses_a_token_written_in_a_config_others_can_read(
    env: dict[str, str], start_gateway: Callable[..., tuple[str, Path]]
) -> None:
    config = Path(env["JUNIOR_CONFIG"])
    config.write_text(f'[mcp.serve.tokens.alice]\ntoken = "{ALICE_TOKEN}"\nuser = "alice"\n')
    config.chmod(0o644)
    started = junior(env, "mcp", "serve", "--http", str(_free_port()))
    assert started.returncode == 1, started.stderr
    message = started.stderr
    assert f"{config}: [mcp.serve.tokens.alice] token: a secret written in a file other users can read " \
           "(mode 644)" in message
    assert f"chmod 600 {config}" in message and "${VAR}" in message
    assert ALICE_TOKEN not in message and "Traceback" not in message
    # The ${VAR} form is the recommended one and needs no change of mode.
    config.write_text('[mcp.serve.tokens.alice]\ntoken = "${ALICE_TOKEN}"\nuser = "alice"\n')
    assert junior(env, "mcp", "list", "--json").returncode == 0


@pytest.mark.slow
async def test_a_token_written_in_a_private_config_is_served(
    env: dict[str, str], start_gateway: Callable[..., tuple[str, Path]]
) -> None:
    config = Path(env["JUNIOR_CONFIG"])
    config.write_text(f'[mcp.serve.tokens.alice]\ntoken = "{ALICE_TOKEN}"\nuser = "alice"\n')
    config.chmod(0o600)
    url, _ = start_gateway(env)
    async with bearer_client(url, ALICE_TOKEN) as client:
        stored = await client.call_tool("searchTools", {"query": "anything"})
        assert stored.structured_content is not None, stored


@pytest.mark.slow
@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ({"headers": {"Authorization": "Bearer literal-secret-value"}}, "headers.Authorization"),
        ({"headers": {"X-Api-Key": "literal-secret-value"}}, "headers.X-Api-Key"),
        ({"oauth": {"client_id": "junior", "client_secret": "literal-secret-value"}}, "oauth.client_secret"),
    ],
)
def test_mcp_commands_refuse_a_literal_server_secret_in_a_readable_config(
    tmp_path: Path, entry: dict[str, object], key: str
) -> None:
    from mcp_bridge_helpers import write_toml

    config = write_toml(tmp_path / "junior.toml", {"remote": {"url": "http://127.0.0.1:9/mcp", **entry}})
    config.chmod(0o640)
    env = {**os.environ, "JUNIOR_CONFIG": str(config), "JUNIOR_LOAD_PLUGINS": "mcp",
           "JUNIOR_CACHE_DIR": str(tmp_path / "cache"), "JUNIOR_CONFIG_DIR": str(tmp_path / "config")}
    refused = junior(env, "mcp", "list", "--json")
    assert refused.returncode == 1
    assert f"{config}: [mcp.servers.remote] {key}: a secret written in a file other users can read (mode 640)" \
        in refused.stderr, refused.stderr
    assert "literal-secret-value" not in refused.stderr and "Traceback" not in refused.stderr
    config.chmod(0o600)  # the owner's alone: accepted (the server itself is not there, which is another matter)
    listed = junior(env, "mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [row["name"] for row in json.loads(listed.stdout)] == ["remote"]
