"""searchTools' answers: a tool's row (full or compact), the answer around the rows, batches of queries, and
the hints and notes that say what was and was not found."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from junior_core._schemas.outline import compact_params as compact_params
from junior_core._schemas.outline import schema_omitted as schema_omitted
from junior_core._schemas.outline import schema_outline as schema_outline

if TYPE_CHECKING:
    pass

from junior_core._protocol.call_answers import clip
from junior_core._protocol.requests import encode_cursor


# -- searchTools' answers, when too big --------------------------------------------------------------
def shortened_note(limit: int, tools: Sequence[str], dropped: int, cursor: str) -> dict[str, Any]:
    """The ``shortened`` note of a searchTools answer cut to ``limit`` characters of JSON."""
    parts = []
    if tools:
        # The tools are listed in "tools": the message does not repeat them.
        parts.append("input_schema shortened where a tool says input_schema_shortened ('outline': property names, "
                     "types, required; 'omitted': none)")
    if dropped:
        parts.append(f"{dropped} more tool(s) matched" + (
            ": call searchTools again with next_cursor for the next page" if cursor
            else ": search with a query or a source to see them"))
    return {
        "limit_chars": limit,
        "tools": list(tools),
        "left_out": dropped,
        "message": (
            f"Cut to {limit:,} characters of JSON: {'; '.join(parts)}. searchTools with tool_names gets a tool in "
            "full; executeTool checks arguments against the full input_schema either way."
        ),
    }


ANNOTATION_DEFAULTS: dict[str, bool] = {
    "readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True,
}
"""MCP's defaults for its hints: an answer shows a hint only where a tool's value differs."""


def shown_annotations(annotations: Mapping[str, Any]) -> dict[str, Any]:
    """The annotations an answer shows: every one not at MCP's default (a title always)."""
    return {key: value for key, value in annotations.items()
            if key not in ANNOTATION_DEFAULTS or value is not ANNOTATION_DEFAULTS[key]}


BRIEF_NOTE = "Rows without input_schema list their params; searchTools with tool_names returns them in full."
"""What an answer with one-line rows says once, in ``schemas``."""


def brief_row(row: Mapping[str, Any], params: str) -> dict[str, Any]:
    """A tool's compact row in a searchTools answer: its name, summary, (across sources) source and parameters in
    one line (``compact_params``; left out when it takes none)."""
    out = {key: row[key] for key in ("tool_name", "description", "source") if key in row}
    if params:
        out["params"] = params
    return out


def with_matched(row: Mapping[str, Any], matched: Sequence[str]) -> dict[str, Any]:
    """``row`` with its ``matched`` words after its name, summary and source (left out when empty)."""
    if not matched:
        return dict(row)
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key not in ("tool_name", "description", "source") and "matched" not in out:
            out["matched"] = list(matched)
        out[key] = value
    out.setdefault("matched", list(matched))
    return out


def tool_row(
    tool_name: str, summary: str, source: str | None, schema: dict[str, Any], annotations: dict[str, Any]
) -> dict[str, Any]:
    """One tool in a searchTools answer; ``source`` only in a search of every source, annotations only where not
    at their default."""
    row: dict[str, Any] = {"tool_name": tool_name, "description": summary}
    if source is not None:
        row["source"] = source
    row["input_schema"] = schema
    shown = shown_annotations(annotations)
    if shown:
        row["annotations"] = shown
    return row


def search_answer(
    query: str | None,
    source: str | None,
    sources: list[dict[str, str]],
    *,
    catalog_tools: int,
    eligible_tools: int,
    matches: int,
    tools: list[dict[str, Any]],
    next_offset: int | None = None,
    hint: str | None = None,
    note: str | None = None,
    weak: bool = False,
    brief: bool = False,
    unmatched: Sequence[str] | None = None,
) -> dict[str, Any]:
    """searchTools' answer: what was searched (a ``note`` when words were corrected), ``weak`` and a ``hint`` when
    no tool holds the query's telling words, the sources of the tools, the counts, the tools' rows, ``next_cursor``
    while more remain. A field at its default or empty (no query, no source, no sources) is left out."""
    answer: dict[str, Any] = {"ok": True}
    if query:
        answer["query"] = query
    if source is not None:
        answer["source"] = source
    if note is not None:
        answer["note"] = note
    if weak:
        answer["weak"] = True
    if hint is not None:
        answer["hint"] = hint
    if brief:
        answer["schemas"] = BRIEF_NOTE
    if sources:
        answer["sources"] = sources
    answer["total_catalog_tools"] = catalog_tools
    answer["total_eligible_tools"] = eligible_tools
    answer["total_matches"] = matches
    if unmatched is not None and tools:
        answer["unmatched"] = list(unmatched)
    answer["tools"] = tools

    if next_offset is not None:
        answer["next_cursor"] = encode_cursor(next_offset)
    return answer


def batch_answer(source: str | None, sources: list[dict[str, str]], results: list[dict[str, Any]],
                 brief: bool = False, **counts: int) -> dict[str, Any]:
    """searchTools' answer to ``queries``: one result per query, in order (each a search answer without ``ok``,
    ``source``, ``sources``, ``schemas`` and the catalog's counts), the sources its results name, the ``schemas``
    note (``brief``: some row is one line) and the counts once."""
    given = {"source": source, "schemas": BRIEF_NOTE if brief else None, "sources": sources or None}
    return {"ok": True, **{key: value for key, value in given.items() if value is not None}, **counts,
            "results": results}


def _said(words: Sequence[str]) -> str:
    return ", ".join(repr(word) for word in words[:3]) + (" ..." if len(words) > 3 else "")


def weak_hint(unheld: Sequence[str], elsewhere: Sequence[str], below: bool = False) -> str:
    """The hint of a weak answer: the query's words no installed tool holds (``unheld``), and those only tools
    not shown hold (``elsewhere``); what each shown tool holds is in its ``matched``. ``below``: some tools shown
    hold too little of the query to pass the relevance floor."""
    parts = ["Partial matches" + (", some below the relevance floor" if below else "")]
    if unheld:
        parts.append(f"no installed tool holds {_said(unheld)}")
    if elsewhere:
        parts.append(f"tools not shown here hold {_said(elsewhere)}: search with "
                     + ("it" if len(elsewhere) == 1 else "them"))
    if not unheld and not elsewhere and not below:
        parts.append("no tool shown holds the query's rarest word")
    return clip("; ".join(parts) + ". See each tool's matched.")


def tool_names_answer(tools: list[dict[str, Any]], unknown: list[dict[str, Any]]) -> dict[str, Any]:
    """searchTools' answer to ``tool_names``: the tools found, in the order asked, each in full; the names that
    are no tool (or not one the caller may see), each with close tool_names."""
    answer: dict[str, Any] = {"ok": True}
    if unknown:
        answer["hint"] = clip(
            f"No tool is named {_said([row['tool_name'] for row in unknown])}: use one of its suggestions, or "
            "search with words.")
    answer["tools"] = tools
    if unknown:
        answer["unknown"] = unknown
    return answer


def corrected_note(fixes: Sequence[tuple[str, str]]) -> str:
    """The answer's ``note`` when words were corrected, from ``(as written, searched for)`` pairs."""
    return "Searched for " + ", ".join(f"{fixed} (you wrote {word})" for word, fixed in fixes) + "."


def unknown_source_hint(source_id: str, known: Sequence[str]) -> str:
    """The hint of a search in a source that does not exist: every known id, and what to call next."""
    return (
        f"Unknown source {source_id[:100]!r}. Known sources: {', '.join(known) or '(none)'}. "
        "Call searchTools again with one of these ids as source, or with source null to search all."
    )


def no_match_hint(query: str, source_id: str | None, eligible: int, near: bool = False) -> str:
    """The hint of a search that matched nothing: what was not found, where to look next (``near``: some source's
    id or description holds a word of the query)."""

    shown = clip(query, 80)
    if source_id is not None and not eligible:
        return f"Source {source_id!r} has no tools right now. Call searchTools with source null to search all."
    if source_id is not None:
        return (
            f"No tool in source {source_id!r} matched {shown!r}. Call searchTools with an empty query and this "
            "source to list its tools, or with other words, or with source null to search every source."
        )
    if near:
        return (
            f"No tool's name, description or parameters holds a word of {shown!r}; the sources in sources say some "
            "of them: search inside one by its id (an empty query lists its tools), or use other words."
        )
    return (
        f"No installed tool holds a word of {shown!r}. Every source is in this tool's description: search one by "
        "its id (an empty query lists its tools), or use other words."
    )
