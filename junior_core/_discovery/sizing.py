"""The size of a searchTools answer: schemas shortened, tools left to the next page, a no-match answer kept small."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from junior_core import _protocol as protocol

if TYPE_CHECKING:
    from junior_core._discovery.view import View

__all__ = ["fit", "fit_no_match"]


def fit(view: View, answer: dict[str, Any], offset: int, budget: int) -> dict[str, Any]:
    """``answer`` within ``max_answer_chars`` of JSON: the largest schemas shortened first, then tools left to
    the next page; what was done is said in ``shortened``.

    Sizes are of ``json.dumps(answer)`` (ASCII escapes, default separators): the most a host sends for it.
    """
    rows: list[dict[str, Any]] = answer["tools"]
    limit = budget
    if not rows:
        return answer
    sizes = [view.row_size(row) for row in rows]
    base = len(json.dumps({**answer, "tools": []}))
    if base + sum(sizes) + 2 * len(rows) <= limit:
        return answer
    rows = list(rows)
    names = [row["tool_name"] for row in rows]
    # Room for the note, counted as if it named every tool.
    size = base + sum(sizes) + 2 * len(rows) + len(json.dumps({"shortened": protocol.shortened_note(
        limit, names, len(rows), protocol.encode_cursor(offset + len(rows)))}))
    shortened: dict[str, str] = {}
    largest_first = sorted(range(len(rows)), key=lambda i: (-sizes[i], names[i]))
    for how, shorten in (("outline", protocol.schema_outline), ("omitted", protocol.schema_omitted)):
        for i in largest_first:
            if size <= limit:
                break
            if shortened.get(names[i]) == how or "input_schema" not in rows[i]:
                continue
            row = {**rows[i], "input_schema": shorten(rows[i]["input_schema"]), "input_schema_shortened": how}
            new_size = len(json.dumps(row))
            if new_size >= sizes[i]:
                continue  # an outline of a schema that is already small saves nothing
            size += new_size - sizes[i]
            rows[i], sizes[i], shortened[names[i]] = row, new_size, how
    while True:
        dropped = len(names) - len(rows)
        out = {**answer, "tools": rows}
        paged = dropped and ("query" in answer or "source" in answer)
        cursor = protocol.encode_cursor(offset + len(rows)) if paged else ""
        if cursor:
            out["next_cursor"] = cursor
        listed = [row["tool_name"] for row in rows if row["tool_name"] in shortened]
        out["shortened"] = protocol.shortened_note(limit, listed, dropped, cursor)
        if len(rows) == 1 or len(json.dumps(out)) <= limit:
            return out
        rows = rows[:-1]  # past every schema: the last tools wait for the next page


def fit_no_match(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer without tools within ``protocol.NO_MATCH_CHARS``: the query it repeats shortened first (its hint
    quotes it), then the farthest of its sources left out."""
    limit = protocol.NO_MATCH_CHARS
    if len(json.dumps(answer)) <= limit:
        return answer
    out = dict(answer)
    if "query" in out:
        out["query"] = protocol.clip(out["query"], 200)
    while out.get("sources") and len(json.dumps(out)) > limit:
        out["sources"] = out["sources"][:-1]
        if not out["sources"]:
            del out["sources"]
    return out
