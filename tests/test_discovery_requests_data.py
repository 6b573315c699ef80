"""The shape of benchmarks/data/discovery_requests.json: counts, wordings, catalog references, no repeated text."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

FILE = Path(__file__).resolve().parent.parent / "benchmarks" / "data" / "discovery_requests.json"
DATA_DIR = Path(os.environ.get("JUNIOR_DATA_DIR") or Path(__file__).resolve().parents[2] / "shared" / "data")
HALVES = ("tuning", "heldout")
MEMORY_TOOLS = ("remember", "forget", "list", "search")
WORDINGS = ("short", "terse", "multi_clause", "question", "chatty", "indirect", "typo")
PER_WORDING = 5
NO_MATCH = 40
SHARED = {"livemcpbench": 25, "metatool": 15}
# Verbs the memory tools' own descriptions use; shared_verbs requests must use one so they are confusable.
MEMORY_VERBS = re.compile(
    r"\b(?:(?:list|find|fetch|show|delete|remove|search|log|save|store|note|clear|export|review|get|record)"
    r"(?:s|d|es|ed|ing|ged|ting)?|look(?:s|ed|ing)? up)\b",
    re.IGNORECASE,
)


def _load() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(FILE.read_text(encoding="utf-8"))
    return loaded


def _texts(half: dict[str, Any]) -> list[str]:
    texts = [item["text"] for tool in MEMORY_TOOLS for item in half["memory"][tool]]
    return texts + [item["text"] for item in half["no_match"] + half["shared_verbs"]]


def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def _nonempty(value: Any) -> bool:
    return isinstance(value, str) and value == value.strip() and bool(value)


def test_top_level_keys_and_about() -> None:
    data = _load()
    assert set(data) == {"_about", *HALVES}
    assert "held" in data["_about"] and "never tuned" in data["_about"] and "Apache-2.0" in data["_about"]
    for half in HALVES:
        assert set(data[half]) == {"memory", "no_match", "shared_verbs"}, half


@pytest.mark.parametrize("half", HALVES)
def test_memory_requests_are_five_per_wording_per_tool(half: str) -> None:
    memory = _load()[half]["memory"]
    assert set(memory) == set(MEMORY_TOOLS)
    for tool in MEMORY_TOOLS:
        items = memory[tool]
        assert all(set(item) == {"text", "wording"} and _nonempty(item["text"]) for item in items), tool
        assert Counter(item["wording"] for item in items) == dict.fromkeys(WORDINGS, PER_WORDING), (half, tool)


@pytest.mark.parametrize("half", HALVES)
def test_no_match_requests_have_text_and_topic(half: str) -> None:
    items = _load()[half]["no_match"]
    assert len(items) == NO_MATCH
    assert all(
        set(item) == {"text", "topic"} and _nonempty(item["text"]) and _nonempty(item["topic"]) for item in items
    )
    # Most must be hard: phrased with verbs the memory tools also answer to.
    assert sum(bool(MEMORY_VERBS.search(item["text"])) for item in items) >= NO_MATCH // 2


@pytest.mark.parametrize("half", HALVES)
def test_shared_verbs_requests_name_a_catalog_tool_and_use_a_memory_verb(half: str) -> None:
    items = _load()[half]["shared_verbs"]
    assert Counter(item["catalog"] for item in items) == SHARED
    for item in items:
        keys = (
            {"text", "catalog", "server", "tool"} if item["catalog"] == "livemcpbench" else {"text", "catalog", "tool"}
        )
        assert set(item) == keys, item
        assert all(_nonempty(item[key]) for key in keys - {"catalog"}), item
        assert MEMORY_VERBS.search(item["text"]), item["text"]


def test_no_text_repeats_within_or_across_halves() -> None:
    data = _load()
    texts = [_norm(text) for half in HALVES for text in _texts(data[half])]
    assert len(texts) == 2 * (len(MEMORY_TOOLS) * len(WORDINGS) * PER_WORDING + NO_MATCH + sum(SHARED.values()))
    repeated = [text for text, n in Counter(texts).items() if n > 1]
    assert repeated == []


def test_halves_target_different_catalog_tools() -> None:
    data = _load()

    def targets(half: str) -> set[tuple[str, ...]]:
        return {(i["catalog"], i.get("server", ""), i["tool"]) for i in data[half]["shared_verbs"]}

    assert targets("tuning").isdisjoint(targets("heldout"))
    assert all(len(targets(half)) == sum(SHARED.values()) for half in HALVES)


@pytest.mark.skipif(not (DATA_DIR / "metatool").is_dir(), reason="public benchmark data not present")
def test_catalog_references_exist_in_the_public_data() -> None:
    metatool = set(json.loads((DATA_DIR / "metatool" / "plugin_des.json").read_text(encoding="utf-8")))
    live: set[tuple[str, str]] = set()
    for server in json.loads((DATA_DIR / "livemcpbench" / "tools.json").read_text(encoding="utf-8")):
        for entry in server["tools"].values():
            live.update((entry["server_name"], tool["name"]) for tool in entry["tools"])
    assert len(metatool) == 199 and len(live) == 527
    missing = [
        item
        for half in HALVES
        for item in _load()[half]["shared_verbs"]
        if (
            item["tool"] not in metatool
            if item["catalog"] == "metatool"
            else (item["server"], item["tool"]) not in live
        )
    ]
    assert missing == []


SECOND = FILE.with_name("discovery_requests_second.json")
THIRD = FILE.with_name("discovery_requests_third.json")


@pytest.mark.parametrize(("path", "name"), [(SECOND, "second"), (THIRD, "third")])
def test_the_later_sets_have_five_requests_per_wording_per_tool_and_forty_no_match(path: Path, name: str) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert set(data) == {"_about", name} and "Apache-2.0" in data["_about"]
    later = data[name]
    assert set(later) == {"memory", "no_match", "shared_verbs"} and later["shared_verbs"] == []
    for tool in MEMORY_TOOLS:
        wordings = Counter(item["wording"] for item in later["memory"][tool])
        assert wordings == {wording: PER_WORDING for wording in WORDINGS}, tool
    assert len(later["no_match"]) == NO_MATCH and all(_nonempty(item["topic"]) for item in later["no_match"])
    texts = [item["text"] for tool in MEMORY_TOOLS for item in later["memory"][tool]]
    texts += [item["text"] for item in later["no_match"]]
    assert all(_nonempty(text) for text in texts)
    assert len({_norm(text) for text in texts}) == len(texts)


def test_the_third_set_was_not_copied_from_the_earlier_sets() -> None:
    """Written independently: a short request may coincide with one another writer wrote, no more than 1% of them."""
    def texts(half: dict[str, Any]) -> set[str]:
        return {_norm(text) for text in _texts(half)}

    third = texts(json.loads(THIRD.read_text(encoding="utf-8"))["third"])
    earlier = json.loads(SECOND.read_text(encoding="utf-8"))["second"], *(_load()[half] for half in HALVES)
    assert len(third) == len(MEMORY_TOOLS) * len(WORDINGS) * PER_WORDING + NO_MATCH
    assert sum(len(third & texts(half)) for half in earlier) <= len(third) // 100
