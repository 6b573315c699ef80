"""Memory requests among hundreds of tools, and requests memory must not answer: is the right tool, or none, found?

Three catalogs, each registered through the real hook: junior-memory alone, junior-memory beside the 527
LiveMCPBench tools (one source per MCP server), and junior-memory beside MetaTool's 199 tools. Every request goes
through ``Runtime.search_tools``.

``benchmarks/data/discovery_requests.json`` (written without seeing the ranking) has a ``tuning`` and a
``heldout`` half, each with:
  memory         requests for each memory tool, labelled by wording (short, terse, multi_clause, question,
                 chatty, indirect, typo): intended tool in the top 5 (and top 3, first) with LiveMCPBench,
                 first inside ``source="memory"``, first with memory alone;
  no_match       requests no installed tool serves with memory alone: share answered with no tool or flagged
                 weak (memory alone), share whose first tool is a memory tool unflagged (with LiveMCPBench);
  shared_verbs   requests for a LiveMCPBench or MetaTool tool worded with memory's verbs, searched in their
                 catalog + memory: share where the named tool ranks above every memory tool, and share whose first
                 tool is a memory tool unflagged.
MetaTool intrusion: share of MetaTool's single-tool requests (its tuning half for ``tuning``, its reporting half
for ``heldout``, the first ``--metatool N`` of each) with a memory tool in the top 3, MetaTool + memory installed.
``benchmarks/data/discovery_requests_second.json`` is a second set by another writer (memory and no_match only),
measured once before it was read and a tuning set since, reported as ``second``.
``benchmarks/data/discovery_requests_third.json`` is a third (the same shape), written blind after five rounds of
changes and held out like ``heldout``: only its totals are printed, reported as ``third``.
The seed sentences must rank their tool first in all three catalogs. ``benchmarks/data/memory_requests.json``
(older sets, all of them seen while tuning) is reported too.

    python benchmarks/memory_intent.py              # the tables
    python benchmarks/memory_intent.py --misses     # also the misses of the tuning half and the older sets
    python benchmarks/memory_intent.py --json PATH  # the figures as JSON ('-' for stdout)
    python benchmarks/memory_intent.py --ablate --metatool 500 --json benchmarks/data/ablation_memory.json
                                                    # what each rule and setting pays (``_ablation``)

Held-out misses are never printed: only their aggregate figures are.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent))  # last: benchmarks/mcp.py must not shadow the mcp SDK

import _data

from junior_core import Runtime

DATA = Path(__file__).resolve().parent / "data"
REQUESTS = DATA / "memory_requests.json"
DISCOVERY = DATA / "discovery_requests.json"
SECOND = DATA / "discovery_requests_second.json"
THIRD = DATA / "discovery_requests_third.json"
NOWHERE = "sqlite:////dev/null/no-such-dir/memory.sqlite3"  # searching never opens the store
MEMORY_TOOLS = ("remember", "forget", "list", "search")
HALVES = ("tuning", "heldout")
SEEDS = {
    "memory__remember": "Please remember that I prefer terse PR summaries.",
    "memory__forget": "Please forget that I prefer terse PR summaries.",
}
SEEN = frozenset({"tuning", "second"})
"""Halves whose individual misses may be printed; a held-out half only ever reports aggregates."""

Miss = Callable[[str, str, str, list[str]], None]


def request_sets(path: Path = REQUESTS) -> dict[str, dict[str, list[str]]]:
    """``{set name: {tool: [request, ...]}}`` for every set in the older file (seeds, tuning, tuning2, heldout)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: value for name, value in data.items() if not name.startswith("_")}


def discovery_requests(path: Path = DISCOVERY) -> dict[str, Any]:
    """``{half: {"memory": {tool: [{text, wording}]}, "no_match": [...], "shared_verbs": [...]}}``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: value for name, value in data.items() if not name.startswith("_")}


def memory_runtime(with_catalog: bool = True, *datasets: _data.Dataset,
                   index_factory: Callable[[], Any] | None = None) -> Runtime:
    """junior-memory, beside LiveMCPBench (``with_catalog``) or the given datasets."""
    from junior_memory import MemoryPlugin

    plugins: list[Any] = [MemoryPlugin(url=NOWHERE)]
    chosen = list(datasets) or ([_data.livemcpbench()] if with_catalog else [])
    if chosen:
        plugins.append(_data.DatasetPlugin(chosen))
    return Runtime(plugins=plugins, index_cache=False, index_factory=index_factory)


def _names(rt: Runtime, query: str, source: str | None = None, limit: int = 5) -> list[str]:
    return [t["tool_name"] for t in rt.search_tools(query, source=source, max_results=limit)["tools"]]


def _unflagged(rt: Runtime, query: str, limit: int = 5) -> list[str]:
    """The tools an answer shows without flagging them: none when it is ``weak`` (a partial match it says is one)."""
    answer = rt.search_tools(query, max_results=limit)
    return [] if answer.get("weak") else [t["tool_name"] for t in answer["tools"]]


def _is_memory(name: str) -> bool:
    return name.startswith("memory__")


def _other_memory(name: str) -> bool:
    """A tool of one of LiveMCPBench's own memory servers (``mcp:basic-memory``, ``mcp:memory``)."""
    return name.startswith(("mcp__basic-memory__", "mcp__memory__"))


def evaluate(rt: Runtime, sets: dict[str, dict[str, list[str]]],
             on_miss: Callable[[str, str, str, list[str], list[str]], None] | None = None) -> list[dict[str, Any]]:
    """The older sets: top 3, first, first inside ``source="memory"`` (LiveMCPBench + memory)."""
    rows = []
    for name, by_tool in sets.items():
        n = top1 = top3 = inside = 0
        for tool, requests in by_tool.items():
            wanted = f"memory__{tool}"
            for request in requests:
                found = _names(rt, request, limit=3)
                mine = _names(rt, request, "memory", 4)
                n += 1
                top1 += bool(found) and found[0] == wanted
                top3 += wanted in found
                inside += bool(mine) and mine[0] == wanted
                if on_miss is not None and (not mine or mine[0] != wanted or wanted not in found):
                    on_miss(name, wanted, request, found, mine)
        rows.append({"set": name, "requests": n, "top1_all": 100 * top1 / n, "top3_all": 100 * top3 / n,
                     "top1_memory": 100 * inside / n})
    return rows


def _pct(hits: int, n: int) -> float:
    return round(100 * hits / n, 1) if n else 0.0


_livemcpbench = functools.cache(_data.livemcpbench)
_metatool = functools.cache(_data.metatool)
_QUERIES: dict[int, dict[str, list[_data.Query]]] = {}


def _metatool_queries(meta: _data.Dataset) -> dict[str, list[_data.Query]]:
    if id(meta) not in _QUERIES:
        _QUERIES[id(meta)] = _data.metatool_queries(meta)
    return _QUERIES[id(meta)]


class Catalogs:
    """The three catalogs, built once: memory alone, with LiveMCPBench, with MetaTool."""

    def __init__(self, index_factory: Callable[[], Any] | None = None) -> None:
        self.live_data = _livemcpbench()
        self.meta_data = _metatool()
        self.alone = memory_runtime(False, index_factory=index_factory)
        self.live = memory_runtime(True, self.live_data, index_factory=index_factory)
        self.meta = memory_runtime(True, self.meta_data, index_factory=index_factory)

    def close(self) -> None:
        for rt in (self.alone, self.live, self.meta):
            rt.close()

    def shared_target(self, item: dict[str, Any]) -> tuple[Runtime, str]:
        """The runtime holding a shared-verb request's tool, and that tool's tool_name."""
        if item["catalog"] == "metatool":
            return self.meta, f"{_data.METATOOL_SOURCE}__{self.meta_data.tool_names[item['tool']]}"
        return self.live, self.live_data.by_server[(item["server"], item["tool"])]


def memory_rows(cat: Catalogs, half: str, requests: dict[str, list[dict[str, str]]],
                on_miss: Miss | bool | None) -> list[dict[str, Any]]:
    """Per wording and in all: top 5 / top 3 / first with LiveMCPBench, first inside memory, first alone."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for tool in MEMORY_TOOLS:
        wanted = f"memory__{tool}"
        for item in requests[tool]:
            text = item["text"]
            found = _names(cat.live, text, limit=5)
            inside = _names(cat.live, text, "memory", 4)
            alone = _names(cat.alone, text, limit=4)
            marks = {"requests": 1, "top5": wanted in found, "top3": wanted in found[:3],
                     "first": found[:1] == [wanted], "inside": inside[:1] == [wanted], "alone": alone[:1] == [wanted]}
            if wanted not in found and on_miss is not False:
                # Where a top-5 miss went: past the floor but outranked, or further; and whether one of the other
                # memory servers LiveMCPBench installs answered instead (a memory tool, not junior-memory's).
                deeper = _names(cat.live, text, limit=20)
                marks["ranked_6_20"] = wanted in deeper
                marks["other_memory"] = any(_other_memory(name) for name in found)
            for key in ("all", item["wording"]):
                for mark, hit in marks.items():
                    counts[key][mark] += int(hit)
            if callable(on_miss) and not (marks["top5"] and marks["inside"] and marks["alone"]):
                on_miss(half, f"memory {item['wording']}: want {wanted}", text,
                        [f"all: {found}", f"memory: {inside}", f"alone: {alone}"])
    rows = []
    for key, c in counts.items():
        n = c["requests"]
        rows.append({"half": half, "wording": key, "requests": n, "top5": _pct(c["top5"], n),
                     "top3": _pct(c["top3"], n), "first": _pct(c["first"], n), "first_inside_memory":
                     _pct(c["inside"], n), "first_memory_alone": _pct(c["alone"], n),
                     "top5_misses": n - c["top5"], "top5_misses_ranked_6_20": c.get("ranked_6_20", 0),
                     "top5_misses_other_memory_server": c.get("other_memory", 0)})
    rows.sort(key=lambda r: (r["wording"] != "all", r["wording"]))
    return rows


def control_row(cat: Catalogs, half: str, data: dict[str, Any], on_miss: Miss | None) -> dict[str, Any]:
    """Requests memory must not answer: no-match with memory alone, memory first elsewhere, named tool first."""
    no_match = data["no_match"]
    silent = memory_first = 0
    for item in no_match:
        alone = _unflagged(cat.alone, item["text"])
        found = _unflagged(cat.live, item["text"])
        silent += not alone
        memory_first += bool(found) and _is_memory(found[0])
        if on_miss is not None and (alone or (found and _is_memory(found[0]))):
            on_miss(half, f"no_match {item['topic']}", item["text"], [f"alone: {alone}", f"all: {found[:3]}"])
    shared = data["shared_verbs"]
    beats = named_first = shared_memory_first = shared_silent = 0
    for item in shared:
        rt, wanted = cat.shared_target(item)
        found = _names(rt, item["text"], limit=10)
        alone = _unflagged(cat.alone, item["text"])
        memory_at = next((i for i, name in enumerate(found) if _is_memory(name)), len(found) + 1)
        ok = wanted in found and found.index(wanted) < memory_at
        beats += ok
        named_first += found[:1] == [wanted]
        unflagged = _unflagged(rt, item["text"], limit=10)
        shared_memory_first += bool(unflagged) and _is_memory(unflagged[0])
        shared_silent += not alone
        if on_miss is not None and not ok:
            on_miss(half, f"shared_verbs {item['catalog']}: want {wanted}", item["text"], [f"found: {found[:5]}"])
    non_memory = len(no_match) + len(shared)
    return {
        "half": half,
        "no_match_requests": len(no_match),
        "no_match_alone": _pct(silent, len(no_match)),
        "no_match_memory_first": _pct(memory_first, len(no_match)),
        "shared_requests": len(shared),
        "shared_named_beats_memory": _pct(beats, len(shared)),
        "shared_named_first": _pct(named_first, len(shared)),
        "shared_no_match_alone": _pct(shared_silent, len(shared)),
        "non_memory_requests": non_memory,
        "non_memory_memory_first": _pct(memory_first + shared_memory_first, non_memory),
    }


def metatool_intrusion(cat: Catalogs, limit: int, skip: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """Per half: MetaTool single-tool requests with a memory tool in the top 3, and R@1/R@5 beside memory."""
    queries = _metatool_queries(cat.meta_data)["single"]
    out = {}
    for half, subset in zip(HALVES, _data.split_halves(queries), strict=True):
        if half in skip:
            continue
        chosen = subset[:limit]
        intruded = r1 = r5 = 0
        for q in chosen:
            found = _names(cat.meta, q.text, limit=5)
            relevant = {f"{_data.METATOOL_SOURCE}__{name}" for name in q.relevant}
            intruded += any(_is_memory(name) for name in found[:3])
            r1 += bool(relevant & set(found[:1]))
            r5 += bool(relevant & set(found))
        out[half] = {"requests": len(chosen), "memory_in_top3": _pct(intruded, len(chosen)),
                     "R@1": _pct(r1, len(chosen)), "R@5": _pct(r5, len(chosen))}
    return out


def seed_rows(cat: Catalogs) -> list[dict[str, Any]]:
    rows = []
    for wanted, sentence in SEEDS.items():
        row: dict[str, Any] = {"tool": wanted}
        for label, rt in (("alone", cat.alone), ("livemcpbench", cat.live), ("metatool", cat.meta)):
            row[label] = _names(rt, sentence, limit=1) == [wanted]
            row[f"{label}_inside"] = _names(rt, sentence, "memory", 1) == [wanted]
        rows.append(row)
    return rows


def run(metatool: int = 2000, misses: bool = False, discovery: Path = DISCOVERY,
        older: Path | None = REQUESTS, more: Sequence[Path] = (SECOND, THIRD),
        index_factory: Callable[[], Any] | None = None, skip: Sequence[str] = ()) -> dict[str, Any]:
    """Every figure, as one JSON-able dict."""

    def miss(half: str, what: str, text: str, lines: list[str]) -> None:
        print(f"[{half}] {what}: {text!r}\n    " + "\n    ".join(lines))

    cat = Catalogs(index_factory)
    try:
        result: dict[str, Any] = {"catalog_tools": {
            "alone": cat.alone.search_tools(None)["total_catalog_tools"],
            "livemcpbench": cat.live.search_tools(None)["total_catalog_tools"],
            "metatool": cat.meta.search_tools(None)["total_catalog_tools"]}}
        result["seeds"] = seed_rows(cat)
        halves = discovery_requests(discovery)
        for path in more:
            halves.update(discovery_requests(path))
        result["memory"], result["controls"] = [], []
        for half in (*HALVES, *(name for name in halves if name not in HALVES)):
            if half in skip:
                continue
            on_miss = miss if misses and half in SEEN else None
            # The ablation (``skip``) leaves out where the misses went: it compares totals only.
            result["memory"] += memory_rows(cat, half, halves[half]["memory"], False if skip else on_miss)
            result["controls"].append(control_row(cat, half, halves[half], on_miss))
        result["metatool"] = metatool_intrusion(cat, metatool, skip)
        if older is not None:

            def old_miss(name: str, wanted: str, request: str, found: list[str], mine: list[str]) -> None:
                print(f"[older {name}] want {wanted}: {request!r}\n    all: {found}\n    memory: {mine}")

            result["older"] = evaluate(cat.live, request_sets(older), old_miss if misses else None)
    finally:
        cat.close()
    return result


def print_tables(result: dict[str, Any]) -> None:
    tools = result["catalog_tools"]
    print(f"catalogs: memory alone {tools['alone']} tools, with LiveMCPBench {tools['livemcpbench']}, "
          f"with MetaTool {tools['metatool']}")
    print("\nseed sentences first (alone / LiveMCPBench / MetaTool; inside memory):")
    for r in result["seeds"]:
        print(f"  {r['tool']}: {r['alone']} / {r['livemcpbench']} / {r['metatool']}; "
              f"{r['alone_inside']} / {r['livemcpbench_inside']} / {r['metatool_inside']}")
    print("\n| half | wording | requests | top 5 | top 3 | first | first inside memory | first, memory alone |")
    print("|---|---|---|---|---|---|---|---|")
    for r in result["memory"]:
        print(f"| {r['half']} | {r['wording']} | {r['requests']} | {r['top5']}% | {r['top3']}% | {r['first']}% | "
              f"{r['first_inside_memory']}% | {r['first_memory_alone']}% |")
    print("\nwhere the top-5 misses went (all wordings): past the floor but ranked 6-20, and how many had a tool of "
          "LiveMCPBench's own memory servers (basic-memory, memory) in the top 5 instead:")
    print("| half | top-5 misses | ranked 6-20 | not in the first 20 | another memory server's tool in the top 5 |")
    print("|---|---|---|---|---|")
    for r in result["memory"]:
        if r["wording"] == "all":
            print(f"| {r['half']} | {r['top5_misses']} | {r['top5_misses_ranked_6_20']} | "
                  f"{r['top5_misses'] - r['top5_misses_ranked_6_20']} | {r['top5_misses_other_memory_server']} |")
    print("\n| half | no-match answered no-match, memory alone | non-memory requests with a memory tool first | "
          "shared verbs: named tool above memory | named tool first | MetaTool requests with memory in the top 3 "
          "| MetaTool R@1 / R@5 beside memory |")
    print("|---|---|---|---|---|---|---|")
    for r in result["controls"]:
        m = result["metatool"].get(r["half"])
        shared = (f"{r['shared_named_beats_memory']}% of {r['shared_requests']} | {r['shared_named_first']}%"
                  if r["shared_requests"] else "– | –")
        meta = f"{m['memory_in_top3']}% of {m['requests']} | {m['R@1']} / {m['R@5']}" if m else "– | –"
        print(f"| {r['half']} | {r['no_match_alone']}% of {r['no_match_requests']} | {r['non_memory_memory_first']}% "
              f"of {r['non_memory_requests']} | {shared} | {meta} |")
    if "older" in result:
        print("\nolder sets (all seen while tuning), with LiveMCPBench:")
        print("| set | requests | top 3 | first | first inside memory |")
        print("|---|---|---|---|---|")
        for r in result["older"]:
            print(f"| {r['set']} | {r['requests']} | {r['top3_all']:.1f}% | {r['top1_all']:.1f}% | "
                  f"{r['top1_memory']:.1f}% |")


ABLATED = ("top5", "first_inside_memory", "first_memory_alone")
"""The memory figures ``--ablate`` compares (all wordings), beside the controls' no-match and memory-first."""


def ablate(metatool: int, labels: list[str] | None = None, json_path: str | None = None) -> list[dict[str, Any]]:
    """Every figure with each rule switch off and each setting at its neutral value in turn (``_ablation``)."""
    import time

    import _ablation

    out = []
    for label, off, changes in _ablation.select(labels):
        start = time.perf_counter()
        with _ablation.applied(off, changes) as factory:
            result = run(metatool, older=None, index_factory=factory, skip=("tuning",))
        row: dict[str, Any] = {"variant": label,
                               "seeds_first": all(v for r in result["seeds"] for k, v in r.items() if k != "tool")}
        for r in result["memory"]:
            if r["wording"] == "all":
                for key in ABLATED:
                    row[f"{r['half']} {key}"] = r[key]
                row[f"{r['half']} requests"] = r["requests"]
        for r in result["controls"]:
            row[f"{r['half']} no_match_alone"] = r["no_match_alone"]
            row[f"{r['half']} non_memory_memory_first"] = r["non_memory_memory_first"]
        for half, m in result["metatool"].items():
            row[f"{half} metatool_memory_in_top3"] = m["memory_in_top3"]
        out.append(row)
        if json_path:  # after each variant, so a long run that is stopped keeps what it measured
            _data.write_json(out, json_path)
        print(f"  {label}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return out


def print_ablation(rows: list[dict[str, Any]]) -> None:
    """Per variant, the difference from everything on in each figure of the sets nobody tuned on."""
    base = rows[0]
    halves = ("heldout", "second", "third")
    keys = [f"{h} {k}" for h in halves for k in ABLATED] + [
        "heldout no_match_alone", "heldout non_memory_memory_first", "heldout metatool_memory_in_top3"]
    print("| variant | seeds | " + " | ".join(keys) + " |")
    print("|---|---|" + "---|" * len(keys))
    for r in rows:
        cells = [f"{r[k]}" if r is base else f"{r[k] - base[k]:+.1f}" for k in keys]
        print(f"| {r['variant']} | {'ok' if r['seeds_first'] else 'MISSED'} | " + " | ".join(cells) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--misses", action="store_true",
                        help="print each miss of the tuning half and of the older sets (never the held-out half)")
    parser.add_argument("--requests", type=Path, default=DISCOVERY, help="another discovery request file")
    parser.add_argument("--metatool", type=int, default=2000, metavar="N",
                        help="MetaTool requests per half for the intrusion figure (default 2000)")
    parser.add_argument("--json", nargs="?", const="-", default=None, metavar="PATH")
    parser.add_argument("--ablate", nargs="*", default=None, metavar="LABEL",
                        help="switch each rule off and each setting to neutral in turn (or only those whose label "
                             "contains a LABEL)")
    args = parser.parse_args(argv)
    if args.ablate is not None:
        rows = ablate(args.metatool, args.ablate, args.json)
        print_ablation(rows)
        if args.json:
            _data.write_json(rows, args.json)
        return 0
    result = run(args.metatool, args.misses, args.requests)
    print_tables(result)
    if args.json:
        _data.write_json(result, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
