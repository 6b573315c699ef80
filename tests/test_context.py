from __future__ import annotations

import pytest

from junior_core import Actor, Conversation, ToolContext, ToolError
from junior_core.context import parse_slack_ts


@pytest.mark.parametrize("value", ["1700000000.000100", " 1700000000.000100 ", "1700000000", "0.1"])
def test_parse_slack_ts_accepts_digits_with_optional_fraction(value: str) -> None:
    assert parse_slack_ts(value) == value.strip()


@pytest.mark.parametrize(
    "value",
    ["17000000.memory-explicit", "", "  ", "1700000000.", ".5", "abc", "1e9", "-1700000000.1", "1700000000.1.2"],
)
def test_parse_slack_ts_refuses_invalid_values_naming_them(value: str) -> None:
    with pytest.raises(ValueError, match="invalid Slack timestamp") as info:
        parse_slack_ts(value)
    assert repr(value) in str(info.value)


def test_slack_conversation_with_label_suffixed_thread_ts_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="17000000.memory-explicit"):
        Conversation("slack", "T1", "C1", thread_ts="17000000.memory-explicit", visibility="public")


def test_source_key_prefers_thread_ts_and_trims() -> None:
    conv = Conversation("slack", "T1", "C1", thread_ts=" 1700000000.000100 ", message_ts="1700000001.000200", visibility="public")
    assert conv.source_key == "slack:T1:C1:1700000000.000100"
    assert (
        Conversation("slack", "T1", "C1", message_ts="1700000001.000200", visibility="public").source_key == "slack:T1:C1:1700000001.000200"
    )
    assert conv.workspace_key == "slack:T1"


def test_conversation_without_timestamp_has_no_source_key_and_tools_say_so() -> None:
    conv = Conversation("slack", "T1", "C1", visibility="public")
    assert conv.source_key is None
    with pytest.raises(ToolError) as info:
        ToolContext(conversation=conv).require_source_key()
    assert info.value.code == "missing_context"
    assert "timestamp" in info.value.message


def test_other_platforms_use_their_own_ids() -> None:
    conv = Conversation("local", "local", "cli", thread_ts="main", visibility="private")
    assert conv.source_key == "local:local:cli:main"


@pytest.mark.parametrize("bad", ["", "a:b", "with space", None])
def test_actor_ids_must_be_plain_strings(bad: object) -> None:
    with pytest.raises(ValueError, match="user_id"):
        Actor("slack", "T1", bad)  # type: ignore[arg-type]


def test_visibility_is_public_or_private() -> None:
    with pytest.raises(ValueError, match="visibility"):
        Conversation("slack", "T1", "C1", visibility="secret")  # type: ignore[arg-type]


def test_missing_actor_is_a_clear_tool_error() -> None:
    with pytest.raises(ToolError) as info:
        ToolContext().require_actor()
    assert info.value.code == "missing_context"
    assert Actor("slack", "T1", "U1").key == "slack:T1:U1"


def test_visibility_has_no_default_so_a_forgotten_dm_is_not_public() -> None:
    with pytest.raises(TypeError, match="visibility"):
        Conversation("slack", "T1", "D0123", thread_ts="1700000000.000100")  # type: ignore[call-arg]
    dm = Conversation("slack", "T1", "D0123", thread_ts="1700000000.000100", visibility="private")
    assert dm.visibility == "private"


def test_a_slack_direct_message_cannot_be_marked_public() -> None:
    with pytest.raises(ValueError, match="'D0123' is a direct message"):
        Conversation("slack", "T1", "D0123", visibility="public")
    # Only Slack's D ids are known to be direct messages; other platforms and channel kinds are the host's call.
    assert Conversation("local", "local", "D0123", visibility="public").visibility == "public"
    assert Conversation("slack", "T1", "C0123", visibility="public").visibility == "public"
