"""Refusals happen before any database access: empty, oversized, control characters, credentials."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from junior_memory import MemoryPlugin
from junior_memory.credentials import credential_kind
from memory_helpers import err

from junior_core import Runtime

# Refusals must not need the database: this URL cannot be opened, so touching it would answer `unavailable`.
NOWHERE = "sqlite:////dev/null/no-such-dir/memory.sqlite3"

SECRETS = {
    "AWS access key": "my key is AKIAIOSFODNN7EXAMPLE ok",
    "AWS secret": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "GitHub token": "deploy with ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "GitHub PAT": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789",
    "Slack bot token": "the bot uses xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "Slack webhook": "post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "OpenAI key": "use sk-proj-abcdefghijklmnopqrstuvwxyz0123456789 for evals",
    "Anthropic key": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
    "Google API key": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "private key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----",
    "RSA key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA",
    "JWT": "token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "connection string": "prod db is postgresql://app:s3cretPass@db.internal:5432/app",
    "password": "the admin password: hunter2hunter2",
    "Stripe key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "api key assignment": "API_KEY=0123456789abcdef0123456789abcdef",
}

SAFE = [
    "I prefer terse PR summaries",
    "The deploy token lives in the 1Password vault 'Ops'",
    "Passwords are rotated every 90 days by the security team",
    "Use https://github.com/acme/app for the main repo",
    "Ask-me-anything sessions happen on Fridays",
    "Our Postgres runs at postgresql://db.internal:5432/app (credentials from Vault)",
    "Keys to the office are with reception",
]


@pytest.fixture
def rt() -> Iterator[Runtime]:
    with Runtime(plugins=[MemoryPlugin(url=NOWHERE)]) as runtime:
        yield runtime


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_credentials_are_rejected_without_echoing_them(rt: Runtime, name: str) -> None:
    secret = SECRETS[name]
    for kind in ("preference", "knowledge"):
        error = err(rt.execute_tool("memory__remember", {"content": secret, "kind": kind}, _ctx()), "rejected")
        assert "never stores credentials" in error["message"]
        assert "nothing was saved" in error["message"]
        assert secret not in error["message"] and secret[-12:] not in error["message"]


@pytest.mark.parametrize("content", SAFE)
def test_ordinary_facts_are_not_mistaken_for_credentials(content: str) -> None:
    assert credential_kind(content) is None


@pytest.mark.parametrize(
    ("content", "words"),
    [("", "empty"), ("   \n\t ", "empty"), ("x" * 4001, "limit is 4000"), ("bell\x07", "control characters")],
)
def test_bad_content_is_rejected(rt: Runtime, content: str, words: str) -> None:
    error = err(rt.execute_tool("memory__remember", {"content": content, "kind": "knowledge"}, _ctx()), "rejected")
    assert words in error["message"]


def test_content_at_the_limit_reaches_the_store(rt: Runtime) -> None:
    # 4,000 characters passes every check; the unreachable store is what answers.
    err(rt.execute_tool("memory__remember", {"content": "y" * 4000, "kind": "knowledge"}, _ctx()), "unavailable")


TOKEN_CHARS = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=36, max_size=40)
PROSE = st.text(alphabet=st.sampled_from(list("abcdefghij klmnopqrst uvwxyz,.!?ÄéßЖ日本")), max_size=80)


@settings(max_examples=200, deadline=None)
@given(before=PROSE, body=TOKEN_CHARS, after=PROSE, prefix=st.sampled_from(["ghp_", "gho_", "ghs_"]))
def test_a_github_token_anywhere_in_prose_is_found(before: str, body: str, after: str, prefix: str) -> None:
    assert credential_kind(f"{before} {prefix}{body} {after}") == "a GitHub token"


@settings(max_examples=300, deadline=None)
@given(text=PROSE)
def test_plain_prose_is_never_a_credential(text: str) -> None:
    assert credential_kind(text) is None


def _ctx():  # type: ignore[no-untyped-def]
    from memory_helpers import ctx

    return ctx()


@pytest.mark.parametrize("content", ["I like tea \ud83d", "\udc00 broken", "half an emoji \ud83d\u2615"])
def test_a_lone_surrogate_is_invalid_arguments_not_a_failure(rt: Runtime, content: str) -> None:
    error = err(rt.execute_tool("memory__remember", {"content": content, "kind": "knowledge"}, _ctx()),
                "invalid_arguments")
    assert "not valid Unicode" in error["message"] and "Nothing was saved" in error["message"]
    assert error["details"] == [{"path": "content", "message": "contains a lone UTF-16 surrogate"}]


@pytest.mark.parametrize("expires_at", ["9999-12-31T23:00:00-05:00", "9999-12-31T23:59:59.999999-00:01"])
def test_an_expiry_past_the_last_representable_instant_is_invalid_arguments(rt: Runtime, expires_at: str) -> None:
    error = err(rt.execute_tool("memory__remember", {"content": "Tea is in the kitchen", "kind": "knowledge",
                                                     "expires_at": expires_at}, _ctx()), "invalid_arguments")
    assert "out of range" in error["message"] and "'never'" in error["message"]


def test_an_expiry_in_the_past_says_what_today_is() -> None:
    from datetime import UTC, datetime

    from junior_memory.content import parse_expires

    from junior_core import ToolError

    now = datetime(2026, 4, 2, 9, 15, tzinfo=UTC)
    with pytest.raises(ToolError) as caught:
        parse_expires("2026-03-31", now)
    assert caught.value.code == "rejected"
    assert "today is 2026-04-02 (UTC), now 2026-04-02T09:15:00Z" in caught.value.message
    assert caught.value.details == {"details": [{"path": "expires_at", "message": "in the past", "today": "2026-04-02"}]}
    assert parse_expires("2026-04-03", now) == datetime(2026, 4, 4, tzinfo=UTC)  # control: tomorrow is kept


def test_a_date_alone_lasts_through_the_end_of_that_day_utc() -> None:
    from datetime import UTC, datetime

    from junior_memory.content import parse_expires

    late = datetime(2027, 3, 31, 23, 30, tzinfo=UTC)
    # "until March 31": kept through the 31st, so the day itself is still ahead at 23:30 that day.
    assert parse_expires("2027-03-31", late) == datetime(2027, 4, 1, tzinfo=UTC)
    assert parse_expires(" 2027-03-31 ", datetime(2027, 1, 1, tzinfo=UTC)) == datetime(2027, 4, 1, tzinfo=UTC)
    assert parse_expires("9999-12-31", late) == datetime.max.replace(tzinfo=UTC)
    # A date and time means that instant, as before; no offset means UTC.
    assert parse_expires("2027-03-31T17:00:00", late.replace(hour=9)) == datetime(2027, 3, 31, 17, tzinfo=UTC)


def test_the_tool_refuses_a_past_expiry_before_the_database_naming_today(rt: Runtime) -> None:
    error = err(rt.execute_tool("memory__remember", {"content": "The office is closed for the holidays",
                                                     "kind": "knowledge", "expires_at": "2001-03-31"}, _ctx()),
                "rejected")
    assert re.search(r"today is \d{4}-\d\d-\d\d \(UTC\)", error["message"]) and "Nothing was saved" in error["message"]
