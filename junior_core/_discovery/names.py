"""Tools by name: a listing's sample across sources, a close name for one that is no tool, a down source's."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from junior_core import _protocol as protocol
from junior_core._catalog.catalog import tool_name_prefix

if TYPE_CHECKING:
    from junior_core._catalog.catalog import Catalog, CatalogTool
    from junior_core._discovery.view import View

__all__ = ["down_source", "named", "sample", "similar"]


def sample(eligible: list[CatalogTool], limit: int) -> list[CatalogTool]:
    """Round-robin across sources (by id), each source's tools by tool_name."""
    groups: dict[str, list[CatalogTool]] = {}
    for entry in eligible:
        groups.setdefault(entry.source_id, []).append(entry)
    picked: list[CatalogTool] = []
    depth = 0
    while len(picked) < limit and any(depth < len(group) for group in groups.values()):
        for source_id in sorted(groups):
            if depth < len(groups[source_id]) and len(picked) < limit:
                picked.append(groups[source_id][depth])
        depth += 1
    return picked


def similar(analyze: Callable[[str], list[str]], wanted: set[str], entry: CatalogTool) -> bool:
    """Whether a suggestion shares most of the asked name's terms with the tool's name and keywords."""
    own = set(analyze(" ".join([entry.tool_name, *entry.tool.keywords])))
    return len(wanted & own) * 2 > len(wanted)


def down_source(catalog: Catalog, view: View, tool_name: str) -> tuple[str, str] | None:
    """The source a tool_name belongs to by its prefix, with why it is down; None if it is up or unknown."""
    best: str | None = None
    for source_id in view.source_ids:
        prefix = tool_name_prefix(source_id)
        if tool_name.startswith(prefix) and (best is None or len(source_id) > len(best)):
            best = source_id
    if best is None:
        return None
    entry = catalog.source(best)
    if entry is not None and entry.unavailable:
        return best, entry.unavailable
    if not view.by_source.get(best) and entry is not None and entry.provider is not None:
        return best, "it lists no tools at the moment"
    return None


def named(view: View, tool_names: tuple[str, ...], hidden: frozenset[str],
          missing: Callable[[str], Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of exactly the tools named, each in full, in the order asked (a name twice, once), and the names
    that are no tool the caller may see, each with the close tool_names ``missing`` (executeTool's error) gives."""
    rows: list[dict[str, Any]] = []
    unknown: list[dict[str, Any]] = []
    for name in dict.fromkeys(tool_names):
        entry = view.by_name.get(name)
        if entry is not None and name not in hidden:
            rows.append(view.tool_dict(entry, with_source=True))
            continue
        error = missing(name)
        row: dict[str, Any] = {"tool_name": protocol.clip(name, 100)}
        if error.get("suggestions"):
            row["suggestions"] = list(error["suggestions"])
        if error.get("code") == "unavailable":
            row["unavailable"] = error["message"]
        unknown.append(row)
    return rows, unknown
