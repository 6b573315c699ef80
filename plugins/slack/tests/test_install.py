"""Installs in many workspaces (Bolt's OAuth flow, installation and state stores in the app's database), on the real
``junior slack serve`` process: two teams installed through /slack/install and /slack/oauth_redirect, each answered
with its own token, then one uninstalled."""

from __future__ import annotations

import html
import os
import re
import stat
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from junior_slack.install import BOT_SCOPES
from junior_slack.testing import CLIENT_ID, CLIENT_SECRET, dm, event_body, send
from slack_helpers import manifest_scopes
from test_serve_command import Served, serving, wait_for_line

from junior_core.testing import wait_until

pytestmark = pytest.mark.slow

ONE, TWO = "T0TEAMONE", "T0TEAMTWO"
ALICE, ALICE_DM = "U0ALICE01", "D0ALICE01"
CAROL, CAROL_DM = "U0CAROL01", "D0CAROL01"


def get(url: str, cookie: str | None = None) -> tuple[int, str, dict[str, str]]:
    request = urllib.request.Request(url, headers={"cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode(), {k.lower(): v for k, v in response.headers.items()}
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), {k.lower(): v for k, v in exc.headers.items()}


def install(served: Served, team: str, token: str) -> str:
    """A workspace admin's install: the install page, Slack's approval (a code), the redirect; its page."""
    base = served.url.removesuffix("/slack/events")
    status, page, headers = get(f"{base}/slack/install")
    assert status == 200, page
    link = html.unescape(re.search(r'href="(https://slack.com/oauth/v2/authorize\?[^"]+)"', page)[1])  # type: ignore[index]
    query = parse_qs(urlsplit(link).query)
    assert query["client_id"] == [CLIENT_ID] and set(query["scope"][0].split(",")) == manifest_scopes()
    cookie = headers["set-cookie"].split(";", 1)[0]
    served.slack.grant(f"code-{team}", team, token)
    status, done, _ = get(f"{base}/slack/oauth_redirect?code=code-{team}&state={query['state'][0]}", cookie)
    assert status == 200, done
    return done


def bots(url: str) -> list[tuple[str, str]]:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return sorted((r[0], r[1]) for r in conn.execute(text("SELECT team_id, bot_token FROM slack_bots")))
    finally:
        engine.dispose()


def test_two_teams_install_each_is_answered_with_its_own_token_and_an_uninstall_deletes_one(
    db_url: str, tmp_path: Path
) -> None:
    assert set(BOT_SCOPES) == manifest_scopes()
    with serving(db_url, tmp_path, SLACK_BOT_TOKEN="", SLACK_CLIENT_ID=CLIENT_ID,
                 SLACK_CLIENT_SECRET=CLIENT_SECRET) as served:
        assert any("installs start at http://127.0.0.1:" in line for line in served.stderr)
        assert served.slack.count("auth.test") == 0  # no single token to check at start-up
        assert f"slack://app?team={ONE}&amp;id=A0JUNIOR1" in install(served, ONE, "xoxb-team-one")
        install(served, TWO, "xoxb-team-two")
        assert [c["code"] for c in served.slack.of("oauth.v2.access")] == [f"code-{ONE}", f"code-{TWO}"]
        assert bots(db_url) == [(ONE, "xoxb-team-one"), (TWO, "xoxb-team-two")]
        if db_url.startswith("sqlite:///"):  # the tokens' file is this user's alone
            assert stat.S_IMODE(os.stat(db_url.removeprefix("sqlite:///")).st_mode) == 0o600
        # A state used once, or made up, installs nothing.
        assert get(f"{served.url.removesuffix('/slack/events')}/slack/oauth_redirect?code=x&state=forged")[0] != 200
        assert send(served.url, event_body(dm(ALICE, ALICE_DM, "remember that deploys go through the release channel",
                                              "1700000100.000100", team=ONE), "Ev0INST001", team=ONE)) == 200
        one = served.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM)  # the scripted model: one at a time
        assert send(served.url, event_body(dm(CAROL, CAROL_DM, "how do we deploy?", "1700000200.000100", team=TWO),
                                           "Ev0INST002", team=TWO)) == 200
        two = served.slack.wait_for_post(lambda p: p["channel"] == CAROL_DM)
        assert (one["_token"], one["text"]) == ("xoxb-team-one", "Saved (everyone in this direct message).")
        assert (two["_token"], two["text"]) == ("xoxb-team-two", "I don't know that yet.")  # memory is per team
        # Team two uninstalls: Slack sends app_uninstalled and stops honouring its token; its rows are deleted.
        uninstalled = {"type": "app_uninstalled", "event_ts": "1700000300.000100"}
        assert send(served.url, event_body(uninstalled, "Ev0INST003", team=TWO)) == 200
        served.slack.revoke(TWO)
        deadline_rows = [(ONE, "xoxb-team-one")]
        wait_for_rows(db_url, deadline_rows)
        assert send(served.url, event_body(dm(CAROL, CAROL_DM, "hello", "1700000400.000100", team=TWO),
                                           "Ev0INST004", team=TWO)) != 500
        assert send(served.url, event_body(dm(ALICE, ALICE_DM, "how do we deploy?", "1700000500.000100", team=ONE),
                                           "Ev0INST005", team=ONE)) == 200
        used = served.slack.wait_for_post(lambda p: p["channel"] == ALICE_DM, skip=1)
        assert used["text"] == 'From memory: "deploys go through the release channel"'
        wait_for_line(served, f"event Ev0INST005 team={ONE}")
        assert [p["text"] for p in served.slack.posts() if p["channel"] == CAROL_DM] == ["I don't know that yet."]
        assert served.stop() == 0
    assert not [line for line in served.stderr if "Traceback" in line], "\n".join(served.stderr)


def wait_for_rows(url: str, expected: list[tuple[str, str]]) -> None:
    wait_until(lambda: bots(url) == expected, what=f"the bot rows {expected}")
