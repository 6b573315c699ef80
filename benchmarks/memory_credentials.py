"""What memory refuses as a credential: recall on the credential corpus, look-alikes kept, and the check's cost.

The corpus is ``plugins/memory/tests/data/credentials.json``: a tuning half written with the rules and a
held-out half written after them. Prose that must never be refused is every tool description and query of
the public MetaTool and LiveMCPBench data (``../shared/data``, when present) and the paragraphs of ``docs/``.
Cost is per ``credential_kind`` call, and for 400- and 4,000-character adversarial texts, whose ratio shows the
check is linear (10x the text, about 10x the time). When Yelp's ``detect-secrets`` is importable, the same
figures are printed for it (default plugins and filters, content scanned as a .txt file) for comparison.

    python benchmarks/memory_credentials.py [--repeat 200] [--json PATH]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from junior_memory.credentials import credential_kind

sys.path.append(str(Path(__file__).resolve().parent))  # last: benchmarks/mcp.py must not shadow the mcp SDK

import _data

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "plugins" / "memory" / "tests" / "data" / "credentials.json"

Check = Callable[[str], bool]


def prose() -> list[str]:
    """Texts that hold no credential: public tool descriptions and queries, and the docs' paragraphs."""
    texts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str) and len(value) > 20:
            texts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    root = Path(os.environ.get("JUNIOR_DATA_DIR") or REPO.parent / "shared" / "data")
    if (root / "metatool").is_dir():
        with (root / "metatool" / "all_clean_data.csv").open(encoding="utf-8") as handle:
            texts += [next(iter(row.values())) for row in csv.DictReader(handle)]
        walk(json.loads((root / "metatool" / "plugin_des.json").read_text(encoding="utf-8")))
    if (root / "livemcpbench").is_dir():
        walk(json.loads((root / "livemcpbench" / "tools.json").read_text(encoding="utf-8")))
    for page in sorted((REPO / "docs").glob("*.md")):
        texts += [p for p in page.read_text(encoding="utf-8").split("\n\n") if len(p) > 20]
    return list(dict.fromkeys(texts))


def adversarial(size: int) -> dict[str, str]:
    """Texts that make a backtracking matcher or a careless token loop slow, ``size`` characters each."""
    def fill(unit: str) -> str:
        return (unit * (size // len(unit) + 1))[:size]

    return {
        "one long token": fill("aB3"),
        "secret words and tokens": fill("password Kp7Nv3Bs6Hd1Zx8Q "),
        "assignments without values": fill("DB_PASSWORD="),
        "URLs with users": fill("https://u:@h"),
        "colons and at signs": fill(":a@"),
        "prose": fill("The deploy runbook lives in the wiki. "),
    }


def detect_secrets_check() -> Check | None:
    """detect-secrets' default scan of the text as a .txt file, or None when it is not installed."""
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    folder = tempfile.mkdtemp(prefix="junior-ds-")
    path = os.path.join(folder, "memory.txt")

    def check(text: str) -> bool:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        with default_settings():
            found = SecretsCollection()
            found.scan_file(path)
        return any(True for _ in found)

    return check


def _timed(check: Check, texts: list[str], repeat: int) -> float:
    """Median microseconds per call over ``repeat`` rounds of ``texts``."""
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            check(text)
        rounds.append((time.perf_counter() - start) / len(texts) * 1e6)
    return statistics.median(rounds)


def measure(name: str, check: Check, corpus: dict[str, Any], others: list[str], repeat: int) -> dict[str, Any]:
    def refused(items: list[dict[str, str]]) -> list[str]:
        return [item["name"] for item in items if check(item["text"])]

    tuning, heldout = corpus["credentials"], corpus["heldout_credentials"]
    lookalikes = corpus["lookalikes"] + corpus["heldout_lookalikes"]
    row: dict[str, Any] = {
        "detector": name,
        "tuning_refused": len(refused(tuning)), "tuning": len(tuning),
        "heldout_refused": len(refused(heldout)), "heldout": len(heldout),
        "heldout_missed": [c["name"] for c in heldout if not check(c["text"])],
        "lookalikes_kept": sum(not check(t) for t in lookalikes), "lookalikes": len(lookalikes),
        "prose_refused": [t[:120] for t in others if check(t)], "prose": len(others),
        "us_per_call": _timed(check, [c["text"] for c in tuning + heldout] + lookalikes, repeat),
    }
    for size in (400, 4000):
        row[f"us_{size}"] = {shape: _timed(check, [text], max(3, repeat // 10))
                            for shape, text in adversarial(size).items()}
    return row


def report(rows: list[dict[str, Any]]) -> Iterator[str]:
    for row in rows:
        yield (f"{row['detector']}: refused {row['tuning_refused']}/{row['tuning']} tuning, "
               f"{row['heldout_refused']}/{row['heldout']} held-out; look-alikes kept "
               f"{row['lookalikes_kept']}/{row['lookalikes']}; prose refused {len(row['prose_refused'])}/"
               f"{row['prose']}; {row['us_per_call']:.0f} us per call (median)")
        if row["heldout_missed"]:
            yield f"  held-out misses: {', '.join(row['heldout_missed'])}"
        for text in row["prose_refused"][:10]:
            yield f"  prose refused: {text!r}"
        yield "  adversarial text        400 chars   4,000 chars   ratio"
        for shape, small in row["us_400"].items():
            big = row["us_4000"][shape]
            yield f"  {shape:<24}{small:>7.0f} us {big:>10.0f} us {big / small:>7.1f}x"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="rounds per timing (median reported)")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON ('-' for stdout)")
    args = parser.parse_args(argv)
    corpus = json.loads(CORPUS.read_text(encoding="utf-8"))
    others = prose()
    rows = [measure("junior-memory", lambda t: credential_kind(t) is not None, corpus, others, args.repeat)]
    detect = detect_secrets_check()
    if detect is not None:
        rows.append(measure("detect-secrets", detect, corpus, others, max(1, args.repeat // 20)))
    for line in report(rows):
        print(line)
    if args.json:
        _data.write_json(rows, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
