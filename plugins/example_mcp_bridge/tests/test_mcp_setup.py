"""Setups that fail loudly: commands found where pip put them, proxy settings passed on, a dead server's stderr shown."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp_bridge_helpers import gated, misbehaving, write_toml

from junior_core import Runtime
from junior_core.testing import wait_until

JUNIOR = str(Path(sys.executable).parent / "junior")


def junior(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([JUNIOR, *args], env=env, capture_output=True, text=True, timeout=90)


def bare_env(tmp_path: Path, config: Path, **extra: str) -> dict[str, str]:
    """What a desktop client gives the process it launches: a system PATH, none of junior's venv."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "JUNIOR_CONFIG": str(config), "JUNIOR_LOAD_PLUGINS": "mcp",
            "JUNIOR_CACHE_DIR": str(tmp_path / "cache"), **extra}


@pytest.mark.slow
def test_a_bare_command_not_on_path_is_found_next_to_junior_python(tmp_path: Path, no_orphans: None) -> None:
    assert shutil.which("mcp-server-time", path="/usr/bin:/bin") is None  # the point of the test
    config = write_toml(tmp_path / "junior.toml", {"time": {"command": "mcp-server-time"}})
    env = bare_env(tmp_path, config)
    checked = subprocess.run(["env", "-i", *(f"{k}={v}" for k, v in env.items()), JUNIOR, "mcp", "check"],
                             capture_output=True, text=True, timeout=90)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("ok      mcp:time: mcp-time"), checked.stdout
    called = junior(env, "exec", "mcp__time__get_current_time", "--args", '{"timezone": "UTC"}')
    assert called.returncode == 0, called.stderr
    assert '"timezone": "UTC"' in called.stdout


@pytest.mark.slow
def test_a_command_found_nowhere_says_where_it_was_looked_for(tmp_path: Path) -> None:
    config = write_toml(tmp_path / "junior.toml", {"nope": {"command": "junior-no-such-server"}})
    checked = junior(bare_env(tmp_path, config), "mcp", "check")
    assert checked.returncode == 1
    assert f"command not found: 'junior-no-such-server' (not on PATH, nor next to {sys.executable})" in checked.stdout


def test_proxy_and_ca_variables_reach_stdio_servers(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {"HTTPS_PROXY": "http://proxy.example:3128", "NO_PROXY": "localhost",
                        "NODE_EXTRA_CA_CERTS": "/etc/ssl/corp.pem", "SSL_CERT_FILE": "/etc/ssl/corp.pem",
                        "REQUESTS_CA_BUNDLE": "/etc/ssl/corp.pem", "HOST_SECRET": "do-not-leak"}.items():
        monkeypatch.setenv(name, value)
    rt = make_runtime({"env": misbehaving("env"), "narrow": misbehaving("env", pass_env=["HOST_SECRET"])})
    names = set(rt.execute_tool("mcp__env__show_env", {})["result"]["structured_content"]["names"])
    assert {"HTTPS_PROXY", "NO_PROXY", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"} <= names
    assert "HOST_SECRET" not in names
    # `pass_env` replaces the default list.
    narrow = set(rt.execute_tool("mcp__narrow__show_env", {})["result"]["structured_content"]["names"])
    assert "HOST_SECRET" in narrow and "HTTPS_PROXY" not in narrow


@pytest.mark.slow
def test_a_server_that_dies_shows_its_stderr_everywhere(
    make_runtime: Callable[..., Runtime], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("WARNING", logger="junior.mcp")
    rt = make_runtime({"dies": gated(tmp_path / "never", allowed_tools=["echo"])})
    said = f"{tmp_path / 'never'} does not exist yet"
    answer = rt.execute_tool("mcp__dies__echo", {})
    assert answer["error"]["code"] == "unavailable"
    assert said in answer["error"]["message"], answer
    assert "try again later" not in answer["error"]["message"].lower()
    assert f"MCP server 'dies' is unavailable: the server exited before it answered; its stderr ended with: {said}" \
        in caplog.text
    (source,) = rt.sources
    from junior_mcp_bridge.describe import STDERR_QUOTE_LIMIT, plain_line

    assert source["description"].endswith("Unavailable: the server exited; it needs its configuration fixed "
                                          f'(`junior mcp check`); stderr: "'
                                          f'{plain_line(said, STDERR_QUOTE_LIMIT)}".')

    config = write_toml(tmp_path / "junior.toml", {"dies": gated(tmp_path / "never")})
    checked = junior({**os.environ, "JUNIOR_CONFIG": str(config), "JUNIOR_LOAD_PLUGINS": "mcp"}, "mcp", "check")
    assert checked.returncode == 1
    assert f"FAILED  mcp:dies: the server exited before it answered; its stderr ended with: {said}" in checked.stdout


def test_a_server_that_may_come_back_is_advertised_as_worth_a_retry(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime({"hung": misbehaving("hang", startup_timeout_s=1), "gone": {"command": "/nonexistent/srv"}})
    described = {s["id"]: s["description"] for s in rt.sources}
    assert described["mcp:hung"].endswith("Unavailable: the server did not answer within 1 s of starting; "
                                          "try again later.")
    assert "try again" not in described["mcp:gone"] and "its command was not found" in described["mcp:gone"]
    assert "- mcp:gone: Tools of the MCP server 'gone'. Unavailable: the server did not start" in \
        rt.model_tools()[0]["description"]


@pytest.mark.slow
def test_a_command_that_is_not_an_mcp_server_is_one_line(tmp_path: Path, no_orphans: None) -> None:
    config = write_toml(tmp_path / "junior.toml", {"echo": {"command": "echo", "args": ["hello there"]}})
    env = {**os.environ, "JUNIOR_CONFIG": str(config), "JUNIOR_LOAD_PLUGINS": "mcp"}
    for args in (("mcp", "check"), ("-v", "mcp", "check")):
        checked = junior(env, *args)
        assert checked.returncode == 1
        assert checked.stdout.strip() == ("FAILED  mcp:echo: not an MCP server: the first line it wrote to stdout "
                                          "was 'hello there', not JSON-RPC (echo hello there)")
        assert "Traceback" not in checked.stderr and "validation error" not in checked.stderr, checked.stderr
    fresh = {**env, "JUNIOR_CACHE_DIR": str(tmp_path / "fresh-cache")}  # no failed start recorded yet
    searched = junior(fresh, "search", "hello")
    assert "Traceback" not in searched.stderr
    assert searched.stderr.count("\n") == 1, searched.stderr  # the one warning line
    assert "MCP server 'echo' is unavailable: not an MCP server" in searched.stderr
    again = junior(fresh, "search", "hello")  # its failed start is held: not started, not warned about again
    assert again.stderr == "", again.stderr


@pytest.mark.slow
def test_verbose_shows_a_servers_stderr_at_info(tmp_path: Path) -> None:
    # The smoke test of -v on a real command; how -v, --log-level and JUNIOR_LOG_LEVEL combine is tested in
    # process (tests/test_cli.py).
    config = write_toml(tmp_path / "junior.toml", {"dies": gated(tmp_path / "never")})
    env = {**os.environ, "JUNIOR_CONFIG": str(config), "JUNIOR_LOAD_PLUGINS": "mcp"}
    env.pop("JUNIOR_LOG_LEVEL", None)
    checked = junior(env, "-v", "mcp", "check")
    assert f"INFO junior.mcp.dies: {tmp_path / 'never'} does not exist yet" in checked.stderr, checked.stderr
    assert "DEBUG" not in checked.stderr


@pytest.mark.slow
def test_gateway_start_up_is_not_a_warning(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "JUNIOR_LOAD_PLUGINS": "mcp", "JUNIOR_CONFIG_DIR": str(tmp_path / "conf"),
           "JUNIOR_CONFIG": str(write_toml(tmp_path / "junior.toml", {}))}
    err = tmp_path / "err"
    with err.open("w") as out:
        proc = subprocess.Popen([JUNIOR, "mcp", "serve", "--http", str(port)], env=env, stderr=out,
                                stdout=subprocess.DEVNULL)
    def connects() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            return False

    try:
        listening = wait_until(connects, timeout=30, what=f"the gateway to listen (its stderr: {err})")
    finally:
        proc.terminate()
        proc.wait(15)
    assert listening, err.read_text()
    assert "WARNING" not in err.read_text()
