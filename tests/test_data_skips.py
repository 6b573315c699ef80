"""Tests that need the public benchmark data say how to get it when they skip, and the run counts them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import DATA_DIR, needs_data

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_a_data_skip_names_the_missing_data_and_how_to_fetch_it() -> None:
    mark = needs_data("metatool", "no-such-set")
    assert mark.args == (True,)
    reason = mark.kwargs["reason"]
    assert reason == (f"needs the public benchmark data no-such-set/ in {DATA_DIR}: README.md's Data section says "
                      "how to fetch it, or set JUNIOR_DATA_DIR") or "metatool/" in reason


def test_every_test_that_reads_the_data_skips_through_needs_data() -> None:
    files = [*ROOT.glob("tests/test_*.py"), *ROOT.glob("plugins/*/tests/test_*.py")]
    said = ("public benchmark data not present", 'reason="needs ../shared/data')
    vague = [f.name for f in files if f.name != "test_data_skips.py" and any(s in f.read_text() for s in said)]
    assert vague == []


def test_the_readme_fetches_every_file_of_the_data() -> None:
    section = README.split("\n## Data\n", 1)[1]
    commands = re.findall(r"```sh\n(.*?)```", section, flags=re.S)[0]
    fetched = set(re.findall(r"-o \.\./shared/data/(\S+)", commands))
    assert fetched == {"metatool/plugin_des.json", "metatool/all_clean_data.csv",
                       "metatool/multi_tool_query_golden.json", "metatool/LICENSE", "livemcpbench/tools.json",
                       "livemcpbench/LICENSE"}
    if DATA_DIR.is_dir():  # the files the benchmarks read are the ones fetched
        present = {str(p.relative_to(DATA_DIR)) for p in DATA_DIR.glob("*/*") if p.is_file()}
        assert present <= fetched, present - fetched


@pytest.mark.slow  # a pytest run in a subprocess
def test_the_summary_counts_the_tests_skipped_for_want_of_data(tmp_path: Path) -> None:
    env = {**os.environ, "JUNIOR_DATA_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         "tests/test_discovery_requests_data.py::test_catalog_references_exist_in_the_public_data"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"needs the public benchmark data metatool/ in {tmp_path}: README.md's Data section" in done.stdout
    assert "1 skipped for want of the public benchmark data: README.md's Data section says how to fetch it" in (
        done.stdout)
