"""``junior mcp list | check | login | logout | serve | token``."""

from __future__ import annotations

import json
import logging
from typing import Any

import click

from junior_core.tables import print_table

__all__ = ["mcp"]


@click.group()
def mcp() -> None:
    """MCP servers as junior sources, and junior as an MCP server."""


def _connect(refresh: bool = True) -> list[dict[str, Any]]:
    """Every server's status row: connected (its tool cache rewritten), or from a fresh cache unless ``refresh``."""
    from junior_mcp_bridge.bridge import Bridge
    from junior_mcp_bridge.cache import ToolCache
    from junior_mcp_bridge.config import ConfigError, bridge_settings, load_config

    try:
        configs = load_config()
        settings = bridge_settings()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    cache = ToolCache(max_age_s=settings.tool_cache_max_age_s) if settings.tool_cache else None
    bridge = Bridge(configs, cache=cache, refresh=refresh)
    # These commands print each server's state themselves; a warning would say it a second time (`-v` shows it).
    for conn in bridge.connections.values():
        conn.failure_level = logging.INFO
    try:
        bridge.start()
        return bridge.status()
    finally:
        bridge.close()


def _no_servers() -> None:
    click.echo("No MCP servers configured: add [mcp.servers.<name>] to junior.toml (or the file JUNIOR_CONFIG "
               "names), or point JUNIOR_MCP_CONFIG at an {\"mcpServers\": {...}} JSON file.", err=True)


@mcp.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--refresh", is_flag=True, help="Connect to every server and update its cached tool list.")
def list_servers(as_json: bool, refresh: bool) -> None:
    """Configured servers, their state and tool counts (from the tool cache where fresh, else connecting)."""
    rows = _connect(refresh)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        _no_servers()
        return
    table = [[r["source"], r["state"], "-" if r["tools"] is None else str(r["tools"]), r["transport"], r["target"]]
             for r in rows]
    print_table(table, ["SOURCE", "STATE", "TOOLS", "TRANSPORT", "TARGET"], max_width=None)


@mcp.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--url", default=None, metavar="URL",
              help="Check this streamable HTTP server instead of the configured ones (logging in if it asks).")
@click.option("--client-id", default=None, help="With --url: a pre-registered OAuth client id.")
@click.option("--client-secret-env", default=None, metavar="VAR",
              help="With --url: the environment variable holding that client's secret.")
@click.option("--scope", default=None, help="With --url: the OAuth scope to ask for.")
@click.option("--client-metadata-url", default=None, metavar="URL",
              help="With --url: junior's client ID metadata document, used as its client id where supported.")
@click.option("--callback-port", type=int, default=None, metavar="PORT",
              help="With --url: the loopback port of the redirect URI (the one the metadata document names).")
def check(as_json: bool, url: str | None, client_id: str | None, client_secret_env: str | None,
          scope: str | None, client_metadata_url: str | None, callback_port: int | None) -> None:
    """Connect to each enabled server, report, and update its cached tool list; exits 1 if any is unavailable."""
    if url is not None:
        _check_url(url, as_json, client_id, client_secret_env, scope, client_metadata_url, callback_port)
        return
    if client_id or client_secret_env or scope or client_metadata_url or callback_port:
        raise click.UsageError("--client-id, --client-secret-env, --scope, --client-metadata-url and "
                               "--callback-port only apply with --url")
    rows = _connect()
    failed = [r for r in rows if r["state"] == "failed"]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    elif not rows:
        _no_servers()
    else:
        for r in rows:
            _print_row(r)
    if failed:
        raise SystemExit(1)


def _print_row(r: dict[str, Any]) -> None:
    if r["state"] == "ready":
        click.echo(f"ok      {r['source']}: {r['server']}, {r['tools']} tools, protocol "
                   f"{r['protocol_version']}, connected in {r['connect_s']:.2f} s")
    elif r["state"] == "disabled":
        click.echo(f"off     {r['source']}: disabled in {r['origin']}")
    else:
        click.echo(f"FAILED  {r['source']}: {r['error']} ({r['target']})")


def _check_url(url: str, as_json: bool, client_id: str | None, secret_env: str | None, scope: str | None,
               client_metadata_url: str | None = None, callback_port: int | None = None) -> None:
    import os
    import re
    from urllib.parse import urlsplit

    from junior_mcp_bridge.config import ConfigError, server_config

    if secret_env is not None and not os.environ.get(secret_env):
        raise click.UsageError(f"--client-secret-env: ${secret_env} is not set")
    oauth: dict[str, Any] = {key: value for key, value in {
        "client_id": client_id, "client_secret": os.environ.get(secret_env) if secret_env else None,
        "scope": scope, "client_metadata_url": client_metadata_url, "callback_port": callback_port}.items()
        if value is not None}
    host = re.sub(r"[^a-z0-9]+", "-", (urlsplit(url).hostname or "server").lower()).strip("-") or "server"
    try:
        config = server_config("--url", host, {"url": url, "oauth": oauth or True})
    except ConfigError as exc:
        # The fields are this command's flags: the message names the flag that was given, not a config key.
        message = str(exc)
        for field, flag in _FLAGS.items():
            prefix = f"--url: {host} oauth.{field}: "
            if message.startswith(prefix):
                problem = message[len(prefix):]
                for other, other_flag in _FLAGS.items():
                    problem = problem.replace(f"`{other}`", other_flag)
                raise click.UsageError(f"{flag}: {problem}") from None
        raise click.UsageError(message) from None
    rows, tools = _login(config, fresh=False)
    row = rows[0]
    if as_json:
        click.echo(json.dumps({**row, "tool_names": [t.name for t in tools]}, indent=2))
    else:
        _print_row(row)
        for tool in tools:
            click.echo(f"        - {tool.name}")
    if row["state"] != "ready":
        raise SystemExit(1)


_FLAGS = {"client_id": "--client-id", "client_secret": "--client-secret-env", "scope": "--scope",
          "client_metadata_url": "--client-metadata-url", "callback_port": "--callback-port"}


def _login(config: Any, fresh: bool) -> tuple[list[dict[str, Any]], list[Any]]:
    """Connect to one server with a person at a browser to log in if it asks; its status row and tools."""
    import attrs

    from junior_mcp_bridge.bridge import Bridge
    from junior_mcp_bridge.oauth import LOGIN_TIMEOUT_S, Login

    # Time to find the browser window and log in, on top of the server's own start-up.
    config = attrs.evolve(config, startup_timeout_s=config.startup_timeout_s + LOGIN_TIMEOUT_S)
    bridge = Bridge([config])
    conn = bridge.connections[config.name]
    conn.failure_level = logging.INFO
    conn.login = Login(fresh=fresh, say=lambda text: click.echo(text, err=True))
    try:
        bridge.start()
        return bridge.status(), list(conn.tools) if conn.state == "ready" else []
    finally:
        bridge.close()


def _remote(name: str) -> Any:
    from junior_mcp_bridge.config import ConfigError, load_config

    try:
        configs = {c.name: c for c in load_config()}
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    config = configs.get(name)
    if config is None:
        known = ", ".join(sorted(configs)) or "none"
        raise click.ClickException(f"no MCP server named {name!r} is configured (configured: {known})")
    if config.url is None:
        raise click.ClickException(f"MCP server {name!r} is a stdio server (`command`); only `url` servers log in")
    if config.oauth is None:
        raise click.ClickException(f"MCP server {name!r} has OAuth turned off (`oauth = false`, or an "
                                   "Authorization header in `headers`)")
    return config


@mcp.command()
@click.argument("name")
def login(name: str) -> None:
    """Log in to the remote MCP server NAME in your browser and keep its tokens (0600, in junior's data dir)."""
    from junior_mcp_bridge.oauth import token_file

    config = _remote(name)
    rows, _ = _login(config, fresh=True)
    row = rows[0]
    if row["state"] != "ready":
        click.echo(f"FAILED  {row['source']}: {row['error']} ({row['target']})")
        raise SystemExit(1)
    _forget_failure(config)
    click.echo(f"Logged in to {row['source']} ({row['server']}, {row['tools']} tools); tokens kept in "
               f"{token_file(config.url)}")


def _forget_failure(config: Any) -> None:
    """After a login, the server is no longer left alone for a failed start (it needed this login)."""
    from junior_mcp_bridge.cache import ToolCache
    from junior_mcp_bridge.config import bridge_settings

    settings = bridge_settings()
    if settings.tool_cache:
        ToolCache(max_age_s=settings.tool_cache_max_age_s).clear_failure(config)


@mcp.command()
@click.argument("name")
def logout(name: str) -> None:
    """Forget the tokens (and the client registration) junior holds for the remote MCP server NAME."""
    from junior_mcp_bridge.oauth import token_file

    config = _remote(name)
    path = token_file(config.url)
    try:
        path.unlink()
    except FileNotFoundError:
        click.echo(f"Not logged in to mcp:{name}: nothing to forget.")
        return
    click.echo(f"Logged out of mcp:{name}: removed {path}. The server may still consider the tokens valid until "
               "they expire; revoke junior's access in its settings to end them now.")


@mcp.command()
@click.option("--http", "http_port", type=click.IntRange(1, 65535), default=None,
              help="Serve streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio; clients need a bearer token.")
@click.option("--no-auth", is_flag=True,
              help="With --http: accept requests without a token. Any local process or user can then act as you.")
def serve(http_port: int | None, no_auth: bool) -> None:
    """Run junior as an MCP server: searchTools, executeTool and direct tools over every installed source."""
    from junior_core import Runtime, local_context
    from junior_mcp_bridge.auth import TokenError, load_tokens
    from junior_mcp_bridge.config import ConfigError, bridge_settings
    from junior_mcp_bridge.gateway import serve as run

    if no_auth and http_port is None:
        raise click.UsageError("--no-auth only applies to --http; stdio has no network clients to authenticate")
    context = local_context()
    tokens = limits = None
    if http_port is not None:
        try:  # before the runtime starts, so a bad token file or config costs no server start-up
            tokens = None if no_auth else load_tokens(context)
            limits = bridge_settings().gateway
        except (TokenError, ConfigError) as exc:
            raise click.ClickException(str(exc)) from None
    # Lazy: a bridged server starts when a call first needs its tools, so `tools/list` and `initialize` never
    # wait for one (the gateway lists each source on demand, from the tool cache where it is fresh).
    with Runtime.from_entry_points(lazy_sources=True) as runtime:
        run(runtime, http_port, context, tokens=tokens, no_auth=no_auth, limits=limits,
            say=lambda text: click.echo(text, err=True))


@mcp.command()
@click.option("--rotate", is_flag=True, help="Replace the token with a new one; clients using the old one get 401.")
@click.option("--path", "show_path", is_flag=True, help="Print the token file's path instead of the token.")
def token(rotate: bool, show_path: bool) -> None:
    """Print the bearer token for `junior mcp serve --http` (made on first use, kept private to you)."""
    from junior_mcp_bridge.auth import TokenError, read_or_create_token, rotate_token, token_path

    try:
        value = rotate_token() if rotate else read_or_create_token()
    except TokenError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(str(token_path()) if show_path else value)
