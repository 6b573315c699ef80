"""Plugin loading: real installed distributions, failure isolation, environment switches."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from junior_core import PluginError, Runtime, Source, Tool, hookimpl
from tests.helpers import OBJECT, SourcePlugin, echo

DISTS = Path(__file__).parent / "dists"
JUNIOR = [sys.executable, "-m", "junior_core"]
TEST_PLUGINS = "good,broken-import,bad-hook-arg,misspelled,good-clone"


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test distributions, really installed (with their entry points) into a target directory."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            *(str(p) for p in sorted(DISTS.iterdir())),
        ],
        check=True,
        capture_output=True,
    )
    return target


# The session's own index cache and key (conftest.py), never the user's.
_KEEP = ("JUNIOR_CACHE_DIR", "JUNIOR_CONFIG_DIR")


def junior(site: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JUNIOR_") or k in _KEEP}
    environ.update({"PYTHONPATH": str(site), "JUNIOR_LOAD_PLUGINS": TEST_PLUGINS, **env})
    return subprocess.run([*JUNIOR, *args], capture_output=True, text=True, env=environ, timeout=60)


def plugins_json(site: Path, **env: str) -> dict[str, dict[str, Any]]:
    proc = junior(site, "plugins", "--json", **env)
    assert proc.returncode == 0, proc.stderr
    return {row["name"]: row for row in json.loads(proc.stdout)}


@pytest.mark.slow
def test_broken_installed_plugins_are_reported_and_the_rest_load(site: Path) -> None:
    rows = plugins_json(site)
    assert rows["good"]["status"] == "loaded"
    assert rows["good"]["distribution"] == "junior-test-good" and rows["good"]["version"] == "1.2.3"
    assert rows["good"]["hooks"] == ["register_sources"]
    broken = rows["broken-import"]
    assert broken["status"] == "failed" and broken["distribution"] == "junior-test-broken-import"
    assert "junior_dependency_that_does_not_exist" in broken["error"]
    assert rows["bad-hook-arg"]["status"] == "failed" and "catalog" in rows["bad-hook-arg"]["error"]
    assert rows["misspelled"]["status"] == "failed"
    assert rows["misspelled"]["error"].endswith("unknown hook 'register_source'; did you mean 'register_sources'?")
    clone = rows["good-clone"]
    assert clone["status"] == "failed"
    assert "'good'" in clone["error"] and "already registered by plugin 'good'" in clone["error"]
    sources = json.loads(junior(site, "sources", "--json").stdout)
    assert sources == [{"id": "good", "description": "A plugin that works."}]
    ping = json.loads(junior(site, "exec", "good__ping", "--json").stdout)
    assert ping == {"ok": True, "tool_name": "good__ping", "result": "pong"}


@pytest.mark.slow
def test_a_plugin_of_typed_functions_is_found_searched_and_run_through_its_entry_point(site: Path) -> None:
    module = (site / "junior_test_typed" / "__init__.py").read_text()
    assert len([line for line in module.splitlines() if line.strip()]) <= 8  # a function and a hook
    docs = (Path(__file__).parent.parent / "docs" / "authoring-sources.md").read_text()
    assert f"```python\n{module}```" in docs  # the smallest plugin the docs show is this one
    rows = plugins_json(site, JUNIOR_LOAD_PLUGINS="typed")
    assert rows["typed"]["status"] == "loaded" and rows["typed"]["distribution"] == "junior-test-typed"
    found = json.loads(junior(site, "search", "salute Ada", "--json", JUNIOR_LOAD_PLUGINS="typed").stdout)
    assert found["tools"][0] == {
        "tool_name": "greetings__greet",
        "description": "Greet someone by name, as many times as asked.",
        "source": "greetings",
        "input_schema": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "times": {"type": "integer", "default": 1}},
            "required": ["name"],
            "additionalProperties": False,
        },
        "matched": ["salute"],  # annotations at their defaults are left out
    }
    args = json.dumps({"name": "Ada", "times": 2})
    out = junior(site, "exec", "greetings__greet", "--args", args, "--json", JUNIOR_LOAD_PLUGINS="typed")
    assert json.loads(out.stdout) == {"ok": True, "tool_name": "greetings__greet", "result": "Hello, Ada! Hello, Ada!"}
    wrong = junior(site, "exec", "greetings__greet", "--args", '{"name": "Ada", "times": "2"}', "--json",
                   JUNIOR_LOAD_PLUGINS="typed")
    assert json.loads(wrong.stdout)["error"]["code"] == "invalid_arguments"


@pytest.mark.slow
def test_entry_points_load_in_distribution_name_order(site: Path) -> None:
    names = list(plugins_json(site, JUNIOR_LOAD_PLUGINS="good,good-clone"))
    assert names == ["good", "good-clone"]


@pytest.mark.slow
def test_strict_mode_raises_naming_the_plugin(site: Path) -> None:
    proc = junior(site, "sources", JUNIOR_STRICT_PLUGINS="1", JUNIOR_LOAD_PLUGINS="good,broken-import")
    assert proc.returncode == 1
    assert "error: plugin 'broken-import'" in proc.stderr and "junior_dependency_that_does_not_exist" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_allowlist_and_denylist_apply_before_import(site: Path) -> None:
    assert list(plugins_json(site, JUNIOR_LOAD_PLUGINS="good")) == ["good"]
    assert list(plugins_json(site, JUNIOR_LOAD_PLUGINS="")) == []
    rows = plugins_json(site, JUNIOR_DISABLE_PLUGINS="broken-import,junior-test-misspelled")
    assert "broken-import" not in rows and "misspelled" not in rows and "good" in rows


@pytest.mark.slow
def test_trace_prints_hook_calls(site: Path) -> None:
    proc = junior(site, "sources", JUNIOR_TRACE_PLUGINS="1", JUNIOR_LOAD_PLUGINS="good")
    assert "[junior] register_sources -> good(register)" in proc.stderr
    assert re.search(r"\[junior\] register_sources <- good: returned None in \d+\.\d ms", proc.stderr)


def test_from_entry_points_in_process_sees_installed_example(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUNIOR_LOAD_PLUGINS", "units")
    with Runtime.from_entry_points() as rt:
        assert [s["id"] for s in rt.sources] == ["units"]
        out = rt.execute_tool("units__convert_length", {"value": 1, "from_unit": "mile", "to_unit": "metre"})
        assert out["result"] == {"value": 1609.344, "unit": "metre"}


# -- in-process plugins ------------------------------------------------------------------------
def test_misspelled_hook_is_named(make_runtime: Callable[..., Runtime]) -> None:
    class Typo:
        junior_plugin_name = "typo"

        @hookimpl
        def register_sourcez(self, register: Any) -> None:
            pass

    with pytest.raises(PluginError, match="typo.*register_sourcez'; did you mean 'register_sources'"):
        make_runtime(Typo())


def test_an_unknown_hook_far_from_any_name_lists_the_hooks(make_runtime: Callable[..., Runtime]) -> None:
    class Stranger:
        junior_plugin_name = "stranger"

        @hookimpl
        def on_message(self) -> None:
            pass

    with pytest.raises(PluginError, match="unknown hook 'on_message'; junior's hooks are register_sources, "):
        make_runtime(Stranger())


def test_an_optional_hook_without_a_spec_is_allowed(make_runtime: Callable[..., Runtime]) -> None:
    class Forward:
        junior_plugin_name = "forward"

        @hookimpl(optionalhook=True)
        def tool_visible(self) -> bool:
            return True

    assert make_runtime(Forward())._plugins.loaded == ["forward"]


def test_unmarked_methods_are_ignored(make_runtime: Callable[..., Runtime]) -> None:
    class Plain:
        junior_plugin_name = "plain"

        def register_sources(self, register: Any) -> None:
            raise AssertionError("not a hookimpl, never called")

    assert make_runtime(Plain()).sources == []


def test_registration_order_is_the_order_given(make_runtime: Callable[..., Runtime]) -> None:
    first = SourcePlugin(Source("x", "From first."), [Tool("t", "T.", OBJECT, echo)], name="first")
    second = SourcePlugin(Source("x", "From second."), [Tool("t", "T.", OBJECT, echo)], name="second")
    assert make_runtime(first, second, strict=False).sources == [{"id": "x", "description": "From first."}]
    assert make_runtime(second, first, strict=False).sources == [{"id": "x", "description": "From second."}]


def test_a_plugin_class_is_instantiated_per_runtime(make_runtime: Callable[..., Runtime]) -> None:
    class Counter:
        instances = 0

        def __init__(self) -> None:
            Counter.instances += 1
            self.calls = 0

        @hookimpl
        def register_sources(self, register: Any) -> None:
            register(Source("counter", "Counts."), tools=[Tool("n", "N.", OBJECT, self.count)])

        def count(self, arguments: dict[str, Any], context: Any) -> int:
            self.calls += 1
            return self.calls

    one, two = make_runtime(Counter), make_runtime(Counter)
    assert Counter.instances == 2
    assert [one.execute_tool("counter__n")["result"] for _ in range(2)] == [1, 2]
    assert two.execute_tool("counter__n")["result"] == 1


def test_startup_failure_is_reported_when_not_strict(make_runtime: Callable[..., Runtime]) -> None:
    class BadStart:
        junior_plugin_name = "bad-start"

        @hookimpl
        def startup(self, runtime: Runtime) -> None:
            raise OSError("database refused the connection")

    with pytest.raises(PluginError, match="bad-start.*database refused"):
        make_runtime(BadStart())
    rt = make_runtime(BadStart(), SourcePlugin(Source("x", "X."), [Tool("t", "T.", OBJECT, echo)]), strict=False)
    assert rt.execute_tool("x__t")["ok"] is True
    assert "database refused" in ({i.name: i for i in rt.plugins}["bad-start"].error or "")


def test_two_instances_of_one_plugin_class_get_distinct_names(make_runtime: Callable[..., Runtime]) -> None:
    one = SourcePlugin(Source("a", "A."), [Tool("t", "T.", OBJECT, echo)])
    two = SourcePlugin(Source("b", "B."), [Tool("t", "T.", OBJECT, echo)])
    del one.junior_plugin_name, two.junior_plugin_name  # fall back to the class name for both
    rt = make_runtime(one, two)
    names = [info.name for info in rt.plugins]
    assert names[0].endswith("SourcePlugin") and names[1] == names[0] + "#2"
    assert [s["id"] for s in rt.sources] == ["a", "b"]
