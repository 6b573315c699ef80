"""``junior slack serve`` (Events API over HTTP) and ``junior slack socket`` (Socket Mode)."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import click

from junior_slack.events import LEASE
from junior_slack.server import BODY_LIMIT, CONNECTIONS_CEILING, FD_RESERVE, READ_TIMEOUT

if TYPE_CHECKING:
    from slack_bolt import App

    from junior_slack.app import SlackBot
    from junior_slack.events import EventLog
    from junior_slack.server import TurnPool

__all__ = ["GRACE_S", "SETTINGS", "setup_logging", "slack_group"]

log = logging.getLogger("junior.slack")

# Under the 30 s a container platform (Kubernetes, ECS) waits after SIGTERM before it kills the process.
GRACE_S = 25.0
# An event's lease: at least a second; at most an hour, past which it only keeps a dead turn from its retry.
LEASE_MIN_S, LEASE_MAX_S = 1, 3600

SETTINGS = {
    "SLACK_BOT_TOKEN": "the bot token (xoxb-...) from the app's OAuth & Permissions page",
    "SLACK_SIGNING_SECRET": "the signing secret from the app's Basic Information page",
    "SLACK_CLIENT_ID": "the client id from the app's Basic Information page (installs in many workspaces)",
    "SLACK_CLIENT_SECRET": "the client secret from the app's Basic Information page (installs in many workspaces)",
    "SLACK_APP_TOKEN": "an app-level token (xapp-...) with connections:write, from the app's Basic Information page",
    "JUNIOR_MODEL": "a model spec such as openai:gpt-4.1 or openai-compatible:http://127.0.0.1:8080/v1#model",
}


def require(*names: str) -> None:
    """One line naming each setting that is missing, before anything starts."""
    missing = [name for name in names if not os.environ.get(name, "").strip()]
    if missing:
        raise click.ClickException("; ".join(f"{name} is not set: {SETTINGS[name]}" for name in missing))


class _UTCFormatter(logging.Formatter):
    """``2026-12-03T13:40:00.123Z LEVEL logger: message``: UTC, to the millisecond, as log collectors expect."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_logging(ctx: click.Context) -> None:
    """Timestamps on the log lines, and ``junior.slack`` at INFO (a line per event) unless a level was chosen.

    ``junior`` has already set up logging (``junior: LEVEL name: message`` on standard error, WARNING), so
    ``logging.basicConfig`` would do nothing here: the handler it made gets this format instead. A level chosen
    with ``junior --log-level``, ``-v`` or ``JUNIOR_LOG_LEVEL`` stays as chosen. Undone when the command ends.
    """
    formatter = _UTCFormatter(LOG_FORMAT)
    root = logging.getLogger()
    ours = [h for h in root.handlers if type(h) is logging.StreamHandler and h.stream is sys.stderr]
    added: logging.Handler | None = None
    if not ours and not root.handlers:  # not run by ``junior``: nothing set up yet
        added = logging.StreamHandler(sys.stderr)
        root.addHandler(added)
        ours = [added]
    before = [(handler, handler.formatter) for handler in ours]
    for handler in ours:
        handler.setFormatter(formatter)
    slack = logging.getLogger("junior.slack")
    level = slack.level
    params = ctx.find_root().params
    chosen = bool(params.get("verbose")) or params.get("log_level") is not None \
        or bool(os.environ.get("JUNIOR_LOG_LEVEL", "").strip())  # junior's documented variable
    if not chosen:
        slack.setLevel(logging.INFO)

    def undo() -> None:
        slack.setLevel(level)
        for handler, was in before:
            handler.setFormatter(was)
        if added is not None:
            root.removeHandler(added)

    ctx.call_on_close(undo)


class _Quiet(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.ERROR


@contextmanager
def _bot(ctx: click.Context, *, events: EventLog | None = None, **bolt_kwargs: Any) -> Iterator[tuple[App, SlackBot]]:
    """The installed runtime, the bot and its Bolt app on it, closed on leaving."""
    from junior_core import Runtime
    from junior_core.llm import ModelConfigError, model_from_env

    setup_logging(ctx)
    try:
        model = model_from_env()
    except ModelConfigError as exc:
        raise click.ClickException(f"JUNIOR_MODEL: {exc}") from None
    assert model is not None  # require() checked JUNIOR_MODEL
    from junior_slack.app import PROMPTS_ENV, SlackBot, bolt_app, prompts_from
    from junior_slack.events import EventLog
    from junior_slack.install import oauth_mode, oauth_settings

    try:
        prompts = prompts_from(os.environ.get(PROMPTS_ENV))
    except ValueError as exc:
        raise click.ClickException(f"{PROMPTS_ENV}: {exc}") from None

    log_of_events = events if events is not None else EventLog()
    installs = oauth_mode()
    if installs:
        try:
            bolt_kwargs["oauth_settings"] = oauth_settings(log_of_events.url)
        except Exception as exc:  # noqa: BLE001 - the database is the operator's to fix: say which and why
            raise click.ClickException(f"cannot open the installation store in {log_of_events.url}: "
                                       f"{type(exc).__name__}: {exc}") from None
    with Runtime.from_entry_points() as runtime:
        # slack-sdk logs each failed attempt at ERROR before Bolt raises: the one line below says it instead.
        attempts = logging.getLogger("slack_sdk.web.base_client")
        quiet = _Quiet()
        attempts.addFilter(quiet)
        try:
            app = bolt_app(**bolt_kwargs)
        except Exception as exc:  # noqa: BLE001 - Bolt checks the token with auth.test: say why it failed
            where = os.environ.get("SLACK_API_URL") or "Slack"
            if isinstance(exc, OSError):  # urllib's URLError among them: Slack was not reached
                reason = getattr(exc, "reason", exc)
                why = getattr(reason, "strerror", None) or reason
                url = os.environ.get("SLACK_API_URL") or "https://slack.com/api/"
                raise click.ClickException(f"cannot reach Slack at {url} to check SLACK_BOT_TOKEN (auth.test): "
                                           f"{why}") from None
            raise click.ClickException(f"cannot start the Slack app ({where}): {exc}") from None
        finally:
            attempts.removeFilter(quiet)
        if installs:
            app.enable_token_revocation_listeners()  # app_uninstalled, tokens_revoked: the team's tokens deleted
        bot = SlackBot(runtime, model, events=log_of_events, prompts=prompts)
        bot.listen(app)
        try:
            yield app, bot
        finally:
            log_of_events.close()


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
@click.option("--max-connections", type=click.IntRange(min=1), default=None,
              help="Connections held open at most; past it a new one closes the one idle (or half-sent) longest, "
                   "Slack's own last. Default: what the open-file limit (ulimit -n) allows, less what the process "
                   f"has open and {FD_RESERVE} kept for turns, at most {CONNECTIONS_CEILING}.")
@click.option("--lease", default=int(LEASE.total_seconds()), show_default=True,
              type=click.IntRange(min=LEASE_MIN_S, max=LEASE_MAX_S),
              help="Seconds an event is held by the delivery running its turn; a retry after that, the turn "
                   "unfinished (the process died), runs it again. Longer than a turn takes, shorter than Slack's "
                   "last retry (5 minutes).")
@click.option("--grace", default=GRACE_S, show_default=True, type=click.FloatRange(min=0),
              help="On SIGTERM or Ctrl-C, seconds the turns under way have to finish before it stops without them.")
@click.pass_context
def serve(ctx: click.Context, port: int, host: str, body_limit: int, read_timeout: float,
          max_connections: int | None, lease: int, grace: float) -> None:
    """Receive the Events API over HTTP at POST /slack/events (signatures checked with SLACK_SIGNING_SECRET).

    GET /healthz answers 200 without a signature. SIGTERM or Ctrl-C stops it: no new request is taken, the turns
    under way get --grace seconds to finish; the exit status is 1 when some did not.
    """
    from junior_slack.install import INSTALL_PATH, oauth_mode

    installs = oauth_mode()
    if installs:  # many workspaces: each team's token comes from its install
        require("SLACK_SIGNING_SECRET", "JUNIOR_MODEL")
    else:
        require("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "JUNIOR_MODEL")
    from junior_slack.events import EventLog
    from junior_slack.server import EVENTS_PATH, TurnPool, make_server

    turns = TurnPool()
    unfinished = 0
    with _bot(ctx, events=EventLog(lease=timedelta(seconds=lease)), listener_executor=turns) as (app, bot):
        try:
            server = make_server(app, host, port, body_limit=body_limit, read_timeout=read_timeout,
                                 max_connections=max_connections)
        except OSError as exc:
            raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        if server.lowered:
            log.warning("--max-connections: %s", server.lowered)
        elif max_connections is None and server.max_connections < CONNECTIONS_CEILING:
            log.info("at most %d connections open at once, as the open-file limit (ulimit -n) allows; past that the "
                     "one idle longest is closed (--max-connections)", server.max_connections)
        if installs:
            click.echo(f"junior-slack: installs start at http://{host}:{server.server_port}{INSTALL_PATH}", err=True)
        click.echo(f"junior-slack: listening on http://{host}:{server.server_port}{EVENTS_PATH}", err=True)
        hurry = server.again

        def stop(_sig: int, _frame: Any) -> None:
            # Outside serve_forever (uvicorn has its own handlers while it serves): before it, stop as soon as it
            # starts; after it, while turns finish, cut their grace short. Never the default action, which would
            # end the process at once.
            hurry.set()
            server.stop_soon()

        previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            try:
                server.serve_forever()
            finally:
                server.server_close()
            unfinished = finish_turns(bot, turns, grace, server.stopped_by, hurry)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    if unfinished:
        # Their threads are still in a turn: leave without waiting for them (the interpreter would).
        logging.shutdown()
        sys.stderr.flush()
        os._exit(1)


def finish_turns(bot: SlackBot, turns: TurnPool, grace: float, stopped_by: int | None,
                 hurry: threading.Event) -> int:
    """Give the turns under way ``grace`` seconds (less once ``hurry`` is set: a second SIGTERM or Ctrl-C); then
    give up the rest, telling each person to ask again. How many were given up."""
    how = signal.Signals(stopped_by).name if stopped_by else "shut down"
    busy = turns.busy
    log.info("stopping (%s): %s", how, f"waiting up to {grace:g} s for {busy} turn{'s' * (busy != 1)} under way"
             if busy else "no turn under way")
    left = turns.drain(grace, hurry)
    if not left:
        turns.shutdown(wait=True)
        log.info("stopped: every turn finished")
        return 0
    given_up = bot.stop()
    turns.shutdown(wait=False, cancel_futures=True)
    log.warning("stopped with %d turn%s unfinished after %s (events %s); each person was told to ask again", left,
                "s" * (left != 1), "a second signal" if hurry.is_set() else f"the {grace:g} s grace",
                ", ".join(given_up) or "not started")
    return left


@slack_group.command()
@click.pass_context
def socket(ctx: click.Context) -> None:
    """Receive events over Socket Mode (SLACK_APP_TOKEN): no public URL needed."""
    require("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "JUNIOR_MODEL")
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    with _bot(ctx) as (app, _):
        handler: Any = SocketModeHandler(app, os.environ["SLACK_APP_TOKEN"])
        click.echo("junior-slack: connecting over Socket Mode", err=True)
        try:
            handler.start()
        except KeyboardInterrupt:
            pass
        finally:
            handler.close()


@slack_group.command()
@click.option("--limit", default=50, show_default=True, type=click.IntRange(min=1), help="How many, newest first.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line instead of the table.")
def feedback(limit: int, as_json: bool) -> None:
    """List the feedback people gave on answers (the buttons under each), newest first.

    Read from the app's database: JUNIOR_SLACK_URL, else JUNIOR_MEMORY_URL, else the user data dir's SQLite file.
    """
    import json

    from junior_slack.feedback import FeedbackStore

    store = FeedbackStore()
    try:
        presses = store.list(limit)
    except Exception as exc:  # noqa: BLE001 - the database is the user's to fix: say which and why
        raise click.ClickException(f"cannot read feedback from {store.url}: {type(exc).__name__}: {exc}") from None
    finally:
        store.close()
    if as_json:
        for p in presses:
            click.echo(json.dumps({"at": p.at.isoformat(), "event_id": p.event_id, "team_id": p.team_id,
                                   "channel_id": p.channel_id, "message_ts": p.message_ts, "user_id": p.user_id,
                                   "value": p.value}))
        return
    if not presses:
        click.echo("no feedback yet")
        return
    for p in presses:
        click.echo(f"{p.at:%Y-%m-%d %H:%M:%SZ}  {p.value:<4}  {p.event_id}  team={p.team_id} channel={p.channel_id} "
                   f"user={p.user_id} message={p.message_ts}")


@slack_group.command("try")
@click.argument("messages", nargs=-1, required=True)
@click.option("--model", default="echo", show_default=True,
              help="The model spec the app runs on (docs/models.md): echo and script:FILE need no key or network.")
@click.option("--in", "where", type=click.Choice(["dm", "assistant", "channel"]), default="dm", show_default=True,
              help="Where each message is said: the app's DM, an assistant thread (Slack's AI app pane), or a "
                   "mention in a public channel.")
@click.option("--log", "show_log", is_flag=True, help="Also print the server's log lines (standard error).")
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Seconds to wait for the server to start, and for each answer.")
def try_(messages: tuple[str, ...], model: str, where: str, show_log: bool, timeout: float) -> None:
    """Try the app without Slack: the real `junior slack serve` against a local stand-in of Slack's Web API.

    Each MESSAGE is sent, in order, as a signed event from one person; what the app posts back (its status while
    it works, then its answer) is printed. The server runs on a free port with a new SQLite database in a
    temporary folder (your memory is not touched), your plugins and junior.toml; it is stopped at the end.
    Exit status 1 when a message got no answer.
    """
    from junior_slack.testing import LocalServe, LocalServeError

    failed = 0
    local = LocalServe(model, where=where, timeout=timeout)
    try:
        with local:
            assert local.slack is not None
            click.echo(f"junior-slack: trying junior slack serve at {local.url} (model {model}), Web API stand-in "
                       f"at {local.slack.url}", err=True)
            for text in messages:
                exchange = local.say(text)
                click.echo(f"you: {text}")
                for method, params in exchange.calls:
                    if method == "assistant.threads.setTitle":
                        click.echo(f"  (title: {params.get('title')})")
                for status in exchange.statuses:
                    if status:
                        click.echo(f"  (status: junior {status})")
                for reply in exchange.replies:
                    click.echo("junior: " + reply.replace("\n", "\n  "))
                if exchange.outcome != "answered":
                    failed += 1
                    click.echo(f"junior-slack: no answer: {exchange.line}", err=True)
    except LocalServeError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        if show_log:
            for line in local.log:
                click.echo(line, err=True)
    if failed:
        raise SystemExit(1)
