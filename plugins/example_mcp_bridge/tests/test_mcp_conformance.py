"""The MCP conformance suite's OAuth client scenarios against ``junior mcp check --url``.

Each scenario starts its own resource and authorization server, runs ``junior mcp check --url <its URL>`` (through
``servers/conformance_client.py``, which passes a scenario's pre-registered client as ``--client-id`` and
``--client-secret-env``) with a ``BROWSER`` that follows redirects, and judges every request junior made.
``make install`` installs the suite and the Node it needs from ``conformance/package.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_bridge_helpers import HERE

pytestmark = pytest.mark.slow

SUITE = HERE / "conformance"
NODE_BIN = SUITE / "node_modules" / ".bin"
CLIENT = HERE / "servers" / "conformance_client.py"
FOLLOW = HERE / "servers" / "follow_redirects.py"

PASSING = [
    "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
    "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
    "auth/scope-retry-limit", "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none", "auth/pre-registration",
    "auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported", "auth/basic-cimd",
]
# Scenarios whose named checks do not pass, and why; every other check of theirs must.
KNOWN_GAPS = {
    # The step-up is asked for on a tool call; `junior mcp check` lists tools and calls none.
    "auth/scope-step-up": {"scope-step-up-escalation"},
    # The legacy server's metadata names the issuer `<origin>/oauth`; the SDK requires the origin (RFC 8414 3.3)
    # and stops before registering.
    "auth/2025-03-26-oauth-metadata-backcompat": {"client-registration", "authorization-request", "token-request"},
    # A server publishing no metadata: the 2025-03-26 spec allows default endpoints, but nothing there says PKCE
    # with S256 is offered, so junior refuses the login rather than risk one without it (docs/security.md).
    "auth/2025-03-26-oauth-endpoint-fallback": {"client-registration", "authorization-request", "token-request"},
}
# Machine-to-machine grants (client credentials, identity assertions), not a person's login.
NOT_A_LOGIN = ["auth/client-credentials-jwt", "auth/client-credentials-basic", "auth/cross-app-access-complete-flow"]


def conformance(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    binary = NODE_BIN / "conformance"
    assert binary.exists(), f"the MCP conformance suite is not installed in {SUITE}: run `make install` (needs npm)"
    environ = {**(env or os.environ), "PATH": f"{NODE_BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([str(binary), *args], env=environ, cwd=cwd, capture_output=True, text=True, timeout=240)


def test_every_auth_scenario_of_the_suite_is_accounted_for() -> None:
    listed = conformance("list")
    assert listed.returncode == 0, listed.stderr
    scenarios = {line.strip()[2:].split()[0] for line in listed.stdout.splitlines()
                 if line.strip().startswith("- auth/")}
    assert scenarios == set(PASSING) | set(KNOWN_GAPS) | set(NOT_A_LOGIN)


@pytest.mark.parametrize("scenario", PASSING + sorted(KNOWN_GAPS))
def test_auth_scenario(scenario: str, tmp_path: Path) -> None:
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "JUNIOR_LOAD_PLUGINS": "mcp",
           "JUNIOR_CACHE_DIR": str(tmp_path / "cache"), "BROWSER": f"{sys.executable} {FOLLOW} %s"}
    env.pop("JUNIOR_CONFIG", None)
    env.pop("JUNIOR_MCP_CONFIG", None)
    out = tmp_path / "results"
    ran = conformance("client", "--command", f"{sys.executable} {CLIENT}", "--scenario", scenario,
                      "--timeout", "120000", "-o", str(out), env=env, cwd=tmp_path)
    (checks_file,) = out.rglob("checks.json")
    checks = json.loads(checks_file.read_text())
    assert len(checks) >= 2, ran.stdout
    not_passed = {c["id"] for c in checks if c["status"] not in ("SUCCESS", "INFO")}
    client_said = "".join(p.read_text() for p in checks_file.parent.glob("std*.txt"))
    assert not_passed == KNOWN_GAPS.get(scenario, set()), ran.stdout[-3000:] + client_said
    assert "Traceback" not in client_said
    tokens = [json.loads(p.read_text()).get("tokens", {}) for p in (tmp_path / "data").rglob("mcp-oauth/*.json")]
    for secret in (t.get(key) for t in tokens for key in ("access_token", "refresh_token")):
        if secret:
            assert secret not in client_said
