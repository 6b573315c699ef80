"""Semantic recall with a deterministic embedder: fusion, scope before similarity, vector lifecycle, fallbacks."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import click
import pytest
from click.testing import CliRunner
from junior_memory import MemoryPlugin
from memory_helpers import (
    ALICE,
    BOB,
    PRIVATE,
    PUBLIC,
    BlockingEmbedder,
    BrokenEmbedder,
    ConceptEmbedder,
    ctx,
    ok,
    within,
)

from junior_core import Runtime, ToolContext
from junior_core.testing import wait_until

VECTORS = "SELECT memory_id, model, dimensions FROM junior_memory_vectors ORDER BY seq"
# Paraphrase pairs: the question shares no keyword (after stemming and stop words) with the memory it asks about.
PAIRS = [
    ("who is responsible for payments?", "Dana owns the billing service", "knowledge"),
    ("can I ship code at the end of the week?", "Deploys are frozen on Fridays", "procedure"),
    ("what language should you reply in?", "I prefer answers in German", "preference"),
]
DISTRACTORS = [
    ("The staging database is rebuilt every Sunday", "knowledge"),
    ("Lunch orders go in the food channel", "knowledge"),
    ("I like dark mode in every editor", "preference"),
]


def remember(rt: Runtime, content: str, kind: str = "knowledge", context: ToolContext | None = None,
             **extra: Any) -> dict[str, Any]:
    """Remember, then wait (bounded) for the background writer, so vectors are in place for what follows."""
    saved = ok(rt.execute_tool("memory__remember", {"content": content, "kind": kind, **extra}, context or ctx()))
    assert rt.plugin("memory").store().flush_vectors(10), "vector writer did not finish"
    return saved


def search(rt: Runtime, query: str, context: ToolContext | None = None) -> list[str]:
    return [m["content"] for m in ok(rt.execute_tool("memory__search", {"query": query}, context or ctx()))["memories"]]


def seeded(make_runtime: Any, embedder: Any) -> Runtime:
    rt: Runtime = make_runtime(embedder=embedder)
    for _, content, kind in PAIRS:
        remember(rt, content, kind)
    for content, kind in DISTRACTORS:
        remember(rt, content, kind)
    return rt


def test_paraphrases_keywords_miss_are_found_by_fused_search_and_recall(make_runtime: Any, rows: Any) -> None:
    lexical = seeded(make_runtime, False)
    for question, _, _ in PAIRS:
        assert search(lexical, question) == [], question  # full-text alone finds nothing
    fused = make_runtime(embedder=ConceptEmbedder())
    # The first runtime wrote no vectors: the backfill embeds them.
    assert rows(VECTORS) == []
    assert fused.plugin("memory").store().reindex() == len(PAIRS) + len(DISTRACTORS)
    for question, memory, _ in PAIRS:
        found = search(fused, question)
        assert found[:1] == [memory], (question, found)
        (block,) = fused.prompt_context(ctx(), question, host=False)
        assert memory in block
    # Keywords still lead when they match: fusion adds to full-text, it does not replace it.
    assert search(fused, "staging database")[0] == "The staging database is rebuilt every Sunday"


def test_a_word_half_the_memories_hold_leaves_a_similar_memory_to_its_similarity(make_runtime: Any) -> None:
    # Notes that each name who said them: "Ana" is in four of six, so a note holding only "Ana" of the query's
    # words holds nothing that tells it apart, and is judged by its meaning, as one holding no query word is.
    fused = make_runtime(embedder=ConceptEmbedder())
    meant = "Ana said Dana owns the billing service"
    for content in [meant, "Ana said the staging database is rebuilt every Sunday",
                    "Ana said the printer jams on Mondays", "Ana said the office closes at six",
                    "Bo said I like dark mode in every editor", "Bo said design reviews happen on Tuesdays"]:
        remember(fused, content)
    found = ok(fused.execute_tool("memory__search", {"query": "who is responsible for Ana's payments?"}, ctx()))
    assert [(m["content"], m["matched"]) for m in found["memories"]] == [(meant, ["ana"])]
    # Keyword search alone still asks for the telling words: "Ana" alone is no match.
    lexical = make_runtime(embedder=False)
    assert search(lexical, "who is responsible for Ana's payments?") == []


def test_a_memory_gets_its_vector_after_its_commit(make_runtime: Any, rows: Any) -> None:
    rt = make_runtime(embedder=ConceptEmbedder())
    memory = remember(rt, "Dana owns the billing service")
    assert rows(VECTORS) == [{"memory_id": memory["id"], "model": "test/concepts", "dimensions": 64}]
    again = remember(rt, "Dana owns the billing service.")
    assert again["created"] is False and len(rows(VECTORS)) == 1  # a duplicate adds no vector


def test_only_a_new_memory_runs_the_model(make_runtime: Any, rows: Any) -> None:
    embedder = ConceptEmbedder()
    rt = make_runtime(embedder=embedder)
    call = ctx()
    first = remember(rt, "Dana owns the billing service", context=call)
    assert embedder.calls == 1
    # A duplicate and a retried call answer from the database alone: the model is not asked again.
    assert remember(rt, "Dana owns the billing service.")["created"] is False
    assert remember(rt, "Dana owns the billing service", context=call)["id"] == first["id"]
    assert embedder.calls == 1
    assert remember(rt, "Deploys are frozen on Fridays", "procedure")["created"] is True
    assert embedder.calls == 2 and len(rows(VECTORS)) == 2


def test_scope_is_applied_before_similarity(make_runtime: Any) -> None:
    from junior_core import Actor

    rt = make_runtime(embedder=ConceptEmbedder())
    # Other people's memories and a private thread's are closer to Alice's question than her own, and there are
    # more of them than the candidate pool: ranking first and filtering after would leave Alice with nothing.
    for n in range(30):
        other = Actor("slack", "T1", f"UOTHER{n}")
        remember(rt, "Responsible for payments", "preference", ctx(other, PUBLIC))
    remember(rt, "Responsible for payments: Bob", "preference", ctx(BOB, PUBLIC))
    remember(rt, "Responsible for payments: the finance group", "knowledge", ctx(ALICE, PRIVATE))
    mine = remember(rt, "Dana owns the billing service", "knowledge", ctx(ALICE, PUBLIC))
    assert search(rt, "who is responsible for payments?", ctx(ALICE, PUBLIC)) == [mine["content"]]
    (block,) = rt.prompt_context(ctx(ALICE, PUBLIC), "who is responsible for payments?", host=False)
    assert "Dana" in block and "Bob" not in block and "finance group" not in block
    # Bob sees his own first, and the private thread its own.
    assert search(rt, "who is responsible for payments?", ctx(BOB, PUBLIC))[0] == "Responsible for payments: Bob"
    assert search(rt, "who runs billing?", ctx(ALICE, PRIVATE)) == ["Responsible for payments: the finance group"]


def test_archive_replace_and_purge_remove_vectors(make_runtime: Any, rows: Any, db_url: str) -> None:
    rt = make_runtime(embedder=ConceptEmbedder())
    billing = remember(rt, "Dana owns the billing service")
    deploys = remember(rt, "Deploys are frozen on Fridays", "procedure")
    german = remember(rt, "I prefer answers in German", "preference")
    assert search(rt, "who is responsible for payments?") == ["Dana owns the billing service"]

    ok(rt.execute_tool("memory__forget", {"id": billing["id"]}, ctx()))
    assert [r["memory_id"] for r in rows(VECTORS)] == [deploys["id"], german["id"]]
    assert search(rt, "who is responsible for payments?") == []

    french = remember(rt, "I prefer answers in French", "preference", replaces=german["id"])
    assert [r["memory_id"] for r in rows(VECTORS)] == [deploys["id"], french["id"]]
    assert search(rt, "what language should you reply in?") == ["I prefer answers in French"]

    # A vector left behind by hand (as an old version might) goes when its memory is purged.
    store = rt.plugin("memory").store()
    with store.engine.begin() as conn:
        from sqlalchemy import text

        conn.execute(text("INSERT INTO junior_memory_vectors (memory_id, model, dimensions, vector, created_at) "
                          "VALUES (:m, 'test/other', 1, :v, :at)"), {"m": billing["id"], "v": b"\0\0\x80?",
                                                                      "at": datetime.now(UTC)})
    assert store.purge(archived_before=datetime.now(UTC) + timedelta(seconds=1)) == 2
    assert [r["memory_id"] for r in rows(VECTORS)] == [deploys["id"], french["id"]]


def test_another_models_vectors_are_never_compared(make_runtime: Any, rows: Any) -> None:
    first = make_runtime(embedder=ConceptEmbedder("test/a"))
    remember(first, "Dana owns the billing service")
    second = make_runtime(embedder=ConceptEmbedder("test/b", dimensions=32))
    assert search(second, "who is responsible for payments?") == []  # until reindexed for test/b
    assert second.plugin("memory").store().reindex() == 1
    assert [r["model"] for r in rows(VECTORS)] == ["test/b"]
    assert search(second, "who is responsible for payments?") == ["Dana owns the billing service"]


def test_a_broken_model_means_keyword_recall_and_one_log_line(
    make_runtime: Any, rows: Any, caplog: pytest.LogCaptureFixture
) -> None:
    broken = BrokenEmbedder()
    rt = make_runtime(embedder=broken)
    with caplog.at_level(logging.WARNING, logger="junior.memory"):
        remember(rt, "Deploys are frozen on Fridays", "procedure")
        remember(rt, "Dana owns the billing service")
        assert search(rt, "deploys frozen") == ["Deploys are frozen on Fridays"]
        assert search(rt, "who is responsible for payments?") == []
        (block,) = rt.prompt_context(ctx(), "are deploys frozen today?", host=False)
        assert "Fridays" in block
    warnings = [r.getMessage() for r in caplog.records if r.name == "junior.memory" and r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "test/broken" in warnings[0] and "keywords only" in warnings[0], warnings
    assert broken.calls == 1  # the breaker stays open: no call pays for the broken model again
    assert len(rows("SELECT id FROM junior_memory_memories")) == 2 and rows(VECTORS) == []


def test_without_the_extra_recall_is_keywords_and_every_call_succeeds(
    make_runtime: Any, rows: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JUNIOR_MEMORY_EMBEDDING_MODEL", raising=False)  # the default model, if it were installed
    monkeypatch.setitem(sys.modules, "fastembed", None)  # not installed: importing it fails
    rt = make_runtime()
    assert rt.plugin("memory").store().semantic is None
    deploys = remember(rt, "Deploys are frozen on Fridays", "procedure")
    remember(rt, "Dana owns the billing service")
    assert search(rt, "deploys frozen") == [deploys["content"]]
    assert search(rt, "who is responsible for payments?") == []  # what only similarity would find
    (block,) = rt.prompt_context(ctx(), "are deploys frozen today?", host=False)
    assert "Fridays" in block and "billing" not in block
    assert rows(VECTORS) == []


def test_a_slow_model_does_not_hold_up_the_call(make_runtime: Any, rows: Any) -> None:
    embedder = BlockingEmbedder()  # holds every call until released (a minute at most)
    rt = make_runtime(embedder=embedder)
    try:
        semantic = rt.plugin("memory").store().semantic
        semantic.wait = semantic.related_wait = 0.05  # each wait for the model bounded, and short
        saved = within(5.0, lambda: rt.execute_tool("memory__remember", {"content": "Deploys are frozen on Fridays",
                                                                          "kind": "procedure"}, ctx()))
        assert ok(saved)["created"] is True
        assert embedder.started.wait(10)
        assert within(5.0, lambda: search(rt, "deploys frozen")) == ["Deploys are frozen on Fridays"]
        assert rows(VECTORS) == []  # the model is still at it: keyword search finds the memory meanwhile
    finally:
        embedder.release.set()


def test_reindex_command(make_runtime: Any, db_url: str) -> None:
    rt = make_runtime(embedder=False)
    for _, content, kind in PAIRS:
        remember(rt, content, kind)

    @click.group()
    def junior() -> None:
        pass

    MemoryPlugin(url=db_url, embedder=ConceptEmbedder()).register_commands(cli=junior)
    result = CliRunner().invoke(junior, ["memory", "reindex", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"model": "test/concepts", "embedded": 3}
    again = CliRunner().invoke(junior, ["memory", "reindex", "--json"], catch_exceptions=False)
    assert json.loads(again.output)["embedded"] == 0

    @click.group()
    def plain() -> None:
        pass

    MemoryPlugin(url=db_url, embedder=False).register_commands(cli=plain)
    off = CliRunner().invoke(plain, ["memory", "reindex"])
    assert off.exit_code == 1 and "junior-memory[semantic]" in off.output


@pytest.mark.slow
def test_without_the_extra_nothing_heavy_is_imported(tmp_path: Any) -> None:
    script = (
        "import sys\n"
        "from junior_core import Runtime\n"
        "from junior_memory import MemoryPlugin\n"
        "import junior_memory.semantic\n"
        f"rt = Runtime(plugins=[MemoryPlugin(url='sqlite:///{tmp_path}/m.sqlite3')])\n"
        "print(sorted(m for m in ('fastembed', 'numpy', 'onnxruntime') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True,
                         env={"PATH": "/usr/bin:/bin", "JUNIOR_MEMORY_EMBEDDING_MODEL": "off"})
    assert out.stdout.strip() == "[]"


def test_the_default_embedder_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from junior_memory.semantic import DEFAULT_MODEL, FastEmbedEmbedder, embedder_from_env

    monkeypatch.setenv("JUNIOR_MEMORY_EMBEDDING_MODEL", "off")
    assert embedder_from_env() is None
    monkeypatch.setenv("JUNIOR_MEMORY_EMBEDDING_MODEL", "")
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "fastembed" else real_find_spec(name, *a))
    assert embedder_from_env() is None  # the extra is absent
    monkeypatch.setattr(importlib.util, "find_spec", real_find_spec)
    default = embedder_from_env()
    assert isinstance(default, FastEmbedEmbedder) and default.name == DEFAULT_MODEL and default.path is None
    monkeypatch.setenv("JUNIOR_MEMORY_EMBEDDING_MODEL", "BAAI/bge-small-en-v1.5")
    monkeypatch.setenv("JUNIOR_MEMORY_EMBEDDING_PATH", "/models/bge")
    chosen = embedder_from_env()
    assert isinstance(chosen, FastEmbedEmbedder)
    assert (chosen.name, str(chosen.path)) == ("BAAI/bge-small-en-v1.5", "/models/bge")


def store_of(rt: Runtime) -> Any:
    return rt.plugin("memory").store()


def test_this_processes_writes_go_straight_into_its_vectors_and_others_are_caught_up(make_runtime: Any) -> None:
    first = make_runtime(embedder=ConceptEmbedder())
    second = make_runtime(embedder=ConceptEmbedder())  # another process on the same database
    deploys = remember(first, "Deploys are frozen on Fridays", "procedure")
    assert search(first, "can I ship code at the end of the week?") == [deploys["content"]]
    index = store_of(first)._index
    german = remember(first, "I prefer answers in German", "preference")
    assert german["id"] in index.scopes  # no re-read of the table needed
    index.seq = 10**9  # so nothing is caught up from the table: what follows comes from the write itself
    assert search(first, "what language should you reply in?") == [german["content"]]

    index.seq = 0
    billing = remember(second, "Dana owns the billing service")
    assert billing["id"] not in index.scopes
    assert search(first, "who is responsible for payments?") == [billing["content"]]
    # Forgotten by the other process: this one's search no longer shows it, and stops comparing it.
    ok(second.execute_tool("memory__forget", {"id": billing["id"]}, ctx()))
    assert billing["id"] in index.scopes
    assert search(first, "who is responsible for payments?") == []
    assert billing["id"] not in index.scopes
    # Forgotten here: gone from this process's vectors at once.
    ok(first.execute_tool("memory__forget", {"id": german["id"]}, ctx()))
    assert german["id"] not in index.scopes and deploys["id"] in index.scopes


def test_a_search_reads_the_vectors_table_only_when_another_process_wrote_to_it(make_runtime: Any) -> None:
    from sqlalchemy import event

    first = make_runtime(embedder=ConceptEmbedder())
    second = make_runtime(embedder=ConceptEmbedder())  # another process on the same database
    remember(first, "Deploys are frozen on Fridays", "procedure")
    search(first, "can I ship code at the end of the week?")  # reads the table once, this process's vectors
    statements: list[str] = []
    event.listen(store_of(first).engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *args: statements.append(statement))
    assert search(first, "deploys frozen") == ["Deploys are frozen on Fridays"]
    assert [s for s in statements if "junior_memory_vectors" in s and "newest_seq" not in s] == []
    assert any("newest_seq" in s for s in statements)  # the keyword query says what the newest vector is

    billing = remember(second, "Dana owns the billing service")
    statements.clear()
    assert search(first, "who owns billing?") == [billing["content"]]
    assert [s for s in statements if "junior_memory_vectors" in s and "newest_seq" not in s] != []  # caught up


def _unit(vector: Any) -> Any:
    import numpy as np

    return (vector / np.linalg.norm(vector)).astype(np.float32)


def test_a_large_scope_is_narrowed_by_sign_bits_then_scored_exactly() -> None:
    import numpy as np
    from junior_memory.scope import Scope
    from junior_memory.semantic import CANDIDATES, EXACT_UP_TO, VectorIndex

    rng = np.random.default_rng(7)
    dims = 384
    query = _unit(rng.standard_normal(dims))

    def similar(cosine: float) -> bytes:
        other = rng.standard_normal(dims)
        other = _unit(other - (other @ query) * query)  # orthogonal to the query
        return _unit(cosine * query + np.sqrt(1 - cosine**2) * other).tobytes()

    workspace, private = Scope("conversation", "slack:T1", "workspace"), Scope("conversation", "slack:T1:G1", "channel")
    count = EXACT_UP_TO + 8 * CANDIDATES
    rows = [(i + 1, f"{i:032x}", _unit(rng.standard_normal(dims)).tobytes(), "conversation", "slack:T1")
            for i in range(count)]
    cosines = (0.9, 0.75, 0.6, 0.45, 0.35)
    rows += [(count + 1 + k, f"near{k}", similar(c), "conversation", "slack:T1") for k, c in enumerate(cosines)]
    rows.append((count + 10, "private-closest", similar(0.99), "conversation", "slack:T1:G1"))
    index = VectorIndex("test")
    index.add(rows)
    assert len(index.blocks[("conversation", "slack:T1", dims)]) > EXACT_UP_TO  # the two-step path is taken

    # Every memory similar enough to pass the floor survives the sign-bit pass, in exact order; another scope's
    # closer vector is never compared.
    assert index.nearest(query.tobytes(), [workspace], 20, floor=0.3) == [f"near{k}" for k in range(len(cosines))]
    assert index.nearest(query.tobytes(), [workspace, private], 2, floor=0.3) == ["private-closest", "near0"]
    # Without a floor the similar ones still lead, as when every vector is scored; below them, among vectors as
    # unrelated as random ones (cosine about 0.15), the sign bits are an approximation.
    matrix = np.frombuffer(b"".join(r[2] for r in rows[:-1]), dtype=np.float32).reshape(-1, dims)
    exact = [rows[i][1] for i in np.argsort(-(matrix @ query))[:20]]
    found = index.nearest(query.tobytes(), [workspace], 20)
    assert found[:5] == exact[:5] == [f"near{k}" for k in range(len(cosines))] and len(found) == 20


def test_vectors_tied_in_sign_bits_are_all_scored() -> None:
    import numpy as np
    from junior_memory.scope import Scope
    from junior_memory.semantic import CANDIDATES, EXACT_UP_TO, VectorIndex

    rng = np.random.default_rng(11)
    dims = 384
    query = _unit(rng.standard_normal(dims))
    # Every vector has the query's signs (the same sign-bit distance, 0), so the sign bits cannot tell them apart;
    # the closest one sits last in the block.
    count = EXACT_UP_TO + 4 * CANDIDATES
    rows = [(i + 1, f"{i:032x}", _unit(np.sign(query) * np.abs(rng.standard_normal(dims))).tobytes(),
             "conversation", "slack:T1") for i in range(count)]
    rows.append((count + 1, "closest", _unit(query + 0.01 * np.sign(query)).tobytes(), "conversation", "slack:T1"))
    index = VectorIndex("test")
    index.add(rows)
    assert index.nearest(query.tobytes(), [Scope("conversation", "slack:T1", "workspace")], 1) == ["closest"]


def test_the_mean_of_a_scopes_vectors_follows_every_change_and_is_taken_from_each() -> None:
    import numpy as np
    from junior_memory.scope import Scope
    from junior_memory.semantic import VectorIndex

    rng = np.random.default_rng(3)
    dims = 16
    vectors = {f"m{i}": _unit(rng.standard_normal(dims)) for i in range(6)}
    workspace, private = Scope("conversation", "slack:T1", "workspace"), Scope("conversation", "slack:T1:G1", "channel")
    index = VectorIndex("test")
    index.add([(i + 1, mid, v.tobytes(), "conversation", "slack:T1") for i, (mid, v) in enumerate(vectors.items())])
    vectors["m2"] = _unit(rng.standard_normal(dims))
    index.put("m2", vectors["m2"].tobytes(), "conversation", "slack:T1")  # replaced
    index.forget(["m4"])
    del vectors["m4"]
    index.put("g1", _unit(rng.standard_normal(dims)).tobytes(), "conversation", "slack:T1:G1")  # another scope
    query = _unit(rng.standard_normal(dims))

    mean = np.mean(list(vectors.values()), axis=0)
    centered = {mid: v - mean for mid, v in vectors.items()}
    want = {mid: float((c @ (query - mean)) / np.linalg.norm(c) / np.linalg.norm(query - mean))
            for mid, c in centered.items()}
    got = index.apart(query.tobytes(), [workspace], [*vectors, "g1", "gone"])
    assert set(got) == set(vectors)  # a memory of a scope not asked about, or gone, is not scored
    assert all(abs(got[mid] - want[mid]) < 1e-5 for mid in vectors), (got, want)
    # The nearest are chosen among those at least as similar as the floor, closest once the mean is taken away.
    lowest = sorted(float(v @ query) for v in vectors.values())
    floor = (lowest[0] + lowest[1]) / 2  # one memory below it
    above = [mid for mid, v in vectors.items() if float(v @ query) >= floor]
    nearest = index.scored(query.tobytes(), [workspace], 3, floor=floor, apart=True)
    assert [mid for mid, _ in nearest] == sorted(above, key=lambda mid: -want[mid])[:3]
    assert all(abs(score - float(vectors[mid] @ query)) < 1e-5 for mid, score in nearest)  # still the cosine
    assert index.apart(query.tobytes(), [private], ["g1"]) == {"g1": 0.0}  # one memory is its own mean


def test_a_scopes_only_memory_is_its_mean_and_scores_zero_whatever_the_query() -> None:
    import numpy as np
    from junior_memory.scope import Scope
    from junior_memory.semantic import VectorIndex

    rng = np.random.default_rng(7)
    scope = Scope("conversation", "slack:T1:G1", "channel")
    scores = []
    for _ in range(50):  # the model's 384 dimensions, where float32 rounding is largest
        index = VectorIndex("test")
        index.put("only", _unit(rng.standard_normal(384)).tobytes(), "conversation", "slack:T1:G1")
        scores.append(index.apart(_unit(rng.standard_normal(384)).tobytes(), [scope], ["only"])["only"])
    assert scores == [0.0] * 50, max(map(abs, scores))


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
    embedder = Stepping()
    rt = make_runtime(embedder=embedder)
    store = rt.plugin("memory").store()
    store.semantic.wait = 10.0
    store.semantic.related_wait = 0.0  # each write finds related memories by keyword: the model is held

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
        queue = store.semantic._worker._queue
        wait_until(lambda: queue.qsize() >= 1, timeout=10, what="the query's embedding queued behind the running chunk")
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
