"""The model-backed memory extractor and reviewer, driven by scripted models."""

from __future__ import annotations

import json
from typing import Any

import pytest

from junior_core import Actor, Conversation, Message, ToolContext
from junior_core.llm.types import ModelRequest, say
from junior_core.testing import ScriptedModel, ScriptView

helpers = pytest.importorskip("junior_memory.model_helpers")
from junior_memory.extraction import Candidate  # noqa: E402

ALICE = Actor("slack", "T1", "U1")
CONTEXT = ToolContext(ALICE, Conversation("slack", "T1", "C1", message_ts="1700000000.000001", visibility="public"))
TRANSCRIPT = [
    Message("user", "For releases we run the smoke suite first. Draft the checklist?", actor=ALICE),
    Message("assistant", "1. smoke suite 2. tag"),
]


def answering(text: str, seen: list[ScriptView] | None = None) -> ScriptedModel:
    def script(view: ScriptView) -> Any:
        if seen is not None:
            seen.append(view)
        return say(text)

    return ScriptedModel(script)


def test_extractor_sends_a_numbered_transcript_and_reads_candidates() -> None:
    seen: list[ScriptView] = []
    answer = (
        "Here you go:\n```json\n"
        + json.dumps(
            {
                "memories": [
                    {"content": "For releases, run the smoke suite first", "kind": "procedure", "cites": [0]},
                    {"content": "x", "kind": "opinion", "cites": [0]},
                    {"content": "Prefers checklists", "kind": "preference", "cites": [7], "about_speaker": True},
                ]
            }
        )
        + "\n```"
    )
    extractor = helpers.ModelExtractor(answering(answer, seen))
    candidates = extractor.extract(TRANSCRIPT, CONTEXT)
    assert candidates == [Candidate("For releases, run the smoke suite first", "procedure", (0,), False)]
    assert "[0] <@U1>: For releases we run the smoke suite first." in seen[0].user_text
    assert "[1] assistant: 1. smoke suite 2. tag" in seen[0].user_text
    assert "Never propose" in seen[0].system


@pytest.mark.parametrize("answer", ["no JSON here", '{"memories": "none"}', "[1, 2]"])
def test_extractor_yields_nothing_for_unreadable_answers(answer: str) -> None:
    assert helpers.ModelExtractor(answering(answer)).extract(TRANSCRIPT, CONTEXT) == []


def test_extractor_survives_a_failing_model() -> None:
    class Down:
        name = "down"

        def complete(self, request: ModelRequest) -> Any:
            raise ConnectionError("no route")

    assert helpers.ModelExtractor(Down()).extract(TRANSCRIPT, CONTEXT) == []
    review = helpers.ModelReviewer(Down()).review("I prefer tea", "preference", CONTEXT)
    assert review == helpers.Review("accept", "I prefer tea", "preference", "")


def test_reviewer_rewrites_reclassifies_and_refuses() -> None:
    accept = json.dumps({"verdict": "accept", "content": "Prefers terse PR summaries", "kind": "preference"})
    review = helpers.ModelReviewer(answering(accept)).review("i like terse pr summaries", "knowledge", CONTEXT)
    assert review == helpers.Review("accept", "Prefers terse PR summaries", "preference", "")

    refuse = json.dumps({"verdict": "refuse", "reason": "That is David's preference; David can ask himself."})
    review = helpers.ModelReviewer(answering(refuse)).review("David prefers long PRs", "preference", CONTEXT)
    assert review.verdict == "refuse" and "David" in review.reason

    odd = json.dumps({"verdict": "accept", "content": "  ", "kind": "opinion"})
    review = helpers.ModelReviewer(answering(odd)).review("Prefers tea", "preference", CONTEXT)
    assert (review.content, review.kind) == ("Prefers tea", "preference")


def test_parse_json_object_skips_prose_and_non_objects() -> None:
    assert helpers.parse_json_object('sure! [1] then {"a": {"b": 1}} trailing') == {"a": {"b": 1}}
    assert helpers.parse_json_object("{broken") is None
