"""Installing the app in many workspaces: Bolt's OAuth flow, with its installation and state stores in the app's
database (the event-id table's), one bot token per team.

``SLACK_CLIENT_ID`` and ``SLACK_CLIENT_SECRET`` (no ``SLACK_BOT_TOKEN``) turn it on for ``junior slack serve``:
``GET /slack/install`` starts an install, ``GET /slack/oauth_redirect`` finishes it (``oauth.v2.access``) and
keeps the team's bot token in ``slack_bots`` and ``slack_installations``. Each event is then answered with its
team's token. ``app_uninstalled`` and ``tokens_revoked`` delete the team's tokens (Bolt's listeners).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from junior_slack.events import engine_for

if TYPE_CHECKING:
    from slack_bolt.oauth.oauth_settings import OAuthSettings

__all__ = ["BOT_SCOPES", "INSTALL_PATH", "REDIRECT_PATH", "STATE_EXPIRY_S", "oauth_mode", "oauth_settings"]

INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"
STATE_EXPIRY_S = 600  # an install started and not finished within ten minutes must start again
# The bot scopes an install asks for: exactly the manifest's (a test compares them).
BOT_SCOPES = (
    "app_mentions:read", "chat:write", "assistant:write", "im:history", "commands", "im:write",
    "channels:history", "groups:history", "mpim:history", "channels:read", "groups:read", "mpim:read",
)


def oauth_mode(env: Mapping[str, str] | None = None) -> bool:
    """Whether the app installs through OAuth: a client id and secret, and no single bot token."""
    env = os.environ if env is None else env
    return bool(env.get("SLACK_CLIENT_ID", "").strip() and env.get("SLACK_CLIENT_SECRET", "").strip()
                and not env.get("SLACK_BOT_TOKEN", "").strip())


def oauth_settings(url: str, env: Mapping[str, str] | None = None) -> OAuthSettings:
    """Bolt's ``OAuthSettings`` with SQLAlchemy installation and state stores on ``url`` (tables made here)."""
    from slack_bolt.oauth.oauth_settings import OAuthSettings
    from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
    from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
    from sqlalchemy.exc import DBAPIError

    env = os.environ if env is None else env
    client_id = env["SLACK_CLIENT_ID"].strip()
    engine = engine_for(url)  # a SQLite file is made readable by this user alone: it holds the bot tokens
    installations = SQLAlchemyInstallationStore(client_id=client_id, engine=engine)
    states = SQLAlchemyOAuthStateStore(expiration_seconds=STATE_EXPIRY_S, engine=engine)
    for metadata in (installations.metadata, states.metadata):
        try:
            metadata.create_all(engine, checkfirst=True)
        except DBAPIError:  # two replicas at once: the loser finds them made
            metadata.create_all(engine, checkfirst=True)
    extra: dict[str, Any] = {}
    if env.get("SLACK_REDIRECT_URI", "").strip():
        extra["redirect_uri"] = env["SLACK_REDIRECT_URI"].strip()
    return OAuthSettings(
        client_id=client_id, client_secret=env["SLACK_CLIENT_SECRET"].strip(), scopes=list(BOT_SCOPES),
        installation_store=installations, state_store=states, install_path=INSTALL_PATH,
        redirect_uri_path=REDIRECT_PATH, **extra,
    )
