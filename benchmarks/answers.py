"""How big searchTools' answers are, and whether an answer says when it is weak, on realistic requests.

Two catalogs, registered through the real hook: junior-memory alone, and junior-memory beside the 527
LiveMCPBench tools (70 sources). The queries are every request of ``benchmarks/data/discovery_requests*.json``
(memory, no_match, shared_verbs) and ``benchmarks/data/memory_requests.json``. Sizes are characters of
``json.dumps(answer)``, what a host sends for it. Figures (only totals are printed, never a request):

  inside memory     median and largest answer of ``source="memory"`` for every memory request (memory + LiveMCPBench)
  cross-source      median and largest answer without a source, every request (memory + LiveMCPBench), and
                    of the requests not for memory (no_match and shared_verbs) alone
  no match          largest answer that returns no tool (every catalog, every request)
  batch             median answer of ``queries`` with five requests at a time (memory + LiveMCPBench)
  weak: unserved    share of no_match requests (no installed tool serves them with memory alone) answered with no
                    tool or ``weak: true``, memory alone
  weak: served      memory requests marked weak, inside memory and across sources (memory + LiveMCPBench)

    python benchmarks/answers.py              # the figures
    python benchmarks/answers.py --json PATH  # as JSON ('-' for stdout)
    python benchmarks/answers.py --limit 10   # the first 10 requests of each kind only
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent))  # last: benchmarks/mcp.py must not shadow the mcp SDK

import _data

from junior_core import Runtime

DATA = Path(__file__).resolve().parent / "data"
NOWHERE = "sqlite:////dev/null/no-such-dir/memory.sqlite3"  # searching never opens the store
DISCOVERY_FILES = ("discovery_requests.json", "discovery_requests_second.json", "discovery_requests_third.json")


def memory_runtime(*datasets: _data.Dataset) -> Runtime:
    from junior_memory import MemoryPlugin

    plugins: list[Any] = [MemoryPlugin(url=NOWHERE)]
    if datasets:
        plugins.append(_data.DatasetPlugin(datasets))
    return Runtime(plugins=plugins, index_cache=False)


def requests() -> dict[str, list[str]]:
    """``{"memory": [...], "no_match": [...], "other": [...]}``: every request text, by what serves it."""
    out: dict[str, list[str]] = {"memory": [], "no_match": [], "other": []}
    for name in DISCOVERY_FILES:
        data = json.loads((DATA / name).read_text(encoding="utf-8"))
        for key, half in data.items():
            if key.startswith("_"):
                continue
            for rows in half.get("memory", {}).values():
                out["memory"] += [row["text"] for row in rows]
            out["no_match"] += [row["text"] for row in half.get("no_match", [])]
            out["other"] += [row["text"] for row in half.get("shared_verbs", [])]
    older = json.loads((DATA / "memory_requests.json").read_text(encoding="utf-8"))
    for key, by_tool in older.items():
        if not key.startswith("_"):
            for texts in by_tool.values():
                out["memory"] += list(texts)
    return out


def size(answer: dict[str, Any]) -> int:
    return len(json.dumps(answer))


def weak_or_empty(answer: dict[str, Any]) -> bool:
    return not answer["tools"] or bool(answer.get("weak"))


def chunks(items: Sequence[str], n: int) -> Iterator[list[str]]:
    for i in range(0, len(items) - n + 1, n):
        yield list(items[i : i + n])


def _pct(hits: int, n: int) -> float:
    return round(100 * hits / n, 1) if n else 0.0


def measure(limit: int | None = None) -> dict[str, Any]:
    asked = {key: texts[:limit] for key, texts in requests().items()}
    everything = asked["memory"] + asked["no_match"] + asked["other"]
    live = memory_runtime(_data.livemcpbench())
    alone = memory_runtime()
    try:
        inside = [live.search_tools(q, source="memory") for q in asked["memory"]]
        served = [live.search_tools(q) for q in asked["memory"]]
        others = [live.search_tools(q) for q in asked["no_match"] + asked["other"]]
        across = served + others
        unserved = [alone.search_tools(q) for q in asked["no_match"]]
        empty = [a for a in across + inside + unserved if not a["tools"]]
        batches: list[dict[str, Any]] = []
        if "queries" in live.model_tools()[0]["input_schema"]["properties"]:
            batches = [live.call_model_tool("searchTools", {"queries": group}) for group in chunks(everything, 5)]
    finally:
        live.close()
        alone.close()
    figures: dict[str, Any] = {
        "requests": {key: len(value) for key, value in asked.items()},
        "inside_memory": {"median": statistics.median(map(size, inside)), "max": max(map(size, inside))},
        "cross_source": {"median": statistics.median(map(size, across)), "max": max(map(size, across))},
        "cross_source_other": {"median": statistics.median(map(size, others)), "max": max(map(size, others))},
        "no_match": {"answers": len(empty), "max": max(map(size, empty), default=0)},
        "weak_unserved_pct": _pct(sum(map(weak_or_empty, unserved)), len(unserved)),
        "weak_served_inside": sum(bool(a.get("weak")) for a in inside),
        "weak_served_across": sum(bool(a.get("weak")) for a in served),
    }
    if batches:
        figures["batch"] = {"answers": len(batches), "median": statistics.median(map(size, batches)),
                            "max": max(map(size, batches))}
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", metavar="PATH", help="write the figures as JSON ('-' for stdout)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N requests of each kind (smoke runs)")
    args = parser.parse_args(argv)
    figures = measure(args.limit)
    if args.json:
        _data.write_json(figures, args.json)
        return 0
    n = figures["requests"]
    print(f"requests: memory {n['memory']}, no_match {n['no_match']}, other {n['other']}")
    print("answer size (characters of JSON)      median      max")
    for label, key in (("inside memory (memory + LiveMCPBench)", "inside_memory"),
                       ("cross-source (memory + LiveMCPBench)", "cross_source"),
                       ("  of them, requests not for memory", "cross_source_other"), ("batch of 5 queries", "batch")):
        row = figures.get(key)
        if row is not None:
            print(f"  {label:<37} {row['median']:>7,.0f} {row['max']:>8,}")
    print(f"  no-match answers: {figures['no_match']['answers']}, largest {figures['no_match']['max']:,}")
    print(f"unserved requests answered with no tool or weak (memory alone): {figures['weak_unserved_pct']}%")
    print(f"served memory requests marked weak: inside memory {figures['weak_served_inside']}, "
          f"across sources {figures['weak_served_across']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
