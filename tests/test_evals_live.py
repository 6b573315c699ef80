"""``python -m evals run`` end to end against a local OpenAI-compatible stand-in server (no network)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from evals.__main__ import main

pytest.importorskip("openai")
pytest.importorskip("junior_memory.plugin")


def completion(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def answer(body: dict[str, Any]) -> str:
    """A tiny stand-in model: judges kindly, extracts nothing, and declines third-party memories."""
    system = body["messages"][0]["content"]
    if system.startswith("You grade one run"):
        ids = [line.split(" ", 1)[0] for line in body["messages"][1]["content"].splitlines() if line[:1] in "PF"]
        return json.dumps({"criteria": [{"id": i, "holds": i.startswith("P"), "reason": "ok"} for i in ids]})
    if "propose durable memories" in system:
        return '{"memories": []}'
    return "I won't store that: it is David's preference, and David can ask me himself."


@pytest.fixture
def server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            seen.append(body)
            payload = json.dumps(completion(answer(body))).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


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
