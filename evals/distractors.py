"""Sources that compete with memory in searchTools: notes, reminders and tickets use the same words."""

from __future__ import annotations

from typing import Any

from junior_core import Source, Tool, ToolContext, ToolError, hookimpl

__all__ = ["Distractors"]

_TEXT = {"type": "object", "properties": {"text": {"type": "string", "description": "The text."}}, "required": ["text"]}
_ID = {"type": "object", "properties": {"id": {"type": "string", "description": "The id."}}, "required": ["id"]}
_QUERY = {"type": "object", "properties": {"query": {"type": "string", "description": "Words to look for."}}}
_NONE: dict[str, Any] = {"type": "object", "properties": {}}

TOOLS = {
    Source("notes", "Personal scratch notes: write, find, list and delete short notes."): [
        ("add_note", "Write a short note to yourself, such as a draft or a link to read later.", _TEXT),
        ("delete_note", "Delete a note by its id.", _ID),
        ("list_notes", "List your notes, newest first.", _NONE),
        ("find_notes", "Find notes containing some words.", _QUERY),
    ],
    Source("reminders", "Reminders at a time: create, list and cancel."): [
        ("create_reminder", "Remind someone about something at a given time, e.g. 'tomorrow at 9'.", _TEXT),
        ("cancel_reminder", "Cancel a scheduled reminder by its id.", _ID),
        ("list_reminders", "List the reminders scheduled in this conversation.", _NONE),
    ],
    Source("tickets", "The issue tracker: search, open and comment on tickets."): [
        ("search_tickets", "Search tickets by keywords, status or assignee.", _QUERY),
        ("create_ticket", "Open a new ticket with a title and description.", _TEXT),
        ("comment", "Add a comment to a ticket.", _TEXT),
    ],
}


def _refuse(arguments: dict[str, Any], context: ToolContext) -> Any:
    raise ToolError("unavailable", "This source is a stand-in in the evals; nothing happened.")


class Distractors:
    """Registers the stand-in sources; their tools refuse to run, so a wrong pick shows in the transcript."""

    junior_plugin_name = "evals-distractors"

    @hookimpl
    def register_sources(self, register: Any) -> None:
        for source, tools in TOOLS.items():
            register(source, tools=[Tool(name, description, schema, _refuse) for name, description, schema in tools])
