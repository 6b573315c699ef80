"""Shared test helpers for ``tests/``: in-process plugins, property-test sizes, answer readers.

Test modules import them as ``from tests.helpers import ...`` (the repository root is on ``sys.path`` through
the ``pythonpath`` pytest setting); ``conftest.py`` holds only fixtures and hooks, and no test imports it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from junior_core import Source, Tool, ToolError, hookimpl

# The Hypothesis profile conftest.py loads: "quick" (the default) or "full" (CI).
HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "quick")


def examples(full: int) -> int:
    """A property test's example count: ``full`` under the full profile, a tenth of it (at least 20) otherwise."""
    return full if HYPOTHESIS_PROFILE == "full" else max(20, full // 10)


DATA_DIR = Path(os.environ.get("JUNIOR_DATA_DIR") or Path(__file__).resolve().parents[2] / "shared" / "data")
"""The public benchmark data, as ``benchmarks/`` finds it: ``$JUNIOR_DATA_DIR``, else ``../shared/data``."""


def needs_data(*names: str) -> pytest.MarkDecorator:
    """Skip unless each of ``names`` (``metatool``, ``livemcpbench``) is in ``DATA_DIR``, saying how to get it."""
    missing = [name for name in names if not (DATA_DIR / name).is_dir()]
    return pytest.mark.skipif(
        bool(missing),
        reason=f"needs the public benchmark data {', '.join(n + '/' for n in missing)} in {DATA_DIR}: "
               "README.md's Data section says how to fetch it, or set JUNIOR_DATA_DIR",
    )


OBJECT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def echo(arguments: dict[str, Any], context: Any) -> dict[str, Any]:
    return {"echo": arguments}


class SourcePlugin:
    """A plugin registering one source with the given tools."""

    def __init__(self, source: Source, tools: list[Tool], name: str | None = None) -> None:
        self.source = source
        self.tools = tools
        self.junior_plugin_name = name or f"plugin-{source.id}"

    @hookimpl
    def register_sources(self, register: Any) -> None:
        register(self.source, tools=self.tools)


def notes_plugin() -> SourcePlugin:
    """A small realistic source used across tests."""
    add_schema = {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The note's text."},
            "tags": {"type": "array", "items": {"type": "string"}, "description": "Labels for filtering."},
        },
        "required": ["text"],
        "additionalProperties": False,
    }

    def not_found(arguments: dict[str, Any], context: Any) -> None:
        raise ToolError("not_found", "No note has that id; list notes to see the ids.", id=arguments.get("id"))

    def crash(arguments: dict[str, Any], context: Any) -> None:
        raise RuntimeError("secret-database-password leaked in a traceback")

    def hang(arguments: dict[str, Any], context: Any) -> None:
        time.sleep(5)

    def not_json(arguments: dict[str, Any], context: Any) -> object:
        return {"value": object()}

    return SourcePlugin(
        Source("notes", "Personal notes: write, find and delete short notes."),
        [
            Tool(
                "add_note",
                "Write a new note with optional tags.\n\nNotes are private to you.",
                add_schema,
                echo,
                annotations={"readOnlyHint": False},
            ),
            Tool(
                "find_notes",
                "Find notes by words in their text.",
                {
                    "type": "object",
                    "properties": {"query": {"type": "string"}},
                    "required": ["query"],
                    "additionalProperties": False,
                },
                echo,
                annotations={"readOnlyHint": True},
            ),
            Tool(
                "delete_note",
                "Delete a note by its id.",
                {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
                not_found,
            ),
            Tool("crash_note", "A tool whose handler raises.", OBJECT, crash),
            Tool("hang_note", "A tool whose handler hangs.", OBJECT, hang, timeout_s=0.2),
            Tool("weird_note", "A tool returning something that is not JSON.", OBJECT, not_json),
            Tool("admin_purge", "Purge every note for good.", OBJECT, echo, exposure="hidden"),
            Tool("quick_note", "Jot a quick note, offered to the model directly.", OBJECT, echo, exposure="direct"),
        ],
    )


def weather_plugin() -> SourcePlugin:
    async def forecast(arguments: dict[str, Any], context: Any) -> dict[str, Any]:
        return {"city": arguments["city"], "forecast": "sunny"}

    return SourcePlugin(
        Source("weather", "Weather forecasts and current conditions."),
        [
            Tool(
                "get_forecast",
                "Get the weather forecast for a city.",
                {
                    "type": "object",
                    "properties": {"city": {"type": "string", "description": "City name."}},
                    "required": ["city"],
                    "additionalProperties": False,
                },
                forecast,
            ),
            Tool(
                "getCurrentConditions",
                "Current temperature and wind for a city.",
                {"type": "object", "properties": {"city": {"type": "string"}}},
                echo,
            ),
        ],
    )


def string_params(*props: str) -> dict[str, Any]:
    return {"type": "object", "properties": {p: {"type": "string"} for p in props}, "required": [props[0]]}


def text_plugin() -> SourcePlugin:
    """A four-tool text plugin, as an author would write one (searched beside junior-memory in the tests of
    partial matches and of the testing kit)."""
    case = {"type": "object", "properties": {"text": {"type": "string"},
                                             "case": {"type": "string", "enum": ["upper", "lower", "title"]}},
            "required": ["text", "case"]}
    return SourcePlugin(Source("text", "Text utilities."), [
        Tool("change_case", "Change the case of text to upper, lower or title case.", case, echo),
        Tool("count_words", "Count the words, sentences and characters of a text.", string_params("text"), echo),
        Tool("reverse_text", "Reverse a text, character by character.", string_params("text"), echo),
        Tool("slugify", "Make a URL slug from a title.", string_params("title"), echo),
    ], name="textplug")


WRITES = {"readOnlyHint": False}
REMOVES = {"readOnlyHint": False, "destructiveHint": True}
READS = {"readOnlyHint": True}


def notebook(keywords: bool = True) -> SourcePlugin:
    """A memory-like source of four tools whose descriptions mention each other's verbs, as real ones do."""
    return SourcePlugin(Source("notebook", "Long-term notebook: saving, listing and removing notes."), [
        Tool("remember", "Remember (save, store) a durable note so later chats recall it.\n\nUse when the user "
             "asks to save something, the team's procedures too.", OBJECT, echo,
             annotations=WRITES,
             keywords=("remember", "keep in mind") if keywords else ()),
        Tool("forget", "Forget (delete, remove) a note: archive it so it is no longer recalled, listed or "
             "searched.", OBJECT, echo, annotations=REMOVES, keywords=("forget",) if keywords else ()),
        Tool("list", "List (show) all the notes kept here, newest first, with their dates and time.\n\nUse "
             "when the user asks what is remembered about them.", OBJECT, echo, annotations=READS),
        Tool("search", "Search (look up, find) the notes by words, most relevant first.", OBJECT, echo,
             annotations=READS),
    ])


class KeptIndex:
    """An ``index_factory`` (``RuntimeOptions``) that keeps the ``SearchIndex`` it makes in ``index``: a test of
    the index's own parts (its analyzer, its snapshot) reaches them through the public seam, not the runtime."""

    def __init__(self) -> None:
        self.made: list[Any] = []

    def __call__(self) -> Any:
        from junior_core._discovery.index import SearchIndex

        self.made.append(SearchIndex())
        return self.made[-1]

    @property
    def index(self) -> Any:
        [index] = self.made
        return index


def names(answer: dict[str, object]) -> list[str]:
    tools = answer["tools"]
    assert isinstance(tools, list)
    return [str(t["tool_name"]) for t in tools]
