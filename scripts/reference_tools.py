"""Write ``junior_core/data/reference_tools.txt``: the words of 726 public tools, the reference for word rarity.

Each line is one tool: the distinct words of its name and description, lower-cased, in first-seen order. The
tools are LiveMCPBench's 527 MCP tools (Apache-2.0) and MetaTool's 199 OpenAI plugins (MIT); see
``junior_core/data/README.md``. Run from the repository root with the data beside it (``../shared/data``, or
``$JUNIOR_DATA_DIR``):

    python scripts/reference_tools.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import _data  # noqa: E402

_TOKEN = re.compile(r"[^\W_]+(?:[_-][^\W_]+)*")
OUT = ROOT / "junior_core" / "data" / "reference_tools.txt"


def words(text: str) -> str:
    return " ".join(dict.fromkeys(token.lower() for token in _TOKEN.findall(text)))


def main() -> int:
    lines = []
    for dataset in (_data.livemcpbench(), _data.metatool()):
        for source in dataset.sources:
            for tool in source.tools:
                lines.append(words(f"{tool.name} {tool.description}"))
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(lines)} tools, {OUT.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
