"""Memory requests among hundreds of tools: is the intended memory tool found?

The 527-tool LiveMCPBench catalog (one source per MCP server) is installed beside junior-memory, and every
request of ``benchmarks/data/memory_requests.json`` goes through ``Runtime.search_tools``: unfiltered (is the
intended tool in the top 3? first?) and inside ``source="memory"`` (is it first?). The request set has a
tuning half (used to choose the memory tools' keywords and the intent weights) and a held-out half written
separately and only measured; the two seed sentences must rank first.

    python benchmarks/memory_intent.py              # the table
    python benchmarks/memory_intent.py --misses     # also every request whose tool was not first
    python benchmarks/memory_intent.py --json PATH  # the rows as JSON ('-' for stdout)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _data

from junior_core import Runtime

REQUESTS = Path(__file__).resolve().parent / "data" / "memory_requests.json"
NOWHERE = "sqlite:////dev/null/no-such-dir/memory.sqlite3"  # searching never opens the store


def request_sets(path: Path = REQUESTS) -> dict[str, dict[str, list[str]]]:
    """``{set name: {tool: [request, ...]}}`` for every set in the file (seeds, tuning, heldout)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: value for name, value in data.items() if not name.startswith("_")}


def memory_runtime(with_catalog: bool = True) -> Runtime:
    from junior_memory import MemoryPlugin

    plugins: list[Any] = [MemoryPlugin(url=NOWHERE)]
    if with_catalog:
        plugins.append(_data.DatasetPlugin([_data.livemcpbench()]))
    return Runtime(plugins=plugins, index_cache=False)


def evaluate(rt: Runtime, sets: dict[str, dict[str, list[str]]],
             on_miss: Callable[[str, str, str, list[str], list[str]], None] | None = None) -> list[dict[str, Any]]:
    rows = []
    for name, by_tool in sets.items():
        n = top1 = top3 = inside = 0
        for tool, requests in by_tool.items():
            wanted = f"memory__{tool}"
            for request in requests:
                found = [t["tool_name"] for t in rt.search_tools(request, max_results=3)["tools"]]
                mine = [t["tool_name"] for t in rt.search_tools(request, source="memory", max_results=4)["tools"]]
                n += 1
                top1 += bool(found) and found[0] == wanted
                top3 += wanted in found
                inside += bool(mine) and mine[0] == wanted
                if on_miss is not None and (not mine or mine[0] != wanted or wanted not in found):
                    on_miss(name, wanted, request, found, mine)
        rows.append({"set": name, "requests": n, "top1_all": 100 * top1 / n, "top3_all": 100 * top3 / n,
                     "top1_memory": 100 * inside / n})
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--misses", action="store_true", help="print each request whose tool was not first")
    parser.add_argument("--requests", type=Path, default=REQUESTS, help="another request file of the same shape")
    parser.add_argument("--json", nargs="?", const="-", default=None, metavar="PATH")
    args = parser.parse_args(argv)

    def miss(name: str, wanted: str, request: str, found: list[str], mine: list[str]) -> None:
        print(f"[{name}] want {wanted}: {request!r}\n    all: {found}\n    memory: {mine}")

    with memory_runtime() as rt:
        tools = rt.search_tools(None)["total_catalog_tools"]
        rows = evaluate(rt, request_sets(args.requests), miss if args.misses else None)
    print(f"{tools} tools in the catalog (LiveMCPBench + memory)")
    print("| set | requests | intended tool in the top 3 | first | first inside source memory |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['set']} | {r['requests']} | {r['top3_all']:.1f}% | {r['top1_all']:.1f}% | "
              f"{r['top1_memory']:.1f}% |")
    if args.json:
        _data.write_json(rows, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
