"""A fused search starts the query's embedding, then runs its keyword query while the model runs."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from junior_memory import semantic
from junior_memory.semantic import Semantic
from memory_helpers import BlockingEmbedder, ConceptEmbedder


class Announcing(ConceptEmbedder):
    """A model whose first steps (tokenizing) need the caller's thread to wait, and which says when it runs."""

    announces_run = True

    def __init__(self) -> None:
        super().__init__("test/announcing")
        self.runs = threading.Event()
        self.release = threading.Event()

    def embed(self, texts: Any) -> list[list[float]]:
        time.sleep(0.05)  # tokenizing, building the inputs: the GIL the caller would otherwise hold
        self.runs.set()
        semantic._model_runs()  # the model itself runs from here (ONNX Runtime releases the GIL)
        self.release.wait(10)
        return super().embed(texts)


@pytest.fixture
def patient(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hand-off limit no loaded machine reaches, so these tests see what start waits for, not its limit."""
    monkeypatch.setattr(semantic, "HANDOFF_S", 5.0)


@pytest.mark.usefixtures("patient")
def test_start_returns_once_the_model_runs() -> None:
    embedder = Announcing()
    sem = Semantic(embedder)
    future = sem.start(["deploys"])
    # The caller's keyword query starts only now: the model's first steps did not wait for its GIL.
    assert embedder.runs.is_set()
    embedder.release.set()
    assert sem.finish(future) == sem.vectors(["deploys"])


@pytest.mark.usefixtures("patient")
def test_start_does_not_wait_for_a_model_that_does_not_say_when_it_runs() -> None:
    embedder = BlockingEmbedder()
    sem = Semantic(embedder)
    began = time.monotonic()
    future = sem.start(["deploys"])
    assert time.monotonic() - began < 2.5
    embedder.release.set()
    assert sem.finish(future) is not None


@pytest.mark.usefixtures("patient")
def test_start_does_not_wait_behind_another_embedding() -> None:
    embedder = Announcing()
    sem = Semantic(embedder)
    first = sem.start(["a burst of new memories"])
    assert embedder.runs.is_set()
    began = time.monotonic()
    second = sem.start(["deploys"])  # queued behind the first: nothing to hand the GIL to yet
    assert time.monotonic() - began < 2.5
    embedder.release.set()
    assert sem.finish(first) is not None and sem.finish(second) is not None


class Stepping(ConceptEmbedder):
    """A model that runs each call only when the test says so, and notes how many texts each call had."""

    def __init__(self) -> None:
        super().__init__("test/stepping")
        self.sizes: list[int] = []
        self.entered = threading.Semaphore(0)
        self.go = threading.Semaphore(0)

    def embed(self, texts: Any) -> list[list[float]]:
        self.sizes.append(len(texts))
        self.entered.release()
        assert self.go.acquire(timeout=10)
        return super().embed(texts)


def test_a_search_after_a_burst_of_writes_waits_for_one_chunk_not_the_batch(make_runtime: Any) -> None:
    from memory_helpers import ctx, ok

    embedder = Stepping()
    rt = make_runtime(embedder=embedder)
    store = rt.plugin("memory").store()
    store.semantic.wait = 10.0

    def remember(n: int) -> None:
        ok(rt.execute_tool("memory__remember", {"content": f"Fact {n} about builds", "kind": "knowledge"}, ctx()))

    try:
        remember(0)
        assert embedder.entered.acquire(timeout=10)  # the first memory's call runs; the next 20 queue up
        for n in range(1, 21):
            remember(n)
        embedder.go.release()
        assert embedder.entered.acquire(timeout=10)  # the burst's first chunk runs
        found: dict[str, Any] = {}
        search = threading.Thread(target=lambda: found.update(
            answer=rt.execute_tool("memory__search", {"query": "builds"}, ctx())))
        search.start()
        deadline = time.monotonic() + 10
        while store.semantic._worker._jobs < 2 and time.monotonic() < deadline:
            time.sleep(0.01)  # until the query's embedding is queued behind the running chunk
        embedder.go.release()
        assert embedder.entered.acquire(timeout=10)
        assert embedder.sizes[-1] == 1  # the query ran next, before the rest of the burst
        for _ in range(10):
            embedder.go.release()
        search.join(10)
        assert found["answer"]["ok"]
        assert store.flush_vectors(10)
        assert embedder.sizes == [1, 8, 1, 8, 4]
    finally:
        for _ in range(10):
            embedder.go.release()
