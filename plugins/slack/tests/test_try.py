"""``junior slack try`` as docs/slack.md gives it: each documented line run as written from the clone's root, in
its own process, so the real ``junior slack serve`` starts on a free port against the local Web API stand-in, gets
each message as a signed event, and what it posted is printed; and the guide's ``LocalServe`` example."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_serve_command import JUNIOR, clean_env

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
SECTION = (ROOT / "docs" / "slack.md").read_text().split("## Try it without Slack", 1)[1].split("\n## ", 1)[0]
LINES = [line for line in SECTION.split("```sh\n", 1)[1].split("```", 1)[0].splitlines() if line.strip()]
EXAMPLE = SECTION.split("```python\n", 1)[1].split("```", 1)[0]

REMEMBER = ["  (status: junior is thinking…)", "  (status: junior is searching tools…)",
            "  (status: junior is running memory__remember…)"]
# What each documented line prints: the whole of it where the model's answer is scripted, else the lines that show
# the status and the answer as posted (echo's answer also holds what the tool gave back: an id and a time).
PRINTED = {
    0: ["you: hello", "  (status: junior is thinking…)", "  (status: junior is searching tools…)",
        "junior: echo: hello", "you: remember that deploys go through the release channel", *REMEMBER,
        "junior: echo: remember that deploys go through the release channel"],
    1: ["you: remember that I prefer tabs", "  (title: remember that I prefer tabs)", *REMEMBER,
        "junior: Saved: you prefer tabs.", "you: what do I prefer?", "  (status: junior is thinking…)",
        "  (status: junior is running memory__search…)", "junior: You prefer tabs."],
    2: ["you: remember that the build runs at noon", *REMEMBER, "junior: echo: remember that the build runs at noon"],
}
SAVED = {0: "deploys go through the release channel", 2: "the build runs at noon"}


def run(argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, env=clean_env(tmp_path), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=300)


def test_the_guide_gives_three_lines() -> None:
    assert len(LINES) == 3 and all(line.startswith("junior slack try ") for line in LINES)


@pytest.mark.parametrize("index", range(3), ids=["dm-echo", "assistant-script", "channel-echo"])
def test_each_documented_line_runs_the_real_server_and_prints_what_it_posted(index: int, tmp_path: Path) -> None:
    argv = shlex.split(LINES[index])
    done = run([str(JUNIOR), *argv[1:]], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "junior-slack: trying junior slack serve at http://127.0.0.1:" in done.stderr
    assert "Traceback" not in done.stderr
    printed = done.stdout.splitlines()
    if index in SAVED:  # what memory__remember saved, as the answer shows it
        assert 'ran memory__remember: {"id": ' in done.stdout and f'"content": "{SAVED[index]}"' in done.stdout
        printed = [line for line in printed if not line.startswith("  ran ") and not line.startswith("  searchTools")]
    assert printed == PRINTED[index]


def test_the_guides_local_serve_example_runs(tmp_path: Path) -> None:
    done = run([sys.executable, "-c", EXAMPLE], tmp_path)
    assert done.returncode == 0, done.stderr


def test_a_message_with_no_answer_exits_1_with_its_log_line(tmp_path: Path) -> None:
    # A model that is down: the turn fails, the person is told, and the command says so.
    done = run([str(JUNIOR), "slack", "try", "--model", "openai-compatible:http://127.0.0.1:9/v1#m", "hello"],
               tmp_path)
    assert done.returncode == 1
    assert "junior-slack: no answer: " in done.stderr and "outcome=failed" in done.stderr
