"""What only junior-slack's own tests need: the manifest, a Postgres URL and a scripted model.

The local Slack Web API and the signed events are ``junior_slack.testing`` (public, documented); this module keeps
what reads the source tree (``manifest.yml``) or scripts the tests' conversations.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path
from typing import Any

from junior_core.llm.types import ModelReply, call, say
from junior_core.testing import ChatCompletionsServer, ScriptView

POSTGRES_URL = os.environ.get("JUNIOR_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
MANIFEST = Path(__file__).parents[1] / "manifest.yml"


def manifest() -> dict[str, Any]:
    import yaml

    loaded: dict[str, Any] = yaml.safe_load(MANIFEST.read_text())
    return loaded


def manifest_scopes() -> set[str]:
    return set(manifest()["oauth_config"]["scopes"]["bot"])


# An answer long enough to be streamed in several appends (the app gathers 256 characters per append).
LONG_ANSWER = "".join(f"Step {n}: check the release channel, run the checks, and ask a reviewer before shipping. "
                      for n in range(1, 9)).strip()


class Brain:
    """The scripted model: remembers on request, answers from recalled memory, and can go down mid-turn."""

    def __init__(self) -> None:
        self.server: ChatCompletionsServer | None = None

    def script(self, view: ScriptView) -> Generator[ModelReply, Any, None] | ModelReply:
        text = view.user_text.split(": ", 1)[-1]
        if text.lower().startswith(("remember that ", "break after remembering that ")):
            return self._remember(text.split(" that ", 1)[1], breaks=text.lower().startswith("break"))
        if text.lower().startswith("how do we"):
            recalled = [line for line in view.system.splitlines() if line.startswith("- procedure")]
            return say(f"From memory: {recalled[0].split(': ', 1)[1]}" if recalled else "I don't know that yet.")
        if text.lower().startswith("write at length"):
            return say(LONG_ANSWER)
        earlier = [m.text for m in view.request.messages[:-1] if m.role == "user"]
        return say(f"echo: {text} (after {len(earlier)} earlier)")

    def _remember(self, content: str, *, breaks: bool) -> Generator[ModelReply, Any, None]:
        yield call("searchTools", {"query": "remember a team procedure", "source": "memory"})
        saved = yield call("executeTool", {"tool_name": "memory__remember",
                                           "arguments": {"content": content, "kind": "procedure"}})
        if breaks:
            assert self.server is not None
            self.server.fail(503)
        yield say(f"Saved ({saved['result']['visible_to']}).")
