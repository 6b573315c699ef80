"""Which MCP servers to bridge: ``junior.toml`` ``[mcp.servers.<name>]`` and ``{"mcpServers": {...}}`` JSON."""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

__all__ = ["RETRY_INTERVAL_S", "ConfigError", "ServerConfig", "config_paths", "load_config"]

# How often a server that failed to start is tried again, in seconds.
RETRY_INTERVAL_S = 30.0

SERVER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_STARTUP_TIMEOUT_S = 10.0

_TOML_KEYS = {
    "command", "args", "env", "cwd", "url", "headers", "description", "allowed_tools", "timeout_s",
    "startup_timeout_s", "enabled",
}
# Keys other MCP clients put in the same JSON; accepted and ignored so one file can serve them all.
_JSON_IGNORED = {"type", "transport", "disabled", "autoApprove", "alwaysAllow", "timeout", "autoapprove"}


class ConfigError(ValueError):
    """Invalid bridge configuration; the message names the file, the server and the field."""


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
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = attrs.field(factory=dict, repr=False)
    description: str | None = None
    allowed_tools: tuple[str, ...] | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S
    enabled: bool = True

    @property
    def source_id(self) -> str:
        return f"mcp:{self.name}"

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "http" if self.url is not None else "stdio"

    @property
    def target(self) -> str:
        """What to show a person: the command line or the URL (never env or header values)."""
        if self.url is not None:
            return self.url
        return " ".join([self.command or "", *self.args]).strip()


def config_paths(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> tuple[Path | None, Path | None]:
    """The TOML file (``JUNIOR_CONFIG`` or ``./junior.toml`` if present) and the JSON file (``JUNIOR_MCP_CONFIG``)."""
    environ = os.environ if environ is None else environ
    cwd = Path.cwd() if cwd is None else cwd
    toml_path: Path | None
    if environ.get("JUNIOR_CONFIG"):
        toml_path = Path(environ["JUNIOR_CONFIG"]).expanduser()
    else:
        toml_path = cwd / "junior.toml"
        if not toml_path.is_file():
            toml_path = None
    json_path = Path(environ["JUNIOR_MCP_CONFIG"]).expanduser() if environ.get("JUNIOR_MCP_CONFIG") else None
    return toml_path, json_path


def load_config(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> list[ServerConfig]:
    """Every configured server, sorted by name; raises ``ConfigError`` on the first problem."""
    environ = os.environ if environ is None else environ
    toml_path, json_path = config_paths(environ, cwd)
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
    return [servers[name] for name in sorted(servers)]


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
        servers.append(_server(str(path), f"[mcp.servers.{name}]", name, raw, environ))
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
        servers.append(_server(str(path), where, name, fields, environ))
    return servers


def _server(origin: str, where: str, name: str, raw: dict[str, Any], environ: Mapping[str, str]) -> ServerConfig:
    def fail(field: str, problem: str) -> ConfigError:
        return ConfigError(f"{origin}: {where} {field}: {problem}")

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
            missing = [var for var in _VAR.findall(text) if var not in environ]
            if missing:
                raise fail(f"{field}.{key}", f"refers to ${{{missing[0]}}}, which is not set in the environment")
            out[str(key)] = _VAR.sub(lambda m: environ[m.group(1)], text)
        return out

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
        for field in ("args", "env", "cwd"):
            if field in raw:
                raise fail(field, "only applies to stdio servers (with `command`), not to `url`")
    if command is not None and "headers" in raw:
        raise fail("headers", "only applies to `url` servers")
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        raise fail("enabled", f"must be true or false, got {enabled!r}")
    description = string("description")
    return ServerConfig(
        name=name,
        origin=origin,
        command=command,
        args=strings("args") or (),
        env=expanded_table("env"),
        cwd=string("cwd"),
        url=url,
        headers=expanded_table("headers"),
        description=description.strip() if description else None,
        allowed_tools=strings("allowed_tools"),
        timeout_s=seconds("timeout_s", DEFAULT_TIMEOUT_S),
        startup_timeout_s=seconds("startup_timeout_s", DEFAULT_STARTUP_TIMEOUT_S),
        enabled=enabled,
    )
