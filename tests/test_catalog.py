from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from junior_core import RegistrationError, Runtime, Source, Tool, hookimpl
from junior_core._catalog.catalog import make_tool_name
from tests.helpers import OBJECT, SourcePlugin, echo, notes_plugin

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@pytest.mark.parametrize("bad", ["Memory", "1memory", "mcp:", "mcp:Time", "a:b:c", "with space", "", "mcp::x"])
def test_invalid_source_ids_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid source id"):
        Source(bad, "desc")


@pytest.mark.parametrize("good", ["memory", "mcp:time", "mcp:linear", "my-source", "mcp:a_b-c"])
def test_valid_source_ids(good: str) -> None:
    assert Source(good, "desc").id == good


@pytest.mark.parametrize("bad", ["", "_private", "has space", "dot.name", "slash/name", "ümlaut"])
def test_invalid_tool_names_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid tool name"):
        Tool(bad, "desc", OBJECT, echo)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "string"}, "describe an object"),
        ({"type": "object", "properties": {"a": {"type": "nonsense"}}}, "not a valid JSON Schema"),
        ("not a schema", "JSON Schema object"),
    ],
)
def test_invalid_schemas_are_refused(schema: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Tool("ok", "desc", schema, echo)


def test_invalid_annotations_and_exposure_are_refused() -> None:
    with pytest.raises(ValueError, match="readOnlyHint"):
        Tool("ok", "desc", OBJECT, echo, annotations={"readOnlyHint": "yes"})
    with pytest.raises(ValueError, match="unknown annotation"):
        Tool("ok", "desc", OBJECT, echo, annotations={"dangerous": True})
    with pytest.raises(ValueError, match="exposure"):
        Tool("ok", "desc", OBJECT, echo, exposure="public")  # type: ignore[arg-type]


def test_tool_name_derivation() -> None:
    assert make_tool_name("memory", "remember") == "memory__remember"
    assert make_tool_name("mcp:time", "get_current_time") == "mcp__time__get_current_time"
    assert make_tool_name("mcp:everything", "get-sum") == "mcp__everything__get-sum"


def test_long_tool_names_are_shortened_deterministically_with_a_hash() -> None:
    long_a = "a" * 80
    long_b = "a" * 79 + "b"
    name_a = make_tool_name("mcp:server", long_a)
    assert len(name_a) == 64 and TOOL_NAME.match(name_a)
    assert name_a == make_tool_name("mcp:server", long_a)
    assert name_a != make_tool_name("mcp:server", long_b)
    assert make_tool_name("mcp:server", "x" * 50).startswith("mcp__server__")


def test_long_tool_names_are_callable(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(SourcePlugin(Source("mcp:server", "A server."), [Tool("t" * 70, "A long one.", OBJECT, echo)]))
    (entry,) = rt.catalog_tools()
    assert len(entry.tool_name) == 64
    assert rt.execute_tool(entry.tool_name, {})["ok"] is True


def test_duplicate_source_is_refused_naming_both_plugins(make_runtime: Callable[..., Runtime]) -> None:
    first = SourcePlugin(Source("notes", "First."), [Tool("a", "A.", OBJECT, echo)], name="first-plugin")
    second = SourcePlugin(Source("notes", "Second."), [Tool("b", "B.", OBJECT, echo)], name="second-plugin")
    with pytest.raises(RegistrationError) as info:
        make_runtime(first, second)
    assert "first-plugin" in str(info.value) and "second-plugin" in str(info.value)


def test_duplicate_source_non_strict_keeps_the_first_and_reports_the_second(
    make_runtime: Callable[..., Runtime],
) -> None:
    first = SourcePlugin(Source("notes", "First."), [Tool("a", "A.", OBJECT, echo)], name="first-plugin")
    second = SourcePlugin(Source("notes", "Second."), [Tool("b", "B.", OBJECT, echo)], name="second-plugin")
    rt = make_runtime(first, second, strict=False)
    assert [t.tool_name for t in rt.catalog_tools()] == ["notes__a"]
    failed = {info.name: info for info in rt.plugins}["second-plugin"]
    assert failed.status == "failed"
    assert "first-plugin" in (failed.error or "")
    assert rt._catalog.source("notes") is not None and rt._catalog.source("notes").plugin == "first-plugin"  # type: ignore[union-attr]


def test_colliding_tool_names_from_different_sources_are_refused(make_runtime: Callable[..., Runtime]) -> None:
    # "mcp:a" + "b__c" and "mcp:a__b" + "c" both derive "mcp__a__b__c".
    first = SourcePlugin(Source("mcp:a", "A."), [Tool("b__c", "X.", OBJECT, echo)], name="plugin-one")
    second = SourcePlugin(Source("mcp:a__b", "B."), [Tool("c", "Y.", OBJECT, echo)], name="plugin-two")
    rt = make_runtime(first, second, strict=False)
    assert rt.catalog_tool("mcp__a__b__c").plugin == "plugin-one"  # type: ignore[union-attr]
    assert rt._catalog.source("mcp:a__b") is None
    assert "plugin-one" in ({i.name: i for i in rt.plugins}["plugin-two"].error or "")


def test_a_source_registering_a_tool_twice_is_refused(make_runtime: Callable[..., Runtime]) -> None:
    plugin = SourcePlugin(Source("x", "X."), [Tool("a", "A.", OBJECT, echo), Tool("a", "A again.", OBJECT, echo)])
    with pytest.raises(RegistrationError, match="twice"):
        make_runtime(plugin)


def test_failed_plugin_registrations_are_rolled_back(make_runtime: Callable[..., Runtime]) -> None:
    class HalfBroken:
        junior_plugin_name = "half-broken"

        @hookimpl
        def register_sources(self, register: Any) -> None:
            register(Source("first", "Registered before the failure."), tools=[Tool("a", "A.", OBJECT, echo)])
            raise RuntimeError("boom after one source")

    rt = make_runtime(HalfBroken(), notes_plugin(), strict=False)
    assert rt._catalog.source("first") is None
    assert rt._catalog.source("notes") is not None
    info = {i.name: i for i in rt.plugins}["half-broken"]
    assert info.status == "failed" and "boom after one source" in (info.error or "")


def test_invalid_tool_at_registration_names_the_plugin(make_runtime: Callable[..., Runtime]) -> None:
    class BadTool:
        junior_plugin_name = "bad-tool-plugin"

        @hookimpl
        def register_sources(self, register: Any) -> None:
            register(Source("bad", "Bad."), tools=[Tool("no spaces allowed", "X.", OBJECT, echo)])

    with pytest.raises(RegistrationError) as info:
        make_runtime(BadTool())
    assert "bad-tool-plugin" in str(info.value) and "invalid tool name" in str(info.value)


def test_register_rejects_non_tools(make_runtime: Callable[..., Runtime]) -> None:
    class NotATool:
        junior_plugin_name = "not-a-tool"

        @hookimpl
        def register_sources(self, register: Any) -> None:
            register(Source("bad", "Bad."), tools=[{"name": "x"}])

    with pytest.raises(RegistrationError, match="not-a-tool.*junior_core.Tool"):
        make_runtime(NotATool())


def test_provider_source_refreshes_catalog_and_search(make_runtime: Callable[..., Runtime]) -> None:
    listing = [Tool("get_time", "Get the current time in a timezone.", OBJECT, echo)]

    class Dynamic:
        junior_plugin_name = "dynamic"
        started = False

        @hookimpl
        def register_sources(self, register: Any) -> None:
            register(Source("mcp:clock", "A clock server."), provider=self.provide)

        @hookimpl
        def startup(self, runtime: Runtime) -> None:
            self.started = True

        def provide(self) -> list[Tool]:
            assert self.started, "providers run after startup"
            return list(listing)

    rt = make_runtime(Dynamic())
    assert rt.search_tools("current time")["tools"][0]["tool_name"] == "mcp__clock__get_time"
    listing.append(Tool("convert_timezone", "Convert a time between two timezones.", OBJECT, echo))
    assert rt.search_tools("convert timezone")["tools"][0]["tool_name"] != "mcp__clock__convert_timezone"
    rt.refresh_source("mcp:clock")
    assert rt.wait_for_index(timeout=30)
    assert rt.search_tools("convert timezone")["tools"][0]["tool_name"] == "mcp__clock__convert_timezone"
    listing.clear()
    rt.refresh_source("mcp:clock")
    assert rt.search_tools("time")["tools"] == []
    # The source is still there but lists nothing: the answer names it instead of suggesting other tools.
    gone = rt.execute_tool("mcp__clock__get_time", {})["error"]
    assert (gone["code"], gone["source"]) == ("unavailable", "mcp:clock")


def test_provider_failure_is_reported_and_keeps_previous_tools(make_runtime: Callable[..., Runtime]) -> None:
    state = {"fail": False}

    class Flaky:
        junior_plugin_name = "flaky"

        @hookimpl
        def register_sources(self, register: Any) -> None:
            register(Source("mcp:flaky", "Flaky."), provider=self.provide)

        def provide(self) -> list[Tool]:
            if state["fail"]:
                raise ConnectionError("server went away")
            return [Tool("ping", "Ping.", OBJECT, echo)]

    rt = make_runtime(Flaky())
    state["fail"] = True
    rt.refresh_source("mcp:flaky")
    assert [t.tool_name for t in rt.catalog_tools()] == ["mcp__flaky__ping"]
    assert "server went away" in ({i.name: i for i in rt.plugins}["flaky"].error or "")


def test_describe_source_updates_the_search_description_and_index(make_runtime: Callable[..., Runtime]) -> None:
    class Late:
        junior_plugin_name = "late"

        @hookimpl
        def register_sources(self, register: Any) -> None:
            register(Source("mcp:late", "Connecting..."), provider=lambda: [Tool("ping", "Ping.", OBJECT, echo)])

    rt = make_runtime(Late())
    assert rt.search_tools("zebra")["tools"] == []
    rt.describe_source("mcp:late", "Zebra crossing registry.")
    assert rt.wait_for_index(timeout=30)
    assert "- mcp:late: Zebra crossing registry." in rt.model_tools()[0]["description"]
    assert rt.search_tools("zebra")["tools"][0]["tool_name"] == "mcp__late__ping"
    with pytest.raises(ValueError, match="non-empty"):
        rt.describe_source("mcp:late", " ")
    with pytest.raises(KeyError):
        rt.describe_source("mcp:other", "Other.")


def test_non_json_schema_values_are_refused() -> None:
    with pytest.raises(ValueError, match="plain JSON"):
        Tool("ok", "desc", {"type": "object", "default": object()}, echo)


def test_schema_validity_is_cached_by_content() -> None:
    from junior_core._catalog.catalog import _schema_problem

    _schema_problem.cache_clear()
    for _ in range(3):
        Tool("ok", "desc", {"type": "object", "properties": {"a": {"type": "string"}}}, echo)
    assert _schema_problem.cache_info().misses == 1 and _schema_problem.cache_info().hits == 2
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        Tool("bad", "desc", {"type": "object", "properties": {"a": {"type": "nonsense"}}}, echo)


class _CountedName(str):
    """A tool name counting how often it is compared for equality (the cost of a duplicate check)."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        type(self).comparisons += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_registration_and_refresh_compare_each_name_a_bounded_number_of_times(
    make_runtime: Callable[..., Runtime],
) -> None:
    # A duplicate check that scans what a source registered so far compares n^2/2 names (2,000,000 here);
    # set and dict lookups compare a name only on a hash match, so the count stays below n.
    count = 2_000
    listing = [Tool(_CountedName(f"tool_{i}"), f"Tool {i}.", OBJECT, echo) for i in range(count)]

    class Bulk:
        junior_plugin_name = "bulk"

        @hookimpl
        def register_sources(self, register: Any) -> None:
            register(Source("bulk", "Many tools."), tools=listing)
            register(Source("mcp:bulk", "Many tools, listed at run time."), provider=lambda: listing)

    _CountedName.comparisons = 0
    rt = make_runtime(Bulk())
    assert len(rt.catalog_tools("bulk")) == len(rt.catalog_tools("mcp:bulk")) == count
    assert _CountedName.comparisons < count
    _CountedName.comparisons = 0
    rt.refresh_source("mcp:bulk")
    assert len(rt.catalog_tools("mcp:bulk")) == count
    assert _CountedName.comparisons < count
