"""A testing kit for plugin authors and bots.

Installed with junior-core and registered as the pytest plugin ``junior`` (entry
point ``pytest11``), which adds the fixtures ``junior_runtime`` and
``junior_context``; the helpers here work with or without pytest:

- ``RuntimeFactory``: runtimes from given plugins and/or installed entry points, closed together;
- ``make_context``: a ``ToolContext`` with valid Slack-shaped ids;
- ``assert_ok``, ``assert_error``, ``assert_found``: check an answer the model would see (``assert_found`` with a
  runtime searches it beside junior-memory and a background catalog, ``crowd``);
- ``summary_warnings``: the sources and tools whose summary a model sees cut before its first sentence ends
  (every runtime the factory makes warns them as ``SummaryWarning``);
- ``ScriptedModel``, ``say``, ``call``: a model whose answers are written in Python;
- ``ChatCompletionsServer``: a scripted model served over HTTP in the real Chat Completions wire format, for a
  bot that builds its own client from a model spec;
- ``ManualClock``: a clock that moves only when told (``Runtime(..., clock=clock)``), so a test of hook or
  tool deadlines takes milliseconds whatever the machine's load;
- ``wait_until(predicate, timeout=60, what=...)``: a bounded poll for what another thread or process does (a
  server listening, a file written, hung calls drained), returning the predicate's first true answer; the one
  real wait a test keeps, since time itself is moved on a ``ManualClock``.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

from junior_core.context import Actor, Conversation, ToolContext
from junior_core.llm.types import call, say
from junior_core.testing.clock import ManualClock, wait_until
from junior_core.testing.scripted import Script, ScriptedModel, ScriptView
from junior_core.testing.server import ChatCompletionsServer

if TYPE_CHECKING:
    from junior_core._runtime.runtime import Runtime

__all__ = [
    "CHANNEL_ID",
    "MESSAGE_TS",
    "TEAM_ID",
    "USER_ID",
    "ChatCompletionsServer",
    "ContextFactory",
    "ManualClock",
    "RuntimeFactory",
    "Script",
    "ScriptView",
    "ScriptedModel",
    "SummaryWarning",
    "assert_error",
    "assert_found",
    "assert_ok",
    "call",
    "make_context",
    "say",
    "summary_warnings",
    "wait_until",
]

# Shaped like real Slack ids and timestamps, so code that validates them strictly accepts them.
TEAM_ID = "T024BE7LD"
USER_ID = "U024BE7LH"
CHANNEL_ID = "C024BE91L"
MESSAGE_TS = "1700000000.000100"


def make_context(
    user: str | None = USER_ID,
    *,
    team: str = TEAM_ID,
    channel: str | None = CHANNEL_ID,
    thread_ts: str | None = None,
    message_ts: str | None = MESSAGE_TS,
    visibility: Literal["public", "private"] = "public",
    platform: str = "slack",
    tool_call_id: str | None = None,
) -> ToolContext:
    """A ``ToolContext``: ``user`` speaking in ``channel`` of ``team``; None leaves out the actor or conversation."""
    actor = Actor(platform, team, user) if user is not None else None
    conversation = (
        Conversation(platform, team, channel, thread_ts=thread_ts, message_ts=message_ts, visibility=visibility)
        if channel is not None
        else None
    )
    return ToolContext(actor, conversation, tool_call_id)


class ContextFactory:
    """``make_context`` that gives every context its own tool_call_id (``call_0001``...) unless one is passed.

    Tools that key idempotency on the call id (a retried call writes once) then
    see separate calls as separate, as they would in a live conversation.
    """

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, user: str | None = USER_ID, **kwargs: Any) -> ToolContext:
        if kwargs.get("tool_call_id") is None:
            self.calls += 1
            kwargs["tool_call_id"] = f"call_{self.calls:04d}"
        return make_context(user, **kwargs)


class SummaryWarning(UserWarning):
    """A tool or source whose summary, what a model sees of it in search results, is cut before its first
    sentence ends."""


def summary_warnings(runtime: Runtime, plugins: Sequence[str] | None = None) -> list[str]:
    """One message per source and tool (of ``plugins``, by name, or all) whose summary is cut before its first
    sentence ends, naming the plugin: a model sees only the first 180 characters of the first paragraph."""
    from junior_core._discovery.analysis import summary_cut_early

    out: list[str] = []
    for info in runtime.source_info():
        if plugins is not None and info.plugin not in plugins:
            continue
        why = summary_cut_early(info.description)
        if why is not None:
            out.append(f"plugin {info.plugin!r}, source {info.id!r}: {why}")
        for tool in runtime.catalog_tools(info.id):
            why = summary_cut_early(tool.tool.description)
            if why is not None:
                out.append(f"plugin {info.plugin!r}, tool {tool.tool_name!r}: {why}")
    return out


class RuntimeFactory:
    """Builds runtimes for a test and closes every one of them in ``close()``.

    ``factory(plugin, ...)`` uses exactly the plugins given (raising on a broken
    one); ``entry_points=True`` adds every installed ``junior`` entry point first,
    and a list of names (entry point or distribution) only those, as
    ``JUNIOR_LOAD_PLUGINS`` would.
    """

    def __init__(self) -> None:
        self.made: list[Runtime] = []

    def __call__(
        self, *plugins: object, entry_points: bool | Sequence[str] = False, strict: bool = True, **kwargs: Any
    ) -> Runtime:
        # Imported here: this module is a pytest plugin loaded at every pytest start, so the runtime loads only
        # when a test makes one.
        from junior_core._plugins.plugin_set import load
        from junior_core._runtime.runtime import Runtime

        if entry_points is False:
            runtime = Runtime(plugins=list(plugins), strict=strict, **kwargs)
        else:
            names = None if entry_points is True else ",".join(entry_points)
            with _load_only(names):
                plugin_set = load(None, strict=strict)
            for plugin in plugins:
                plugin_set.add(plugin)
            runtime = Runtime(plugin_set, **kwargs)
        self.made.append(runtime)
        for message in summary_warnings(runtime):
            warnings.warn(SummaryWarning(message), stacklevel=2)
        return runtime

    def close(self) -> None:
        while self.made:
            self.made.pop().close()


@contextmanager
def _load_only(names: str | None) -> Iterator[None]:
    if names is None:
        yield
        return
    before = os.environ.get("JUNIOR_LOAD_PLUGINS")
    os.environ["JUNIOR_LOAD_PLUGINS"] = names
    try:
        yield
    finally:
        if before is None:
            del os.environ["JUNIOR_LOAD_PLUGINS"]
        else:
            os.environ["JUNIOR_LOAD_PLUGINS"] = before


def _show(answer: object) -> str:
    try:
        return json.dumps(answer, ensure_ascii=False, default=repr)[:2000]
    except (TypeError, ValueError):
        return repr(answer)[:2000]


def assert_ok(answer: Mapping[str, Any]) -> Any:
    """The ``result`` of a successful executeTool-style answer; fails showing the error otherwise."""
    __tracebackhide__ = True
    if not isinstance(answer, Mapping) or answer.get("ok") is not True:
        raise AssertionError(f"expected an ok answer, got: {_show(answer)}")
    return answer.get("result")


def assert_error(answer: Mapping[str, Any], code: str) -> dict[str, Any]:
    """The ``error`` object of a failed answer whose code is ``code``; fails showing the answer otherwise."""
    __tracebackhide__ = True
    if not isinstance(answer, Mapping) or answer.get("ok") is not False or not isinstance(answer.get("error"), dict):
        raise AssertionError(f"expected an error {code!r}, got: {_show(answer)}")
    found = answer["error"]
    if found.get("code") != code:
        raise AssertionError(f"expected error code {code!r}, got {found.get('code')!r}: {_show(answer)}")
    if not isinstance(found.get("message"), str) or not found["message"].strip():
        raise AssertionError(f"error {code!r} has no message telling the model what to do next: {_show(answer)}")
    return dict(found)


def assert_found(
    answer: Mapping[str, Any] | Runtime,
    tool_name: str,
    *,
    query: str | None = None,
    first: bool = False,
    source: str | None = None,
    alone: bool = False,
) -> dict[str, Any]:
    """The entry for ``tool_name`` (the top one when ``first``) in a searchTools answer; fails listing the results.

    Given a runtime and a ``query``, searches for it as a model would, among other tools: the runtime's sources
    beside junior-memory (when installed) and a background catalog of some 700 public tools, so a query that only
    finds the tool when it stands alone fails here before it fails a user. ``alone=True`` searches the runtime
    as it is.
    """
    __tracebackhide__ = True
    if not isinstance(answer, Mapping):
        if query is None:
            raise TypeError("assert_found(runtime, tool_name) needs query=: the words to search for")
        runtime = answer if alone else _crowd(answer)
        answer = runtime.search_tools(query, source=source)
    elif query is not None or alone:
        raise TypeError("assert_found(answer, ...) checks an answer; pass a runtime to search with query=")
    tools = answer.get("tools") if isinstance(answer, Mapping) else None
    if not isinstance(tools, list):
        raise AssertionError(f"expected a searchTools answer, got: {_show(answer)}")
    names = [t.get("tool_name") for t in tools if isinstance(t, Mapping)]
    if tool_name not in names or (first and names[0] != tool_name):
        where = "first" if first else "among the results"
        among = "" if alone or query is None else " (beside junior-memory and the background catalog; alone=True " \
            "searches the plugin by itself)"
        raise AssertionError(f"expected {tool_name!r} {where}, got {names} for query {answer.get('query')!r}{among}")
    return dict(tools[names.index(tool_name)])


def _crowd(runtime: Runtime) -> Runtime:
    """A runtime of ``runtime``'s sources beside junior-memory and the background catalog, made once per runtime
    and catalog (``junior_core.testing.crowd``)."""
    from junior_core.testing.crowd import crowd

    return crowd(runtime)
