"""``junior chat`` with the offline models (``echo``, ``script:<file>``): no key, no network, no model SDK."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from junior_core import Source, Tool
from junior_core.cli import local_context
from junior_core.context import Message
from junior_core.llm import ModelConfigError, model_from_spec
from junior_core.llm.agent import run_turn
from junior_core.llm.offline import EchoModel, ScriptFileModel
from junior_core.testing import RuntimeFactory
from tests.helpers import SourcePlugin

JUNIOR = str(Path(sys.executable).with_name("junior"))

# Loaded first in the `junior` process: any socket connection fails, and the model SDKs cannot be imported.
OFFLINE = '''
import socket, sys

def _refuse(self, *args, **kwargs):
    raise OSError("network refused by the offline test")

socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.create_connection = _refuse

class _NoSDK:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("openai", "anthropic"):
            raise ImportError(f"{name} is not installed here")
        return None

sys.meta_path.insert(0, _NoSDK())
'''


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(OFFLINE)
    home = tmp_path / "home"
    home.mkdir()
    path = os.pathsep.join([str(site), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])
    return {
        "PATH": os.environ.get("PATH", ""), "PYTHONPATH": path, "HOME": str(home), "LANG": "C.UTF-8", "USER": "ada",
        "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"),
        "JUNIOR_CACHE_DIR": str(tmp_path / "cache"), "JUNIOR_CONFIG_DIR": str(tmp_path / "config"),
        "JUNIOR_LOAD_PLUGINS": "memory", "JUNIOR_MEMORY_URL": f"sqlite:///{tmp_path / 'memory.sqlite3'}",
    }


def junior(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([JUNIOR, *args], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_echo_chat_searches_runs_and_remembers_with_no_network_and_no_sdk(env: dict[str, str],
                                                                          tmp_path: Path) -> None:
    blocked = subprocess.run([sys.executable, "-c", "import openai"], env=env, capture_output=True, text=True)
    assert blocked.returncode == 1 and "is not installed here" in blocked.stderr  # the guard itself works
    done = junior(env, "chat", "--model", "echo", "-m", "remember that I prefer tabs")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[:2] == [
        '  · searchTools "remember that I prefer tabs" → 4 tools: memory__remember, memory__list, ...',
        "  · executeTool memory__remember → ok",
    ]
    assert done.stdout.startswith("echo: remember that I prefer tabs\nran memory__remember: ")
    with sqlite3.connect(tmp_path / "memory.sqlite3") as db:
        rows = db.execute("select content, kind, origin from junior_memory_memories").fetchall()
    assert rows == [("I prefer tabs", "preference", "tool")]
    # The next session recalls it, and a read runs: memory__search with the question.
    again = junior(env, "chat", "--model", "echo", "-m", "search my memories for tabs")
    assert again.returncode == 0, again.stderr
    assert "executeTool memory__search → ok" in again.stderr and "I prefer tabs" in again.stdout


@pytest.mark.slow
def test_a_script_file_plays_its_turns_in_order(env: dict[str, str], tmp_path: Path) -> None:
    script = tmp_path / "turns.toml"
    script.write_text(
        '[[turns]]\n'
        '[[turns.steps]]\ncall = "searchTools"\narguments = { query = "remember", source = "memory" }\n'
        '[[turns.steps]]\ncall = "executeTool"\n'
        'arguments = { tool_name = "memory__remember", arguments = { content = "Ada prefers tabs", kind = "preference" } }\n'
        '[[turns.steps]]\nsay = "Saved."\n'
        '[[turns]]\n[[turns.steps]]\nsay = "Nothing to do."\n'
    )
    done = junior(env, "chat", "--model", f"script:{script}", "-m", "remember tabs", "-m", "thanks")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["Saved.", "Nothing to do."]
    assert "executeTool memory__remember → ok" in done.stderr
    over = junior(env, "chat", "--model", f"script:{script}", "-m", "a", "-m", "b", "-m", "c")
    assert over.returncode == 1 and over.stdout.splitlines()[-1] == (
        f"error: model script:{script} failed: {script} has 2 turns; this conversation is at turn 3")


def _handler(arguments: dict[str, Any], context: object) -> dict[str, Any]:
    if "text" not in arguments:
        raise AssertionError("echo ran a tool it should not have")
    return {"saved": arguments["text"]}


def _plugin() -> SourcePlugin:
    return SourcePlugin(Source("desk", "Things on the desk."), [
        Tool("jot_down", "Jot down a note on the desk pad.", {
            "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}, _handler,
            annotations={"destructiveHint": False}),
        Tool("wipe_desk", "Wipe the desk clean.", {"type": "object", "properties": {}}, _handler),
        Tool("count_pens", "Count pens, a number of them.", {
            "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}, _handler,
            annotations={"readOnlyHint": True}),
    ])


def test_echo_runs_the_top_tool_through_the_loop_in_process(junior_runtime: RuntimeFactory) -> None:
    rt = junior_runtime(_plugin())
    turn = run_turn(EchoModel(), rt, local_context(), [Message("user", "jot down that the pad is blue")])
    assert [(r.name, r.tool_name) for r in turn.tool_calls] == [("searchTools", "searchTools"),
                                                                 ("executeTool", "desk__jot_down")]
    assert turn.tool_calls[1].result["result"] == {"saved": "the pad is blue"}
    assert turn.stop_reason == "answered"
    assert turn.text == 'echo: jot down that the pad is blue\nran desk__jot_down: {"saved": "the pad is blue"}'


def test_echo_runs_no_tool_that_may_destroy_nor_guesses_a_number(junior_runtime: RuntimeFactory) -> None:
    rt = junior_runtime(_plugin())
    wiped = run_turn(EchoModel(), rt, local_context(), [Message("user", "wipe desk")])
    assert [r.name for r in wiped.tool_calls] == ["searchTools"]
    assert wiped.text.endswith("found desk__wipe_desk; echo runs only tools marked read-only or not destructive.")
    counted = run_turn(EchoModel(), rt, local_context(), [Message("user", "count pens")])
    assert counted.text.endswith("found desk__count_pens; it needs n (integer), which echo cannot fill.")


def test_offline_specs_need_nothing_and_a_bad_script_says_where(tmp_path: Path) -> None:
    assert model_from_spec("echo", env={}).name == "echo"
    bad = tmp_path / "turns.json"
    bad.write_text(json.dumps({"turns": [{"steps": [{"call": "searchTools", "arguments": {"query": "x"}}]}]}))
    with pytest.raises(ModelConfigError, match="turn 1: its last step must `say` the answer"):
        model_from_spec(f"script:{bad}", env={})
    bad.write_text(json.dumps({"turns": [{"steps": [{"say": "hi", "cal": "x"}]}]}))
    with pytest.raises(ModelConfigError, match="turn 1, step 1: a step has `say`"):
        ScriptFileModel(bad)
    with pytest.raises(ModelConfigError, match="cannot read"):
        model_from_spec(f"script:{tmp_path / 'missing.json'}", env={})
    with pytest.raises(ModelConfigError, match="use echo, script:<file>, openai:<model>"):
        model_from_spec("gpt-4", env={})

