"""Vectors after the commit: a write never waits for the model, and a memory without its vector is still found."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from junior_memory import MemoryStore
from junior_memory.scope import Scope
from junior_memory.semantic import Semantic
from memory_helpers import BlockingEmbedder, ConceptEmbedder, ctx, ok, within

from junior_core import Runtime

VECTORS = "SELECT memory_id, model FROM junior_memory_vectors ORDER BY seq"
WORKSPACE = Scope("conversation", "slack:T1", "workspace")


def _remember(store: MemoryStore, content: str) -> Any:
    return store.remember(content=content, kind="procedure", scope=WORKSPACE, actor_key=None, source_key=None,
                          origin="api")


def test_a_write_never_waits_for_the_model_and_keyword_search_finds_it_meanwhile(db_url: str, rows: Any) -> None:
    embedder = BlockingEmbedder()
    store = MemoryStore(db_url, semantic=Semantic(embedder, wait=0.05))
    try:
        memory, created = within(5.0, lambda: _remember(store, "Deploys are frozen on Fridays"))
        assert created is True
        assert embedder.started.wait(10)  # the model is at work on another thread, and holds
        assert rows(VECTORS) == []
        assert [h.record.id for h in store.find([WORKSPACE], "deploys frozen").hits] == [memory.id]
        fused = within(5.0, lambda: store.find([WORKSPACE], "deploys frozen", semantic=True))
        assert [h.record.id for h in fused.hits] == [memory.id]
        embedder.release.set()
        assert store.flush_vectors(10)
        assert rows(VECTORS) == [{"memory_id": memory.id, "model": "test/blocking"}]
    finally:
        embedder.release.set()
        store.close()


def test_a_burst_of_writes_is_embedded_in_batches(make_runtime: Any, rows: Any) -> None:
    embedder = BlockingEmbedder()
    rt: Runtime = make_runtime(embedder=embedder)
    rt.plugin("memory").store().semantic.related_wait = 0.0  # each write finds related memories by keyword
    try:
        first = ok(rt.execute_tool("memory__remember", {"content": "Fact 0 about builds", "kind": "knowledge"}, ctx()))
        assert embedder.started.wait(10)
        # While the model holds the first, the rest queue up and go to it together.
        for n in range(1, 6):
            ok(rt.execute_tool("memory__remember", {"content": f"Fact {n} about builds", "kind": "knowledge"}, ctx()))
        embedder.release.set()
        assert rt.plugin("memory").store().flush_vectors(10)
        assert len(rows(VECTORS)) == 6 and rows(VECTORS)[0]["memory_id"] == first["id"]
        assert embedder.calls == 2
    finally:
        embedder.release.set()


@pytest.mark.slow  # a writer process, killed
def test_a_crash_between_the_commit_and_the_vector_loses_nothing(db_url: str, rows: Any) -> None:
    here = Path(__file__).parent
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(here)!r})
        from junior_memory import MemoryStore
        from junior_memory.scope import Scope
        from junior_memory.semantic import Semantic
        from memory_helpers import BlockingEmbedder

        embedder = BlockingEmbedder(hold=60)
        store = MemoryStore(sys.argv[1], semantic=Semantic(embedder))
        memory, _ = store.remember(content="Deploys are frozen on Fridays", kind="procedure",
                                   scope=Scope("conversation", "slack:T1", "workspace"), actor_key=None,
                                   source_key=None, origin="api")
        embedder.started.wait(30)
        print(memory.id, flush=True)
        embedder.release.wait(60)
    """)
    child = subprocess.Popen([sys.executable, "-c", script, db_url], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(here)})
    try:
        assert child.stdout is not None
        memory_id = within(60.0, child.stdout.readline).strip()
        assert len(memory_id) == 32, memory_id
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    assert rows(VECTORS) == []
    store = MemoryStore(db_url, semantic=Semantic(ConceptEmbedder()))
    try:
        assert [h.record.id for h in store.find([WORKSPACE], "deploys frozen").hits] == [memory_id]
        assert store.reindex() == 1
        assert rows(VECTORS) == [{"memory_id": memory_id, "model": "test/concepts"}]
    finally:
        store.close()
