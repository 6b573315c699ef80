"""Search speed, executeTool dispatch overhead and CLI cold start, each next to a baseline in the same process.

- Index build and search latency on the real 527-tool LiveMCPBench catalog (one source per server, loaded
  through the hook API) and on a synthetic 10,000-tool catalog, against ``rank-bm25`` (BM25Okapi) over the same
  documents. Build times include tokenisation for both. Queries: 300 MetaTool user requests (fixed seed).
- executeTool dispatch overhead, schema validation included: ``Runtime.execute_tool`` on a no-op handler
  minus calling the handler directly.
- ``junior --help`` cold start: a fresh subprocess, median of several runs, next to ``python -c pass``.
- Registration: one plugin registering 100,000 tools in one source, and a provider's refresh replacing
  100,000 tools, next to the same at 10,000 (time per tool should not grow: registration is linear). Building
  the ``Tool`` objects (validation included) is timed apart, since a plugin does it before it registers.

    python benchmarks/search.py
    python benchmarks/search.py --index-module /tmp/old_index.py --skip-10k   # an older index.py, same queries
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent))  # last: benchmarks/mcp.py must not shadow the mcp SDK

import _data

from junior_core import Runtime, Source, Tool, ToolContext, hookimpl
from junior_core._discovery import index as search_module
from junior_core._discovery.analysis import param_text

_WORD = re.compile(r"\w+")


def bm25_tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def median_time(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def latencies(fn: Callable[[str], Any], queries: Sequence[str]) -> tuple[float, float]:
    """(p50, p95) in milliseconds."""
    for q in queries[:20]:
        fn(q)  # warm caches
    times = []
    for q in queries:
        start = time.perf_counter()
        fn(q)
        times.append(1000 * (time.perf_counter() - start))
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def document(entry: Any) -> str:
    return f"{entry.tool.name} {entry.tool.description} {param_text(entry.tool.input_schema)}"


def compare_search(label: str, entries: Sequence[Any], sources: dict[str, str], queries: Sequence[str],
                   module: ModuleType, repeat: int) -> list[dict[str, Any]]:
    """Build and query our index and rank-bm25 over the same tools."""
    import numpy
    from rank_bm25 import BM25Okapi

    def build_ours() -> Any:
        index = module.SearchIndex()
        index.build(entries, sources, 1)
        return index

    def build_bm25() -> Any:
        return BM25Okapi([bm25_tokens(document(e)) for e in entries])

    ours_build = median_time(build_ours, repeat)
    bm25_build = median_time(build_bm25, repeat)
    index, bm25 = build_ours(), build_bm25()

    def bm25_search(query: str) -> list[int]:
        # What BM25Okapi.get_top_n does, without copying the documents.
        scores = bm25.get_scores(bm25_tokens(query))
        return list(numpy.argsort(scores)[::-1][:5])

    ours_p50, ours_p95 = latencies(lambda q: index.search(q, limit=5), queries)
    bm25_p50, bm25_p95 = latencies(bm25_search, queries)
    warm = warm_open(entries, sources, queries[0], module, repeat)
    return [
        {"catalog": label, "tools": len(entries), "system": "junior SearchIndex", "build_ms": 1000 * ours_build,
         "search_p50_ms": ours_p50, "search_p95_ms": ours_p95, **warm},
        {"catalog": label, "tools": len(entries), "system": "rank-bm25 BM25Okapi", "build_ms": 1000 * bm25_build,
         "search_p50_ms": bm25_p50, "search_p95_ms": bm25_p95},
    ]


def warm_open(entries: Sequence[Any], sources: dict[str, str], query: str, module: ModuleType, repeat: int
              ) -> dict[str, float]:
    """Cold build and store into an on-disk cache, then a new index opening it and answering its first search."""
    if not hasattr(module, "SearchIndex") or "cache" not in module.SearchIndex.__init__.__code__.co_varnames:
        return {}
    import tempfile

    from junior_core._discovery.store import IndexCache

    with tempfile.TemporaryDirectory() as tmp:
        def cold() -> Any:
            cache = IndexCache(tmp)
            cache.clear()
            index = module.SearchIndex(cache=cache)
            index.build(entries, sources, 1)
            return index

        def opened() -> Any:
            index = module.SearchIndex(cache=IndexCache(tmp))
            index.build(entries, sources, 1)
            index.search(query, limit=5)
            assert index.snapshot.path is not None, "the stored index was opened"
            return index

        cold_s = median_time(cold, repeat)
        cold()
        open_s = median_time(opened, repeat)
    return {"cold_build_stored_ms": 1000 * cold_s, "warm_open_first_search_ms": 1000 * open_s}


def synthetic_entries(count: int, base: _data.Dataset, seed: int = 7) -> tuple[list[Any], dict[str, str]]:
    """``count`` catalog entries recombining real LiveMCPBench names, descriptions and schemas.

    Plain stand-ins with the attributes the index reads (``tool_name``, ``source_id``, ``tool.name``,
    ``tool.description``, ``tool.input_schema``, ``tool.annotations``): constructing 10,000 validated ``Tool``
    objects costs far more than the index being measured.
    """
    real = [t for s in base.sources for t in s.tools]
    words = [w for t in real for w in t.description.split() if w.isascii() and w.isalpha() and len(w) > 2]
    rng = random.Random(seed)
    entries: list[Any] = []
    sources: dict[str, str] = {}
    for i in range(count):
        source_id = f"synthetic:s{i // 50:04d}"
        if source_id not in sources:
            sources[source_id] = " ".join(rng.choices(words, k=12))
        tool = real[i % len(real)]
        name = f"{tool.name}_{rng.choice(words).lower()}_{i}"
        fake = SimpleNamespace(
            name=name,
            description=f"{tool.description} {' '.join(rng.choices(words, k=rng.randint(5, 30)))}",
            input_schema=tool.input_schema,
            annotations=tool.annotations,
        )
        entries.append(SimpleNamespace(tool_name=f"{source_id.replace(':', '__')}__{name}", source_id=source_id,
                                       tool=fake))
    return entries, sources


class _DispatchPlugin:
    def __init__(self, handler: Callable[[dict[str, Any], ToolContext], Any]) -> None:
        self.handler = handler

    @hookimpl
    def register_sources(self, register: Callable[..., None]) -> None:
        schema = {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "units": {"type": "string", "enum": ["metric", "imperial"]},
            },
            "required": ["city"],
            "additionalProperties": False,
        }
        register(Source("bench", "Dispatch benchmark."), tools=[Tool("forecast", "Weather forecast.", schema,
                                                                      self.handler)])


def dispatch(calls: int) -> dict[str, float]:
    """Mean and p50 microseconds of execute_tool vs calling the handler directly."""

    def handler(arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        return {"city": arguments["city"]}

    args = {"city": "Lisbon", "days": 3, "units": "metric"}
    ctx = ToolContext()
    out: dict[str, float] = {}
    with Runtime(plugins=[_DispatchPlugin(handler)]) as rt:
        assert rt.execute_tool("bench__forecast", args, ctx)["ok"]

        def direct() -> Any:
            return handler(args, ctx)

        def via_runtime() -> Any:
            return rt.execute_tool("bench__forecast", args, ctx)

        for label, fn in (("direct", direct), ("execute_tool", via_runtime)):
            for _ in range(200):
                fn()
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                fn()
                times.append(1e6 * (time.perf_counter() - start))
            out[f"{label}_mean_us"] = statistics.fmean(times)
            out[f"{label}_p50_us"] = statistics.median(times)
    out["overhead_p50_us"] = out["execute_tool_p50_us"] - out["direct_p50_us"]
    return out


class _BulkPlugin:
    """``bulk`` with the given tools, and ``mcp:bulk`` whose provider lists ``listing``."""

    def __init__(self, tools: list[Tool]) -> None:
        self.tools = tools
        self.listing: list[Tool] = []

    @hookimpl
    def register_sources(self, register: Callable[..., None]) -> None:
        register(Source("bulk", "Many tools."), tools=self.tools)
        register(Source("mcp:bulk", "Many tools listed at run time."), provider=lambda: self.listing)


def registration(counts: Sequence[int]) -> list[dict[str, float]]:
    """Seconds to build ``count`` tools, register them in one source, and refresh a provider source with them."""
    schema = {"type": "object", "properties": {"query": {"type": "string", "description": "What to look for."}}}

    def handler(arguments: dict[str, Any], context: ToolContext) -> None:
        return None

    rows = []
    for count in counts:
        gc.collect()
        start = time.perf_counter()
        tools = [Tool(f"tool_{i}", f"Tool number {i}.", schema, handler) for i in range(count)]
        built = time.perf_counter() - start
        plugin = _BulkPlugin(tools)
        gc.collect()
        start = time.perf_counter()
        with Runtime(plugins=[plugin], index_cache=False) as rt:
            registered = time.perf_counter() - start
            plugin.listing.extend(tools)
            start = time.perf_counter()
            rt.refresh_source("mcp:bulk")
            refreshed = time.perf_counter() - start
            assert len(rt.catalog_tools("bulk")) == len(rt.catalog_tools("mcp:bulk")) == count
        rows.append({"tools": count, "build_tools_s": built, "register_s": registered, "refresh_s": refreshed})
    return rows


def cold_start(runs: int) -> dict[str, float]:
    """Median wall time of ``junior --help`` and of ``python -c pass`` in fresh processes."""
    junior = Path(sys.executable).with_name("junior")
    results = {}
    for label, cmd in (("python -c pass", [sys.executable, "-c", "pass"]), ("junior --help", [str(junior), "--help"])):
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times.append(1000 * (time.perf_counter() - start))
        results[label] = statistics.median(times)
    return results


def load_module(path: str | None) -> ModuleType:
    if not path:
        return search_module
    spec = importlib.util.spec_from_file_location("junior_search_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index-module", help="path of an index.py to measure instead of junior_core._discovery.index")
    parser.add_argument("--skip-10k", action="store_true",
                        help="only the 527-tool catalog (no 10,000-tool search, no 100,000-tool registration)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3, help="index builds per catalog (median)")
    parser.add_argument("--calls", type=int, default=5000, help="executeTool calls for the dispatch figure")
    parser.add_argument("--runs", type=int, default=7, help="cold-start runs")
    parser.add_argument("--json", nargs="?", const="-", default=None, metavar="PATH")
    args = parser.parse_args(argv)
    module = load_module(args.index_module)

    report: dict[str, Any] = {"search": []}
    if not args.index_module:
        # First, before the large indexes exist, so their garbage-collector load does not colour the figures.
        report["dispatch"] = dispatch(args.calls)
        report["cold_start_ms"] = cold_start(args.runs)
    meta, live = _data.metatool(), _data.livemcpbench()
    all_queries = [q.text for q in _data.metatool_queries(meta)["single"]]
    queries = random.Random(3).sample(all_queries, args.queries)
    with _data.runtime(live) as rt:
        entries = list(rt._discovery.view().visible)
        sources = {e.source.id: e.source.description for e in rt._catalog.sources}
        report["search"] += compare_search("LiveMCPBench", entries, sources, queries, module, args.repeat)
        if not args.index_module:
            p50, p95 = latencies(lambda q: rt.search_tools(q, None, 5), queries)
            report["search_tools_527"] = {"p50_ms": p50, "p95_ms": p95}
    if not args.skip_10k:
        entries10k, sources10k = synthetic_entries(10_000, live)
        report["search"] += compare_search("synthetic", entries10k, sources10k, queries, module, args.repeat)
        if not args.index_module:
            report["registration"] = registration((10_000, 100_000))

    print("| catalog | tools | system | build (ms) | search p50 (ms) | search p95 (ms) |")
    print("|---|---|---|---|---|---|")
    for r in report["search"]:
        print(f"| {r['catalog']} | {r['tools']:,} | {r['system']} | {r['build_ms']:.0f} | {r['search_p50_ms']:.2f} "
              f"| {r['search_p95_ms']:.2f} |")
    rows = report["search"]
    for i in range(0, len(rows), 2):
        ours, base = rows[i], rows[i + 1]
        print(f"{ours['catalog']}: search p50 {ours['search_p50_ms'] / base['search_p50_ms']:.2f}x rank-bm25 "
              f"(target <= 0.5 at 10k); build {ours['build_ms'] / base['build_ms']:.1f}x (target <= 10 at 10k)")
    for r in rows:
        if "warm_open_first_search_ms" in r:
            print(f"{r['catalog']}: stored index opened + first search {r['warm_open_first_search_ms']:.0f} ms vs cold "
                  f"build and store {r['cold_build_stored_ms']:.0f} ms = "
                  f"{r['warm_open_first_search_ms'] / r['cold_build_stored_ms']:.2f}x (target <= 0.2 at 10k)")
    if "search_tools_527" in report:
        s = report["search_tools_527"]
        print(f"searchTools answer (527 tools, 5 results, dict included): p50 {s['p50_ms']:.2f} ms, "
              f"p95 {s['p95_ms']:.2f} ms")
    if "dispatch" in report:
        d = report["dispatch"]
        print(f"executeTool: p50 {d['execute_tool_p50_us']:.1f} us, handler direct {d['direct_p50_us']:.2f} us, "
              f"overhead {d['overhead_p50_us']:.1f} us (target < 100)")
    for r in report.get("registration", []):
        print(f"registration, {r['tools']:,} tools in one source: register {r['register_s']:.2f} s "
              f"({1e6 * r['register_s'] / r['tools']:.1f} us a tool), provider refresh {r['refresh_s']:.2f} s, "
              f"building the Tool objects {r['build_tools_s']:.2f} s (target < 5 s to register 100,000)")
    if len(report.get("registration", [])) == 2:
        small, large = report["registration"]
        print(f"registration per tool at {large['tools']:,} vs {small['tools']:,}: "
              f"{(large['register_s'] / large['tools']) / (small['register_s'] / small['tools']):.2f}x "
              "(a check scanning what is registered: about 10; the rest is the garbage collector's passes over a "
              "heap ten times larger)")
    if "cold_start_ms" in report:
        c = report["cold_start_ms"]
        print(f"cold start: junior --help {c['junior --help']:.0f} ms, python -c pass {c['python -c pass']:.0f} ms "
              "(target < 300)")
    if args.json:
        _data.write_json(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
