"""``junior slack serve`` (Events API over HTTP) and ``junior slack socket`` (Socket Mode)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from junior_slack.server import BODY_LIMIT, READ_TIMEOUT

if TYPE_CHECKING:
    from slack_bolt import App

__all__ = ["SETTINGS", "slack_group"]

SETTINGS = {
    "SLACK_BOT_TOKEN": "the bot token (xoxb-...) from the app's OAuth & Permissions page",
    "SLACK_SIGNING_SECRET": "the signing secret from the app's Basic Information page",
    "SLACK_APP_TOKEN": "an app-level token (xapp-...) with connections:write, from the app's Basic Information page",
    "JUNIOR_MODEL": "a model spec such as openai:gpt-4.1 or openai-compatible:http://127.0.0.1:8080/v1#model",
}


def require(*names: str) -> None:
    """One line naming each setting that is missing, before anything starts."""
    missing = [name for name in names if not os.environ.get(name, "").strip()]
    if missing:
        raise click.ClickException("; ".join(f"{name} is not set: {SETTINGS[name]}" for name in missing))


@contextmanager
def _bot() -> Iterator[App]:
    """The installed runtime and the app on it, closed on leaving."""
    from junior_core import Runtime
    from junior_core.llm import ModelConfigError, model_from_env

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        model = model_from_env()
    except ModelConfigError as exc:
        raise click.ClickException(f"JUNIOR_MODEL: {exc}") from None
    assert model is not None  # require() checked JUNIOR_MODEL
    with Runtime.from_entry_points() as runtime:
        from junior_slack.app import create_app

        try:
            app = create_app(runtime, model)
        except Exception as exc:  # noqa: BLE001 - Bolt checks the token with auth.test: say why it failed
            where = os.environ.get("SLACK_API_URL") or "Slack"
            raise click.ClickException(f"cannot start the Slack app ({where}): {exc}") from None
        yield app


@click.group("slack")
def slack_group() -> None:
    """Run junior as a Slack app: mentions in channels and messages in DMs become junior turns."""


@slack_group.command()
@click.option("--port", default=3000, show_default=True, help="Port to listen on.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; expose it through a TLS-terminating reverse proxy.")
@click.option("--body-limit", default=BODY_LIMIT, show_default=True, type=click.IntRange(min=1),
              help="Largest request body accepted, in bytes; a larger one is refused with 413 unread.")
@click.option("--read-timeout", default=READ_TIMEOUT, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Seconds a client has to send a request's headers, and again its body.")
def serve(port: int, host: str, body_limit: int, read_timeout: float) -> None:
    """Receive the Events API over HTTP at POST /slack/events (signatures checked with SLACK_SIGNING_SECRET)."""
    require("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "JUNIOR_MODEL")
    from junior_slack.server import EVENTS_PATH, make_server

    with _bot() as app:
        try:
            server = make_server(app, host, port, body_limit=body_limit, read_timeout=read_timeout)
        except OSError as exc:
            raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        click.echo(f"junior-slack: listening on http://{host}:{server.server_port}{EVENTS_PATH}", err=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()


@slack_group.command()
def socket() -> None:
    """Receive events over Socket Mode (SLACK_APP_TOKEN): no public URL needed."""
    require("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "JUNIOR_MODEL")
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    with _bot() as app:
        handler: Any = SocketModeHandler(app, os.environ["SLACK_APP_TOKEN"])
        click.echo("junior-slack: connecting over Socket Mode", err=True)
        try:
            handler.start()
        except KeyboardInterrupt:
            pass
        finally:
            handler.close()
