"""Credentials found by structure, not by spelling, measured on data/credential_structure.json through
``memory__remember`` on a real runtime: key material, one-time-password seeds and backup codes, seed phrases,
cards with their CVV or expiry, encoded secrets, password labels in seven languages, and disguised spellings
(leetspeak, look-alike letters, spaced letters); and ordinary memories that look like them (commit ids, ticket
UUIDs, order numbers, dates, versions, ports) which must be kept.

The set was written before the detectors; on the filter before them it measured 12 of 72 refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from junior_memory import MemoryPlugin
from junior_memory.credentials import credential_kind
from memory_helpers import ctx, err, ok

from junior_core import Runtime

SET = json.loads((Path(__file__).parent / "data" / "credential_structure.json").read_text(encoding="utf-8"))
CREDENTIALS: list[dict[str, str]] = SET["credentials"]
ORDINARY: list[str] = SET["ordinary"]
NOWHERE = "sqlite:////dev/null/no-such-dir/memory.sqlite3"  # touching it would answer `unavailable`
FORMS = {"markup", "prose", "key material", "otp", "seed phrase", "encoded", "card", "languages", "disguised"}


def test_the_set_is_the_size_it_claims() -> None:
    assert (len(CREDENTIALS), len(ORDINARY)) == (72, 70)
    assert len({c["text"] for c in CREDENTIALS}) == 72 and len(set(ORDINARY)) == 70
    assert {c["form"] for c in CREDENTIALS} == FORMS


@pytest.fixture
def offline() -> Iterator[Runtime]:
    with Runtime(plugins=[MemoryPlugin(url=NOWHERE)]) as runtime:
        yield runtime


def test_remember_refuses_at_least_95_percent_before_the_database(offline: Runtime) -> None:
    stored: list[str] = []
    for case in CREDENTIALS:
        answer = offline.execute_tool("memory__remember", {"content": case["text"], "kind": "knowledge"}, ctx())
        if answer.get("ok"):
            stored.append(case["text"])
            continue
        error = err(answer, "rejected")
        assert "never stores credentials" in error["message"], case
        assert case["text"] not in error["message"]  # the refusal never echoes the secret
    assert len(CREDENTIALS) - len(stored) >= 0.95 * len(CREDENTIALS), stored
    assert stored == []


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_is_refused(form: str) -> None:
    kept = [c["text"] for c in CREDENTIALS if c["form"] == form and credential_kind(c["text"]) is None]
    assert kept == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("the p\u0430ssword is Sunfl0wer", "a password or secret in a sentence (disguised)"),
        ("p a s s w o r d : Orchid#51", "a secret-named setting (disguised)"),
        ("creds (base64): YWRtaW46U3VwM3JTM2NyZXQh", "an encoded login and password"),
        ("company card 4111 1111 1111 1111 exp 09/27 cvv 123", "a card number with its CVV or expiry"),
        ("wallet seed: legal winner thank year wave sausage worth useful legal winner thank yellow",
         "a wallet seed phrase"),
        ("otpauth://totp/ACME:alice@example.com?secret=JBSWY3DPEHPK3PXP&issuer=ACME", "a one-time-password seed"),
        ("pagerduty integration key 7c9e6679b2a84f03a1c5d2e8f4b60a13", "key material (hex) next to a key word"),
    ],
)
def test_the_refusal_names_what_it_found(offline: Runtime, text: str, kind: str) -> None:
    error = err(offline.execute_tool("memory__remember", {"content": text, "kind": "knowledge"}, ctx()), "rejected")
    assert error["found"] == kind


def test_ordinary_memories_are_all_stored(rt: Runtime, rows: Any) -> None:
    for text in ORDINARY:
        assert ok(rt.execute_tool("memory__remember", {"content": text, "kind": "knowledge"}, ctx()))["created"], text
    assert {r["content"] for r in rows("SELECT content FROM junior_memory_memories")} == set(ORDINARY)


def test_a_card_number_alone_is_an_order_number_and_with_its_cvv_a_card() -> None:
    assert credential_kind("Order number 4111 1111 1111 1111 shipped on Monday") is None
    assert credential_kind("Order number 4111 1111 1111 1111, cvv 123") == "a card number with its CVV or expiry"
    assert credential_kind("Order number 4111 1111 1111 1112, cvv 123") is None  # fails Luhn's check
