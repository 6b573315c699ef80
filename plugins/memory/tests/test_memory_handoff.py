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
