"""The ``junior`` command line, with its --json output equal to the runtime's dicts."""

from __future__ import annotations

import ast
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from junior_core import Runtime
from junior_core import cli as cli_module
from junior_core._plugins.plugin_set import PluginSet
from tests.helpers import notes_plugin, weather_plugin


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[CliRunner, Runtime]]:
    def fake_load() -> PluginSet:
        plugin_set = PluginSet(strict=True)
        plugin_set.add(notes_plugin())
        plugin_set.add(weather_plugin())
        return plugin_set

    monkeypatch.setattr("junior_core.cli._common.load_plugins", fake_load)
    reference = Runtime(plugins=[notes_plugin(), weather_plugin()])
    yield CliRunner(), reference
    reference.close()


def invoke(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli_module.build_cli(), list(args))


def test_sources_json_is_the_runtime_dict(run: tuple[CliRunner, Runtime]) -> None:
    runner, rt = run
    result = invoke(runner, "sources", "--json")
    assert result.exit_code == 0
    assert json.loads(result.output) == rt.sources


def test_sources_table(run: tuple[CliRunner, Runtime]) -> None:
    result = invoke(run[0], "sources")
    lines = result.output.splitlines()
    assert lines[0].split() == ["SOURCE", "DESCRIPTION"]
    assert lines[2].startswith("notes") and lines[3].startswith("weather")


def test_search_json_and_table(run: tuple[CliRunner, Runtime]) -> None:
    runner, rt = run
    result = invoke(runner, "search", "weather forecast", "--json")
    assert json.loads(result.output) == rt.search_tools("weather forecast")
    table = invoke(runner, "search", "weather forecast", "--source", "weather", "--limit", "1")
    assert table.exit_code == 0
    assert "weather__get_forecast" in table.output and "notes__" not in table.output


def test_search_unknown_source_exits_non_zero_with_the_hint(run: tuple[CliRunner, Runtime]) -> None:
    result = invoke(run[0], "search", "x", "--source", "nope")
    assert result.exit_code == 1
    assert "Known sources: notes, weather" in result.output


@pytest.mark.parametrize("limit", ["0", "21"])
def test_search_bad_limit_is_one_clear_line(run: tuple[CliRunner, Runtime], limit: str) -> None:
    result = invoke(run[0], "search", "x", "--limit", limit)
    assert result.exit_code == 2
    assert result.output.startswith("error: --limit: ")
    assert len(result.output.strip().splitlines()) == 1


def test_exec_json_success_and_failure(run: tuple[CliRunner, Runtime]) -> None:
    runner, rt = run
    ok = invoke(runner, "exec", "notes__add_note", "--args", '{"text": "buy milk"}', "--json")
    assert ok.exit_code == 0
    assert json.loads(ok.output) == {
        "ok": True,
        "tool_name": "notes__add_note",
        "result": {"echo": {"text": "buy milk"}},
    }
    bad = invoke(runner, "exec", "notes__add_note", "--args", '{"txt": 1}', "--json")
    assert bad.exit_code == 1
    assert json.loads(bad.output) == rt.execute_tool("notes__add_note", {"txt": 1})


@pytest.mark.parametrize(("args", "message"), [("{", "--args is not valid JSON"), ("[1]", "must be a JSON object")])
def test_exec_bad_json_args(run: tuple[CliRunner, Runtime], args: str, message: str) -> None:
    result = invoke(run[0], "exec", "notes__add_note", "--args", args)
    assert result.exit_code == 2 and message in result.output


def test_exec_prints_result_or_error_line(run: tuple[CliRunner, Runtime]) -> None:
    ok = invoke(run[0], "exec", "notes__add_note", "--args", '{"text": "t"}')
    assert json.loads(ok.output) == {"echo": {"text": "t"}}
    missing = invoke(run[0], "exec", "notes__nope")
    assert missing.exit_code == 1 and missing.output.startswith("error (unknown_tool): no tool named 'notes__nope'")


def test_exec_runs_in_a_local_context_by_default() -> None:
    ctx = cli_module.local_context(user="alice")
    assert ctx.actor is not None and ctx.actor.key == "local:local:alice"
    assert ctx.conversation is not None and ctx.conversation.source_key == "local:local:cli:main"
    with pytest.raises(ValueError, match="invalid Slack timestamp"):
        cli_module.local_context(platform="slack", team="T1", thread="not-a-ts")


def test_exec_refuses_invalid_slack_thread(run: tuple[CliRunner, Runtime]) -> None:
    result = invoke(run[0], "exec", "notes__add_note", "--platform", "slack", "--thread", "17000000.memory-explicit")
    assert result.exit_code == 2 and "invalid Slack timestamp '17000000.memory-explicit'" in result.output


def test_plugins_and_tools(run: tuple[CliRunner, Runtime]) -> None:
    runner, rt = run
    plugins = json.loads(invoke(runner, "plugins", "--json").output)
    assert [p["name"] for p in plugins] == ["plugin-notes", "plugin-weather"]
    assert all(p["status"] == "loaded" for p in plugins)
    assert json.loads(invoke(runner, "tools", "--json").output) == rt.model_tools()
    assert "## searchTools" in invoke(runner, "tools").output


@pytest.mark.slow
def test_junior_help_imports_nothing_heavy(tmp_path: Path) -> None:
    """`junior --help` with every installed plugin stays cheap: no asyncio, SQLAlchemy, Whoosh, jsonschema or SDKs."""
    code = (
        "import sys; from junior_core.cli import main; sys.argv = ['junior', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = ('asyncio', 'sqlalchemy', 'whoosh', 'jsonschema', 'mcp', 'openai', 'anthropic')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0 and "Usage: junior" in proc.stdout, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "[]"


def _loaded_by_help(tmp_path: Path, prefixes: tuple[str, ...]) -> set[str]:
    """The modules under ``prefixes`` a fresh `junior --help` process has imported when it is done."""
    code = (
        "import sys; from junior_core.cli import main; sys.argv = ['junior', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in sys.modules if m.startswith({prefixes!r})), file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0 and "Usage: junior" in proc.stdout, proc.stderr
    return set(ast.literal_eval(proc.stderr.strip().splitlines()[-1]))


@pytest.mark.slow
def test_junior_help_loads_none_of_the_runtime(tmp_path: Path) -> None:
    """`junior --help` with every installed plugin loads the catalog's values, not what runs or reaches tools."""
    loaded = _loaded_by_help(tmp_path, ("junior_core",))
    assert {"junior_core._catalog.catalog", "junior_core._plugins.plugin_set"} <= loaded  # what the command line does need
    runtime = {f"junior_core.{name}" for name in (
        "runtime", "registry", "exposure", "protocol", "dispatch", "execution", "discovery", "search", "signatures",
        "options", "index_cache",
    )}
    assert not loaded & runtime, sorted(loaded & runtime)


@pytest.mark.slow
def test_junior_help_loads_none_of_the_plugins_settings_or_checks(tmp_path: Path) -> None:
    """`junior --help` loads the repository's plugins without what only a command or a tool call needs: the MCP
    bridge's settings and gateway limits (attrs classes built at import), memory's credential patterns."""
    loaded = _loaded_by_help(tmp_path, ("junior_mcp_bridge", "junior_memory"))
    assert {"junior_mcp_bridge.plugin", "junior_memory.plugin"} <= loaded  # both plugins did load
    lazy = {"junior_mcp_bridge.config", "junior_mcp_bridge.limits", "junior_memory.credentials"}
    assert not loaded & lazy, sorted(loaded & lazy)


# -- log level: resolved in process; one `junior -v mcp check` in the MCP bridge's tests is the smoke test -----
@pytest.mark.parametrize(("verbose", "level", "environ", "expected"), [
    (0, None, {}, logging.WARNING),
    (1, None, {}, logging.INFO),
    (2, None, {}, logging.DEBUG),
    (0, "info", {}, logging.INFO),
    (0, None, {"JUNIOR_LOG_LEVEL": "INFO"}, logging.INFO),
    (0, None, {"JUNIOR_LOG_LEVEL": " error "}, logging.ERROR),
    (0, None, {"JUNIOR_LOG_LEVEL": "loud"}, logging.WARNING),  # a typo in the environment is not fatal
    (1, None, {"JUNIOR_LOG_LEVEL": "ERROR"}, logging.INFO),  # -v wins over the environment
    (2, "error", {"JUNIOR_LOG_LEVEL": "INFO"}, logging.ERROR),  # --log-level wins over both
])
def test_log_level_from_the_option_then_verbosity_then_the_environment(
    verbose: int, level: str | None, environ: dict[str, str], expected: int
) -> None:
    assert cli_module.resolve_log_level(verbose, level, environ) == expected


def test_the_log_level_holds_for_the_command_and_a_bad_one_is_a_usage_error(
    run: tuple[CliRunner, Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    runner, _ = run
    logger = logging.getLogger("junior")
    before = logger.level
    seen: list[int] = []
    real = cli_module.cli_runtime
    monkeypatch.setattr(cli_module, "cli_runtime", lambda ctx: seen.append(logger.level) or real(ctx))
    monkeypatch.setenv("JUNIOR_LOG_LEVEL", "ERROR")
    for args in (("sources",), ("-v", "sources"), ("-vv", "sources"), ("--log-level", "info", "sources")):
        assert invoke(runner, *args).exit_code == 0
    assert seen == [logging.ERROR, logging.INFO, logging.DEBUG, logging.INFO]
    assert logger.level == before  # restored when the command ends
    bad = invoke(runner, "--log-level", "loud", "sources")
    assert bad.exit_code == 2 and "'loud' is not one of" in bad.output
