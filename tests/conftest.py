"""Shared fixtures: in-process plugins built per test; runtimes come from the testing kit (``junior_core.testing``)."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest
from hypothesis import settings

from junior_core import Runtime, Source, Tool, ToolError, hookimpl
from junior_core.testing import RuntimeFactory

# Property tests: the quick profile (the default) runs a tenth of each test's examples; CI (.ci/run) sets
# HYPOTHESIS_PROFILE=full for every one of them.
HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "quick")
settings.register_profile("quick", max_examples=20, deadline=None)
settings.register_profile("full", max_examples=100, deadline=None)
settings.load_profile(HYPOTHESIS_PROFILE)


def examples(full: int) -> int:
    """A property test's example count: ``full`` under the full profile, a tenth of it (at least 20) otherwise."""
    return full if HYPOTHESIS_PROFILE == "full" else max(20, full // 10)


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


@pytest.fixture
def make_runtime(junior_runtime: RuntimeFactory) -> RuntimeFactory:
    """Build runtimes from explicit plugins; every one is closed after the test (the kit's ``junior_runtime``)."""
    return junior_runtime


@pytest.fixture
def rt(junior_runtime: RuntimeFactory) -> Runtime:
    return junior_runtime(notes_plugin(), weather_plugin())
