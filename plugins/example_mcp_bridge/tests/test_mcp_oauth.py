"""OAuth 2.1 to remote servers, against a real authorization server (the MCP SDK's server auth, in a subprocess).

The server's ``/authorize`` approves at once and redirects back with a code, and ``BROWSER`` is a script that
follows redirects, so the whole browser flow runs: discovery, registration, PKCE, the loopback redirect, the
token exchange, refresh, and a bot that cannot log in.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from junior_mcp_bridge import MCPBridge
from junior_mcp_bridge.config import ConfigError, load_config
from mcp_bridge_helpers import HERE, write_toml

from junior_core import Runtime
from junior_core.testing import wait_until

JUNIOR = str(Path(sys.executable).parent / "junior")
SERVER = str(HERE / "servers" / "oauth_server.py")
FOLLOW = str(HERE / "servers" / "follow_redirects.py")
WATCHED = str(HERE / "servers" / "watched_browser.py")


class AuthServer:
    def __init__(self, port: int, proc: subprocess.Popen[bytes]) -> None:
        self.port, self.proc = port, proc
        self.url = f"http://127.0.0.1:{port}/mcp"

    def stats(self) -> dict[str, int]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/admin/stats", timeout=10) as answer:
            stats: dict[str, int] = json.loads(answer.read())
            return stats

    def revoke(self, what: str = "access") -> None:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/admin/revoke?what={what}", method="POST")
        urllib.request.urlopen(request, timeout=10).close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def auth_server(tmp_path: Path) -> Iterator[Callable[..., AuthServer]]:
    procs: list[subprocess.Popen[bytes]] = []

    def start(*args: str) -> AuthServer:
        port = _free_port()
        with (tmp_path / f"server-{port}.log").open("wb") as log:
            proc = subprocess.Popen([sys.executable, SERVER, str(port), *args], stdout=log, stderr=log)
        procs.append(proc)
        server = AuthServer(port, proc)

        def answering() -> bool:
            try:
                server.stats()
                return True
            except OSError:
                if proc.poll() is not None:
                    raise AssertionError((tmp_path / f"server-{port}.log").read_text()) from None
                return False

        # A loaded machine takes its time importing the SDK.
        wait_until(answering, timeout=90, what=f"the auth server (log: {tmp_path / f'server-{port}.log'})")
        return server

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of a person at a machine whose browser approves every login; their data dir is fresh."""
    data = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.delenv("BROWSER", raising=False)
    return {**os.environ, "XDG_DATA_HOME": str(data), "JUNIOR_LOAD_PLUGINS": "mcp",
            "BROWSER": f"{sys.executable} {FOLLOW} %s", "JUNIOR_TEST_BROWSER_LOG": str(tmp_path / "browser.log"),
            "JUNIOR_CACHE_DIR": str(tmp_path / "cache")}


def junior(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([JUNIOR, *args], env=env, capture_output=True, text=True, timeout=120)


def browser_visits(env: dict[str, str]) -> list[str]:
    """The URL each browser was started with."""
    path = Path(env["JUNIOR_TEST_BROWSER_LOG"])
    return [line.split("\t")[0] for line in path.read_text().splitlines()] if path.exists() else []


def authorization_urls(env: dict[str, str]) -> list[str]:
    """Where each browser was sent to log in: the first redirect from the URL it was started with."""
    path = Path(env["JUNIOR_TEST_BROWSER_LOG"])
    return [line.split("\t")[1] for line in path.read_text().splitlines()] if path.exists() else []


def token_files(env: dict[str, str]) -> list[Path]:
    return sorted((Path(env["XDG_DATA_HOME"]) / "junior" / "mcp-oauth").glob("*.json"))


def bot(tmp_path: Path, servers: dict[str, dict[str, Any]]) -> Runtime:
    """What a bot runs: a runtime with no browser to log in with (BROWSER unset in this process)."""
    configs = load_config(environ={"JUNIOR_CONFIG": str(write_toml(tmp_path / "junior.toml", servers))})
    return Runtime(plugins=[MCPBridge(configs)])


@pytest.mark.slow
def test_check_url_logs_in_in_the_browser_and_keeps_the_tokens_private(
    auth_server: Callable[..., AuthServer], user: dict[str, str]
) -> None:
    server = auth_server()
    checked = junior(user, "-vv", "mcp", "check", "--url", server.url)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines() == [
        "ok      mcp:127-0-0-1: oauth-test 1.0, 1 tools, protocol 2025-11-25, connected in "
        + checked.stdout.split("connected in ")[1].splitlines()[0],
        "        - whoami",
    ]
    (visit,) = authorization_urls(user)
    query = {k: v[0] for k, v in parse_qs(urlsplit(visit).query).items()}
    assert visit.startswith(f"http://127.0.0.1:{server.port}/authorize?")
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert urlsplit(query["redirect_uri"]).hostname == "127.0.0.1"
    assert query["resource"] == server.url and query["scope"] == "tools"
    assert server.stats() == {"registrations": 1, "authorization_code": 1, "refresh_token": 0, "refused": 0}

    (path,) = token_files(user)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    tokens = json.loads(path.read_text())["tokens"]
    for secret in (tokens["access_token"], tokens["refresh_token"]):
        assert secret not in checked.stdout + checked.stderr  # not even at DEBUG

    again = junior(user, "mcp", "check", "--url", server.url)
    assert again.returncode == 0, again.stderr
    assert len(browser_visits(user)) == 1  # the kept token was used: no second login
    assert server.stats()["authorization_code"] == 1


@pytest.mark.slow
def test_an_expired_or_revoked_access_token_is_refreshed_without_a_browser(
    auth_server: Callable[..., AuthServer], user: dict[str, str], tmp_path: Path
) -> None:
    server = auth_server()
    servers = {"remote": {"url": server.url}}
    user["JUNIOR_CONFIG"] = str(write_toml(tmp_path / "junior.toml", servers))
    logged_in = junior(user, "mcp", "login", "remote")
    assert logged_in.returncode == 0, logged_in.stdout + logged_in.stderr
    assert logged_in.stdout.startswith("Logged in to mcp:remote (oauth-test 1.0, 1 tools); tokens kept in ")
    (path,) = token_files(user)
    kept = json.loads(path.read_text())
    first = kept["tokens"]["access_token"]

    # The access token has expired by the time kept beside it (rewritten rather than waited out); the server
    # would still take it, so only a refresh explains a new one.
    path.write_text(json.dumps({**kept, "expires_at": time.time() - 1}))
    with bot(tmp_path, servers) as rt:
        answer = rt.execute_tool("mcp__remote__whoami", {})
    assert answer["ok"], answer
    assert answer["result"]["structured_content"] == {"result": "authorized"}
    assert server.stats()["refresh_token"] == 1
    assert json.loads(path.read_text())["tokens"]["access_token"] != first

    server.revoke("access")  # still valid by the clock, but the server refuses it
    with bot(tmp_path, servers) as rt:
        assert rt.execute_tool("mcp__remote__whoami", {})["ok"]
    assert server.stats()["refresh_token"] == 2
    assert len(browser_visits(user)) == 1  # only the login's
    assert server.stats()["authorization_code"] == 1


@pytest.mark.slow
def test_a_bot_whose_login_was_revoked_says_to_run_junior_mcp_login(
    auth_server: Callable[..., AuthServer], user: dict[str, str], tmp_path: Path
) -> None:
    server = auth_server()
    servers = {"remote": {"url": server.url, "allowed_tools": ["whoami"]}}
    user["JUNIOR_CONFIG"] = str(write_toml(tmp_path / "junior.toml", servers))
    assert junior(user, "mcp", "login", "remote").returncode == 0
    server.revoke("all")  # access and refresh tokens: only a new login helps

    with bot(tmp_path, servers) as rt:
        (source,) = rt.sources
        assert source["description"].endswith("Unavailable: it needs a login; run `junior mcp login remote`.")
        answer = rt.execute_tool("mcp__remote__whoami", {})
    assert answer["error"]["code"] == "unavailable"
    assert "run `junior mcp login remote`" in answer["error"]["message"]
    assert "try again later" not in answer["error"]["message"].lower()
    assert len(browser_visits(user)) == 1  # a bot never opens a browser

    checked = junior({**user, "BROWSER": "false"}, "mcp", "check")
    assert checked.returncode == 1
    assert checked.stdout.startswith("FAILED  mcp:remote: the server needs a login: run `junior mcp login remote`")
    assert "Traceback" not in checked.stderr

    assert junior(user, "mcp", "login", "remote").returncode == 0
    assert server.stats()["registrations"] == 1  # the registration is kept; only the tokens were new
    with bot(tmp_path, servers) as rt:
        assert rt.execute_tool("mcp__remote__whoami", {})["ok"]

    out = junior(user, "mcp", "logout", "remote")
    assert out.returncode == 0 and out.stdout.startswith("Logged out of mcp:remote: removed ")
    assert token_files(user) == []
    assert junior(user, "mcp", "logout", "remote").stdout.startswith("Not logged in to mcp:remote")
    with bot(tmp_path, servers) as rt:
        assert rt.execute_tool("mcp__remote__whoami", {})["error"]["code"] == "unavailable"


@pytest.mark.slow
def test_a_pre_registered_client_logs_in_with_its_secret_from_the_environment(
    auth_server: Callable[..., AuthServer], user: dict[str, str], tmp_path: Path
) -> None:
    port = _free_port()  # the one redirect URI the client was registered with
    server = auth_server("--no-registration", "--redirect-port", str(port))
    user["TEST_CLIENT_SECRET"] = "junior-test-secret"
    oauth = {"client_id": "junior-test", "client_secret": "${TEST_CLIENT_SECRET}", "callback_port": port}
    user["JUNIOR_CONFIG"] = str(write_toml(tmp_path / "junior.toml", {"remote": {"url": server.url,
                                                                                   "oauth": oauth}}))
    logged_in = junior(user, "mcp", "login", "remote")
    assert logged_in.returncode == 0, logged_in.stdout + logged_in.stderr
    assert server.stats()["registrations"] == 0
    (path,) = token_files(user)
    assert "junior-test-secret" not in path.read_text()  # the secret stays where it was configured
    (visit,) = authorization_urls(user)
    assert "client_id=junior-test&" in visit
    assert f"redirect_uri=http%3A%2F%2F127.0.0.1%3A{port}%2Fcallback&" in visit

    # The same without the secret: the server refuses the client, and the failure is one line.
    user["JUNIOR_CONFIG"] = str(write_toml(tmp_path / "junior.toml", {"remote": {
        "url": server.url, "oauth": {**oauth, "client_secret": "wrong"}}}))
    (tmp_path / "junior.toml").chmod(0o600)  # a secret written in the file: the file must be private
    failed = junior(user, "mcp", "login", "remote")
    assert failed.returncode == 1
    assert failed.stdout.startswith('FAILED  mcp:remote: the OAuth login failed: OAuthTokenError: Token exchange '
                                    'failed (401): {"error":"invalid_client"'), failed.stdout
    assert "Traceback" not in failed.stderr


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0 or not Path("/proc/net/tcp").exists(),
                    reason="acting as another local user needs root, and Linux says whose a connection is")
def test_another_local_user_cannot_finish_the_login(
    auth_server: Callable[..., AuthServer], user: dict[str, str], tmp_path: Path
) -> None:
    server = auth_server()
    user["JUNIOR_CONFIG"] = str(write_toml(tmp_path / "junior.toml", {"remote": {"url": server.url}}))
    user["BROWSER"] = f"{sys.executable} {WATCHED} %s"
    logged_in = junior(user, "mcp", "login", "remote")
    assert logged_in.returncode == 0, logged_in.stdout + logged_in.stderr
    seen = json.loads(Path(user["JUNIOR_TEST_BROWSER_LOG"]).read_text())
    # The command line every local user can read holds a one-time local URL, not the authorization URL.
    command_line = urlsplit(seen["command line"])
    assert (command_line.hostname, command_line.path[:7]) == ("127.0.0.1", "/login/")
    assert command_line.port != server.port and "state" not in command_line.query
    assert seen["other user"] == 403, logged_in.stderr  # the one-time URL is refused to another user
    assert seen["forged state"] == 400  # an answer for another login is refused, and the login waits on
    assert seen["other user, authorization URL"] == 403  # the callback is refused to another user
    assert seen["browser"] == 200
    assert seen["browser again"] == 410  # the one-time URL worked once
    assert logged_in.stderr.count("junior refused a request to its login listener") == 4
    assert server.stats()["authorization_code"] == 1


@pytest.mark.slow
def test_login_after_a_bot_registered_junior_uses_a_redirect_uri_the_registration_holds(
    auth_server: Callable[..., AuthServer], user: dict[str, str], tmp_path: Path
) -> None:
    server = auth_server()
    user["JUNIOR_CONFIG"] = str(write_toml(tmp_path / "junior.toml", {"remote": {"url": server.url}}))
    checked = junior({**user, "BROWSER": "false"}, "mcp", "check")  # registers junior, but cannot log in
    assert checked.stdout.startswith("FAILED  mcp:remote: the server needs a login"), checked.stdout
    assert server.stats()["registrations"] == 1
    logged_in = junior(user, "mcp", "login", "remote")
    assert logged_in.returncode == 0, logged_in.stdout + logged_in.stderr
    assert server.stats()["registrations"] == 2  # registered again, with the redirect URI the login listens on


@pytest.mark.slow
def test_a_login_the_authorization_server_refuses_fails_at_once_saying_why(
    auth_server: Callable[..., AuthServer], user: dict[str, str], tmp_path: Path
) -> None:
    server = auth_server("--no-registration", "--redirect-port", str(_free_port()))
    oauth = {"client_id": "junior-test", "client_secret": "junior-test-secret", "callback_port": _free_port()}
    user["JUNIOR_CONFIG"] = str(write_toml(tmp_path / "junior.toml", {"remote": {"url": server.url,
                                                                                   "oauth": oauth}}))
    (tmp_path / "junior.toml").chmod(0o600)  # the secret is written in it
    started = time.monotonic()
    failed = junior(user, "mcp", "login", "remote")
    assert failed.returncode == 1
    assert failed.stdout.startswith("FAILED  mcp:remote: the OAuth login failed: the authorization server refused "
                                    "the login request: HTTP 400: invalid_request Redirect URI "), failed.stdout
    assert "not registered" in failed.stdout
    assert time.monotonic() - started < 60  # not the login's 5 minutes
    assert browser_visits(user) == []  # no browser was sent to an error page


@pytest.mark.slow
@pytest.mark.parametrize(("pkce", "offered"), [("none", "none"), ("plain", "plain")])
def test_an_authorization_server_without_pkce_s256_is_refused(
    auth_server: Callable[..., AuthServer], user: dict[str, str], pkce: str, offered: str
) -> None:
    server = auth_server("--pkce", pkce)
    checked = junior(user, "mcp", "check", "--url", server.url)
    assert checked.returncode == 1
    assert checked.stdout.startswith(
        "FAILED  mcp:127-0-0-1: the OAuth login failed: the authorization server does not offer PKCE with S256 "
        f"(its metadata's code_challenge_methods_supported: {offered}); junior does not log in without it"
    ), checked.stdout
    assert browser_visits(user) == []  # refused before any browser was sent there
    assert server.stats()["authorization_code"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("path", ["/.well-known/oauth-authorization-server", "/token"])
def test_a_huge_answer_from_the_authorization_server_is_refused_unread(
    auth_server: Callable[..., AuthServer], user: dict[str, str], path: str
) -> None:
    server = auth_server("--huge", path)
    checked = junior(user, "mcp", "check", "--url", server.url)
    assert checked.returncode == 1
    assert checked.stdout.startswith(
        f"FAILED  mcp:127-0-0-1: the OAuth login failed: the answer of http://127.0.0.1:{server.port}{path} is "
        "larger than 512 KB; junior refused to read it"), checked.stdout
    assert "Traceback" not in checked.stderr


@pytest.mark.slow
def test_a_token_file_others_can_read_or_a_symlink_is_refused_naming_the_file_and_the_fix(
    auth_server: Callable[..., AuthServer], user: dict[str, str], tmp_path: Path
) -> None:
    server = auth_server()
    user["JUNIOR_CONFIG"] = str(write_toml(tmp_path / "junior.toml", {"remote": {"url": server.url}}))
    assert junior(user, "mcp", "login", "remote").returncode == 0
    (path,) = token_files(user)
    fix = "Run `junior mcp logout remote` to remove it, then `junior mcp login remote`."

    path.chmod(0o644)
    checked = junior({**user, "BROWSER": "false"}, "mcp", "check")
    assert checked.returncode == 1
    assert checked.stdout.startswith(
        f"FAILED  mcp:remote: the OAuth login failed: the OAuth token file {path} can be read by other users "
        f"(mode 644) or is not yours: what it holds may be known to others. {fix}"), checked.stdout

    elsewhere = tmp_path / "elsewhere.json"
    path.rename(elsewhere)
    elsewhere.chmod(0o600)
    path.symlink_to(elsewhere)
    checked = junior({**user, "BROWSER": "false"}, "mcp", "check")
    assert checked.returncode == 1
    assert checked.stdout.startswith(
        f"FAILED  mcp:remote: the OAuth login failed: the OAuth token file {path} is a symbolic link, which junior "
        "does not follow"), checked.stdout
    assert fix in checked.stdout and "Traceback" not in checked.stderr

    assert junior(user, "mcp", "logout", "remote").returncode == 0  # the fix it names works
    assert elsewhere.exists() and not path.exists()  # the link was removed, not what it pointed to
    assert junior(user, "mcp", "login", "remote").returncode == 0
    assert junior({**user, "BROWSER": "false"}, "mcp", "check").returncode == 0


@pytest.mark.parametrize(("fields", "problem"), [
    ({"command": "x", "oauth": True}, "[mcp.servers.s] oauth: only applies to `url` servers"),
    ({"url": "https://h/mcp", "oauth": {"client": "x"}}, "[mcp.servers.s] oauth.client: unknown field; use "
                                                         "callback_port, client_id, client_metadata_url, "
                                                         "client_secret, scope, token_endpoint_auth_method"),
    ({"url": "https://h/mcp", "oauth": {"client_metadata_url": "http://junior.example/client.json"}},
     "oauth.client_metadata_url: must be an https URL with a path"),
    ({"url": "https://h/mcp", "oauth": {"client_metadata_url": "https://junior.example/"}},
     "oauth.client_metadata_url: must be an https URL with a path"),
    ({"url": "https://h/mcp", "oauth": {"client_metadata_url": "https://junior.example/c.json", "client_id": "c"}},
     "oauth.client_metadata_url: is a client id of its own; set it or `client_id`, not both"),
    ({"url": "https://h/mcp", "oauth": {"client_secret": "s"}}, "oauth.client_secret: needs `client_id`"),
    ({"url": "https://h/mcp", "oauth": {"client_id": "${NOPE_NOT_SET}"}},
     "oauth.client_id: refers to ${NOPE_NOT_SET}, which is not set in the environment"),
    ({"url": "https://h/mcp", "oauth": {"callback_port": 0}}, "oauth.callback_port: must be a port number"),
    ({"url": "https://h/mcp", "oauth": "yes"}, "oauth: must be true, false or a table"),
])
def test_invalid_oauth_settings_name_the_field(tmp_path: Path, fields: dict[str, Any], problem: str) -> None:
    path = write_toml(tmp_path / "junior.toml", {"s": fields})
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"JUNIOR_CONFIG": str(path)})
    assert problem in str(caught.value)


def test_oauth_is_on_for_remote_servers_unless_they_carry_their_own_authorization(tmp_path: Path) -> None:
    path = write_toml(tmp_path / "junior.toml", {
        "plain": {"url": "https://h/mcp"},
        "header": {"url": "https://h/mcp", "headers": {"authorization": "Bearer x"}},
        "off": {"url": "https://h/mcp", "oauth": False},
        "fixed": {"url": "https://h/mcp", "oauth": {"client_id": "c", "callback_port": 8976, "scope": "a b"}},
        "local": {"command": "x"},
    })
    path.chmod(0o600)  # "Bearer x" is written in the file
    configs = {c.name: c for c in load_config(environ={"JUNIOR_CONFIG": str(path)})}
    assert configs["plain"].oauth is not None and configs["plain"].oauth.client_id is None
    assert configs["header"].oauth is None and configs["off"].oauth is None and configs["local"].oauth is None
    fixed = configs["fixed"].oauth
    assert fixed is not None and (fixed.client_id, fixed.callback_port, fixed.scope) == ("c", 8976, "a b")


def _serving(port: int) -> bool:
    try:
        socket.create_connection(("localhost", port), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.fixture
def sdk_example(tmp_path: Path) -> Iterator[str]:
    """The MCP SDK's example authorization and resource servers (``servers/simple_auth``): its authorization
    server matches redirect URIs exactly and signs its demo user in on a form. Yields the MCP endpoint's URL."""
    auth, resource = _free_port(), _free_port()
    env = {**os.environ, "PYTHONPATH": str(HERE / "servers")}
    procs = []
    for name, args in (("auth_server", ["--port", str(auth)]),
                       ("server", ["--port", str(resource), "--auth-server", f"http://localhost:{auth}"])):
        with (tmp_path / f"{name}.log").open("wb") as log:
            procs.append(subprocess.Popen([sys.executable, "-m", f"simple_auth.{name}", *args], env=env,
                                          stdout=log, stderr=log))
    try:

        def serving() -> bool:
            if any(p.poll() is not None for p in procs):
                raise AssertionError("".join(p.read_text() for p in tmp_path.glob("*.log")))
            return _serving(auth) and _serving(resource)

        wait_until(serving, timeout=90, what="the SDK's auth and resource servers")  # a loaded machine: slow imports
        yield f"http://localhost:{resource}/mcp"
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)


@pytest.mark.slow
def test_check_then_login_against_the_sdk_example_authorization_server(
    sdk_example: str, user: dict[str, str], tmp_path: Path
) -> None:
    """The order a new user runs: `check` (no browser: it registers junior and reports the login needed), then
    `login` with a person signing in on the server's form, then everything works without a browser."""
    user["JUNIOR_CONFIG"] = str(write_toml(tmp_path / "junior.toml", {"example": {"url": sdk_example}}))
    user["BROWSER"] = f"{sys.executable} {HERE / 'servers' / 'form_browser.py'} %s"
    checked = junior({**user, "BROWSER": "false"}, "mcp", "check")
    assert checked.stdout.startswith("FAILED  mcp:example: the server needs a login: run `junior mcp login "
                                     "example`"), checked.stdout + checked.stderr
    began = time.monotonic()
    logged_in = junior(user, "mcp", "login", "example")
    assert logged_in.returncode == 0, logged_in.stdout + logged_in.stderr
    assert logged_in.stdout.startswith("Logged in to mcp:example (MCP Resource Server"), logged_in.stdout
    assert time.monotonic() - began < 60, "the login waited for its timeout"
    visits = Path(user["JUNIOR_TEST_BROWSER_LOG"]).read_text()
    assert "/login/callback" in visits and "/callback?code=" in visits  # signed in on the form, code sent back
    after = junior({**user, "BROWSER": "false"}, "mcp", "check")
    assert after.returncode == 0 and after.stdout.startswith("ok      mcp:example: MCP Resource Server"), after.stdout


@pytest.mark.slow
@pytest.mark.parametrize("how", ["garbage", "loop", "offorigin"])
def test_unusable_authorization_server_metadata_is_refused_not_replaced_by_defaults(
    auth_server: Callable[..., AuthServer], user: dict[str, str], how: str
) -> None:
    server = auth_server("--metadata", how)
    checked = junior(user, "mcp", "check", "--url", server.url)
    assert checked.returncode == 1
    assert checked.stdout.startswith(
        "FAILED  mcp:127-0-0-1: the OAuth login failed: the authorization server published no usable metadata"
    ), checked.stdout
    assert browser_visits(user) == []  # refused before any browser was sent to a default /authorize
    assert server.stats()["authorization_code"] == 0 and token_files(user) == []
    assert "Traceback" not in checked.stderr


@pytest.mark.slow
def test_check_url_gives_up_on_metadata_sent_a_byte_a_second(
    auth_server: Callable[..., AuthServer], user: dict[str, str]
) -> None:
    server = auth_server("--metadata", "slow")
    started = time.monotonic()
    checked = junior(user, "mcp", "check", "--url", server.url)
    assert checked.returncode == 1
    assert checked.stdout.startswith(
        f"FAILED  mcp:127-0-0-1: the OAuth login failed: http://127.0.0.1:{server.port}/.well-known/"
        "oauth-authorization-server did not answer in full within 5 s; junior gave up on it"), checked.stdout
    assert time.monotonic() - started < 60  # not the login's 5 minutes (it hung for over 120 s)
    assert browser_visits(user) == []


@pytest.mark.slow
def test_check_url_on_a_closed_port_is_one_clear_line(user: dict[str, str]) -> None:
    url = f"http://127.0.0.1:{_free_port()}/mcp"
    checked = junior(user, "mcp", "check", "--url", url)
    assert checked.returncode == 1
    host = url.removesuffix("/mcp")
    assert checked.stdout == f"FAILED  mcp:127-0-0-1: cannot connect to {host} (All connection attempts failed) " \
                             f"({url})\n", checked.stdout
    assert checked.stderr == "", checked.stderr


@pytest.mark.slow
def test_an_oauth_directory_others_can_enter_is_made_private(
    auth_server: Callable[..., AuthServer], user: dict[str, str]
) -> None:
    server = auth_server()
    directory = Path(user["XDG_DATA_HOME"]) / "junior" / "mcp-oauth"
    directory.mkdir(parents=True)
    directory.chmod(0o755)  # made by hand, or by an older junior, under the usual umask
    checked = junior(user, "mcp", "check", "--url", server.url)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert f"the OAuth token directory {directory} could be entered or changed by other users (mode 755); " \
           "made it private (700)" in checked.stderr, checked.stderr
    again = junior(user, "mcp", "check", "--url", server.url)
    assert "could be entered" not in again.stderr  # said once: it is private now


@pytest.mark.parametrize(("flags", "said"), [
    (["--client-metadata-url", "http://junior.example/c.json"],
     "Error: --client-metadata-url: must be an https URL with a path"),
    (["--client-metadata-url", "https://junior.example/c.json", "--client-id", "c", "--callback-port", "8976"],
     "Error: --client-metadata-url: is a client id of its own; set it or --client-id, not both"),
    (["--callback-port", "0", "--client-id", "c"], "Error: --callback-port: must be a port number"),
])
def test_check_url_errors_name_its_flags(user: dict[str, str], flags: list[str], said: str) -> None:
    checked = junior(user, "mcp", "check", "--url", "https://mcp.example.invalid/mcp", *flags)
    assert checked.returncode == 2, checked.stderr
    assert said in checked.stderr, checked.stderr
    assert "oauth." not in checked.stderr and "Traceback" not in checked.stderr


REPO = HERE.parents[2]
DOC_MARK = "<!-- the lines below are run by test_the_docs_oauth_example_runs_as_written -->"


def _free_ports(*names: str) -> dict[str, str]:
    return {name: str(_free_port()) for name in names}


def _run_doc_lines(script: Path, tmp_path: Path, timeout: float, variables: dict[str, str]) -> tuple[str, str]:
    """Run a doc's lines under ``bash -e`` from the clone's root with ``variables`` set and junior's data, cache
    and browser log in ``tmp_path``; the servers they started are stopped even if a line failed."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", **variables,
           "XDG_DATA_HOME": str(tmp_path / "data"), "JUNIOR_CACHE_DIR": str(tmp_path / "cache"),
           "JUNIOR_LOAD_PLUGINS": "mcp", "JUNIOR_TEST_BROWSER_LOG": str(tmp_path / "browser.log")}
    env.pop("BROWSER", None)
    proc = subprocess.Popen(["bash", "-e", str(script)], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        return proc.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)


@pytest.mark.slow
def test_the_docs_oauth_example_runs_as_written(tmp_path: Path) -> None:
    """docs/mcp-bridge.md's lines that start the example authorization and resource servers and log in, run by
    bash from the clone's root exactly as they are written there (only the ports are chosen, through the
    variables the lines read)."""
    text = (REPO / "docs" / "mcp-bridge.md").read_text()
    block = text.split(DOC_MARK, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    assert "junior mcp check --url http://localhost:$MCP_PORT/mcp" in block
    script = tmp_path / "example.sh"
    script.write_text(block)
    # (under `bash -e` a failing line stops the script before its `ok` line)
    out, err = _run_doc_lines(script, tmp_path, 240, _free_ports("AUTH_PORT", "MCP_PORT"))
    assert any(line.startswith("ok      mcp:localhost: MCP Resource Server, 1 tools") for line in out.splitlines()), \
        out + err
    assert "        - get_time" in out.splitlines(), out
    assert "/login/callback" in (tmp_path / "browser.log").read_text()  # signed in on the form


CIMD_MARK = "<!-- the lines below are run by test_the_docs_cimd_example_runs_as_written -->"


@pytest.mark.slow
def test_the_docs_cimd_example_runs_as_written(tmp_path: Path) -> None:
    """docs/mcp-bridge.md's client ID metadata document lines, run by bash from the clone's root as written (only
    the ports and the certificate's path chosen, through the variables the lines read): junior logs in with the
    document's URL as its client id against the example authorization server, which fetched it, and registers
    nothing."""
    text = (REPO / "docs" / "mcp-bridge.md").read_text()
    block = text.split(CIMD_MARK, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    assert "--client-metadata-url https://localhost:$DOC_PORT/client.json" in block
    script = tmp_path / "cimd.sh"
    # The servers are stopped when a line fails too (under `bash -e` the `kill` line is never reached then).
    script.write_text("trap 'kill $(jobs -p) 2>/dev/null' EXIT\n" + block)
    ports = _free_ports("AUTH_PORT", "MCP_PORT", "DOC_PORT", "CALLBACK_PORT")
    out, err = _run_doc_lines(script, tmp_path, 120, {**ports, "CIMD_CERT": str(tmp_path / "cert.pem")})
    assert any(line.startswith("ok      mcp:localhost: MCP Resource Server, 1 tools") for line in out.splitlines()), \
        out + err
    browsed = (tmp_path / "browser.log").read_text()
    assert "/login/callback" in browsed  # signed in on the form
    # The authorization request carried the document's URL as client_id; nothing was registered.
    assert f"client_id=https%3A%2F%2Flocalhost%3A{ports['DOC_PORT']}%2Fclient.json" in browsed, browsed
    assert "POST /register" not in err, err
