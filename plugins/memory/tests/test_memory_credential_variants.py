"""The credential filter measured on data/credential_variants.json: everyday forms of a credential, and ordinary
memories that must be kept, through ``credential_kind``, ``memory__remember`` and passive extraction alike.

The set was written before the filter was changed for it; every value in it is fake. On the filter as it was
then it measured 99 of 160 credentials refused and 0 of 176 ordinary memories.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from junior_memory import Candidate, MemoryPlugin
from junior_memory.credentials import credential_kind
from memory_helpers import ALICE, PUBLIC, ScriptedExtractor, ctx, err, ok

from junior_core import Message, Runtime

SET = json.loads((Path(__file__).parent / "data" / "credential_variants.json").read_text(encoding="utf-8"))
CREDENTIALS: list[dict[str, str]] = SET["credentials"]
ORDINARY: list[str] = SET["ordinary"]
NOWHERE = "sqlite:////dev/null/no-such-dir/memory.sqlite3"  # touching it would answer `unavailable`
# The two the filter keeps: a password as the second word of an ftp session's `user` line, and a key's id
# (which names a private key without being one).
KEPT = [
    "ftp -n files.example.com then user upload ftpPass77",
    '"private_key_id": "3f2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b"',
]


def test_the_set_is_the_size_it_claims() -> None:
    assert (len(CREDENTIALS), len(ORDINARY)) == (160, 176)
    assert len({c["text"] for c in CREDENTIALS}) == 160 and len(set(ORDINARY)) == 176
    assert len({c["form"] for c in CREDENTIALS}) == 14


def test_at_least_95_percent_refused_and_no_ordinary_memory_refused() -> None:
    kept = [c["text"] for c in CREDENTIALS if credential_kind(c["text"]) is None]
    refused_ordinary = [(text, credential_kind(text)) for text in ORDINARY if credential_kind(text) is not None]
    assert (len(CREDENTIALS) - len(kept), len(refused_ordinary)) == (158, 0), (kept, refused_ordinary)
    assert (len(CREDENTIALS) - len(kept)) / len(CREDENTIALS) >= 0.95
    assert kept == KEPT


@pytest.fixture
def offline() -> Iterator[Runtime]:
    with Runtime(plugins=[MemoryPlugin(url=NOWHERE)]) as runtime:
        yield runtime


def test_remember_refuses_every_refused_variant_before_the_database(offline: Runtime) -> None:
    for case in CREDENTIALS:
        if case["text"] in KEPT:
            continue
        error = err(offline.execute_tool("memory__remember", {"content": case["text"], "kind": "knowledge"}, ctx()),
                    "rejected")
        assert "never stores credentials" in error["message"], case


def test_extraction_refuses_them_too_and_keeps_the_ordinary(make_runtime: Any, rows: Any) -> None:
    refused = [c["text"] for c in CREDENTIALS if c["text"] not in KEPT]
    for text in refused:
        rt: Runtime = make_runtime(extractor=ScriptedExtractor([Candidate(text, "knowledge", [0])]))
        rt.after_turn(ctx(ALICE, PUBLIC), [Message("user", text, actor=ALICE)])
    assert rows("SELECT content FROM junior_memory_memories") == []
    # The control: the same path stores what the speaker said when it is not a credential.
    sample = ORDINARY[::25]
    for text in sample:
        rt = make_runtime(extractor=ScriptedExtractor([Candidate(text, "knowledge", [0])]))
        rt.after_turn(ctx(ALICE, PUBLIC), [Message("user", text, actor=ALICE)])
    assert sorted(r["content"] for r in rows("SELECT content FROM junior_memory_memories")) == sorted(sample)


def test_ordinary_memories_are_stored_through_the_tool(rt: Runtime, rows: Any) -> None:
    for text in ORDINARY:
        assert ok(rt.execute_tool("memory__remember", {"content": text, "kind": "knowledge"}, ctx()))["created"], text
    assert {r["content"] for r in rows("SELECT content FROM junior_memory_memories")} == set(ORDINARY)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("curl -u deploy:hunter2 https://ci.example.com", "a password passed to a command"),
        ("curl -u $USER:$TOKEN https://ci.example.com", None),
        ("docker run -u 1000:1000 alpine", None),
        ("mysql -uroot -phunter22 shop", "a password passed to a command"),
        ("mysql -u root -p shop asks for the password", None),
        ("the docs write it as `mysql -pPASSWORD`", None),
        ("machine ftp.example.com login upload password sunflower", "a .netrc entry"),
        ("the wifi password is: sunflower", "a password or secret in a sentence"),
        ("password: see the vault entry", None),
        ("Cookie: sessionid=abc123def456ghi789jkl", "a secret-named setting"),
        ("SESSION_TIMEOUT=30", None),
        ("the door code is 7734#", "a PIN or door code"),
        ("GPIO pin 18 drives the LED", None),
        ("https://hooks.example.com/trigger/deploy/9d5ed678fe57bcca610140957afab571", "a URL with a token in it"),
        ("https://example.com/dl?Zk3mQ9vLp2wX7nR4tY8b", "a URL with a token in it"),
        # A commit is named by its hash, and a document id is not a key: only a capability segment (hooks,
        # share, invite, private, bot...) or a query makes a random path piece a secret.
        ("https://github.com/acme/app/commit/3f2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b", None),
        ("https://docs.google.com/document/d/1aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdef/edit", None),
        ("https://example.com/share/7Hq2Lm9Xv4Rt8Kp3Wz6Ny1Bc5", "a URL with a token in it"),
    ],
)
def test_what_each_form_decides(text: str, found: str | None) -> None:
    assert credential_kind(text) == found
