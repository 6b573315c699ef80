"""Public tool-retrieval data loaded into a Runtime through the real ``register_sources`` hook.

Shared by the scripts in ``benchmarks/``. The data directory is ``../shared/data`` next to the repository
(override with ``JUNIOR_DATA_DIR``); see its README for where each file comes from.

- MetaTool: one source ``metatool`` with its 199 tools (names sanitised), plus the labelled queries.
- LiveMCPBench: one source ``mcp:<server>`` per MCP server (70 servers, 527 tools with full JSON Schemas).

Run directly, it prints a summary of what it loads.
"""

from __future__ import annotations

import csv
import json
import os
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from junior_mcp_bridge.convert import modern_schema

from junior_core import Runtime, Source, Tool, ToolContext, hookimpl

REPO = Path(__file__).resolve().parent.parent
TOOL_NAME_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
ANNOTATION_KEYS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint", "title")
SPLIT_SEED = 20240601
METATOOL_SOURCE = "metatool"
METATOOL_DESCRIPTION = "ChatGPT plugins from the OpenAI plugin store (MetaTool benchmark corpus)."


def data_dir() -> Path:
    """``$JUNIOR_DATA_DIR`` or ``../shared/data`` relative to the repository root."""
    override = os.environ.get("JUNIOR_DATA_DIR")
    path = Path(override) if override else REPO.parent / "shared" / "data"
    if not (path / "metatool").is_dir() or not (path / "livemcpbench").is_dir():
        raise SystemExit(f"benchmark data not found in {path}: set JUNIOR_DATA_DIR to the directory holding "
                         "metatool/ and livemcpbench/")
    return path


def sanitize_tool_name(name: str) -> str:
    """Letters, digits, '_' and '-' only, starting with a letter or digit (``PDF&URLTool`` -> ``PDF_URLTool``)."""
    clean = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_-")
    return clean or "tool"


def sanitize_source_part(name: str) -> str:
    """A source sub-id: lowercase letters, digits, '_' and '-' (``Ant Design`` -> ``ant-design``)."""
    clean = re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("_-")
    return clean or "server"


def unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3`` ... if already taken (duplicates after sanitising, or in the data)."""
    candidate, n = name, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{name}_{n}"
    taken.add(candidate.lower())
    return candidate


def _noop(arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    return {}


@dataclass
class ToolDoc:
    """One catalog tool as the benchmarks see it: names, text, and the schema it was registered with."""

    tool_name: str
    source_id: str
    name: str
    original_name: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any] | None = None


@dataclass
class SourceData:
    source: Source
    tools: list[Tool] = field(default_factory=list)


@dataclass
class Dataset:
    """Sources to register, and a map from the data's own tool names to catalog tool_names."""

    sources: list[SourceData]
    tool_names: dict[str, str]
    by_server: dict[tuple[str, str], str] = field(default_factory=dict)
    """LiveMCPBench: (server_name, tool name as the data spells it) -> catalog tool_name."""



class DatasetPlugin:
    """A plugin registering every source of some datasets through the ``register_sources`` hook."""

    def __init__(self, datasets: Sequence[Dataset]) -> None:
        self.datasets = list(datasets)

    @hookimpl
    def register_sources(self, register: Callable[..., None]) -> None:
        for dataset in self.datasets:
            for data in dataset.sources:
                register(data.source, tools=data.tools)


def _clean_schema(schema: Any) -> dict[str, Any]:
    out = modern_schema(schema) if isinstance(schema, dict) else {}
    out["type"] = "object"
    return out


def livemcpbench(
    root: Path | None = None, handler: Callable[[str], Callable[[dict[str, Any], ToolContext], Any]] | None = None
) -> Dataset:
    """70 MCP servers as sources ``mcp:<server>``; 527 tools with their real schemas and annotations.

    ``handler(tool_name)`` gives each tool its handler (default: one answering ``{}``).
    """
    raw = json.loads(((root or data_dir()) / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))
    sources: list[SourceData] = []
    names: dict[str, str] = {}
    by_server: dict[tuple[str, str], str] = {}
    taken_sources: set[str] = set()
    for server in raw:
        for key, block in server["tools"].items():
            source_id = "mcp:" + unique(sanitize_source_part(block.get("server_name") or key), taken_sources)
            description = (server.get("description") or "").strip() or server.get("name") or source_id
            data = SourceData(Source(source_id, description))
            taken: set[str] = set()
            for spec in block["tools"]:
                local = unique(sanitize_tool_name(spec["name"]), taken)
                annotations = {
                    k: v for k, v in (spec.get("annotations") or {}).items() if k in ANNOTATION_KEYS and v is not None
                }
                tool = Tool(
                    local,
                    (spec.get("description") or "").strip() or spec["name"],
                    _clean_schema(spec.get("inputSchema")),
                    handler(source_id.replace(":", "__") + "__" + local) if handler else _noop,
                    annotations=annotations or None,
                )
                data.tools.append(tool)
                names[f"{source_id}/{spec['name']}"] = local
                by_server[(block.get("server_name") or key, spec["name"])] = source_id.replace(":", "__") + "__" + local
            sources.append(data)
    return Dataset(sources, names, by_server)


def metatool(root: Path | None = None) -> Dataset:
    """The 199 MetaTool plugins as one source; descriptions as given, no parameters."""
    raw: dict[str, str] = json.loads(
        ((root or data_dir()) / "metatool" / "plugin_des.json").read_text(encoding="utf-8")
    )
    data = SourceData(Source(METATOOL_SOURCE, METATOOL_DESCRIPTION))
    names: dict[str, str] = {}
    taken: set[str] = set()
    for original in sorted(raw):
        local = unique(sanitize_tool_name(original), taken)
        data.tools.append(Tool(local, raw[original].strip() or original, {"type": "object"}, _noop))
        names[original] = local
    return Dataset([data], names)


@dataclass
class Query:
    text: str
    relevant: tuple[str, ...]  # local tool names in the ``metatool`` source


def metatool_queries(dataset: Dataset, root: Path | None = None) -> dict[str, list[Query]]:
    """``{"single": [...20,614], "multi": [...497]}`` with relevant tools mapped to sanitised names."""
    base = (root or data_dir()) / "metatool"
    with (base / "all_clean_data.csv").open(encoding="utf-8", newline="") as handle:
        single = [Query(row["Query"], (dataset.tool_names[row["Tool"]],)) for row in csv.DictReader(handle)]
    multi_raw = json.loads((base / "multi_tool_query_golden.json").read_text(encoding="utf-8"))
    multi = [Query(item["query"], tuple(dataset.tool_names[t] for t in item["tool"])) for item in multi_raw]
    return {"single": single, "multi": multi}


def split_halves(queries: Sequence[Query], seed: int = SPLIT_SEED) -> tuple[list[Query], list[Query]]:
    """A fixed-seed shuffle into (tuning half, reporting half)."""
    order = list(range(len(queries)))
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return [queries[i] for i in order[:half]], [queries[i] for i in order[half:]]


def runtime(*datasets: Dataset, index_factory: Callable[[], Any] | None = None) -> Runtime:
    """A Runtime whose only plugins register the given datasets (searched by ``index_factory``'s index if given)."""
    # Every figure is a cold build.
    return Runtime(plugins=[DatasetPlugin(datasets)], index_cache=False, index_factory=index_factory)


def docs(rt: Runtime, source_ids: Iterable[str] | None = None) -> list[ToolDoc]:
    """Every catalog tool (optionally of some sources) as a ToolDoc, by tool_name."""
    wanted = set(source_ids) if source_ids is not None else None
    out = []
    for entry in rt.catalog_tools():
        if wanted is not None and entry.source_id not in wanted:
            continue
        out.append(
            ToolDoc(
                entry.tool_name,
                entry.source_id,
                entry.tool.name,
                entry.tool.name,
                entry.tool.description,
                entry.tool.input_schema,
                entry.tool.annotations,
            )
        )
    return out


if __name__ == "__main__":
    meta, live = metatool(), livemcpbench()
    with runtime(meta, live) as rt:
        print(f"data: {data_dir()}")
        print(f"sources: {len(rt._catalog.sources)}, tools: {len(rt._catalog)} "
              f"(metatool {len(meta.sources[0].tools)}, livemcpbench {sum(len(s.tools) for s in live.sources)})")
        q = metatool_queries(meta)
        print(f"MetaTool queries: single {len(q['single'])}, two-tool {len(q['multi'])}")


def write_json(data: Any, dest: str) -> None:
    """A benchmark's ``--json`` output: to stdout for ``-``, else to the file ``dest``."""
    text = json.dumps(data, indent=2)
    if dest == "-":
        print(text)
    else:
        Path(dest).write_text(text + "\n", encoding="utf-8")
