"""``junior chat``: the installed `junior` command against a scripted model on the OpenAI wire, memory on SQLite."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from junior_core.llm.chat import describe_call
from junior_core.llm.types import ModelReply, call, say
from junior_core.testing import ChatCompletionsServer, ScriptView

JUNIOR = str(Path(sys.executable).with_name("junior"))


def script(view: ScriptView) -> Generator[ModelReply, Any, None] | ModelReply:
    """Remembers a preference through searchTools and executeTool; otherwise answers from what it was given."""
    text = view.user_text
    if text.startswith("remember that "):
        return _remember(text.removeprefix("remember that "))
    recalled = [line for line in view.system.splitlines() if line.startswith("- preference")]
    earlier = [m.text for m in view.request.messages[:-1] if m.role in ("user", "assistant")]
    if text == "what do I prefer?":
        return say(f"From memory: {recalled[0].split(': ', 1)[1]}" if recalled else "I don't know yet.")
    return say(f"echo: {text} (after {len(earlier)} earlier messages)")


def _remember(content: str) -> Generator[ModelReply, Any, None]:
    found = yield call("searchTools", {"query": "remember a preference", "source": "memory"})
    names = [tool["tool_name"] for tool in found["tools"]]
    saved = yield call("executeTool", {"tool_name": names[0], "arguments": {"content": content, "kind": "preference"}})
    yield say(f"Saved, visible to {saved['result']['visible_to']}.")


@pytest.fixture
def model() -> Iterator[ChatCompletionsServer]:
    server = ChatCompletionsServer(script, model="local")
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def env(tmp_path: Path, model: ChatCompletionsServer) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {
        "PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "HOME": str(home),
        "LANG": "C.UTF-8", "USER": "ada",
        "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"),
        "JUNIOR_CACHE_DIR": str(tmp_path / "cache"), "JUNIOR_CONFIG_DIR": str(tmp_path / "config"),
        "JUNIOR_LOAD_PLUGINS": "memory", "JUNIOR_MEMORY_EMBEDDING_MODEL": "off",
        "JUNIOR_MEMORY_URL": f"sqlite:///{tmp_path / 'memory.sqlite3'}", "JUNIOR_MODEL": model.spec,
    }


def chat(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([JUNIOR, "chat", *args], env=env, input=stdin, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_chat_remembers_through_the_two_tools_and_recalls_in_a_later_session(env: dict[str, str]) -> None:
    first = chat(env, "-m", "remember that I prefer short answers", "-m", "and now?")
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == ["Saved, visible to only the person who said it.",
                                         "echo: and now? (after 2 earlier messages)"]  # the session's history
    assert first.stderr.splitlines() == [
        '  · searchTools "remember a preference" in memory → 4 tools: memory__remember, memory__list, ...',
        "  · executeTool memory__remember → ok",
    ]
    listed = subprocess.run([JUNIOR, "exec", "memory__list"], env=env, capture_output=True, text=True, timeout=60)
    assert '"content": "I prefer short answers"' in listed.stdout  # the CLI's own local user: one memory
    # A new session on a new model server, whose call ids start again at call_0001: nothing is taken for a retry.
    with ChatCompletionsServer(script, model="local") as again:
        second = chat({**env, "JUNIOR_MODEL": again.spec}, "-m", "remember that I prefer tabs",
                      "-m", "what do I prefer?")
        assert [m["tool_calls"][0]["id"] for m in again.requests[1]["messages"] if m.get("tool_calls")] == [
            "call_0001"]
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines()[0] == "Saved, visible to only the person who said it."
    assert second.stdout.splitlines()[1].startswith("From memory: ")
    listed = subprocess.run([JUNIOR, "exec", "memory__list"], env=env, capture_output=True, text=True, timeout=60)
    assert listed.stdout.count('"content": ') == 2 and '"content": "I prefer tabs"' in listed.stdout


@pytest.mark.slow
def test_no_memory_offers_no_memory_and_saves_nothing(env: dict[str, str], model: ChatCompletionsServer) -> None:
    done = chat(env, "--no-memory", "-m", "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo: hello (after 0 earlier messages)\n"
    (request,) = model.requests
    offered = {tool["function"]["name"]: tool["function"]["description"] for tool in request["tools"]}
    assert "memory" not in offered["searchTools"] and "Available sources" in offered["searchTools"]
    # Control: the same question with memory on offers the memory source.
    assert chat(env, "-m", "hello").returncode == 0
    assert "- memory: " in model.requests[-1]["tools"][0]["function"]["description"]


@pytest.mark.slow
def test_interactive_chat_reads_lines_until_an_empty_one(env: dict[str, str], model: ChatCompletionsServer) -> None:
    done = chat(env, "--system", "You are terse.", stdin="first\nsecond\n\nnot asked\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("you> ") == 3  # the empty line ends it; the line after it is never read
    assert "echo: second (after 2 earlier messages)" in done.stdout and "not asked" not in done.stdout
    assert model.requests[0]["messages"][0] == {"role": "system", "content": model.requests[0]["messages"][0]["content"]}
    assert model.requests[0]["messages"][0]["content"].startswith("You are terse.")


@pytest.mark.slow
def test_a_model_that_is_down_is_one_line_and_exit_status_1(env: dict[str, str], model: ChatCompletionsServer) -> None:
    model.fail(503)
    done = chat(env, "-m", "hello")
    assert done.returncode == 1
    assert done.stdout.startswith(f"error: model {model.spec} failed") and "Traceback" not in done.stdout + done.stderr


@pytest.mark.slow  # two `junior chat` processes
def test_without_a_model_chat_says_how_to_name_one(env: dict[str, str]) -> None:
    del env["JUNIOR_MODEL"]
    done = chat(env, "-m", "hello")
    assert done.returncode == 2 and "no model: pass --model or set JUNIOR_MODEL, e.g. echo (offline" in done.stderr
    done = chat(env, "--model", "gpt-4", "-m", "hello")
    assert done.returncode == 2 and "invalid model 'gpt-4'" in done.stderr


def test_a_tool_call_line_says_what_came_back_and_is_cut_at_a_word() -> None:
    assert describe_call("searchTools", {"query": "nothing like it"}, {"tools": [], "hint": "..."}) == (
        'searchTools "nothing like it" → no match')
    failed = {"ok": False, "error": {"code": "unknown_tool", "message": "No tool is named x. " * 10}}
    line = describe_call("executeTool", {"tool_name": "x"}, failed)
    assert line.startswith("executeTool x → unknown_tool: No tool is named x.") and line.endswith(" ...")
    assert len(line) <= 100 and line.removesuffix(" ...").endswith(("x.", "named", "tool", "is", "No"))
