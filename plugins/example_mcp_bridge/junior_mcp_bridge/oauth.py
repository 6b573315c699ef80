"""OAuth 2.1 for remote MCP servers: the token file, the browser login, and the SDK's client provider around them.

The flow itself (metadata discovery, dynamic client registration, PKCE S256, the token exchange and refresh) is
the MCP SDK's ``OAuthClientProvider``; this module gives it a place to keep tokens, a browser and a loopback
redirect when a person is there to log in, and a clear "run `junior mcp login NAME`" when nobody is.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import secrets
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import attrs

from junior_core.text import clip

if TYPE_CHECKING:
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

    from junior_mcp_bridge.config import OAuthSettings, ServerConfig

__all__ = [
    "CALLBACK_PATH", "LOGIN_TIMEOUT_S", "Login", "LoginRequired", "OAuthState", "TokenFile", "oauth_dir",
    "token_file",
]

log = logging.getLogger("junior.mcp")
CALLBACK_PATH = "/callback"
START_PATH = "/login/"
LOGIN_TIMEOUT_S = 300.0
"""How long a login waits for the browser to come back with a code."""
AUTH_ANSWER_LIMIT = 512 * 1024
"""The most read from a metadata, registration or token endpoint: their JSON is a few KB."""
AUTH_ANSWER_TIMEOUT_S = 5.0
"""The longest a metadata, registration or token endpoint may take to answer in full (a server dripping bytes
would otherwise hold a login, or `junior mcp check --url`, for as long as it likes)."""
_PAGE = ("<!doctype html><meta charset=utf-8><title>junior</title>"
         "<p style='font:16px sans-serif;margin:3em'>{}</p>")


class _DropFlowTraceback(logging.Filter):
    """The SDK logs every failed OAuth flow with a traceback; the connection reports it in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "OAuth flow error"


logging.getLogger("mcp.client.auth.oauth2").addFilter(_DropFlowTraceback())


NO_METADATA = ("the authorization server published no usable metadata (none of its well-known addresses answered "
               "with its own JSON metadata); junior does not log in at default endpoints that cannot say they offer "
               "PKCE with S256")


class LoginRequired(Exception):
    """The server wants a login, and this process has no browser to do one with."""


def oauth_dir() -> Path:
    """``mcp-oauth`` in platformdirs' user data directory for junior (``XDG_DATA_HOME`` moves it on Linux)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("junior", appauthor=False)) / "mcp-oauth"


def token_file(url: str) -> Path:
    """The file holding the tokens for the server at ``url``: one per URL, so tokens never go to another server."""
    return oauth_dir() / f"{hashlib.sha256(url.encode()).hexdigest()[:32]}.json"


class TokenFile:
    """The SDK's ``TokenStorage`` in one JSON file, ``0600`` in a ``0700`` directory, replaced atomically.

    It holds the tokens, when the access token expires (the SDK only knows that in the process that received
    it) and a dynamically registered client. A pre-registered client (``client_id`` in config) is given here
    and never written: its secret stays in the configuration it came from.
    """

    def __init__(self, path: Path, url: str, server: str, client: OAuthClientInformationFull | None = None) -> None:
        self.path = path
        self.url = url
        self.server = server
        self.fixed_client = client
        self.writes = 0

    # -- the file -------------------------------------------------------------------------------
    def read(self) -> dict[str, Any]:
        """The file's fields; ``TokenError`` if it is a symbolic link, not this user's, or readable by others."""
        from junior_mcp_bridge.auth import open_private

        fix = (f"Run `junior mcp logout {self.server}` to remove it, then `junior mcp login {self.server}`.")
        try:
            with open_private(self.path, "OAuth token file", fix) as f:
                data = json.loads(f.read())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("ignored the OAuth token file %s: %s", self.path, type(exc).__name__)
            return {}
        return data if isinstance(data, dict) and data.get("url") == self.url else {}

    def _write(self, data: dict[str, Any]) -> None:
        from junior_mcp_bridge.auth import private_dir

        private_dir(self.path.parent, "OAuth token directory")
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({**data, "url": self.url, "server": self.server}, f)
            os.replace(tmp, self.path)
        finally:
            tmp.unlink(missing_ok=True)
        self.writes += 1

    def _update(self, **fields: Any) -> None:
        data = self.read()
        data.update(fields)
        self._write(data)

    def delete(self) -> bool:
        """Forget the tokens and the registered client; whether there was anything to forget."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True

    def forget_tokens(self) -> None:
        """Drop the tokens but keep the registered client (a new login then skips registration)."""
        data = self.read()
        if data.pop("tokens", None) is not None:
            data.pop("expires_at", None)
            self._write(data)

    def forget_client(self) -> None:
        data = self.read()
        if data.pop("client", None) is not None:
            self._write(data)

    @property
    def expires_at(self) -> float | None:
        value = self.read().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def refreshable(self) -> bool:
        tokens = self.read().get("tokens")
        return isinstance(tokens, dict) and bool(tokens.get("refresh_token"))

    def expire(self) -> None:
        """Treat the access token as expired, so the next connect refreshes it before sending it."""
        self._update(expires_at=1.0)  # not 0: the SDK reads a false expiry as "never expires"

    # -- TokenStorage ---------------------------------------------------------------------------
    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        raw = self.read().get("tokens")
        try:
            return OAuthToken.model_validate(raw) if raw is not None else None
        except ValueError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        self._update(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.fixed_client is not None:
            return self.fixed_client
        from mcp.shared.auth import OAuthClientInformationFull

        raw = self.read().get("client")
        try:
            return OAuthClientInformationFull.model_validate(raw) if raw is not None else None
        except ValueError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.fixed_client is None:
            self._update(client=client_info.model_dump(mode="json", exclude_none=True))


@attrs.define
class Login:
    """A person at a browser: the authorization URL is opened with ``webbrowser`` (so ``BROWSER`` is honoured)
    and the code comes back to a listener on ``127.0.0.1``."""

    timeout_s: float = LOGIN_TIMEOUT_S
    say: Callable[[str], None] = attrs.field(factory=lambda: _stderr)
    fresh: bool = False
    """Drop the stored tokens first (``junior mcp login``): a new authorization, not a refresh."""


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@attrs.define
class OAuthState:
    """One server's OAuth for one connect attempt, and what the attempt learnt."""

    config: ServerConfig
    store: TokenFile
    login: Login | None = None
    needs_login: bool = False
    """The server asked for an authorization that could not be done here."""
    refresh_first: bool = False
    """The server refused the access token; the next attempt refreshes it before asking for a login."""
    failure: str | None = None
    """Why the OAuth flow failed (a refused authorization, a failed token exchange), in one line."""
    _refresh_tried: bool = False

    @classmethod
    def for_server(cls, config: ServerConfig, login: Login | None = None) -> OAuthState:
        assert config.url is not None and config.oauth is not None
        return cls(config=config, store=TokenFile(token_file(config.url), config.url, config.name,
                                                  _fixed_client(config.oauth)), login=login)

    def retry_with_refresh(self) -> bool:
        """Whether to connect once more, refreshing first (once per connect: a refused refresh means a login)."""
        if not self.refresh_first:
            return False
        self.refresh_first = False
        self.store.expire()
        return True

    def new_connect(self) -> None:
        """A connect begins: a refused access token may be refreshed once again."""
        self.needs_login = self.refresh_first = self._refresh_tried = False
        self.failure = None

    @contextlib.asynccontextmanager
    async def provider(self) -> AsyncIterator[Any]:
        """The SDK's ``OAuthClientProvider`` for this server (an ``httpx2.Auth``), with a callback listener
        while it may need one."""
        from mcp.client.auth import OAuthClientProvider
        from mcp.shared.auth import OAuthClientMetadata

        from junior_mcp_bridge.auth import TokenError

        store, oauth = self.store, self.config.oauth
        assert oauth is not None
        try:
            store.read()
        except TokenError as exc:
            self.failure = str(exc)
            raise
        if self.login is not None and self.login.fresh:
            store.forget_tokens()
            self.login.fresh = False
        async with contextlib.AsyncExitStack() as stack:
            listener: _Callback | None = None
            if self.login is not None:
                listener = await stack.enter_async_context(_listen(await self._callback_port(), self.login))
            redirect = listener.redirect_uri if listener is not None else f"http://127.0.0.1{CALLBACK_PATH}"
            if store.fixed_client is not None:
                store.fixed_client.redirect_uris = [redirect]  # type: ignore[list-item]
            metadata = OAuthClientMetadata(
                client_name="junior", redirect_uris=[redirect],  # type: ignore[list-item]
                grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                token_endpoint_auth_method=_auth_method(oauth),  # type: ignore[arg-type]  # checked in config
                scope=oauth.scope,
            )
            state = self

            class Provider(OAuthClientProvider):
                async def _auth_flow(self, request: Any) -> Any:
                    # The flow runs inside the transport's task group, whose failure reaches the session as a
                    # cancellation; what went wrong is kept here to be reported instead.
                    flow = super()._auth_flow(request)
                    try:
                        step = await flow.__anext__()
                        while True:
                            if self.context.oauth_metadata is None and step.method == "POST" and \
                                    step.url.path.endswith("/register"):
                                raise LoginRequired(NO_METADATA)  # not at a default /register either
                            step = await flow.asend((yield step))
                    except StopAsyncIteration:
                        return
                    except LoginRequired as exc:
                        if not state.needs_login and not state.refresh_first:
                            state.failure = str(exc)
                        raise
                    except Exception as exc:
                        # A refused answer has said why already (capped_transport).
                        state.failure = state.failure or _one_line(f"{type(exc).__name__}: {exc}")
                        raise
                    finally:
                        # Closed here, in the task that holds its lock: left to the garbage collector, the SDK's
                        # flow is closed in a task of its own, which fails and prints a traceback.
                        await flow.aclose()

                async def _perform_authorization(self) -> Any:
                    # PKCE is what keeps an intercepted code useless; the MCP authorization spec has clients refuse
                    # a server whose metadata does not offer S256. No usable metadata (garbage, a redirect, which
                    # is not followed, another origin's, none) is refused too: the 2025-03-26 fallback to default
                    # /authorize and /token endpoints would log in to endpoints that never said they do PKCE.
                    metadata = self.context.oauth_metadata
                    if metadata is None:
                        raise LoginRequired(NO_METADATA)
                    methods = metadata.code_challenge_methods_supported
                    if "S256" not in (methods or []):
                        offered = "none" if not methods else ", ".join(methods)
                        raise LoginRequired(
                            "the authorization server does not offer PKCE with S256 (its metadata's "
                            f"code_challenge_methods_supported: {offered}); junior does not log in without it")
                    return await super()._perform_authorization()

                async def _initialize(self) -> None:
                    # The SDK knows when a token expires only in the process that received it; the file knows
                    # it in every process, so an expired token is refreshed before it is sent.
                    await super()._initialize()
                    self.context.token_expiry_time = store.expires_at

            async def redirect_handler(url: str) -> None:
                if store.refreshable() and not state._refresh_tried:
                    state._refresh_tried = state.refresh_first = True
                    raise LoginRequired("the server refused the access token; refreshing it first")
                if listener is None:
                    state.needs_login = True
                    raise LoginRequired(f"MCP server {state.config.name!r} needs a login")
                document = oauth.client_metadata_url
                # With callback_port set, the document must name that redirect URI: said before any browser goes.
                if (document is not None and oauth.callback_port is not None
                        and parse_qs(urlsplit(url).query).get("client_id") == [document]):
                    mismatch = await _document_mismatch(document, listener.redirect_uri)
                    if mismatch is not None:
                        raise LoginRequired(mismatch)
                refusal = await _refusal(url)
                if refusal is not None:
                    raise LoginRequired(f"the authorization server refused the login request: {refusal}")
                await listener.open(url, state.config.name)

            async def callback_handler() -> AuthorizationCodeResult:
                assert listener is not None
                return await listener.result()

            yield Provider(server_url=self.config.url or "", client_metadata=metadata, storage=store,
                           redirect_handler=redirect_handler, callback_handler=callback_handler,
                           client_metadata_url=oauth.client_metadata_url)

    async def _callback_port(self) -> int:
        """The configured port, else the one the stored client was registered with (its redirect URI must match
        what the server has on record), else any free one."""
        oauth = self.config.oauth
        assert oauth is not None
        if oauth.callback_port is not None:
            return oauth.callback_port
        client = await self.store.get_client_info()
        if client is None or self.store.fixed_client is not None:
            return 0
        for uri in client.redirect_uris or []:
            parts = urlsplit(str(uri))
            if parts.hostname == "127.0.0.1" and parts.port:
                if _port_free(parts.port):
                    return parts.port
                log.info("port %d of the registered redirect is in use; registering junior again", parts.port)
                break
        else:
            # Registered by a process with no browser (a bot, `junior mcp list`): its redirect URI has no port, and
            # a server that matches redirect URIs exactly would refuse the listener's.
            log.info("the registered redirect URI names no port to listen on; registering junior again")
        self.store.forget_client()
        return 0


def capped_transport(mcp_url: str, refused: Callable[[str], None],
                     unreachable: Callable[[str], None] | None = None) -> Any:
    """An ``httpx2`` transport that reads at most ``AUTH_ANSWER_LIMIT`` of any answer but the MCP endpoint's,
    each within ``AUTH_ANSWER_TIMEOUT_S``.

    The OAuth flow reads whole answers from the resource and authorization servers' other endpoints (metadata,
    registration, tokens); a server answering with hundreds of MB, or a byte a second, would otherwise hold
    memory or the login. ``refused`` is told why, in one line, before the read fails; ``unreachable`` is told
    which host refused or never took the connection (the SDK reports that only as a cancellation).
    """
    import anyio
    import httpx2

    endpoint = httpx2.URL(mcp_url)

    class Refused(httpx2.TransportError):
        pass

    def refuse(why: str) -> Refused:
        refused(why)
        return Refused(why)

    class Transport(httpx2.AsyncHTTPTransport):
        async def handle_async_request(self, request: Any) -> Any:
            url = request.url
            shown = str(url.copy_with(query=None))
            try:
                if (url.scheme, url.host, url.port, url.path) == (endpoint.scheme, endpoint.host, endpoint.port,
                                                                  endpoint.path):
                    return await super().handle_async_request(request)
                with anyio.fail_after(AUTH_ANSWER_TIMEOUT_S):
                    return await self._whole(request, shown)
            except TimeoutError:
                raise refuse(f"{shown} did not answer in full within {AUTH_ANSWER_TIMEOUT_S:g} s; junior gave "
                             "up on it") from None
            except httpx2.ConnectError as exc:
                if unreachable is not None:
                    reason = str(exc).rsplit("] ", 1)[-1] or type(exc).__name__
                    unreachable(f"cannot connect to {url.scheme}://{url.host}:{url.port or ''}".rstrip(":")
                                + f" ({reason})")
                raise

        async def _whole(self, request: Any, shown: str) -> Any:
            response = await super().handle_async_request(request)
            declared = response.headers.get("content-length", "")
            too_large = (f"the answer of {shown} is larger than {AUTH_ANSWER_LIMIT // 1024} KB; junior refused to "
                         "read it")
            try:
                if declared.isdigit() and int(declared) > AUTH_ANSWER_LIMIT:
                    raise refuse(too_large)
                body = bytearray()
                async for chunk in response.stream:
                    body += chunk
                    if len(body) > AUTH_ANSWER_LIMIT:
                        raise refuse(too_large)
            finally:
                await response.aclose()
            return httpx2.Response(response.status_code, headers=response.headers,
                                   stream=httpx2.ByteStream(bytes(body)), extensions=response.extensions)

    return Transport()


def _one_line(text: str, limit: int = 300) -> str:
    return clip(" ".join(text.split()), limit)


async def _document_mismatch(document: str, redirect_uri: str) -> str | None:
    """Why the client ID metadata document at ``document`` cannot serve this login (it does not name itself as
    ``client_id``, or not ``redirect_uri``), read once before any browser is sent; else None."""
    import httpx2

    try:
        async with httpx2.AsyncClient(follow_redirects=False, timeout=AUTH_ANSWER_TIMEOUT_S) as client:
            answer = await client.get(document)
        data = json.loads(answer.content[:AUTH_ANSWER_LIMIT]) if answer.status_code == 200 else None
    except (httpx2.HTTPError, ValueError) as exc:
        return f"cannot read the client metadata document {document}: {_one_line(str(exc) or type(exc).__name__)}"
    if not isinstance(data, dict):
        return f"the client metadata document {document} is not a JSON object (HTTP {answer.status_code})"
    if data.get("client_id") != document:
        return (f"the client metadata document {document} names another client_id ({data.get('client_id')!r}); "
                "it must be its own URL")
    uris = data.get("redirect_uris")
    if not isinstance(uris, list) or redirect_uri not in uris:
        ports = sorted({str(urlsplit(str(uri)).port) for uri in uris or [] if isinstance(uri, str)})
        return (f"the client metadata document {document} does not list the redirect URI junior listens on, "
                f"{redirect_uri} (its ports: {', '.join(ports) or 'none'}); set callback_port to the port it names")
    return None


async def _refusal(url: str) -> str | None:
    """Why the authorization endpoint refuses ``url`` outright, asked once without following it; else None.

    A server refuses a redirect URI it does not hold, or an unknown client, with a ``400`` shown in the browser and
    never sent back to junior, which would then wait minutes for a browser that has nothing to send.
    """
    import httpx2

    try:
        async with httpx2.AsyncClient(follow_redirects=False, timeout=10) as client:
            async with client.stream("GET", url) as answer:
                if answer.status_code != 400:
                    return None
                body = b""
                async for chunk in answer.aiter_bytes():
                    body += chunk
                    if len(body) >= 2048:
                        break
    except httpx2.HTTPError:
        return None  # unreachable from here is not a refusal: the browser may still get there
    text = body[:2048].decode("utf-8", "replace")
    with contextlib.suppress(ValueError, AttributeError):
        fields = json.loads(text)
        text = " ".join(str(fields.get(key, "")) for key in ("error", "error_description")).strip() or text
    return _one_line(f"HTTP 400: {text}")


def _fixed_client(oauth: OAuthSettings) -> OAuthClientInformationFull | None:
    if oauth.client_id is None:
        return None
    from mcp.shared.auth import OAuthClientInformationFull

    return OAuthClientInformationFull(
        client_id=oauth.client_id, client_secret=oauth.client_secret,
        token_endpoint_auth_method=_auth_method(oauth),
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
    )


def _auth_method(oauth: OAuthSettings) -> str:
    """The configured method, else HTTP Basic with a secret (what RFC 6749 has every server support), else none."""
    return oauth.token_endpoint_auth_method or ("client_secret_basic" if oauth.client_secret else "none")


def _port_free(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        # As asyncio's listener will: a previous login's connections lingering in TIME_WAIT do not count.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class _Callback:
    """The loopback redirect target of one login: the one-time start page and ``/callback``.

    The browser's command line can be read by every local user (``ps``), so it carries only an unguessable
    one-time ``/login/<token>`` URL of this listener, which redirects to the authorization URL (and its
    ``state``) once. Only an answer carrying this login's ``state``, from a connection of this user where the
    system says whose it is, completes the login; anything else is refused with a plain page and the login
    keeps waiting.
    """

    def __init__(self, login: Login) -> None:
        self.login = login
        self.port = 0
        self.start_token = secrets.token_urlsafe(32)
        self._authorization_url: str | None = None
        self._state: str | None = None
        self._started = False
        self._future: asyncio.Future[AuthorizationCodeResult] = asyncio.get_running_loop().create_future()

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    @property
    def start_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{START_PATH}{self.start_token}"

    async def open(self, url: str, server: str) -> None:
        import webbrowser

        self._authorization_url = url
        self._state = parse_qs(urlsplit(url).query).get("state", [None])[0]
        self._started = False
        self.login.say(f"Log in to the MCP server {server!r} in your browser; if it did not open, visit:\n  {url}")
        # A console browser (BROWSER=...) runs until it exits, so it runs beside the listener, not before it.
        task = asyncio.get_running_loop().run_in_executor(None, webbrowser.open, self.start_url)
        task.add_done_callback(lambda t: t.exception())

    async def result(self) -> AuthorizationCodeResult:
        try:
            return await asyncio.wait_for(asyncio.shield(self._future), self.login.timeout_s)
        except TimeoutError:
            raise LoginRequired(f"no answer from the browser within {self.login.timeout_s:g} s") from None

    def _refuse(self, why: str) -> None:
        self.login.say(f"junior refused a request to its login listener: {why}; still waiting for the browser.")

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        from mcp.shared.auth import AuthorizationCodeResult

        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            while (await asyncio.wait_for(reader.readline(), 10)).strip():
                pass  # the headers: nothing in them is needed
            parts = line.decode("latin-1").split()
            target = urlsplit(parts[1]) if len(parts) >= 2 else None
            if target is None or not (target.path == CALLBACK_PATH or target.path.startswith(START_PATH)):
                await _answer(writer, 404, "Not found.")
                return
            owner = _peer_uid(writer)
            if owner is not None and owner != os.getuid():
                self._refuse(f"it came from another user (uid {owner})")
                await _answer(writer, 403, "This login belongs to another user of this computer.")
                return
            if target.path.startswith(START_PATH):
                await self._start(writer, target.path[len(START_PATH):])
                return
            if self._future.done():
                await _answer(writer, 400, "This login is already over; start a new one in junior.")
                return
            query = {k: v[0] for k, v in parse_qs(target.query).items()}
            given = query.get("state", "")
            if self._state is None or not secrets.compare_digest(given.encode(), self._state.encode()):
                self._refuse("its state is not this login's")
                await _answer(writer, 400, "This answer does not belong to the login junior is waiting for.")
                return
            if "code" in query:
                await _answer(writer, 200, "Logged in. You can close this tab and return to junior.")
                self._future.set_result(AuthorizationCodeResult(code=query["code"], state=given,
                                                                iss=query.get("iss")))
            else:
                error = query.get("error", "no code in the redirect")
                await _answer(writer, 400, "The login did not complete; see junior for why.")
                self._future.set_exception(LoginRequired(
                    f"the authorization server refused: {error} {query.get('error_description', '')}".strip()))
        except (TimeoutError, OSError, IndexError, UnicodeError):
            pass
        finally:
            writer.close()

    async def _start(self, writer: asyncio.StreamWriter, token: str) -> None:
        """The one-time page: redirect to the authorization URL the first time, refuse every time after."""
        url = self._authorization_url
        if url is None or not secrets.compare_digest(token.encode(), self.start_token.encode()):
            await _answer(writer, 404, "Not found.")
        elif self._started or self._future.done():
            self._refuse("the one-time login link was opened a second time")
            await _answer(writer, 410, "This login link has been used already; start a new login in junior.")
        else:
            self._started = True
            await _answer(writer, 302, "Continue to the login page.", location=url)


def _peer_uid(writer: asyncio.StreamWriter) -> int | None:
    """The user owning the other end of a loopback TCP connection, where the system says (Linux); else None."""
    peer, own = writer.get_extra_info("peername"), writer.get_extra_info("sockname")
    if not (isinstance(peer, tuple) and isinstance(own, tuple)):
        return None

    def hex_address(address: tuple[str, int]) -> str:
        import ipaddress

        packed = ipaddress.IPv4Address(address[0]).packed
        return f"{int.from_bytes(packed, 'little'):08X}:{address[1]:04X}"

    try:
        wanted = (hex_address(peer), hex_address(own))
        with open("/proc/net/tcp", encoding="ascii") as table:
            for row in table:
                fields = row.split()
                if len(fields) > 7 and (fields[1], fields[2]) == wanted:
                    return int(fields[7])
    except (OSError, ValueError):
        return None
    return None


async def _answer(writer: asyncio.StreamWriter, status: int, text: str, location: str | None = None) -> None:
    body = _PAGE.format(text).encode()
    reason = {200: "OK", 302: "Found", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 410: "Gone"}[status]
    # The redirect carries the state: not to be kept by the browser's cache or sent on as a referrer.
    extra = f"Location: {location}\r\nCache-Control: no-store\r\nReferrer-Policy: no-referrer\r\n" if location else ""
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n{extra}"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    await writer.drain()


@contextlib.asynccontextmanager
async def _listen(port: int, login: Login) -> AsyncIterator[_Callback]:
    callback = _Callback(login)
    server = await asyncio.start_server(callback.handle, "127.0.0.1", port)
    callback.port = server.sockets[0].getsockname()[1]
    try:
        yield callback
    finally:
        server.close()
        if not callback._future.done():
            callback._future.cancel()
