"""The benchmark data loader: names sanitised to what the catalog accepts, duplicates kept apart."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("junior_bench_data", BENCHMARKS / "_data.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


data = _load()


@pytest.mark.parametrize(
    ("raw", "clean"),
    [("PDF&URLTool", "PDF_URLTool"), ("get weather", "get_weather"), ("-lead", "lead"), ("日本", "tool")],
)
def test_tool_names_are_sanitised_to_the_catalog_pattern(raw: str, clean: str) -> None:
    assert data.sanitize_tool_name(raw) == clean
    assert data.TOOL_NAME_OK.match(data.sanitize_tool_name(raw))


@pytest.mark.parametrize(
    ("raw", "clean"),
    [("Ant Design Components", "ant-design-components"), ("Asset_Price_MCP", "asset_price_mcp"), ("鸣潮", "server")],
)
def test_server_names_become_source_sub_ids(raw: str, clean: str) -> None:
    assert data.sanitize_source_part(raw) == clean


def test_duplicate_names_get_numbered_suffixes() -> None:
    taken: set[str] = set()
    assert [data.unique(n, taken) for n in ("search", "search", "Search", "search_2")] == [
        "search",
        "search_2",
        "Search_3",
        "search_2_2",
    ]


def test_draft4_boolean_bounds_become_numbers() -> None:
    schema = {"type": "object", "properties": {"page": {"type": "integer", "minimum": 1, "exclusiveMinimum": True}}}
    assert data._clean_schema(schema)["properties"]["page"] == {"type": "integer", "exclusiveMinimum": 1}


@pytest.mark.skipif(
    not (Path(os.environ.get("JUNIOR_DATA_DIR") or Path(__file__).resolve().parents[2] / "shared" / "data") / "metatool").is_dir(),
    reason="public benchmark data not present",
)
def test_real_data_loads_through_the_hook_api() -> None:
    meta, live = data.metatool(), data.livemcpbench()
    with data.runtime(meta, live) as rt:
        assert len(rt._catalog) == 199 + 527
        assert len(rt._catalog.sources) == 71
        queries = data.metatool_queries(meta)
        assert (len(queries["single"]), len(queries["multi"])) == (20614, 497)
        assert all(rt.catalog_tool(f"metatool__{name}") for q in queries["multi"] for name in q.relevant)
        tuning, reporting = data.split_halves(queries["single"])
        assert len(tuning) + len(reporting) == 20614
        assert tuning == data.split_halves(queries["single"])[0]
