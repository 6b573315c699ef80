"""An MCP server behind OAuth 2.1, with its own authorization server: the MCP SDK's server auth, in memory.

``python oauth_server.py PORT [--expires-in S] [--no-registration] [--redirect-port P] [--pkce S256|plain|none]
[--huge PATH] [--metadata garbage|loop|offorigin|slow]``. ``/authorize`` approves at once and redirects back with a code (no login page), so a browser that
follows redirects completes the flow. ``--pkce`` changes what the metadata's ``code_challenge_methods_supported``
says (``none`` leaves it out); ``--huge PATH`` answers PATH (a metadata, registration or token endpoint) with
150 MB of valid JSON; ``--metadata`` makes every authorization-server metadata address answer with garbage, a
redirect to itself, a redirect to another origin, or its JSON a byte a second (``/authorize`` and ``/token``
still work, so a client that falls back to them logs in). Test hooks:
``POST /admin/revoke?what=access|all`` revokes the access tokens (or every token), ``GET /admin/stats`` counts
grants by type and registrations. A pre-registered client ``junior-test`` with secret ``junior-test-secret``
and the redirect URI ``http://127.0.0.1:<redirect port>/callback`` always exists.
"""

from __future__ import annotations

import argparse
import json
import secrets
import time
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

PRE_REGISTERED = "junior-test"
PRE_REGISTERED_SECRET = "junior-test-secret"


class Provider:
    """Every client, code and token in dictionaries; codes are approved without asking anyone."""

    def __init__(self, expires_in: int, redirect_port: int) -> None:
        self.expires_in = expires_in
        self.clients: dict[str, OAuthClientInformationFull] = {
            PRE_REGISTERED: OAuthClientInformationFull(
                client_id=PRE_REGISTERED, client_secret=PRE_REGISTERED_SECRET,
                redirect_uris=[AnyUrl(f"http://127.0.0.1:{redirect_port}/callback")],
                token_endpoint_auth_method="client_secret_basic", scope="tools",
                grant_types=["authorization_code", "refresh_token"]),
        }
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.stats = {"registrations": 0, "authorization_code": 0, "refresh_token": 0, "refused": 0}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        self.stats["registrations"] += 1

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id or "",
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(code.code, None)
        self.stats["authorization_code"] += 1
        return self._issue(client.client_id or "", code.scopes, code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, token: str) -> RefreshToken | None:
        found = self.refresh.get(token)
        if found is None:
            self.stats["refused"] += 1
        return found

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        if self.refresh.pop(token.token, None) is None:
            raise TokenError("invalid_grant", "refresh token revoked")
        self.stats["refresh_token"] += 1
        return self._issue(token.client_id, scopes or token.scopes, token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = f"at-{secrets.token_urlsafe(24)}", f"rt-{secrets.token_urlsafe(24)}"
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + self.expires_in, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, expires_in=self.expires_in, refresh_token=refresh,
                          scope=" ".join(scopes) or None)


HUGE_BYTES = 150 * 1024 * 1024


METADATA_PATHS = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")


async def bad_metadata(how: str, scope: dict[str, Any], send: Any) -> None:
    """Answer a metadata request ``how``: garbage, a redirect loop, a redirect off origin, or a byte a second."""
    import anyio

    if how in ("loop", "offorigin"):
        target = scope["path"] if how == "loop" else f"http://localhost:1{scope['path']}"
        await send({"type": "http.response.start", "status": 302, "headers": [(b"location", target.encode())]})
        await send({"type": "http.response.body", "body": b""})
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    if how == "garbage":
        await send({"type": "http.response.body", "body": b"<html>not metadata</html>"})
        return
    for byte in b'{"a": 1}':  # 8 s: past junior's 5, short enough for the server to shut down
        await send({"type": "http.response.body", "body": bytes([byte]), "more_body": True})
        await anyio.sleep(1)
    await send({"type": "http.response.body", "body": b""})


def altered(app: Any, pkce: str, huge: str | None, bad: str | None = None) -> Any:
    """``app`` with the authorization server's metadata saying ``pkce`` (or answered ``bad``ly), and ``huge``
    answered with 150 MB."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        if bad is not None and scope["path"].startswith(METADATA_PATHS):
            return await bad_metadata(bad, scope, send)
        if huge is not None and scope["path"] == huge:
            chunk = b" " * (1024 * 1024)
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": b"{", "more_body": True})
            for _ in range(HUGE_BYTES // len(chunk)):
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"}"})
            return None
        if pkce == "S256" or not scope["path"].startswith("/.well-known/oauth-authorization-server"):
            return await app(scope, receive, send)
        start: dict[str, Any] = {}
        parts: list[bytes] = []

        async def keep(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            else:
                parts.append(message.get("body", b""))

        await app(scope, receive, keep)
        metadata = json.loads(b"".join(parts))
        if pkce == "none":
            metadata.pop("code_challenge_methods_supported", None)
        else:
            metadata["code_challenge_methods_supported"] = [pkce]
        body = json.dumps(metadata).encode()
        headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
        await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
        return None

    return wrapped


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--expires-in", type=int, default=3600)
    parser.add_argument("--no-registration", action="store_true")
    parser.add_argument("--redirect-port", type=int, default=8976)
    parser.add_argument("--pkce", choices=["S256", "plain", "none"], default="S256")
    parser.add_argument("--huge", default=None)
    parser.add_argument("--metadata", choices=["garbage", "loop", "offorigin", "slow"], default=None)
    args = parser.parse_args()
    base = f"http://127.0.0.1:{args.port}"
    provider = Provider(args.expires_in, args.redirect_port)
    server = MCPServer(
        "oauth-test", version="1.0", auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base, resource_server_url=f"{base}/mcp", required_scopes=["tools"],
            client_registration_options=ClientRegistrationOptions(
                enabled=not args.no_registration, valid_scopes=["tools"], default_scopes=["tools"]),
            revocation_options=RevocationOptions(enabled=True)),
    )

    @server.tool()
    def whoami() -> str:
        """Say that the call was authorized."""
        return "authorized"

    @server.custom_route("/admin/revoke", methods=["POST"])
    async def revoke(request: Request) -> Response:
        provider.access.clear()
        if request.query_params.get("what") == "all":
            provider.refresh.clear()
        return JSONResponse({"ok": True})

    @server.custom_route("/admin/stats", methods=["GET"])
    async def stats(request: Request) -> Response:
        body: dict[str, Any] = dict(provider.stats)
        return JSONResponse(body)

    import uvicorn

    app = altered(server.streamable_http_app(host="127.0.0.1"), args.pkce, args.huge, args.metadata)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
