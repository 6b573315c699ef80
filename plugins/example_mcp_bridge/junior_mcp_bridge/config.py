"""Which MCP servers to bridge: ``junior.toml`` ``[mcp.servers.<name>]`` and ``{"mcpServers": {...}}`` JSON."""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import attrs

if TYPE_CHECKING:
    from junior_core import ToolContext
    from junior_mcp_bridge.limits import GatewayLimits

__all__ = [
    "DEFAULT_PASS_ENV",
    "OWNER",
    "RETRY_INTERVAL_S",
    "BridgeSettings",
    "ConfigError",
    "OAuthSettings",
    "ServeToken",
    "ServerConfig",
    "bridge_settings",
    "config_paths",
    "load_config",
    "load_serve_tokens",
    "server_config",
]

# The client id of the gateway's token file; a [mcp.serve.tokens] token may not take this name. Here, not in
# auth.py, so that auth imports config and config never imports auth.
OWNER = "owner"
# How often a server that failed to start is tried again, in seconds.
RETRY_INTERVAL_S = 30.0

SERVER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_STARTUP_TIMEOUT_S = 10.0

_TOML_KEYS = {
    "command", "args", "env", "pass_env", "cwd", "url", "headers", "description", "allowed_tools", "timeout_s",
    "startup_timeout_s", "enabled", "oauth",
}
_OAUTH_KEYS = {"client_id", "client_secret", "scope", "callback_port", "token_endpoint_auth_method",
               "client_metadata_url"}
_AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
# Proxy and CA settings a server needs to reach anything from a corporate network; the SDK's default
# environment (HOME, LOGNAME, PATH, SHELL, TERM, USER) has none of them. `pass_env` replaces this list.
DEFAULT_PASS_ENV = (
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
)
# Keys other MCP clients put in the same JSON; accepted and ignored so one file can serve them all.
_JSON_IGNORED = {"type", "transport", "disabled", "autoApprove", "alwaysAllow", "timeout", "autoapprove"}


class ConfigError(ValueError):
    """Invalid bridge configuration; the message names the file, the server and the field."""


# Header and environment variable names whose values are credentials: written literally (no ${VAR}), they make
# the file that holds them a secret of its own.
_SECRET_NAME = re.compile(r"auth|token|secret|passw|key|cookie|credential|session", re.IGNORECASE)


def _is_literal_secret(name: str, value: str) -> bool:
    return bool(value.strip()) and not _VAR.search(value) and bool(_SECRET_NAME.search(name))


def _refuse_readable(path: Path | None, where: str) -> None:
    """Raise ``ConfigError`` if ``path``, holding a literal secret at ``where``, can be read by other users."""
    if path is None or os.name != "posix":
        return
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        return  # it was just read: a file gone since then holds nothing to protect
    if mode & 0o077:
        raise ConfigError(
            f"{path}: {where}: a secret written in a file other users can read (mode {mode:o}), as anyone on this "
            f"machine could then use it. Write the value as ${{VAR}} and set VAR in the environment (recommended), "
            f"or make the file private: chmod 600 {path}"
        )


@attrs.frozen
class OAuthSettings:
    """How junior logs in to a remote server (``oauth`` of its config); every field is optional.

    Without ``client_id`` junior registers itself with the server (dynamic client registration).
    """

    client_id: str | None = None
    client_secret: str | None = attrs.field(default=None, repr=False)
    scope: str | None = None
    callback_port: int | None = None
    """The loopback port of the redirect URI, for a client registered with a fixed one; default, any free port."""
    token_endpoint_auth_method: str | None = None
    """How the client secret is sent; default ``client_secret_basic`` with a secret, ``none`` without."""
    client_metadata_url: str | None = None
    """An https URL serving junior's client ID metadata document: the client id at authorization servers that
    advertise ``client_id_metadata_document_supported``, instead of registering."""


@attrs.frozen
class ServerConfig:
    """One MCP server to bridge, source ``mcp:<name>``.

    ``env`` and ``headers`` hold values after ``${VAR}`` expansion: they go to the
    server process or the HTTP request only, never into anything a model sees.
    """

    name: str
    origin: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = attrs.field(factory=dict, repr=False)
    pass_env: tuple[str, ...] = DEFAULT_PASS_ENV
    """Names of junior's environment variables the server gets as they are (values read at each start)."""
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = attrs.field(factory=dict, repr=False)
    description: str | None = None
    allowed_tools: tuple[str, ...] | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S
    enabled: bool = True
    oauth: OAuthSettings | None = None
    """OAuth for a ``url`` server: on unless ``oauth = false`` or the headers carry an ``Authorization``."""

    @property
    def source_id(self) -> str:
        return f"mcp:{self.name}"

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "http" if self.url is not None else "stdio"

    @property
    def target(self) -> str:
        """What to show a person: the command line or the URL, its password masked (never env or header values)."""
        if self.url is not None:
            from junior_mcp_bridge.text import display_url

            return display_url(self.url)
        return " ".join([self.command or "", *self.args]).strip()


# A config token must be at least this long: `junior mcp token` makes 43-character ones.
MIN_TOKEN_LENGTH = 32
_TOKEN_KEYS = {"token", "user", "platform", "team", "channel", "thread", "private"}


@attrs.frozen
class ServeToken:
    """A bearer token ``junior mcp serve --http`` accepts, and who its calls are from.

    The context fields are those of ``junior exec`` (``--user``, ``--platform``, ...), with the same defaults but
    one: the team is ``token-<name>`` unless configured, so a token holder gets a workspace of their own and never
    the owner's (``local``) knowledge and procedures; tokens that name the same team share one.
    """

    name: str
    token: str = attrs.field(repr=False)
    user: str
    platform: str = "local"
    team: str = attrs.field()
    channel: str = "cli"
    thread: str = "main"
    private: bool = False

    @team.default
    def _own_team(self) -> str:
        return f"token-{self.name}"

    def context(self) -> ToolContext:
        from junior_core import local_context

        return local_context(platform=self.platform, team=self.team, user=self.user, channel=self.channel,
                             thread=self.thread, private=self.private)


_SETTINGS = {"servers_file", "pass_env", "tool_cache", "tool_cache_max_age_s", "gateway"}


def _default_gateway() -> GatewayLimits:
    from junior_mcp_bridge.limits import GatewayLimits  # its attrs class costs ~21 M instructions: not at --help

    return GatewayLimits()


@attrs.frozen
class BridgeSettings:
    """``[plugins.mcp]`` of junior.toml: settings of the bridge as a whole."""

    servers_file: Path | None = None
    """An ``{"mcpServers": {...}}`` JSON file, as ``JUNIOR_MCP_CONFIG`` names one (the variable wins)."""
    pass_env: tuple[str, ...] = ()
    """Added to every stdio server's ``pass_env`` list."""
    tool_cache: bool = True
    """Keep each server's tool list on disk, so a new process searches it without starting the server."""
    tool_cache_max_age_s: float = 86400.0
    gateway: GatewayLimits = attrs.field(factory=_default_gateway)
    """``[plugins.mcp.gateway]``: what HTTP clients of ``junior mcp serve --http`` can hold."""


def bridge_settings(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> BridgeSettings:
    """``[plugins.mcp]`` of the junior.toml in effect, checked; raises ``ConfigError``."""
    from junior_core import ConfigError as CoreConfigError
    from junior_core import config_path, plugin_settings
    from junior_mcp_bridge.limits import gateway_limits  # its attrs class costs ~21 M instructions: not at --help

    environ = os.environ if environ is None else environ
    path = config_path(environ, cwd)
    try:
        raw = plugin_settings("mcp", environ, path)
    except CoreConfigError as exc:
        raise ConfigError(str(exc)) from None
    where = f"{path}: [plugins.mcp]"
    unknown = sorted(set(raw) - _SETTINGS)
    if unknown:
        raise ConfigError(f"{where} {unknown[0]}: unknown field; use {', '.join(sorted(_SETTINGS))}")
    servers_file = raw.get("servers_file")
    if servers_file is not None and (not isinstance(servers_file, str) or not servers_file.strip()):
        raise ConfigError(f"{where} servers_file: must be the path of an mcpServers JSON file")
    pass_env = raw.get("pass_env", [])
    if not isinstance(pass_env, list) or not all(isinstance(n, str) and _ENV_NAME.match(n) for n in pass_env):
        raise ConfigError(f"{where} pass_env: must be a list of environment variable names")
    cache = raw.get("tool_cache", True)
    if not isinstance(cache, bool):
        raise ConfigError(f"{where} tool_cache: must be true or false, got {cache!r}")
    age = raw.get("tool_cache_max_age_s", 86400.0)
    if isinstance(age, bool) or not isinstance(age, int | float) or age <= 0:
        raise ConfigError(f"{where} tool_cache_max_age_s: must be a positive number of seconds, got {age!r}")
    try:
        gateway = gateway_limits(raw.get("gateway"), f"{path}: [plugins.mcp.gateway]")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    base = path.parent if path is not None else (Path.cwd() if cwd is None else cwd)
    return BridgeSettings(
        servers_file=(base / Path(servers_file).expanduser()) if servers_file else None,
        pass_env=tuple(pass_env), tool_cache=cache, tool_cache_max_age_s=float(age), gateway=gateway,
    )


def config_paths(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> tuple[Path | None, Path | None]:
    """The TOML file in effect (``JUNIOR_CONFIG``, ``./junior.toml``, ``~/.config/junior/junior.toml``) and the
    JSON file (``JUNIOR_MCP_CONFIG``, else ``servers_file`` of ``[plugins.mcp]``)."""
    from junior_core import config_path

    environ = os.environ if environ is None else environ
    toml_path = config_path(environ, cwd)
    if environ.get("JUNIOR_MCP_CONFIG"):
        return toml_path, Path(environ["JUNIOR_MCP_CONFIG"]).expanduser()
    return toml_path, bridge_settings(environ, cwd).servers_file


def load_config(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> list[ServerConfig]:
    """Every configured server, sorted by name; raises ``ConfigError`` on the first problem."""
    environ = os.environ if environ is None else environ
    toml_path, json_path = config_paths(environ, cwd)
    extra_env = bridge_settings(environ, cwd).pass_env
    servers: dict[str, ServerConfig] = {}
    if toml_path is not None:
        for server in _from_toml(toml_path, environ):
            servers[server.name] = server
    if json_path is not None:
        for server in _from_json(json_path, environ):
            other = servers.get(server.name)
            if other is not None:
                raise ConfigError(
                    f"{json_path}: server {server.name!r} is also defined in {other.origin}; rename one of them"
                )
            servers[server.name] = server
    if extra_env:
        for name, server in servers.items():
            added = tuple(n for n in extra_env if n not in server.pass_env)
            servers[name] = attrs.evolve(server, pass_env=server.pass_env + added)
    return [servers[name] for name in sorted(servers)]


def load_serve_tokens(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> list[ServeToken]:
    """The tokens of ``[mcp.serve.tokens.<name>]`` in the TOML file, sorted by name; raises ``ConfigError``."""
    environ = os.environ if environ is None else environ
    path, _ = config_paths(environ, cwd)
    if path is None:
        return []
    try:
        data = tomllib.loads(_read(path).decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    serve = data.get("mcp", {}).get("serve", {}) if isinstance(data.get("mcp"), dict) else {}
    if not isinstance(serve, dict):
        raise ConfigError(f"{path}: [mcp.serve] must be a table")
    unknown = sorted(set(serve) - {"tokens"})
    if unknown:
        raise ConfigError(f"{path}: [mcp.serve] {unknown[0]}: unknown field; use tokens")
    table = serve.get("tokens", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [mcp.serve.tokens] must be a table of named tokens")
    tokens: list[ServeToken] = []
    for name in sorted(table):
        tokens.append(_serve_token(path, name, table[name], environ))
    seen: dict[str, str] = {}
    for token in tokens:
        if token.token in seen:
            raise ConfigError(f"{path}: [mcp.serve.tokens.{token.name}] token: the same token as "
                              f"[mcp.serve.tokens.{seen[token.token]}]; give each its own")
        seen[token.token] = token.name
    return tokens


def _serve_token(path: Path, name: str, raw: object, environ: Mapping[str, str]) -> ServeToken:
    where = f"{path}: [mcp.serve.tokens.{name}]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a table with `token` and `user`")
    if not SERVER_NAME.match(name) or name == OWNER:
        raise ConfigError(f"{where} name: use lowercase letters, digits, '_' and '-' (and not {OWNER!r}, the "
                          "token file's)")
    unknown = sorted(set(raw) - _TOKEN_KEYS)
    if unknown:
        raise ConfigError(f"{where} {unknown[0]}: unknown field; use {', '.join(sorted(_TOKEN_KEYS))}")
    text = raw.get("token")
    if not isinstance(text, str):
        raise ConfigError(f"{where} token: required, a string (use ${{VAR}} to read it from the environment)")
    missing = [var for var in _VAR.findall(text) if var not in environ]
    if missing:
        raise ConfigError(f"{where} token: refers to ${{{missing[0]}}}, which is not set in the environment")
    token = _VAR.sub(lambda m: environ[m.group(1)], text).strip()
    if len(token) < MIN_TOKEN_LENGTH or not token.isprintable() or " " in token:
        # Never echo the value: it is a secret, or meant to be one.
        raise ConfigError(f"{where} token: must be at least {MIN_TOKEN_LENGTH} printable characters without "
                          "spaces; make one with `python -c 'import secrets; print(secrets.token_urlsafe(32))'`")
    fields: dict[str, Any] = {}
    for field in ("user", "platform", "team", "channel", "thread"):
        value = raw.get(field)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ConfigError(f"{where} {field}: must be a string, got {value!r}")
        fields[field] = value
    if "user" not in fields:
        raise ConfigError(f"{where} user: required, the user id calls with this token are made as")
    private = raw.get("private", False)
    if not isinstance(private, bool):
        raise ConfigError(f"{where} private: must be true or false, got {private!r}")
    entry = ServeToken(name=name, token=token, private=private, **fields)
    try:
        entry.context()
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if not _VAR.search(text):  # a token written in the file: only its owner may read the file
        _refuse_readable(path, f"[mcp.serve.tokens.{name}] token")
    return entry


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the configuration file ({exc.strerror or exc})") from None


def _from_toml(path: Path, environ: Mapping[str, str]) -> list[ServerConfig]:
    try:
        data = tomllib.loads(_read(path).decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    mcp = data.get("mcp", {})
    if not isinstance(mcp, dict):
        raise ConfigError(f"{path}: [mcp] must be a table")
    table = mcp.get("servers", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [mcp.servers] must be a table of servers")
    servers = []
    for name, raw in table.items():
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: [mcp.servers.{name}] must be a table")
        unknown = sorted(set(raw) - _TOML_KEYS)
        if unknown:
            raise ConfigError(
                f"{path}: [mcp.servers.{name}] {unknown[0]}: unknown field; use {', '.join(sorted(_TOML_KEYS))}"
            )
        servers.append(_server(str(path), f"[mcp.servers.{name}]", name, raw, environ, path))
    return servers


def _from_json(path: Path, environ: Mapping[str, str]) -> list[ServerConfig]:
    try:
        data = json.loads(_read(path))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        raise ConfigError(f'{path}: expected an object {{"mcpServers": {{"<name>": {{...}}}}}}')
    servers = []
    for name, raw in data["mcpServers"].items():
        where = f"mcpServers.{name}"
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: {where} must be an object")
        unknown = sorted(set(raw) - _TOML_KEYS - _JSON_IGNORED)
        if unknown:
            raise ConfigError(f"{path}: {where} {unknown[0]}: unknown field; use {', '.join(sorted(_TOML_KEYS))}")
        fields = {key: value for key, value in raw.items() if key in _TOML_KEYS}
        if raw.get("disabled") is True:
            fields["enabled"] = False
        servers.append(_server(str(path), where, name, fields, environ, path))
    return servers


def server_config(origin: str, name: str, raw: dict[str, Any],
                  environ: Mapping[str, str] | None = None) -> ServerConfig:
    """One server from the fields of a config entry (``junior mcp check --url`` makes one); raises ``ConfigError``."""
    return _server(origin, name, name, raw, os.environ if environ is None else environ)


def _server(origin: str, where: str, name: str, raw: dict[str, Any], environ: Mapping[str, str],
            path: Path | None = None) -> ServerConfig:
    def fail(field: str, problem: str) -> ConfigError:
        return ConfigError(f"{origin}: {where} {field}: {problem}")

    written: list[str] = []  # keys holding a secret written in the file: checked once the entry is valid

    if not SERVER_NAME.match(name):
        raise fail("name", f"{name!r} is not a valid server name: use lowercase letters, digits, '_' and '-'")

    def string(field: str) -> str | None:
        value = raw.get(field)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise fail(field, f"must be a non-empty string, got {value!r}")
        return value

    def strings(field: str) -> tuple[str, ...] | None:
        value = raw.get(field)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise fail(field, "must be a list of strings")
        return tuple(value)

    def expanded_table(field: str) -> dict[str, str]:
        value = raw.get(field, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise fail(field, "must be a table of string values")
        out = {}
        for key, text in value.items():
            if _is_literal_secret(str(key), text):
                written.append(f"{field}.{key}")
            missing = [var for var in _VAR.findall(text) if var not in environ]
            if missing:
                raise fail(f"{field}.{key}", f"refers to ${{{missing[0]}}}, which is not set in the environment")
            out[str(key)] = _VAR.sub(lambda m: environ[m.group(1)], text)
        return out

    def env_names() -> tuple[str, ...]:
        names = strings("pass_env") or ()
        bad = [n for n in names if not _ENV_NAME.match(n)]
        if bad:
            raise fail("pass_env", f"{bad[0]!r} is not an environment variable name")
        return names

    def seconds(field: str, default: float) -> float:
        value = raw.get(field, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise fail(field, f"must be a positive number of seconds, got {value!r}")
        return float(value)

    command, url = string("command"), string("url")
    if (command is None) == (url is None):
        raise fail("command", "set exactly one of `command` (a stdio server) or `url` (streamable HTTP)")
    if url is not None and not url.startswith(("http://", "https://")):
        raise fail("url", f"must be an http:// or https:// URL, got {url!r}")
    if url is not None:
        for field in ("args", "env", "pass_env", "cwd"):
            if field in raw:
                raise fail(field, "only applies to stdio servers (with `command`), not to `url`")
    for field in ("headers", "oauth"):
        if command is not None and field in raw:
            raise fail(field, "only applies to `url` servers")
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        raise fail("enabled", f"must be true or false, got {enabled!r}")
    description = string("description")
    headers = expanded_table("headers")
    oauth = _oauth(raw.get("oauth", True), headers, fail, environ, written.append) if url is not None else None
    if written:
        _refuse_readable(path, f"{where} {written[0]}")
    return ServerConfig(
        name=name,
        origin=origin,
        command=command,
        args=strings("args") or (),
        env=expanded_table("env"),
        pass_env=DEFAULT_PASS_ENV if "pass_env" not in raw else env_names(),
        cwd=string("cwd"),
        url=url,
        headers=headers,
        description=description.strip() if description else None,
        allowed_tools=strings("allowed_tools"),
        timeout_s=seconds("timeout_s", DEFAULT_TIMEOUT_S),
        startup_timeout_s=seconds("startup_timeout_s", DEFAULT_STARTUP_TIMEOUT_S),
        enabled=enabled,
        oauth=oauth,
    )


def _oauth(raw: object, headers: Mapping[str, str], fail: Any, environ: Mapping[str, str],
           literal_secret: Any) -> OAuthSettings | None:
    if raw is False:
        return None
    if raw is True:
        # A static Authorization header is the owner's choice of credentials: OAuth would only compete with it.
        return None if any(key.lower() == "authorization" for key in headers) else OAuthSettings()
    if not isinstance(raw, dict):
        raise fail("oauth", f"must be true, false or a table of {', '.join(sorted(_OAUTH_KEYS))}, got {raw!r}")
    unknown = sorted(set(raw) - _OAUTH_KEYS)
    if unknown:
        raise fail(f"oauth.{unknown[0]}", f"unknown field; use {', '.join(sorted(_OAUTH_KEYS))}")
    fields: dict[str, Any] = {}
    for key in ("client_id", "client_secret", "scope", "token_endpoint_auth_method", "client_metadata_url"):
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            # Never echo the value: client_secret is a secret.
            raise fail(f"oauth.{key}", "must be a non-empty string (use ${VAR} to read it from the environment)")
        if key == "client_secret" and not _VAR.search(value):
            literal_secret(f"oauth.{key}")
        missing = [var for var in _VAR.findall(value) if var not in environ]
        if missing:
            raise fail(f"oauth.{key}", f"refers to ${{{missing[0]}}}, which is not set in the environment")
        fields[key] = _VAR.sub(lambda m: environ[m.group(1)], value).strip()
    if "client_secret" in fields and "client_id" not in fields:
        raise fail("oauth.client_secret", "needs `client_id`, the client it is the secret of")
    document = fields.get("client_metadata_url")
    if document is not None:
        parts = urlsplit(document)
        if parts.scheme != "https" or not parts.netloc or parts.path in ("", "/"):
            raise fail("oauth.client_metadata_url", "must be an https URL with a path (where junior's client "
                       f"metadata document is published), got {document!r}")
        if "client_id" in fields:
            raise fail("oauth.client_metadata_url", "is a client id of its own; set it or `client_id`, not both")
    method = fields.get("token_endpoint_auth_method")
    if method is not None and method not in _AUTH_METHODS:
        raise fail("oauth.token_endpoint_auth_method", f"must be one of {', '.join(_AUTH_METHODS)}, got {method!r}")
    port = raw.get("callback_port")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535):
        raise fail("oauth.callback_port", f"must be a port number (1-65535), got {port!r}")
    return OAuthSettings(callback_port=port, **fields)
