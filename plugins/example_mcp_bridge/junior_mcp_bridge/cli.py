"""``junior mcp list | check | serve | token``."""

from __future__ import annotations

import json
import logging
from typing import Any

import click

from junior_core import print_table

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
def check(as_json: bool) -> None:
    """Connect to each enabled server, report, and update its cached tool list; exits 1 if any is unavailable."""
    rows = _connect()
    failed = [r for r in rows if r["state"] == "failed"]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    elif not rows:
        _no_servers()
    else:
        for r in rows:
            if r["state"] == "ready":
                click.echo(f"ok      {r['source']}: {r['server']}, {r['tools']} tools, protocol "
                           f"{r['protocol_version']}, connected in {r['connect_s']:.2f} s")
            elif r["state"] == "disabled":
                click.echo(f"off     {r['source']}: disabled in {r['origin']}")
            else:
                click.echo(f"FAILED  {r['source']}: {r['error']} ({r['target']})")
    if failed:
        raise SystemExit(1)


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
    with Runtime.from_entry_points() as runtime:
        run(runtime, http_port, context, tokens=tokens, no_auth=no_auth, limits=limits)


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
