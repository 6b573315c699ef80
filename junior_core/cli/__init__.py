"""The ``junior`` command line: sources, search, exec, plugins, tools, and plugin commands."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from junior_core._base.errors import ConfigError, PluginError
from junior_core.cli import _common
from junior_core.cli._common import ALL, cli_runtime, emit, fail, json_option, plugins_of
from junior_core.cli._tools import exec_, search, show
from junior_core.context import local_context
from junior_core.tables import print_table

__all__ = ["cli", "local_context", "main", "print_table"]




class JuniorGroup(click.Group):
    """The top-level group; plugin commands are added when the group is built."""


LOG_LEVEL_ENV = "JUNIOR_LOG_LEVEL"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def resolve_log_level(verbose: int = 0, level: str | None = None, environ: Mapping[str, str] | None = None) -> int:
    """The level of junior's loggers: ``--log-level``, else one step down per ``-v``, else ``JUNIOR_LOG_LEVEL``,
    else WARNING; an unknown name in the environment is WARNING (the option's choices are checked by click)."""
    import logging

    if level is not None:
        return int(logging.getLevelName(level.upper()))
    if verbose:
        return logging.DEBUG if verbose > 1 else logging.INFO
    named = (os.environ if environ is None else environ).get(LOG_LEVEL_ENV, "").strip().upper()
    return int(logging.getLevelName(named)) if named in LOG_LEVELS else logging.WARNING


@click.group(cls=JuniorGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="junior-core", prog_name="junior")
@click.option("-v", "--verbose", count=True,
              help="Log more to stderr: -v for INFO (each MCP server's stderr), -vv for DEBUG.")
@click.option("--log-level", type=click.Choice(LOG_LEVELS, case_sensitive=False), default=None,
              help=f"Log level of junior's loggers on stderr (default WARNING, or {LOG_LEVEL_ENV}).")
@click.pass_context
def cli(ctx: click.Context, verbose: int, log_level: str | None) -> None:
    """junior: many tools for an agent, found with searchTools and run with executeTool."""
    import logging

    ctx.ensure_object(dict)
    logger = logging.getLogger("junior")
    before = logger.level
    logger.setLevel(resolve_log_level(verbose, log_level))
    ctx.call_on_close(lambda: logger.setLevel(before))


for _command in (search, exec_, show):
    cli.add_command(_command)


@cli.command()
@json_option
@click.pass_context
def sources(ctx: click.Context, as_json: bool) -> None:
    """List the sources of every installed plugin."""
    rt = cli_runtime(ctx)

    def render(data: list[dict[str, str]]) -> None:
        print_table([[s["id"], s["description"]] for s in data], ["SOURCE", "DESCRIPTION"])
        for info in rt.source_info():
            if info.unavailable:
                click.echo(f"\n{info.id} is unavailable: {info.unavailable}")  # in full: the table cuts it

    emit(rt.sources, as_json, render)
    if not rt.sources and not as_json:
        click.echo(NO_SOURCES, err=True)


NO_SOURCES = (
    "No sources: no junior plugin is installed. From a junior clone, install one with "
    "`pip install -e plugins/memory` (or build wheels with `make dist`, then "
    "`pip install --find-links dist junior-memory`); docs/authoring-sources.md shows how to write your own."
)


@cli.command()
@json_option
@click.pass_context
def plugins(ctx: click.Context, as_json: bool) -> None:
    """List plugins: loaded and failed, with reasons; warn of summaries a model sees cut mid-sentence."""
    from junior_core.testing import summary_warnings

    rt = cli_runtime(ctx)
    data = [info.to_dict() for info in rt.plugins]
    for message in summary_warnings(rt):
        click.echo(f"warning: {message}", err=True)

    def render(rows: list[dict[str, Any]]) -> None:
        print_table(
            [[r["name"], r["distribution"] or "-", r["version"] or "-", r["status"]] for r in rows],
            ["PLUGIN", "DISTRIBUTION", "VERSION", "STATUS"],
        )
        for r in rows:
            if r["error"]:
                click.echo(f"\n{r['name']}: {r['error']}")  # in full: the reason is the point

    emit(data, as_json, render)


@cli.command()
@json_option
@click.pass_context
def tools(ctx: click.Context, as_json: bool) -> None:
    """Show the tools a model is given (searchTools, executeTool, direct tools)."""
    rt = cli_runtime(ctx, ALL)
    data = rt.model_tools(local_context())

    def render(rows: list[dict[str, Any]]) -> None:
        for row in rows:
            click.echo(f"## {row['name']}\n{row['description']}\n")

    emit(data, as_json, render)


@cli.command()
@click.option("--rebuild", is_flag=True, help="Build this catalog's index again and store it.")
@click.option("--clear", is_flag=True, help="Delete every stored index (they are rebuilt when needed).")
@json_option
@click.pass_context
def index(ctx: click.Context, rebuild: bool, clear: bool, as_json: bool) -> None:
    """Show where the search index is stored, its fingerprint and size; rebuild or clear it."""
    if rebuild and clear:
        fail("use --rebuild or --clear, not both")
    if clear:
        from junior_core._discovery.store import IndexCache

        cache = IndexCache()
        removed = cache.clear()
        click.echo(f"removed {removed} stored index{'es' if removed != 1 else ''} from {cache.directory}")
        if cache.refused:
            click.echo(f"the cache is not used: {cache.refused}", err=True)
        return
    rt = cli_runtime(ctx, ALL)  # the catalog `junior search` searches, run-time sources included
    data = rt.rebuild_index() if rebuild else rt.index_info()

    def render(info: dict[str, Any]) -> None:
        size = info["bytes"]
        rows = [
            ("state", info["state"]),
            ("cache directory", info["cache_dir"] or "(none: JUNIOR_CACHE_DIR or the user cache dir)"),
            ("index", info["path"] or "(in memory only)"),
            ("fingerprint", info["fingerprint"] or "-"),
            ("tools", str(info["tools"])),
            ("size", f"{size / 1024:.1f} KiB" if isinstance(size, int) else "-"),
            ("stored indexes", str(info["stored_indexes"])),
        ]
        for key, value in rows:
            click.echo(f"{key + ':':<17}{value}")

    emit(data, as_json, render)


@cli.command()
@click.option("--model", "model_spec", default=None, metavar="SPEC",
              help="echo (offline: searches and runs tools, needs nothing), script:<file of turns>, "
                   "openai:<model>, anthropic:<model> or openai-compatible:<base_url>#<model> "
                   "(default: $JUNIOR_MODEL).")
@click.option("--system", default=None, help="Instructions for the model in place of junior's own.")
@click.option("--no-memory", is_flag=True, help="Leave the memory plugin out: nothing recalled, nothing saved.")
@click.option("-m", "--message", "messages", multiple=True,
              help="Ask this, print the answer and exit; repeat for several turns of one conversation.")
@click.pass_context
def chat(ctx: click.Context, model_spec: str | None, system: str | None, no_memory: bool,
         messages: tuple[str, ...]) -> None:
    """Chat with a model that finds and runs the installed tools through searchTools and executeTool.

    Each tool call is shown in one line on standard error; answers go to standard output. Memory is the local
    user's, as for `junior exec`. Interactive without -m: an empty line or Ctrl-D ends the chat.
    """
    import time

    from junior_core.llm import ModelConfigError, model_from_env, model_from_spec
    from junior_core.llm.agent import DEFAULT_INSTRUCTIONS
    from junior_core.llm.chat import Chat

    try:
        model = model_from_spec(model_spec) if model_spec else model_from_env()
    except ModelConfigError as exc:
        fail(str(exc))
    if model is None:
        fail("no model: pass --model or set JUNIOR_MODEL, e.g. echo (offline, needs no key: it searches the "
              "tools for your message and runs the best match), openai:gpt-4.1 or "
              "openai-compatible:http://127.0.0.1:8080/v1#model")
    if no_memory:
        from junior_core._runtime.runtime import Runtime

        plugin_set = plugins_of(ctx)
        kept = [plugin_set.pm.get_plugin(name) for name in plugin_set.loaded if name != "memory"]
        rt = Runtime([plugin for plugin in kept if plugin is not None])
        ctx.call_on_close(rt.close)
    else:
        rt = cli_runtime(ctx, ALL)
    # A thread of its own per session: a model's call ids (call_1, ...) are never taken for a retry of the last.
    context = local_context(thread=f"chat-{time.time_ns()}")
    session = Chat(model, rt, context, instructions=system or DEFAULT_INSTRUCTIONS,
                   echo=lambda line: click.echo(f"  · {line}", err=True))
    if messages:
        failed = session.run(messages, click.echo)
        ctx.exit(1 if failed else 0)
    click.echo(f"junior chat with {model.name}; an empty line or Ctrl-D ends it.", err=True)
    session.run(_questions(), click.echo)


def _questions() -> Iterator[str]:
    """Lines typed at the ``you>`` prompt, until an empty line, Ctrl-D or Ctrl-C."""
    while True:
        try:
            line = input("you> ")
        except (EOFError, KeyboardInterrupt):
            click.echo(err=True)
            return
        if not line.strip():
            return
        yield line


@cli.group()
def plugin() -> None:
    """Start a plugin of your own."""


@plugin.command(name="new")
@click.argument("name")
@click.option("--dir", "parent", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Where to write the package's directory.")
def plugin_new(name: str, parent: Path) -> None:
    """Write junior-NAME/: a pip-installable plugin with one typed tool, its tests and an entry point.

    NAME is the source id: lowercase letters and digits, words joined by '-'. Then: cd junior-NAME &&
    pip install -e '.[test]' && python -m pytest.
    """
    from importlib.metadata import version

    from junior_core.cli._scaffold import new_plugin

    try:
        root = new_plugin(name, parent, version("junior-core"))
    except ValueError as exc:
        fail(str(exc))
    click.echo(f"wrote {root}: {name}'s tool count_words in {root.name.replace('-', '_')}/__init__.py, its tests "
               f"in tests/. Next:\n  cd {root}\n  pip install -e '.[test]'\n  python -m pytest")


@cli.group()
def config() -> None:
    """Where junior reads its configuration (junior.toml)."""


@config.command(name="path")
@click.pass_context
def config_path_command(ctx: click.Context) -> None:
    """Print every configuration file in effect: junior.toml (JUNIOR_CONFIG, else ./junior.toml, else the one in
    the user config directory), then the files plugins read (e.g. the bridge's mcpServers JSON)."""
    from junior_core._base.config import config_path, user_config_dir

    path = config_path() or Path.cwd() / "junior.toml"
    click.echo(str(path.absolute()))
    if not path.is_file():
        click.echo(
            "There is no file there yet: copy docs/examples/junior.toml of a junior clone there (or to "
            f"{user_config_dir() / 'junior.toml'}), or point JUNIOR_CONFIG at one.",
            err=True,
        )
    for plugin, other in plugins_of(ctx).config_files():
        other_path = Path(other).expanduser()
        missing = "" if other_path.is_file() else "  (missing)"
        click.echo(f"{other_path.absolute()}  ({plugin}){missing}")



def build_cli() -> click.Group:
    """The ``junior`` group with every loaded plugin's commands added."""
    plugin_set = _common.load_plugins()  # looked up when called, so a test can stand in for it
    plugin_set.register_commands(cli)
    cli.context_settings["obj"] = {"plugins": plugin_set}
    return cli


class CleanStream:
    """A text stream that writes through ``junior_core.text.clean_text``: what ``junior`` prints cannot drive the
    terminal (escape sequences, OSC 52 clipboard writes) or hide words (bidi and zero-width characters).

    Binary writes (``.buffer``, as ``junior mcp serve`` speaks JSON-RPC on stdout) pass unchanged.
    """

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        from junior_core.text import clean_text

        self._stream.write(clean_text(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    import logging

    # Every command's output and the log lines on stderr, plugins' commands included.
    if sys.stdout is not None and not isinstance(sys.stdout, CleanStream):
        sys.stdout = CleanStream(sys.stdout)
    if sys.stderr is not None and not isinstance(sys.stderr, CleanStream):
        sys.stderr = CleanStream(sys.stderr)
    logging.basicConfig(level=logging.WARNING, format="junior: %(levelname)s %(name)s: %(message)s")
    try:
        build_cli().main(args=list(argv) if argv is not None else None, prog_name="junior")
    except (PluginError, ConfigError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
