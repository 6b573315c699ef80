"""The ablation variants ``retrieval.py --ablate``, ``memory_intent.py --ablate`` and ``agent_discovery.py ablate``
measure: every rule switch of ``junior_core._discovery.switches`` off in turn, and every setting of ``RankingConfig`` at
its neutral value. ``agent_discovery.py ablate`` replays the searches a model wrote (the kept transcripts).

A setting's neutral value is what the score would be without it: a field weight at 1 (the description's), or 0 for
the fields that only add (params, source); k1 at BM25's 1.2; a weight of a kind of word at 1 (counted as any word);
a signal that only adds (the verbs, typo corrections) or only holds back (the floor, telling words) at 0.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

NEUTRAL: dict[str, float] = {
    "name_weight": 1.0,
    "description_weight": 0.0,
    "params_weight": 0.0,
    "source_weight": 0.0,
    "k1": 1.2,
    "action_weight": 0.0,
    "source_action_weight": 0.0,
    "typo_weight": 0.0,
    "relevance_floor": 0.0,
    "telling_share": 0.0,
    "reference_tools": 0.0,
    "term_repeats": 0.0,
    "source_share": 0.0,
    "bridged_margin": 0.0,
    "name_b": 0.75,
    "text_b": 0.0,
    "typo_ratio": 1.0,
    "english_count": 1,
    "payload_weight": 1.0,
    # The request's caps: no cap.
    "request_chars": 1_000_000,
    "max_clauses": 1_000_000,
    "intent_chars": 1_000_000,
    "max_verbs": 1_000_000,
    "topic_words": 1_000_000,
    "phrase_words": 1_000_000,
    "phrase_window": 1_000_000,
    # The typo rule's limits: none (any word may be corrected, any way).
    "typo_length": 1,
    "swapped_stop_length": 1,
    "typo_long": 1,
}
"""Per setting, the value its ablation sets (a setting not named here is an error: every one is measured)."""


def variants() -> list[tuple[str, tuple[str, ...], dict[str, Any]]]:
    """``(label, rules switched off, settings changed)``: everything on first, then one thing off at a time."""
    import attrs

    from junior_core._discovery import switches
    from junior_core._discovery.settings import RankingConfig

    fields = [f.name for f in attrs.fields(RankingConfig)]
    unknown = sorted(set(fields) - set(NEUTRAL))
    if unknown:
        raise SystemExit(f"benchmarks/_ablation.py: no neutral value for setting(s) {unknown}")
    out: list[tuple[str, tuple[str, ...], dict[str, Any]]] = [("all on", (), {})]
    out += [(f"rule {name} off", (name,), {}) for name in switches.SWITCHES]
    out += [(f"{name} = {NEUTRAL[name]:g}", (), {name: NEUTRAL[name]}) for name in fields]
    return out


@contextlib.contextmanager
def applied(off: tuple[str, ...], changes: dict[str, Any]) -> Iterator[Callable[[], Any]]:
    """Inside the block, the named rules are off; yields an index factory with the changed settings."""
    from junior_core._discovery import switches
    from junior_core._discovery.index import SearchIndex
    from junior_core._discovery.settings import RankingConfig

    with switches.switched_off(*off):
        yield functools.partial(SearchIndex, RankingConfig(**changes))


def select(labels: list[str] | None) -> list[tuple[str, tuple[str, ...], dict[str, Any]]]:
    """The variants whose label contains one of ``labels`` (all without), "all on" always first."""
    every = variants()
    if not labels:
        return every
    return [every[0], *(v for v in every[1:] if any(label in v[0] for label in labels))]


HIGHER_IS_WORSE = ("non_memory_memory_first", "metatool_memory_in_top3")
MEMORY_SETS = ("heldout", "second", "third")
MEMORY_KEYS = ("top5", "first_inside_memory", "first_memory_alone")
PRECISION_KEYS = ("heldout no_match_alone", "heldout non_memory_memory_first", "heldout metatool_memory_in_top3")
TRANSCRIPT_KEYS = ("slack-standin-1 memory_source_searches_showing_intended",
                   "slack-standin-1 unserved_no_tool_or_weak", "livemcpbench-standin-1 intended_shown_top5")
"""The model-written queries' figures (``agent_discovery.py ablate``): the kept transcripts' searches replayed."""


def costs(memory: dict[str, Any] | None, memory_base: dict[str, Any] | None, retrieval: list[dict[str, Any]],
          retrieval_base: list[dict[str, Any]]) -> dict[str, float]:
    """What switching one thing off cost, per figure, in points (positive: worse)."""
    out: dict[str, float] = {}
    if memory is not None and memory_base is not None:
        for key, value in memory.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and not key.endswith("requests"):
                sign = -1 if key.endswith(HIGHER_IS_WORSE) else 1
                out[key] = round(sign * (memory_base[key] - value), 1)
    base = {(r["catalog"], r["set"]): r for r in retrieval_base}
    for r in retrieval:
        out[f"{r['catalog']} {r['set']} R@5"] = round(base[(r["catalog"], r["set"])]["R@5"] - r["R@5"], 1)
    return out


def merge(paths: list[str]) -> dict[str, Any]:
    """The ablation runs' JSON files (memory rows and retrieval rows, each run with its own "all on") as one
    table: per variant, its figures' costs against the "all on" of the same run."""
    import json
    from pathlib import Path

    variants: dict[str, dict[str, Any]] = {}
    for path in paths:
        rows = json.loads(Path(path).read_text(encoding="utf-8"))
        if rows and rows[0].get("kind") == "transcripts":
            base_row = rows[0]
            for row in rows:
                entry = variants.setdefault(row["variant"], {"variant": row["variant"], "costs": {}})
                entry["transcripts"] = row
                entry["costs"].update({key: round(base_row[key] - value, 1) for key, value in row.items()
                                       if key not in ("variant", "kind") and value is not None
                                       and base_row.get(key) is not None})
        elif rows and "catalog" in rows[0]:
            base = [r for r in rows if r["variant"] == "all on"]
            for label in dict.fromkeys(r["variant"] for r in rows):
                mine = [r for r in rows if r["variant"] == label]
                entry = variants.setdefault(label, {"variant": label, "costs": {}})
                entry["retrieval"] = mine
                entry["costs"].update(costs(None, None, mine, base))
        else:
            base_row = rows[0]
            for row in rows:
                entry = variants.setdefault(row["variant"], {"variant": row["variant"], "costs": {}})
                entry["memory"] = row
                entry["seeds_first"] = row["seeds_first"]
                entry["costs"].update(costs(row, base_row, [], []))
    for entry in variants.values():
        worst = max(entry["costs"].values(), default=0.0)
        entry["pays"] = worst >= 0.5
    return {"variants": list(variants.values())}


def gone(label: str) -> bool:
    """Whether ``label`` is a rule switch's variant whose rule has since been deleted."""
    from junior_core._discovery import switches

    return label.startswith("rule ") and label[len("rule "):-len(" off")] not in switches.SWITCHES


def markdown(merged: dict[str, Any]) -> str:
    """The ablation table docs/discovery.md and docs/benchmarks.md quote."""
    head = ("| switched off | memory top 5 (held-out / second / third) | first inside memory | first, memory alone "
            "| no-match alone / memory first / MetaTool top 3 (held-out) | R@5 mixed single / two-tool "
            "| model's queries: memory shown / unserved declined / LiveMCPBench top 5 | pays |")
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    for entry in merged["variants"]:
        if entry["variant"] == "all on":
            continue
        c = entry["costs"]

        def cells(keys: list[str], c: dict[str, float] = c) -> str:
            return " / ".join(f"{-c[k] + 0.0:+.1f}" if k in c else "–" for k in keys)

        lines.append(
            f"| {entry['variant']} | {cells([f'{h} top5' for h in MEMORY_SETS])} "
            f"| {cells([f'{h} first_inside_memory' for h in MEMORY_SETS])} "
            f"| {cells([f'{h} first_memory_alone' for h in MEMORY_SETS])} "
            f"| {cells(list(PRECISION_KEYS))} "
            f"| {cells(['mixed MetaTool single-tool R@5', 'mixed MetaTool two-tool R@5'])} "
            f"| {cells(list(TRANSCRIPT_KEYS))} "
            f"| {'yes' if entry['pays'] else 'no'}{'' if entry.get('seeds_first', True) else ', seeds missed'}"
            f"{', deleted' if gone(entry['variant']) else ''} |")
    return "\n".join(lines)


SETTING_TEXT = {
    "name_weight": "BM25F weight of the tool's name and title",
    "description_weight": "BM25F weight of the tool's description",
    "params_weight": "BM25F weight of parameter names, titles, descriptions and enum values",
    "source_weight": "BM25F weight of the source's id and description",
    "k1": "BM25 saturation: how soon more of a word stops adding",
    "action_weight": "what a request verb a tool states as its action adds (times the verb's idf), whole catalog",
    "source_action_weight": "the same inside one source, where the verb decides between siblings",
    "typo_weight": "what a word corrected for a typo counts for (0: no correction)",
    "relevance_floor": "share of a clause's ask words' idf a tool must hold to pass the floor by coverage",
    "reference_tools": "how many tools the reference catalog counts as when rarity is reckoned (0: none)",
    "telling_share": "a word at most this share of the tools outside a source use admits its tools (0: none)",
}

_SHORT = {"top5": "top 5", "first_inside_memory": "first inside", "first_memory_alone": "first alone",
          "no_match_alone": "no-match", "non_memory_memory_first": "memory first",
          "metatool_memory_in_top3": "MetaTool top 3", "mixed MetaTool single-tool R@5": "R@5 single",
          "mixed MetaTool two-tool R@5": "R@5 two-tool",
          "memory_source_searches_showing_intended": "memory searches showing the tool",
          "unserved_no_tool_or_weak": "unserved declined", "intended_shown_top5": "top 5"}
_SETS = {"slack-standin-1": "model's Slack queries", "livemcpbench-standin-1": "model's LiveMCPBench queries"}


def measured(entry: dict[str, Any]) -> str:
    """One cell: what switching it off moved by 0.5 points or more (− worse, + better), largest first."""
    moved = sorted(((v, k) for k, v in entry["costs"].items() if abs(v) >= 0.5), reverse=True)
    if not moved:
        return "moved nothing by 0.5 points"

    def name(key: str) -> str:
        for long, short in sorted(_SHORT.items(), key=lambda item: -len(item[0])):
            if key.endswith(long):
                half = key[: -len(long)].strip()
                half = _SETS.get(half, half)
                return f"{half} {short}".strip()
        return key

    worse = [f"{name(k)} {-v:+.1f}" for v, k in moved if v > 0][:4]
    better = [f"{name(k)} {-v:+.1f}" for v, k in reversed(moved) if v < 0][:2]
    return "; ".join(part for part in (", ".join(worse), "better: " + ", ".join(better) if better else "") if part)


def doc_tables(merged: dict[str, Any]) -> str:
    """The two tables of docs/discovery.md: every rule switch and every setting, with what its ablation moved."""
    import attrs

    from junior_core._discovery import switches
    from junior_core._discovery.settings import RankingConfig

    by = {e["variant"]: e for e in merged["variants"]}
    out = ["| switch | what it does while on | switched off (points, − worse) |", "|---|---|---|"]
    for name, text in switches.SWITCHES.items():
        entry = by.get(f"rule {name} off")
        out.append(f"| `{name}` | {text} | {measured(entry) if entry else 'not measured'} |")
    gone = [(label[len("rule "):-len(" off")], e) for label, e in by.items()
            if label.startswith("rule ") and label[len("rule "):-len(" off")] not in switches.SWITCHES]
    if gone:
        out += ["", "Deleted after measuring (switched off, nothing got worse by 0.5 points):", ""]
        out += [f"- `{name}`: {measured(e)}" for name, e in gone]
    out += ["", "## Settings", "", "`RankingConfig`'s fields, each measured at the neutral value named in its last "
            "column (what the score would be without it; `benchmarks/_ablation.py`).", "",
            "| setting | default | what it does | at its neutral value (points, − worse) |", "|---|---|---|---|"]
    for field in attrs.fields(RankingConfig):
        entry = next((e for label, e in by.items() if label.startswith(f"{field.name} = ")), None)
        cell = f"{NEUTRAL[field.name]:g}: {measured(entry)}" if entry else "not measured"
        out.append(f"| `{field.name}` | {field.default} | {SETTING_TEXT[field.name]} | {cell} |")
    return "\n".join(out)


def fill(doc: str, tables: str) -> None:
    """Put ``tables`` between the ablation markers of ``doc``."""
    from pathlib import Path

    path = Path(doc)
    text = path.read_text(encoding="utf-8")
    start, end = text.index(START) + len(START), text.index(END)
    path.write_text(text[:start] + "\n" + tables + "\n" + text[end:], encoding="utf-8")


START, END = "<!-- ablation tables: benchmarks/_ablation.py -->", "<!-- end of ablation tables -->"

if __name__ == "__main__":
    import json
    import sys

    merged = merge(sys.argv[2:])
    with open(sys.argv[1], "w", encoding="utf-8") as handle:
        json.dump(merged, handle, indent=1)
        handle.write("\n")
    print(markdown(merged))
    fill("docs/discovery.md", doc_tables(merged))
    fill("docs/benchmarks.md", markdown(merged))
