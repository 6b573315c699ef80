"""What every ``junior`` command shares: the invocation's plugins and runtime (run-time sources listed only when a
command needs them), JSON or table output, and failing with a message."""
from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import click

from junior_core._catalog.catalog import tool_name_prefix

if TYPE_CHECKING:
    from junior_core._plugins.plugin_set import PluginSet
    from junior_core._runtime.runtime import Runtime


ALL = "all"


def cli_runtime(ctx: click.Context, need: str | Sequence[str] = ()) -> Runtime:
    """The CLI's runtime, built once from the plugins already loaded for this invocation.

    Run-time sources (MCP servers) are listed, and so started, only when a command needs them: ``need`` is
    ``ALL`` or the source ids to list. A command that calls no such source never waits for one.
    """
    obj = ctx.ensure_object(dict)
    if "runtime" not in obj:
        from junior_core._runtime.runtime import Runtime

        runtime = Runtime(plugins_of(ctx), lazy_sources=True)
        ctx.call_on_close(runtime.close)
        obj["runtime"] = runtime
        obj["listed"] = set()
    rt: Runtime = obj["runtime"]
    listed: set[str] = obj["listed"]
    wanted = [s.id for s in rt.source_info() if s.run_time and s.id not in listed]
    if need != ALL:
        wanted = [source_id for source_id in wanted if source_id in need]
    for source_id in wanted:
        listed.add(source_id)
        rt.refresh_source(source_id)
    return rt


def sources_of(ctx: click.Context, tool_name: str) -> list[str]:
    """The run-time sources a tool_name could belong to, by its ``<source>__`` prefix."""
    rt = cli_runtime(ctx)
    return [s.id for s in rt.source_info() if s.run_time and tool_name.startswith(tool_name_prefix(s.id))]


def plugins_of(ctx: click.Context) -> PluginSet:
    root = ctx.find_root()
    found = isinstance(root.obj, dict) and "plugins" in root.obj
    plugin_set: PluginSet = root.obj["plugins"] if found else load_plugins()
    return plugin_set


def load_plugins() -> PluginSet:
    from junior_core._plugins.plugin_set import load, strict_from_env

    return load(None, strict=strict_from_env())


def emit(data: Any, as_json: bool, render: Callable[[Any], None]) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        render(data)


json_option = click.option("--json", "as_json", is_flag=True, help="Print the runtime's JSON exactly.")


def fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)

