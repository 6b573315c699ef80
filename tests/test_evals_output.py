"""``python -m evals check`` prints a summary and only the runs that need a look; ``-v`` lists every run."""

from __future__ import annotations

import pytest

from evals.__main__ import main

CASE = "discovery/forget-outdated[memory]"


def test_check_prints_the_summary_without_the_caught_controls(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "discovery", "--case", CASE]) == 0
    out = capsys.readouterr().out
    assert "caught" not in out.replace("negative controls caught", ""), out
    lines = out.strip().splitlines()
    assert lines[-2].startswith("evals check (sqlite, openai wire): 1 cases, 1/1 reference runs pass")
    assert lines[-1] == "OK (--verbose lists every run)"
    assert len(lines) == 2


def test_verbose_lists_every_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "discovery", "--case", CASE, "-v"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(CASE)]
    assert len(rows) >= 2 and any(" caught " in row for row in rows) and any(" pass " in row for row in rows)
