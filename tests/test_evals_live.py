"""``python -m evals run`` end to end against a local OpenAI-compatible stand-in server (no network)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evals.__main__ import main
from junior_core.testing import ChatCompletionsServer, ScriptView

pytest.importorskip("openai")
pytest.importorskip("junior_memory.plugin")


def answer(view: ScriptView) -> str:
    """A tiny stand-in model: judges kindly, extracts nothing, and declines third-party memories."""
    system = view.system
    if system.startswith("You grade one run"):
        lines = view.request.messages[0].text.splitlines()
        ids = [line.split(" ", 1)[0] for line in lines if line[:1] in "PF"]
        return json.dumps({"criteria": [{"id": i, "holds": i.startswith("P"), "reason": "ok"} for i in ids]})
    if "propose durable memories" in system:
        return '{"memories": []}'
    return "I won't store that: it is David's preference, and David can ask me himself."


@pytest.fixture
def server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    with ChatCompletionsServer(answer, model="m") as stand_in:
        yield stand_in.url, stand_in.requests


def test_live_run_against_an_openai_compatible_endpoint(
    server: tuple[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    url, seen = server
    report = tmp_path / "report.json"
    code = main(
        ["run", "workflows", "--case", "third-party", "--model", f"openai-compatible:{url}#m", "--json", str(report)]
    )
    assert code == 0
    (result,) = json.loads(report.read_text())["results"]
    assert result["case"] == "workflows/third-party-preference" and result["outcome"] == "pass"
    assert result["score"] == 1.0 and len(result["rubric"]["criteria"]) == 3
    # The agent got the real tools; the extractor and the judge were asked too.
    assert [t["function"]["name"] for t in seen[0]["tools"]] == ["searchTools", "executeTool"]
    systems = [body["messages"][0]["content"][:20] for body in seen]
    assert any(s.startswith("You read one finish") for s in systems) and any(s.startswith("You grade") for s in systems)
