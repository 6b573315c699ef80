"""One test per hook (``test_hook_<name>``), and a check that every hook is documented and tested."""

from __future__ import annotations

import contextvars
import inspect
import logging
import re
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from attrs import evolve as attrs_evolve
from click.testing import CliRunner

from junior_core import (
    Actor,
    Conversation,
    Message,
    PluginError,
    RegistrationError,
    Runtime,
    Source,
    Tool,
    ToolContext,
    hookimpl,
)
from junior_core._plugins import hookspecs
from junior_core.testing import ManualClock, wait_until
from tests.helpers import OBJECT, echo, notes_plugin

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
    assert rt.catalog_tool("a__t").plugin.endswith("test_hook_register_sources.<locals>.P")  # type: ignore[union-attr]


def test_hook_register_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    from junior_core import cli as cli_module

    class P:
        @hookimpl
        def register_commands(self, cli: click.Group) -> None:
            @cli.command(name="hello-test")
            def hello() -> None:
                click.echo("hello from a plugin")

    from junior_core._plugins.plugin_set import PluginSet

    def fake_load() -> PluginSet:
        plugin_set = PluginSet(strict=True)
        plugin_set.add(P(), "hello-plugin")
        return plugin_set

    monkeypatch.setattr("junior_core.cli._common.load_plugins", fake_load)
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
    assert rt.prompt_context(CTX, "hello", host=False) == ["Known: prefers terse answers.", "block a", "block b"]
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


def test_hook_tool_visible(make_runtime: Callable[..., Runtime]) -> None:
    asked: list[tuple[str, str, str, ToolContext]] = []

    class Visibility:
        @hookimpl
        def tool_visible(self, tool: Tool, tool_name: str, source: str, context: ToolContext) -> bool | None:
            asked.append((tool.name, tool_name, source, context))
            if context.actor is not None and context.actor.user_id == "U2" and tool.name in ("add_note", "quick_note"):
                return False
            return None

    rt = make_runtime(notes_plugin(), Visibility())
    bob = attrs_evolve(CTX, actor=Actor("slack", "T1", "U2"))
    mine, theirs = rt.search_tools("write a note", context=CTX), rt.search_tools("write a note", context=bob)
    assert mine["tools"][0]["tool_name"] == "notes__add_note"
    assert "notes__add_note" not in [t["tool_name"] for t in theirs["tools"]]
    assert theirs["total_catalog_tools"] == mine["total_catalog_tools"] - 2
    assert theirs["total_matches"] == mine["total_matches"] - 2  # both hidden tools are about notes
    listing = rt.search_tools(None, "notes", 20, context=bob)
    assert listing["total_eligible_tools"] == rt.search_tools(None, "notes", 20, context=CTX)["total_eligible_tools"] - 2
    assert {"notes__add_note", "notes__quick_note"}.isdisjoint(t["tool_name"] for t in listing["tools"])
    assert "notes__quick_note" in [t["name"] for t in rt.model_tools(CTX)]
    assert "notes__quick_note" not in [t["name"] for t in rt.model_tools(bob)]
    assert rt.execute_tool("notes__add_note", {"text": "hi"}, bob)["error"]["code"] == "unknown_tool"
    assert rt.call_model_tool("notes__quick_note", {}, bob)["error"]["code"] == "unknown_tool"
    assert rt.execute_tool("notes__add_note", {"text": "hi"}, CTX)["ok"] is True
    assert rt.call_tool("notes__add_note", {"text": "hi"}, bob)["ok"] is True  # host code still runs it
    # Asked once per tool for each actor and conversation, with no tool_call_id, however often it searches.
    names = [name for _, name, _, ctx in asked if ctx.actor == bob.actor]
    assert sorted(names) == sorted(e.tool_name for e in rt.visible_tools(CTX))
    assert {source for _, _, source, _ in asked} == {"notes"}
    assert {ctx.tool_call_id for *_, ctx in asked} == {None}


def test_hook_startup(make_runtime: Callable[..., Runtime]) -> None:
    events: list[str] = []

    class P:
        @hookimpl
        def register_sources(self, register: Any) -> None:
            events.append("register")

        @hookimpl
        def startup(self, runtime: Runtime) -> None:
            events.append(f"startup:{len(runtime._catalog.sources)}")

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


@pytest.mark.slow
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


# -- order, options and the veto, as pluggy promises --------------------------------------------
def _block(name: str, **options: bool) -> object:
    class Block:
        junior_plugin_name = name

        @hookimpl(**options)
        def prompt_context(self) -> str:
            return name

    return Block()


def test_tryfirst_and_trylast_set_the_call_order(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(
        _block("last", trylast=True), _block("plain-1"), _block("first", tryfirst=True), _block("plain-2")
    )
    assert rt.prompt_context(CTX, "hi", host=False) == ["first", "plain-1", "plain-2", "last"]
    assert rt._plugins.implementers("prompt_context") == ["first", "plain-1", "plain-2", "last"]


class _Tools:
    junior_plugin_name = "tools"

    def __init__(self) -> None:
        self.ran: list[dict[str, Any]] = []

    @hookimpl
    def register_sources(self, register: Any) -> None:
        def run(arguments: dict[str, Any], context: Any) -> str:
            self.ran.append(arguments)
            return "ran"

        register(Source("x", "X."), tools=[Tool("t", "T.", {"type": "object"}, run)])


def test_before_tool_execute_stops_at_the_first_veto_in_pluggy_order(make_runtime: Callable[..., Runtime]) -> None:
    asked: list[str] = []

    class Audit:
        junior_plugin_name = "audit"

        @hookimpl
        def before_tool_execute(self, tool: Tool) -> None:
            asked.append("audit")

    class Gate:
        junior_plugin_name = "gate"

        @hookimpl(tryfirst=True)
        def before_tool_execute(self, arguments: dict[str, Any]) -> str | None:
            asked.append("gate")
            return "Closed for maintenance; try after 18:00." if arguments.get("closed") else None

    class Later:
        junior_plugin_name = "later"

        @hookimpl(trylast=True)
        def before_tool_execute(self) -> str:
            asked.append("later")
            return "Refused by the last policy."

    tools = _Tools()
    rt = make_runtime(tools, Audit(), Later(), Gate())
    vetoed = rt.execute_tool("x__t", {"closed": True}, CTX)
    assert vetoed["error"] == {"code": "not_permitted", "message": "Closed for maintenance; try after 18:00."}
    assert asked == ["gate"] and tools.ran == []
    asked.clear()
    assert rt.execute_tool("x__t", {"closed": False}, CTX)["error"]["message"] == "Refused by the last policy."
    assert asked == ["gate", "audit", "later"] and tools.ran == []


@pytest.mark.parametrize("option", ["wrapper", "hookwrapper"])
def test_hook_wrappers_are_refused_at_registration_naming_the_plugin(
    make_runtime: Callable[..., Runtime], option: str
) -> None:
    class Wrapping:
        junior_plugin_name = "wrapping-policy"

        @hookimpl(**{option: True})
        def before_tool_execute(self) -> Any:
            return (yield)

    with pytest.raises(RegistrationError, match=r"plugin 'wrapping-policy': before_tool_execute is a hook wrapper"):
        make_runtime(_Tools(), Wrapping())
    tools = _Tools()
    rt = make_runtime(tools, Wrapping(), strict=False)
    info = {i.name: i for i in rt.plugins}["wrapping-policy"]
    assert info.status == "failed" and f"{option}=True" in (info.error or "") and "tryfirst" in (info.error or "")
    assert rt.execute_tool("x__t", {}, CTX) == {"ok": True, "tool_name": "x__t", "result": "ran"}


def test_tracing_is_pluggy_hook_call_monitoring(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], make_runtime: Callable[..., Runtime]
) -> None:
    monkeypatch.setenv("JUNIOR_TRACE_PLUGINS", "1")
    rt = make_runtime(_block("recall"))
    rt.prompt_context(CTX, "hi", host=False)
    err = capsys.readouterr().err
    assert "[junior] prompt_context -> recall()" in err
    assert re.search(r"\[junior\] prompt_context <- recall: returned 'recall' in \d+\.\d ms", err)
    # A direct pluggy call is traced too: the monitor sits in pluggy, not in junior's loop.
    assert rt._plugins.pm.hook.prompt_context(context=CTX, user_text="hi") == ["recall"]
    assert "[junior] prompt_context -> recall()" in capsys.readouterr().err


def test_hook_calls_see_the_callers_context_variables(make_runtime: Callable[..., Runtime]) -> None:
    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="none")

    class Tagger:
        @hookimpl
        def prompt_context(self) -> str:
            return f"request {request_id.get()}"

    rt = make_runtime(Tagger())
    request_id.set("r-42")
    assert rt.prompt_context(CTX, "hi", host=False) == ["request r-42"]


# -- deadlines ---------------------------------------------------------------------------------------
# Every deadline test but one runs on a ManualClock: a late hook moves the clock past its deadline and blocks, an
# on-time one just returns, so the outcome never depends on the machine's load and no test waits for a deadline.
OVERRUN_S = 3600.0  # how far a late hook moves the clock: past any deadline below


@pytest.fixture
def never() -> Iterator[threading.Event]:
    """An event no hook sees set during the test: waiting on it never returns. Set afterwards to free the threads."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def _late(name: str, release: threading.Event, *hooks: str, clock: ManualClock | None = None) -> Any:
    """A plugin whose given hooks block until ``release`` is set; on ``clock``, past their deadline until then."""

    class Late:
        junior_plugin_name = name

        def __init__(self) -> None:
            self.entered: list[str] = []

        def _wait(self, hook: str) -> None:
            self.entered.append(hook)
            if clock is not None and not release.is_set():
                clock.advance(OVERRUN_S)
            release.wait()

    plugin = Late()
    for hook in hooks:

        def impl(self: Any, _hook: str = hook) -> Any:
            self._wait(_hook)
            return "too late" if _hook in ("prompt_context", "before_tool_execute") else None

        impl.__name__ = hook
        setattr(Late, hook, hookimpl(specname=hook)(impl))
    return plugin


def _error(rt: Runtime, plugin: str) -> str:
    return {i.name: i for i in rt.plugins}[plugin].error or ""


def test_a_prompt_context_that_never_returns_is_skipped_and_logged(
    make_runtime: Callable[..., Runtime], never: threading.Event, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    stuck = _late("stuck-recall", never, "prompt_context", clock=clock)
    rt = make_runtime(stuck, _block("fast"), hook_timeout_s=1.0, clock=clock)
    assert rt.prompt_context(CTX, "hi", host=False) == ["fast"]
    assert "prompt_context did not return within 1 s; its part was skipped" in _error(rt, "stuck-recall")
    assert any("stuck-recall" in r.getMessage() and "did not return" in r.getMessage() for r in caplog.records)


def test_on_the_monotonic_clock_a_hook_past_its_deadline_is_skipped(
    make_runtime: Callable[..., Runtime], never: threading.Event
) -> None:
    # The one deadline test on the real clock: the hook never returns, so it is late however loaded the machine.
    rt = make_runtime(_late("stuck-recall", never, "prompt_context"), hook_timeout_s=0.05)
    assert rt.prompt_context(CTX, "hi", host=False) == []
    assert "prompt_context did not return within 0.05 s" in _error(rt, "stuck-recall")


def test_a_slow_hook_is_kept_while_the_clock_has_not_passed_its_deadline(
    make_runtime: Callable[..., Runtime], clock: ManualClock
) -> None:
    release = threading.Event()

    class Slow:
        junior_plugin_name = "slow"

        @hookimpl
        def prompt_context(self) -> str:
            clock.advance(0.009)  # most of its deadline, in clock time
            assert release.wait(60)  # and five times its deadline, in real time
            return "slow"

    rt = make_runtime(Slow(), _block("fast"), hook_timeout_s=0.01, clock=clock)
    threading.Timer(0.05, release.set).start()
    assert rt.prompt_context(CTX, "hi", host=False) == ["slow", "fast"]
    assert _error(rt, "slow") == ""


def test_an_after_turn_that_never_returns_does_not_hold_the_turn(
    make_runtime: Callable[..., Runtime], never: threading.Event, clock: ManualClock
) -> None:
    seen: list[int] = []

    class Observer:
        @hookimpl
        def after_turn(self, transcript: list[Message]) -> None:
            seen.append(len(transcript))

    stuck = _late("stuck-observer", never, "after_turn", clock=clock)
    rt = make_runtime(stuck, Observer(), hook_timeout_s=1.0, clock=clock)
    rt.after_turn(CTX, [Message("user", "hi", actor=CTX.actor)])
    assert seen == [1]
    assert "after_turn did not return within 1 s" in _error(rt, "stuck-observer")


def test_a_policy_that_never_answers_denies_the_call(
    make_runtime: Callable[..., Runtime], never: threading.Event, clock: ManualClock
) -> None:
    tools = _Tools()
    stuck = _late("stuck-policy", never, "before_tool_execute", clock=clock)
    rt = make_runtime(tools, stuck, hook_timeout_s=1.0, clock=clock)
    out = rt.execute_tool("x__t", {}, CTX)
    assert out["ok"] is False and out["error"]["code"] == "not_permitted"
    assert "did not answer in time" in out["error"]["message"]
    assert tools.ran == []


def test_a_plugin_with_hung_calls_is_not_called_again_until_one_returns(
    make_runtime: Callable[..., Runtime], clock: ManualClock
) -> None:
    from junior_core._plugins.plugin_set import MAX_OVERDUE_CALLS

    release = threading.Event()
    try:
        late = _late("stuck", release, "prompt_context", clock=clock)
        rt = make_runtime(late, _block("fast"), hook_timeout_s=1.0, clock=clock)
        for _ in range(MAX_OVERDUE_CALLS + 3):
            assert rt.prompt_context(CTX, "hi", host=False) == ["fast"]
        assert late.entered == ["prompt_context"] * MAX_OVERDUE_CALLS  # each moved the clock before it was dropped
    finally:
        release.set()
    # Released, the hung calls drain on their threads; until one has returned the plugin is still skipped.
    def drained() -> bool:
        answer = rt.prompt_context(CTX, "hi", host=False)
        assert answer in (["fast"], ["too late", "fast"]), answer
        return answer == ["too late", "fast"]

    wait_until(drained, what="a hung call to return")


def test_a_startup_that_never_returns_does_not_hang_the_host(
    make_runtime: Callable[..., Runtime], never: threading.Event, clock: ManualClock
) -> None:
    tools = _Tools()
    stuck = _late("stuck-start", never, "startup", clock=clock)
    rt = make_runtime(tools, stuck, strict=False, startup_timeout_s=1.0, clock=clock)
    assert "startup did not return within 1 s" in _error(rt, "stuck-start")
    assert rt.execute_tool("x__t", {}, CTX)["ok"] is True
    with pytest.raises(PluginError, match=r"plugin 'stuck-start': startup did not return within 1 s"):
        make_runtime(tools, _late("stuck-start", never, "startup", clock=clock), startup_timeout_s=1.0, clock=clock)


def test_register_sources_and_shutdown_that_never_return_do_not_hang_the_host(
    make_runtime: Callable[..., Runtime], never: threading.Event, clock: ManualClock
) -> None:
    stuck = _late("stuck", never, "register_sources", "shutdown", clock=clock)
    rt = make_runtime(_Tools(), stuck, strict=False, startup_timeout_s=1.0, clock=clock)
    info = {i.name: i for i in rt.plugins}["stuck"]
    assert info.status == "failed" and "register_sources did not return within 1 s" in (info.error or "")
    assert rt.sources == [{"id": "x", "description": "X."}]
    rt2 = make_runtime(_late("stuck-close", never, "shutdown", clock=clock), startup_timeout_s=1.0, clock=clock)
    rt2.close()
    assert rt2.closed and "shutdown did not return within 1 s" in _error(rt2, "stuck-close")


def test_hook_deadlines_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, make_runtime: Callable[..., Runtime], caplog: pytest.LogCaptureFixture
) -> None:
    from junior_core._plugins.plugin_set import DEFAULT_HOOK_TIMEOUT_S

    monkeypatch.setenv("JUNIOR_HOOK_TIMEOUT_S", "0.5")
    monkeypatch.setenv("JUNIOR_STARTUP_TIMEOUT_S", "7")
    rt = make_runtime()
    assert (rt._plugins.hook_timeout_s, rt._plugins.startup_timeout_s) == (0.5, 7.0)
    assert make_runtime(hook_timeout_s=2)._plugins.hook_timeout_s == 2.0
    with pytest.raises(ValueError, match="a hook deadline must be a number of seconds greater than 0, not 0"):
        make_runtime(startup_timeout_s=0)
    for typo in ("soon", "-1", "inf"):
        monkeypatch.setenv("JUNIOR_HOOK_TIMEOUT_S", typo)
        with caplog.at_level(logging.WARNING, logger="junior.plugins"):
            assert make_runtime()._plugins.hook_timeout_s == DEFAULT_HOOK_TIMEOUT_S
        assert f"JUNIOR_HOOK_TIMEOUT_S='{typo}' is not a number of seconds greater than 0; using 10 s" in caplog.text


def test_a_hook_raising_systemexit_or_its_own_timeout_is_that_plugins_failure(
    make_runtime: Callable[..., Runtime]
) -> None:
    class Exits:
        junior_plugin_name = "exits"

        @hookimpl
        def prompt_context(self) -> str:
            raise SystemExit(3)

    class OwnTimeout:
        junior_plugin_name = "own-timeout"

        @hookimpl
        def prompt_context(self) -> str:
            raise TimeoutError("the recall store timed out")

    class Interrupts:
        @hookimpl
        def before_tool_execute(self) -> None:
            raise KeyboardInterrupt

    tools = _Tools()
    rt = make_runtime(tools, Exits(), OwnTimeout(), _block("fast"), Interrupts())
    assert rt.prompt_context(CTX, "hi", host=False) == ["fast"]
    assert _error(rt, "exits") == "prompt_context failed: SystemExit: 3"
    assert _error(rt, "own-timeout") == "prompt_context failed: TimeoutError: the recall store timed out"
    out = rt.execute_tool("x__t", {}, CTX)
    assert out["error"]["code"] == "not_permitted" and "a policy check failed" in out["error"]["message"]
    assert tools.ran == []


def test_shutdown_still_runs_when_no_new_thread_can_start(make_runtime: Callable[..., Runtime]) -> None:
    from unittest import mock

    ran_on: list[str] = []

    class P:
        @hookimpl
        def shutdown(self) -> None:
            ran_on.append(threading.current_thread().name)

    rt = make_runtime(P())
    # What Python 3.12+ may raise for a thread started from an atexit handler, where unclosed runtimes close.
    refused = RuntimeError("can't create new thread at interpreter shutdown")
    with mock.patch("threading.Thread.start", side_effect=refused):
        rt.close()
    assert ran_on == [threading.current_thread().name]


def test_hook_config_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from junior_core import cli as cli_module
    from junior_core._plugins.plugin_set import PluginSet

    named = tmp_path / "calc.json"
    named.write_text("{}")

    class P:
        @hookimpl
        def config_files(self) -> list[str]:
            return [str(named), str(tmp_path / "absent.json")]

    class Broken:
        @hookimpl
        def config_files(self) -> list[str]:
            raise RuntimeError("no files today")

    def fake_load() -> PluginSet:
        plugin_set = PluginSet(strict=False)
        plugin_set.add(P(), "calc")
        plugin_set.add(Broken(), "broken")
        return plugin_set

    monkeypatch.setattr("junior_core.cli._common.load_plugins", fake_load)
    monkeypatch.setenv("JUNIOR_CONFIG", str(tmp_path / "junior.toml"))
    group = cli_module.build_cli()
    result = CliRunner().invoke(group, ["config", "path"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        str(tmp_path / "junior.toml"), f"{named}  (calc)", f"{tmp_path / 'absent.json'}  (calc)  (missing)",
    ]
