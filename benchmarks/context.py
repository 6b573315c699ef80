"""Context economy: what the model is given up front with searchTools, versus every tool's full definition.

Catalog: the 527 LiveMCPBench tools, one source per MCP server (70 sources), registered through the hook API.
Sizes are of compact JSON (``separators=(",", ":")``, non-ASCII kept as is). Tokens are estimated as
characters / 4, OpenAI's rule of thumb for English text; JSON punctuation and CJK text tokenise denser, so
read token figures as estimates, and the percentages (computed on characters) as the measurement.

    python benchmarks/context.py [--json [PATH]]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent))  # last: benchmarks/mcp.py must not shadow the mcp SDK

import _data


def size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def tokens(chars: float) -> int:
    return round(chars / 4)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=200, help="searchTools calls sampled for the answer size")
    parser.add_argument("--json", nargs="?", const="-", default=None, metavar="PATH")
    args = parser.parse_args(argv)

    meta, live = _data.metatool(), _data.livemcpbench()
    queries = random.Random(5).sample([q.text for q in _data.metatool_queries(meta)["single"]], args.queries)
    with _data.runtime(live) as rt:
        surface = rt.model_tools()
        full = [
            {"name": e.tool_name, "description": e.tool.description, "input_schema": e.tool.input_schema}
            for e in rt.catalog_tools()
        ]
        answers = [size(rt.search_tools(q, None, 5)) for q in queries]
        listings = [size(rt.search_tools(None, e.source.id, 5)) for e in rt._catalog.sources]
        rows = {
            "full catalog (527 tool definitions)": size(full),
            "model_tools() (searchTools + executeTool)": size(surface),
            "searchTools description alone": len(surface[0]["description"]),
            "searchTools answer, 5 results (median)": statistics.median(answers),
            "searchTools answer, 5 results (p95)": sorted(answers)[int(0.95 * (len(answers) - 1))],
            "searchTools listing one source (no query), 5 results (median)": statistics.median(listings),
        }
        sources = len(rt._catalog.sources)
    full_chars = rows["full catalog (527 tool definitions)"]
    surface_chars = rows["model_tools() (searchTools + executeTool)"]
    answer_chars = rows["searchTools answer, 5 results (median)"]
    saving = 100 * (1 - surface_chars / full_chars)
    with_answer = 100 * (1 - (surface_chars + answer_chars) / full_chars)

    print(f"Catalog: {len(full)} tools in {sources} sources.")
    print("| what the model gets | characters | tokens (≈ chars/4) | vs full catalog |")
    print("|---|---|---|---|")
    for label, chars in rows.items():
        print(f"| {label} | {chars:,.0f} | {tokens(chars):,} | {100 * chars / full_chars:.1f}% |")
    print(f"model_tools() is {saving:.1f}% smaller than the full catalog (target >= 95%); "
          f"with one 5-result answer on top, {with_answer:.1f}% smaller.")
    if args.json:
        _data.write_json(
            {"rows": rows, "saving_percent": saving, "saving_with_answer_percent": with_answer}, args.json
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
