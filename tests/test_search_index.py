"""The search index: a Whoosh index stored under JUNIOR_CACHE_DIR, reopened, survived when damaged, refreshed beside."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import junior_core._discovery.store
import junior_core._discovery.whoosh_parts
from junior_core import Runtime, Source, Tool, hookimpl
from junior_core._discovery.store import KEEP
from tests.helpers import OBJECT, SourcePlugin, echo, notes_plugin, weather_plugin


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("JUNIOR_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "search-index"


def stored(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("index-*")) if cache_dir.is_dir() else []


def top(rt: Runtime, query: str, **kwargs: Any) -> str:
    return str(rt.search_tools(query, **kwargs)["tools"][0]["tool_name"])


def forbid_building(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the index was rebuilt")

    monkeypatch.setattr(junior_core._discovery.whoosh_parts, "write_documents", fail)


def test_a_search_leaves_a_whoosh_index_under_the_cache_dir(cache_dir: Path, make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes_plugin(), weather_plugin())
    assert stored(cache_dir) == []  # built on the first search, not at start-up
    assert top(rt, "weather forecast") == "weather__get_forecast"
    [index_dir] = stored(cache_dir)
    assert list(index_dir.glob("_MAIN_*.toc")), "a Whoosh table of contents"
    assert list(index_dir.glob("*.trm")) and list(index_dir.glob("*.pst")), "Whoosh terms and postings"
    meta = json.loads((index_dir / "junior-index.json").read_text())
    assert "weather__get_forecast" in meta["names"]
    assert index_dir.name == f"index-{meta['fingerprint'][:32]}"
    from whoosh.index import open_dir

    with open_dir(str(index_dir), readonly=True).searcher() as searcher:
        assert searcher.doc_count_all() == len(meta["names"])
        assert searcher.doc_frequency("terms", "forecast") >= 1


def test_a_second_runtime_opens_the_stored_index_without_rebuilding(
    cache_dir: Path, make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = make_runtime(notes_plugin(), weather_plugin())
    expected = first.search_tools("write a note with tags")
    forbid_building(monkeypatch)
    second = make_runtime(notes_plugin(), weather_plugin())
    assert second.search_tools("write a note with tags") == expected
    assert second.index_info()["path"] == str(stored(cache_dir)[0])


def test_a_changed_catalog_gets_its_own_index(cache_dir: Path, make_runtime: Callable[..., Runtime]) -> None:
    make_runtime(notes_plugin()).search_tools("note")
    make_runtime(notes_plugin(), weather_plugin()).search_tools("note")
    assert len(stored(cache_dir)) == 2


def test_a_corrupt_index_is_rebuilt_with_one_log_line(
    cache_dir: Path, make_runtime: Callable[..., Runtime], caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    make_runtime(notes_plugin(), weather_plugin()).search_tools("note")
    [index_dir] = stored(cache_dir)
    for path in index_dir.iterdir():
        if path.name != "junior-index.json":
            path.write_bytes(b"\x00garbage" * 7)
    with caplog.at_level(logging.WARNING, logger="junior.search"):
        rt = make_runtime(notes_plugin(), weather_plugin())
        assert top(rt, "weather forecast") == "weather__get_forecast"
        assert top(rt, "delete a note") == "notes__delete_note"
    warnings = [r for r in caplog.records if r.name == "junior.search"]
    assert len(warnings) == 1 and "unusable" in warnings[0].getMessage()
    # The damaged copy was replaced by a good one.
    [index_dir] = stored(cache_dir)
    assert rt.index_info()["path"] == str(index_dir)
    forbid_building(monkeypatch)
    again = make_runtime(notes_plugin(), weather_plugin())
    assert top(again, "weather forecast") == "weather__get_forecast"
    assert again.index_info()["path"] == str(index_dir)


def test_metadata_that_does_not_match_the_catalog_is_not_trusted(
    cache_dir: Path, make_runtime: Callable[..., Runtime]
) -> None:
    make_runtime(notes_plugin(), weather_plugin()).search_tools("note")
    [index_dir] = stored(cache_dir)
    meta_path = index_dir / "junior-index.json"
    meta = json.loads(meta_path.read_text())
    meta["names"] = list(reversed(meta["names"]))  # doc numbers would point at the wrong tools
    meta_path.write_text(json.dumps(meta))
    rt = make_runtime(notes_plugin(), weather_plugin())
    assert top(rt, "weather forecast") == "weather__get_forecast"


def test_an_unwritable_cache_dir_searches_from_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_runtime: Callable[..., Runtime],
    caplog: pytest.LogCaptureFixture,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("JUNIOR_CACHE_DIR", str(blocker / "cache"))
    with caplog.at_level(logging.WARNING, logger="junior.search"):
        rt = make_runtime(notes_plugin(), weather_plugin())
        assert top(rt, "weather forecast") == "weather__get_forecast"
    assert rt.index_info()["state"] == "in memory"
    assert len([r for r in caplog.records if r.name == "junior.search"]) == 1


def test_a_full_disk_leaves_no_partial_index(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch, make_runtime: Callable[..., Runtime]
) -> None:
    real_write = junior_core._discovery.store.write_file
    written: list[str] = []

    def full(dir_fd: int, name: str, data: bytes) -> None:
        written.append(name)
        if len(written) > 1:
            raise OSError(28, "No space left on device")
        real_write(dir_fd, name, data)

    monkeypatch.setattr(junior_core._discovery.store, "write_file", full)
    rt = make_runtime(notes_plugin(), weather_plugin())
    assert top(rt, "weather forecast") == "weather__get_forecast"
    assert len(written) == 2, "the store was attempted and failed part-way"
    assert stored(cache_dir) == [] and list(cache_dir.iterdir()) == []


def test_a_read_only_cache_still_opens(cache_dir: Path, make_runtime: Callable[..., Runtime],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    make_runtime(notes_plugin(), weather_plugin()).search_tools("note")

    def read_only(*args: Any, **kwargs: Any) -> None:
        raise PermissionError(13, "Read-only file system")

    monkeypatch.setattr(junior_core._discovery.store.os, "utime", read_only)
    forbid_building(monkeypatch)
    rt = make_runtime(notes_plugin(), weather_plugin())
    assert top(rt, "weather forecast") == "weather__get_forecast"


def test_a_locked_index_still_opens(cache_dir: Path, make_runtime: Callable[..., Runtime],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    make_runtime(notes_plugin(), weather_plugin()).search_tools("note")
    [index_dir] = stored(cache_dir)
    from whoosh.index import open_dir

    # Another process holding Whoosh's write lock: readers never need it, so the index opens as it is.
    writer_lock = open_dir(str(index_dir)).storage.lock("MAIN_WRITELOCK")
    assert writer_lock.acquire()
    try:
        forbid_building(monkeypatch)
        rt = make_runtime(notes_plugin(), weather_plugin())
        assert top(rt, "weather forecast") == "weather__get_forecast"
    finally:
        writer_lock.release()


def test_old_indexes_are_pruned(cache_dir: Path, make_runtime: Callable[..., Runtime]) -> None:
    cache_dir.mkdir(parents=True)
    for i in range(KEEP + 3):
        old = cache_dir / f"index-{i:032x}"
        old.mkdir()
        (old / "junior-index.json").write_text("{}")
    abandoned = cache_dir / "tmp-abandoned"
    abandoned.mkdir()
    import os

    os.utime(abandoned, (0, 0))
    make_runtime(notes_plugin()).search_tools("note")
    assert len(stored(cache_dir)) == KEEP + 1  # the KEEP most recent old ones and the new one
    assert not abandoned.exists()


def test_junior_index_shows_rebuilds_and_clears(cache_dir: Path) -> None:
    from click.testing import CliRunner

    from junior_core.cli import build_cli

    runner = CliRunner()
    shown = runner.invoke(build_cli(), ["index", "--json"])
    assert shown.exit_code == 0, shown.output
    info = json.loads(shown.output)
    assert info["state"] == "stored" and info["path"] == str(stored(cache_dir)[0])
    assert info["bytes"] > 0 and len(info["fingerprint"]) == 64
    rebuilt = runner.invoke(build_cli(), ["index", "--rebuild", "--json"])
    assert json.loads(rebuilt.output)["fingerprint"] == info["fingerprint"]
    cleared = runner.invoke(build_cli(), ["index", "--clear"])
    assert cleared.exit_code == 0 and "removed 1 stored index" in cleared.output
    assert stored(cache_dir) == []


CONCURRENT = textwrap.dedent(
    """
    import sys
    from junior_core import Runtime, Source, Tool, hookimpl

    def echo(arguments, context):
        return arguments

    class Many:
        junior_plugin_name = "many"

        @hookimpl
        def register_sources(self, register):
            tools = [Tool(f"tool_{i:04d}", f"Tool number {i} handles widget {i % 97} and gadget {i % 89}.",
                          {"type": "object"}, echo) for i in range(1500)]
            tools.append(Tool("zebra_crossing", "Find the nearest zebra crossing.", {"type": "object"}, echo))
            register(Source("many", "Many tools."), tools=tools)

    with Runtime(plugins=[Many()]) as rt:
        print(rt.search_tools("nearest zebra crossing")["tools"][0]["tool_name"])
    """
)


@pytest.mark.slow
def test_four_processes_on_an_empty_cache_all_answer_and_leave_one_index(cache_dir: Path, tmp_path: Path) -> None:
    script = tmp_path / "search_once.py"
    script.write_text(CONCURRENT)
    procs = [subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outputs = [proc.communicate(timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0, 0], [err for _, err in outputs]
    assert [out.strip() for out, _ in outputs] == ["many__zebra_crossing"] * 4
    [index_dir] = stored(cache_dir)
    assert [p.name for p in cache_dir.iterdir()] == [index_dir.name], "no temporary directories left"
    meta = json.loads((index_dir / "junior-index.json").read_text())
    assert len(meta["names"]) == 1501


class Dynamic:
    """A run-time source whose tool list the test changes."""

    junior_plugin_name = "dynamic"

    def __init__(self) -> None:
        self.listing = [Tool("get_time", "Current time in a timezone.", OBJECT, echo)]

    @hookimpl
    def register_sources(self, register: Any) -> None:
        register(Source("mcp:clock", "A clock server."), provider=lambda: list(self.listing))


def test_a_refresh_builds_beside_the_old_index_and_searches_do_not_wait(
    monkeypatch: pytest.MonkeyPatch, make_runtime: Callable[..., Runtime], cache_dir: Path
) -> None:
    dynamic = Dynamic()
    rt = make_runtime(dynamic, index_cache=False)
    assert top(rt, "current time") == "mcp__clock__get_time"
    building, release = threading.Event(), threading.Event()
    real = junior_core._discovery.whoosh_parts.write_documents

    def slow(index: Any, documents: Any) -> None:
        building.set()
        assert release.wait(30)
        real(index, documents)

    monkeypatch.setattr(junior_core._discovery.whoosh_parts, "write_documents", slow)
    dynamic.listing.append(Tool("convert_timezone", "Convert a time between two timezones.", OBJECT, echo))
    rt.refresh_source("mcp:clock")
    assert building.wait(30), "the refresh started a rebuild"
    # The rebuild is stuck: searches answer from the old index at once, and an exact name is already there.
    assert top(rt, "current time") == "mcp__clock__get_time"
    assert top(rt, "convert_timezone", source="mcp:clock") == "mcp__clock__convert_timezone"
    release.set()
    assert rt.wait_for_index(timeout=30)
    assert top(rt, "convert between timezones") == "mcp__clock__convert_timezone"


def test_searches_during_refreshes_always_answer(make_runtime: Callable[..., Runtime]) -> None:
    dynamic = Dynamic()
    rt = make_runtime(dynamic, index_cache=False)
    errors: list[BaseException] = []
    answers: list[dict[str, Any]] = []
    stop = threading.Event()

    def search() -> None:
        while not stop.is_set():
            try:
                answers.append(rt.search_tools("time in a timezone"))
            except BaseException as exc:  # noqa: BLE001 - collected for the assertion
                errors.append(exc)

    threads = [threading.Thread(target=search) for _ in range(3)]
    for thread in threads:
        thread.start()
    for i in range(20):
        dynamic.listing.append(Tool(f"zone_{i}", f"Timezone helper number {i}.", OBJECT, echo))
        rt.refresh_source("mcp:clock")
    assert rt.wait_for_index(timeout=60)
    stop.set()
    for thread in threads:
        thread.join()
    assert errors == []
    assert answers and all(a["tools"] and a["tools"][0]["tool_name"].startswith("mcp__clock__") for a in answers)
    assert top(rt, "zone_19", source="mcp:clock") == "mcp__clock__zone_19"
    assert rt.search_tools("timezone helper number", source="mcp:clock", max_results=20)["total_matches"] == 21


def test_paging_lists_a_large_source_to_the_end(make_runtime: Callable[..., Runtime]) -> None:
    tools = [Tool(f"tool_{i:03d}", f"Tool {i}.", OBJECT, echo) for i in range(23)]
    rt = make_runtime(SourcePlugin(Source("mcp:big", "A big server."), tools))
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = rt.call_model_tool("searchTools", {"source": "mcp:big", "max_results": 5, "cursor": cursor})
        seen += [t["tool_name"] for t in page["tools"]]
        pages += 1
        cursor = page.get("next_cursor")
        if cursor is None:
            break
    assert pages == 5 and seen == [f"mcp__big__tool_{i:03d}" for i in range(23)]
    assert "cursor" in rt.model_tools()[0]["input_schema"]["properties"]


def test_ranked_results_page_too(make_runtime: Callable[..., Runtime]) -> None:
    tools = [Tool(f"widget_{i:02d}", f"Widget helper {i}.", OBJECT, echo) for i in range(12)]
    rt = make_runtime(SourcePlugin(Source("widgets", "Widgets."), tools))
    first = rt.call_model_tool("searchTools", {"query": "widget helper", "max_results": 10})
    second = rt.call_model_tool("searchTools", {"query": "widget helper", "max_results": 10, "cursor": first["next_cursor"]})
    names = [t["tool_name"] for t in first["tools"] + second["tools"]]
    assert len(names) == 12 and len(set(names)) == 12 and "next_cursor" not in second


def test_a_bad_cursor_says_what_to_do(rt: Runtime) -> None:
    out = rt.call_model_tool("searchTools", {"source": "notes", "cursor": "not-a-cursor"})
    assert out["error"]["code"] == "invalid_arguments" and "next_cursor" in out["error"]["message"]


def test_a_query_that_matches_nothing_names_only_the_nearest_sources_with_a_hint(rt: Runtime) -> None:
    out = rt.search_tools("xylophone quasar")
    assert out["tools"] == [] and "sources" not in out  # no source says either word
    assert "source" in out["hint"] and "other words" in out["hint"]
    inside = rt.search_tools("xylophone quasar", source="weather")
    assert inside["sources"] == [{"id": "weather", "description": "Weather forecasts and current conditions."}]
    assert "empty query" in inside["hint"]


def test_an_unknown_tool_of_a_down_source_says_the_source_is_unavailable(make_runtime: Callable[..., Runtime]) -> None:
    dynamic = Dynamic()
    rt = make_runtime(dynamic, notes_plugin())
    rt.set_source_unavailable("mcp:clock", "its server is not running")
    out = rt.execute_tool("mcp__clock__git_status", {})
    assert out["error"]["code"] == "unavailable" and out["error"]["source"] == "mcp:clock"
    assert "its server is not running" in out["error"]["message"]
    rt.set_source_unavailable("mcp:clock", None)
    assert rt.execute_tool("mcp__clock__git_status", {})["error"]["code"] == "unknown_tool"


def test_suggestions_need_a_similar_name(rt: Runtime) -> None:
    assert rt.execute_tool("notes__add_notes", {})["error"]["suggestions"][0] == "notes__add_note"
    assert rt.execute_tool("delete_a_note", {})["error"]["suggestions"] == ["notes__delete_note"]
    unrelated = rt.execute_tool("quantum_flux_capacitor", {})["error"]
    assert unrelated["code"] == "unknown_tool" and unrelated["suggestions"] == []


@pytest.mark.parametrize("cursor", ["o²", "o-1", "o" + "9" * 12, "p5"])
def test_a_cursor_searchTools_never_made_is_refused(rt: Runtime, cursor: str) -> None:
    out = rt.call_model_tool("searchTools", {"source": "notes", "cursor": cursor})
    assert out["error"]["code"] == "invalid_arguments"


def test_a_number_too_long_to_read_is_invalid_arguments(rt: Runtime) -> None:
    text = '{"query": ' + "1" * 5000 + "}"
    for name in ("searchTools", "executeTool"):
        assert rt.call_model_tool(name, text)["error"]["code"] == "invalid_arguments"


def test_a_replaced_snapshot_is_freed_when_dropped_not_at_the_next_collection() -> None:
    # Its per-term caches reach it through a weak proxy: a snapshot, its postings read and its speller go as soon
    # as a rebuild drops it.
    import gc
    import weakref
    from types import SimpleNamespace

    from junior_core._discovery.index import SearchIndex

    tool = SimpleNamespace(name="get_forecast", description="Get the weather forecast for a city.", annotations=None,
                           keywords=(), input_schema={"type": "object", "properties": {}})
    index = SearchIndex()
    index.build([SimpleNamespace(tool_name="weather__get_forecast", source_id="weather", tool=tool)],  # type: ignore[list-item]
                {"weather": "Weather"}, 1)
    assert index.search("weather forcast", limit=5).tool_names == ["weather__get_forecast"]
    assert index.snapshot is not None
    ref = weakref.ref(index.snapshot)
    gc.disable()
    try:
        index.reset()
        assert ref() is None
    finally:
        gc.enable()
