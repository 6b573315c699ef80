"""Retrieval quality of searchTools on public labelled data, next to plain Okapi BM25 computed in the same run.

Every query goes through ``Runtime.search_tools`` (max_results 10) on a runtime whose sources were registered
through the real hook API. The baseline is Okapi BM25 (k1 1.2, b 0.75, idf ln(1 + (N - n + .5) / (n + .5)))
over the same documents: tool name + description + parameter names and descriptions, lowercased, identifiers
split, a small stop list, no stemming.

Catalogs:
  metatool           the 199 MetaTool tools alone (source ``metatool``)
  mixed              MetaTool + the 527 LiveMCPBench tools (71 sources), searched without ``source``
  mixed+source       the same catalog, searched with ``source="metatool"`` (the right source for each query)

Each query set is split with a fixed seed into a tuning half and a reporting half; the docs quote the
reporting half.

    python benchmarks/retrieval.py                   # everything (about a minute or two on 2 cores)
    python benchmarks/retrieval.py --limit 2000      # the first 2000 queries of each set (quick)
    python benchmarks/retrieval.py --json out.json   # also write the table as JSON ('-' for stdout)
    python benchmarks/retrieval.py --ablate --limit 2000 --json benchmarks/data/ablation_retrieval.json
                                                     # what each rule and setting pays (``_ablation``)
    python benchmarks/retrieval.py --index-module old_search.py --limit 2000   # another search.py, same queries
"""

from __future__ import annotations

import argparse
import functools
import heapq
import math
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent))  # last: benchmarks/mcp.py must not shadow the mcp SDK

import _data

from junior_core import Runtime

K1, B = 1.2, 0.75
BASELINE_STOP = frozenset(
    "a an and are as at be by can do for from how i in is it me my of on or please the this to what with you your"
    .split()
)
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")


def baseline_tokens(text: str) -> list[str]:
    """Lowercase words with camelCase / snake_case / kebab-case split, minus a small stop list; no stemming."""
    return [w for w in (m.lower() for m in _WORD.findall(text)) if w not in BASELINE_STOP]


def param_text(schema: Mapping[str, Any]) -> str:
    """Parameter names and descriptions of a JSON Schema (top level and nested properties)."""
    parts: list[str] = []

    def walk(node: Any, depth: int) -> None:
        if depth > 4 or not isinstance(node, Mapping):
            return
        props = node.get("properties")
        if isinstance(props, Mapping):
            for key, sub in props.items():
                parts.append(str(key))
                if isinstance(sub, Mapping):
                    if isinstance(sub.get("description"), str):
                        parts.append(sub["description"])
                    walk(sub, depth + 1)
                    walk(sub.get("items"), depth + 1)

    walk(schema, 0)
    return " ".join(parts)


class OkapiBM25:
    """Plain Okapi BM25 over a fixed list of documents; ties broken by document order (tool_name)."""

    def __init__(self, documents: Sequence[str]) -> None:
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        lengths = []
        for i, doc in enumerate(documents):
            counts = Counter(baseline_tokens(doc))
            lengths.append(sum(counts.values()))
            for term, tf in counts.items():
                self.postings[term].append((i, tf))
        n = len(documents)
        avg = sum(lengths) / max(n, 1)
        self.norm = [K1 * (1 - B + B * length / avg) for length in lengths]
        self.idf = {t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in self.postings.items()}

    def top(self, query: str, k: int) -> list[int]:
        scores: dict[int, float] = defaultdict(float)
        for term in set(baseline_tokens(query)):
            idf = self.idf.get(term)
            if idf is None:
                continue
            for doc, tf in self.postings[term]:
                scores[doc] += idf * tf * (K1 + 1) / (tf + self.norm[doc])
        return [doc for doc, _ in heapq.nsmallest(k, scores.items(), key=lambda item: (-item[1], item[0]))]


@dataclass
class Scores:
    n: int = 0
    r1: float = 0.0
    r5: float = 0.0
    r10: float = 0.0
    ndcg: float = 0.0
    complete: float = 0.0

    def add(self, ranked: Sequence[str], relevant: Sequence[str]) -> None:
        rel = set(relevant)
        self.n += 1
        self.r1 += len(rel & set(ranked[:1])) / len(rel)
        self.r5 += len(rel & set(ranked[:5])) / len(rel)
        self.r10 += len(rel & set(ranked[:10])) / len(rel)
        dcg = sum(1 / math.log2(i + 2) for i, name in enumerate(ranked[:10]) if name in rel)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(rel), 10)))
        self.ndcg += dcg / ideal
        self.complete += rel <= set(ranked[:10])

    def row(self) -> dict[str, float]:
        n = max(self.n, 1)
        return {
            "queries": self.n,
            "R@1": round(100 * self.r1 / n, 1),
            "R@5": round(100 * self.r5 / n, 1),
            "R@10": round(100 * self.r10 / n, 1),
            "nDCG@10": round(100 * self.ndcg / n, 1),
            "Complete@10": round(100 * self.complete / n, 1),
        }


def searcher(rt: Runtime, source: str | None) -> Callable[[str], list[str]]:
    """Top-10 tool_names exactly as searchTools returns them."""

    def run(query: str) -> list[str]:
        answer = rt.search_tools(query, source, 10)
        return [tool["tool_name"] for tool in answer.get("tools", [])]

    return run


def evaluate(
    rt: Runtime,
    source: str | None,
    catalog_sources: set[str] | None,
    queries: dict[str, list[_data.Query]],
    limit: int | None,
    baseline: bool = True,
    halves: Sequence[str] = ("tuning", "reporting"),
) -> list[dict[str, Any]]:
    """Rows for every (set, half, system) on one runtime configuration."""
    docs = _data.docs(rt, {source} if source else catalog_sources)
    bm25 = OkapiBM25([f"{d.name} {d.description} {param_text(d.input_schema)}" for d in docs] if baseline else [])
    names = [d.tool_name for d in docs]
    ours = searcher(rt, source)
    prefix = _data.METATOOL_SOURCE + "__"
    rows = []
    for set_name, all_queries in queries.items():
        for half_name, half in zip(("tuning", "reporting"), _data.split_halves(all_queries), strict=True):
            if half_name not in halves:
                continue
            subset = half[:limit] if limit else half
            mine, base = Scores(), Scores()
            elapsed = 0.0
            for q in subset:
                relevant = [prefix + name for name in q.relevant]
                start = time.perf_counter()
                ranked = ours(q.text)
                elapsed += time.perf_counter() - start
                mine.add(ranked, relevant)
                if baseline:
                    base.add([names[i] for i in bm25.top(q.text, 10)], relevant)
            ms = 1000 * elapsed / max(len(subset), 1)
            rows.append(
                {"set": set_name, "half": half_name, "system": "searchTools", **mine.row(), "ms/query": round(ms, 2)}
            )
            if baseline:
                rows.append({"set": set_name, "half": half_name, "system": "BM25", **base.row()})
    return rows


CONFIGS = ("metatool", "mixed", "mixed+source")
_metatool = functools.cache(_data.metatool)
_livemcpbench = functools.cache(_data.livemcpbench)
_QUERIES: dict[int, dict[str, list[_data.Query]]] = {}


def _queries(meta: _data.Dataset) -> dict[str, list[_data.Query]]:
    """MetaTool's queries, read once per process (the ablation runs every variant on them)."""
    if id(meta) not in _QUERIES:
        _QUERIES[id(meta)] = _data.metatool_queries(meta)
    return _QUERIES[id(meta)]


def run_all(limit: int | None, configs: Sequence[str] = CONFIGS, index_factory: Callable[[], Any] | None = None,
            baseline: bool = True, halves: Sequence[str] = ("tuning", "reporting")) -> list[dict[str, Any]]:
    meta, live = _metatool(), _livemcpbench()
    queries = _queries(meta)
    queries = {"MetaTool single-tool": queries["single"], "MetaTool two-tool": queries["multi"]}
    rows: list[dict[str, Any]] = []
    for config in configs:
        datasets = (meta,) if config == "metatool" else (meta, live)
        with _data.runtime(*datasets, index_factory=index_factory) as rt:
            source = _data.METATOOL_SOURCE if config == "mixed+source" else None
            for row in evaluate(rt, source, None, queries, limit, baseline, halves):
                rows.append({"catalog": config, "tools": len(rt._catalog), **row})
    return rows


METRICS = ("R@1", "R@5", "R@10", "nDCG@10", "Complete@10")


def print_table(rows: list[dict[str, Any]], half: str | None = None) -> None:
    header = ["catalog", "set", "half", "queries", "system", *METRICS, "Δ R@5"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    base = {(r["catalog"], r["set"], r["half"]): r for r in rows if r["system"] == "BM25"}
    for r in rows:
        if half and r["half"] != half:
            continue
        delta = ""
        if r["system"] != "BM25":
            delta = f"{r['R@5'] - base[(r['catalog'], r['set'], r['half'])]['R@5']:+.1f}"
        cells = [r["catalog"], r["set"], r["half"], str(r["queries"]), r["system"]]
        cells += [*(f"{r[m]:.1f}" for m in METRICS), delta]
        print("| " + " | ".join(cells) + " |")


def ablate(limit: int | None, labels: list[str] | None = None, half: str = "reporting",
           catalogs: Sequence[str] = ("metatool", "mixed"), json_path: str | None = None) -> list[dict[str, Any]]:
    """searchTools with each rule switch off and each setting at its neutral value in turn (``_ablation``), on the
    metatool and mixed catalogs, one half (the reporting half: the tuning half is for tuning)."""
    import _ablation

    out = []
    for label, off, changes in _ablation.select(labels):
        start = time.perf_counter()
        with _ablation.applied(off, changes) as factory:
            rows = run_all(limit, catalogs, factory, baseline=False, halves=(half,))
        out += [{"variant": label, **r} for r in rows if r["system"] == "searchTools"]
        if json_path:  # after each variant, so a long run that is stopped keeps what it measured
            _data.write_json(out, json_path)
        print(f"  {label}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return out


def print_ablation(rows: list[dict[str, Any]], half: str) -> None:
    """R@5 (R@1) per variant and catalog, with its difference from everything on."""
    keys = [(c, s) for c in dict.fromkeys(r["catalog"] for r in rows)
            for s in ("MetaTool single-tool", "MetaTool two-tool")]
    by = {(r["variant"], r["catalog"], r["set"]): r for r in rows if r["half"] == half}
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    print(f"{half} half, R@5 (difference from all on):")
    print("| variant | " + " | ".join(f"{c} {s.split()[1]}" for c, s in keys) + " |")
    print("|---|" + "---|" * len(keys))
    for variant in variants:
        cells = []
        for c, s in keys:
            r, base = by.get((variant, c, s)), by.get(("all on", c, s))
            cells.append("–" if r is None or base is None else f"{r['R@5']:.1f} ({r['R@5'] - base['R@5']:+.1f})")
        print(f"| {variant} | " + " | ".join(cells) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="at most this many queries per set and half")
    parser.add_argument("--json", nargs="?", const="-", default=None, metavar="PATH",
                        help="write the rows as JSON to PATH (or stdout with no PATH or '-')")
    parser.add_argument("--ablate", nargs="*", default=None, metavar="LABEL",
                        help="switch each rule off and each setting to neutral in turn (or only those whose label "
                             "contains a LABEL)")
    parser.add_argument("--catalogs", nargs="+", default=["metatool", "mixed"], choices=CONFIGS,
                        help="catalogs --ablate measures")
    parser.add_argument("--index-module", help="path of another search.py whose SearchIndex to measure")
    parser.add_argument("--half", default="reporting", choices=("tuning", "reporting"),
                        help="half shown by --ablate (both are in --json)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.ablate is not None:
        rows = ablate(args.limit, args.ablate, args.half, args.catalogs, args.json)
        print_ablation(rows, args.half)
    else:
        factory = None
        if args.index_module:
            import importlib.util

            spec = importlib.util.spec_from_file_location("junior_search_under_test", args.index_module)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module  # Whoosh pickles the schema, so the module must be importable
            spec.loader.exec_module(module)
            factory = module.SearchIndex
        rows = run_all(args.limit, index_factory=factory)
        if args.json != "-":
            print_table(rows)
    if args.json:
        _data.write_json(rows, args.json)
    print(f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
