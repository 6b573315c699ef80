"""Memory speed: remember and search p50/p99 at 1,000 and 100,000 memories, on SQLite and Postgres.

Seed rows are bulk-inserted (same schema, same triggers and indexes as tool writes); then timed calls go through
``Runtime.execute_tool`` exactly as a model's executeTool would. The baseline is a ``SELECT 1`` round trip on the
same engine, so the figures can be read against the database's own floor on any machine. On Postgres the search
plan is printed to show the GIN full-text index in use.

    python benchmarks/memory.py [--sizes 1000,100000] [--backends sqlite,postgres] [--calls 200]

Postgres comes from JUNIOR_TEST_POSTGRES_URL (default postgresql+psycopg://postgres@127.0.0.1:5432/test); each
run uses a fresh schema that is dropped afterwards.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from junior_memory import MemoryPlugin, MemoryStore
from junior_memory.content import content_hash
from junior_memory.scope import read_scopes

from junior_core import Actor, Conversation, Runtime, ToolContext

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


def seed(store: MemoryStore, count: int, words: list[str], weights: list[float], rng: random.Random) -> float:
    """Bulk-insert ``count`` memories: 70% workspace procedures/knowledge, 30% personal across many actors."""
    from junior_memory.tables import Memory
    from sqlalchemy import insert

    store.ensure_schema()
    start = time.perf_counter()
    base = datetime.now(UTC) - timedelta(days=365)
    batch: list[dict[str, Any]] = []
    with store.engine.begin() as conn:
        for i in range(count):
            content = f"{sentence(words, weights, rng)} #{i}"
            personal = rng.random() < 0.3
            actor = f"slack:T1:U{rng.randrange(ACTORS):04d}"
            scope_key = actor if personal else "slack:T1"
            at = base + timedelta(seconds=i * 30)
            batch.append({
                "id": uuid.UUID(int=rng.getrandbits(128)).hex, "scope": "personal" if personal else "conversation",
                "scope_key": scope_key, "kind": "preference" if personal else rng.choice(["procedure", "knowledge"]),
                "subject_type": "actor" if personal else "workspace", "subject_key": scope_key, "content": content,
                "content_hash": content_hash(content), "actor_key": actor,
                "source_key": f"slack:T1:C{rng.randrange(50)}:{1700000000 + i}.000100", "origin": "tool",
                "tool_call_id": f"seed-{i}", "idempotency_key": f"tool:seed:{i}", "created_at": at, "observed_at": at,
            })
            if len(batch) == 5000:
                conn.execute(insert(Memory), batch)
                batch = []
        if batch:
            conn.execute(insert(Memory), batch)
    if store.backend == "postgresql":
        with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("ANALYZE junior_memory_memories")
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


def plan(store: MemoryStore, context: ToolContext, query: str) -> str:
    return "\n".join(f"    {line}" for line in store.explain_search(read_scopes(context), query).splitlines())


def run(backend: str, size: int, calls: int) -> dict[str, Any]:
    rng = random.Random(SEED)
    words = vocabulary(3000, rng)
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    # Queries use mid-frequency words (ranks 50-1000): specific enough to be what someone would search for.
    query_words = words[50:1000]
    with database(backend) as url:
        plugin = MemoryPlugin(url=url)
        with Runtime(plugins=[plugin]) as rt:
            store = plugin.store()
            seeded = seed(store, size, words, weights, rng)
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

            def remember(i: int) -> None:
                args = {"content": f"{sentence(words, weights, rng)} (bench {i})", "kind": rng.choice(
                    ["preference", "procedure", "knowledge"])}
                call = ToolContext(context.actor, context.conversation, f"bench-{i}")
                assert rt.execute_tool("memory__remember", args, call)["ok"]

            queries = [" ".join(rng.sample(query_words, rng.randint(1, 3))) for _ in range(calls)]
            hits: list[int] = []

            def search(i: int) -> None:
                response = rt.execute_tool("memory__search", {"query": queries[i]}, context)
                assert response["ok"], response
                hits.append(len(response["result"]["memories"]))

            timed(20, baseline)
            timed(5, lambda i: search(i % len(queries)))  # warm caches
            hits.clear()
            out: dict[str, Any] = {
                "backend": backend, "size": size, "seed_s": seeded,
                "baseline": percentiles(timed(calls, baseline)),
                "commit": percentiles(timed(calls, commit_floor)),
                "remember": percentiles(timed(calls, remember)),
                "search": percentiles(timed(calls, search)),
                "mean_hits": statistics.mean(hits),
            }
            if backend == "postgres":
                out["plan"] = plan(store, context, queries[0])
            return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    backends = args.backends.split(",")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"memory benchmark: {args.calls} timed calls each; times in ms (p50 / p99); python {sys.version.split()[0]}; "
          f"load average {load} on {os.cpu_count()} CPUs")
    header = ["SELECT 1", "1-row commit", "remember", "search"]
    print(f"{'backend':<9}{'memories':>9}  " + "  ".join(f"{h:>15}" for h in header) + f"  {'hits':>5}  seed")
    plans = []
    for backend in backends:
        for size in sizes:
            r = run(backend, size, args.calls)
            figures = (r["baseline"], r["commit"], r["remember"], r["search"])
            row = "  ".join(f"{p50:6.2f} / {p99:6.2f}" for p50, p99 in figures)
            print(f"{backend:<9}{size:>9}  {row}  {r['mean_hits']:5.1f}  {r['seed_s']:.1f}s", flush=True)
            if "plan" in r:
                plans.append(f"  {backend} at {size} memories, search plan:\n{r['plan']}")
    for text in plans:
        print(text)


if __name__ == "__main__":
    main()
