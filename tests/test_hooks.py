"""One test per hook (``test_hook_<name>``), and a check that every hook is documented and tested."""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from junior_core import Actor, Conversation, Message, Runtime, Source, Tool, ToolContext, hookimpl, hookspecs
from tests.conftest import OBJECT, echo

DOCS = Path(__file__).parent.parent / "docs" / "hooks.md"
CTX = ToolContext(Actor("slack", "T1", "U1"), Conversation("slack", "T1", "C1", thread_ts="1700000000.000100", visibility="public"), "c1")


def _specs() -> dict[str, inspect.Signature]:
    return {name: inspect.signature(getattr(hookspecs, name)) for name in hookspecs.HOOK_NAMES}


def test_every_hook_is_documented_under_its_exact_signature() -> None:
    text = DOCS.read_text()
    for name, sig in _specs().items():
        params = ", ".join(sig.parameters)
        assert f"### `{name}({params})`" in text, f"docs/hooks.md lacks a heading for {name}({params})"


def test_every_hook_has_a_test() -> None:
    module = sys.modules[__name__]
    missing = [name for name in hookspecs.HOOK_NAMES if not hasattr(module, f"test_hook_{name}")]
    assert missing == []


def test_every_hookspec_has_a_docstring() -> None:
    for name in hookspecs.HOOK_NAMES:
        assert (getattr(hookspecs, name).__doc__ or "").strip(), name


def test_hook_names_match_the_specs() -> None:
    specs = {n for n, v in vars(hookspecs).items() if callable(v) and hasattr(v, "junior_spec")}
    assert specs == set(hookspecs.HOOK_NAMES)


def test_hook_register_sources(make_runtime: Callable[..., Runtime]) -> None:
    class P:
        @hookimpl
        def register_sources(self, register: Any) -> None:
            register(Source("a", "Source A."), tools=[Tool("t", "Tool t.", OBJECT, echo)])
            register(Source("b", "Source B."))

    rt = make_runtime(P())
    assert rt.sources == [{"id": "a", "description": "Source A."}, {"id": "b", "description": "Source B."}]
    assert rt.catalog.get("a__t").plugin.endswith("test_hook_register_sources.<locals>.P")  # type: ignore[union-attr]


def test_hook_register_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    from junior_core import cli as cli_module

    class P:
        @hookimpl
        def register_commands(self, cli: click.Group) -> None:
            @cli.command(name="hello-test")
            def hello() -> None:
                click.echo("hello from a plugin")

    from junior_core.plugins import PluginSet

    def fake_load() -> PluginSet:
        plugin_set = PluginSet(strict=True)
        plugin_set.add(P(), "hello-plugin")
        return plugin_set

    monkeypatch.setattr(cli_module, "_load", fake_load)
    group = cli_module.build_cli()
    try:
        result = CliRunner().invoke(group, ["hello-test"])
        assert result.exit_code == 0 and result.output == "hello from a plugin\n"
    finally:
        group.commands.pop("hello-test", None)


def test_hook_prompt_context(make_runtime: Callable[..., Runtime]) -> None:
    seen: list[tuple[ToolContext, str]] = []

    class One:
        @hookimpl
        def prompt_context(self, context: ToolContext, user_text: str) -> str:
            seen.append((context, user_text))
            return "Known: prefers terse answers."

    class Two:
        @hookimpl
        def prompt_context(self, user_text: str) -> list[str]:
            return ["block a", "", "block b"]

    class Broken:
        @hookimpl
        def prompt_context(self) -> str:
            raise RuntimeError("recall store down")

    rt = make_runtime(One(), Broken(), Two())
    assert rt.prompt_context(CTX, "hello") == ["Known: prefers terse answers.", "block a", "block b"]
    assert seen == [(CTX, "hello")]


def test_hook_after_turn(make_runtime: Callable[..., Runtime]) -> None:
    seen: list[Any] = []

    class Observer:
        @hookimpl
        def after_turn(self, context: ToolContext, transcript: list[Message]) -> None:
            seen.append((context, transcript))

    rt = make_runtime(Observer())
    transcript = [Message("user", "remember I like tea", actor=CTX.actor), Message("assistant", "Noted.")]
    rt.after_turn(CTX, transcript)
    assert seen == [(CTX, transcript)]


def test_hook_before_tool_execute(make_runtime: Callable[..., Runtime]) -> None:
    calls: list[tuple[str, dict[str, Any], ToolContext]] = []

    class Policy:
        @hookimpl
        def before_tool_execute(self, tool: Tool, arguments: dict[str, Any], context: ToolContext) -> str | None:
            calls.append((tool.name, arguments, context))
            return "Blocked by policy; ask an admin." if arguments.get("blocked") else None

    class P:
        @hookimpl
        def register_sources(self, register: Any) -> None:
            register(Source("x", "X."), tools=[Tool("t", "T.", {"type": "object"}, echo)])

    rt = make_runtime(P(), Policy())
    assert rt.execute_tool("x__t", {"blocked": False}, CTX)["ok"] is True
    assert rt.execute_tool("x__t", {"blocked": True}, CTX)["error"]["code"] == "not_permitted"
    assert calls == [("t", {"blocked": False}, CTX), ("t", {"blocked": True}, CTX)]


def test_hook_startup(make_runtime: Callable[..., Runtime]) -> None:
    events: list[str] = []

    class P:
        @hookimpl
        def register_sources(self, register: Any) -> None:
            events.append("register")

        @hookimpl
        def startup(self, runtime: Runtime) -> None:
            events.append(f"startup:{len(runtime.catalog.sources)}")

    make_runtime(P())
    assert events == ["register", "startup:0"]


def test_hook_shutdown(make_runtime: Callable[..., Runtime]) -> None:
    events: list[Runtime] = []

    class P:
        @hookimpl
        def shutdown(self, runtime: Runtime) -> None:
            events.append(runtime)

    rt = make_runtime(P())
    assert events == []
    with rt:
        pass
    rt.close()
    assert events == [rt]


def test_unclosed_runtime_shuts_down_at_interpreter_exit(tmp_path: Path) -> None:
    import subprocess

    marker = tmp_path / "closed"
    code = f"""
from junior_core import Runtime, hookimpl
class P:
    @hookimpl
    def shutdown(self, runtime):
        open({str(marker)!r}, "w").write("yes")
rt = Runtime(plugins=[P()])
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert marker.read_text() == "yes"


def test_hookimpl_marker_is_reexported() -> None:
    assert hookimpl.project_name == "junior"
    assert re.match(r"^[a-z_]+$", "".join(hookspecs.HOOK_NAMES))
