"""Every benchmark script still runs, as a script, on a tiny workload (figures come from full runs, not here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import needs_data

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

SMALL = {
    "answers.py": ["--limit", "10"],
    "search.py": ["--skip-10k", "--queries", "20", "--repeat", "1", "--calls", "200", "--runs", "1"],
    "retrieval.py": ["--limit", "20"],
    "context.py": [],
    "memory.py": ["--sizes", "100", "--backends", "sqlite", "--calls", "10"],
    "mcp.py": ["--calls", "10", "--rounds", "1"],
    "slack_serve.py": ["--hoarders", "40", "--files", "256", "--seconds", "3"],
    "memory_intent.py": ["--metatool", "20"],
    "memory_credentials.py": ["--repeat", "2"],
    "memory_recall_data.py": ["--conversations", "1", "--out", "recall.json"],
    "memory_recall.py": ["--no-semantic"],
    "agent_discovery.py": ["replay", str(Path(__file__).resolve().parent / "data" / "agent_discovery_tiny.jsonl")],
}


def test_every_benchmark_has_a_smoke_run() -> None:
    assert sorted(SMALL) == sorted(p.name for p in BENCHMARKS.glob("[!_]*.py"))


@pytest.mark.slow
@needs_data("metatool", "livemcpbench")
@pytest.mark.parametrize("script", sorted(SMALL))
def test_benchmark_script_runs(script: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *SMALL[script]],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if not k.startswith("JUNIOR_")} | {"XDG_DATA_HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip(), "a benchmark prints its figures"
