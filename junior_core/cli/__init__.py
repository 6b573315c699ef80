"""The ``junior`` command line: sources, search, exec, plugins, tools, and plugin commands."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from junior_core._base.errors import ConfigError, PluginError
from junior_core._catalog.catalog import tool_name_prefix
from junior_core.context import ToolContext, local_context
from junior_core.tables import print_table

if TYPE_CHECKING:
    from junior_core._plugins.plugin_set import PluginSet
    from junior_core._runtime.runtime import Runtime

__all__ = ["cli", "local_context", "main", "print_table"]


ALL = "all"


def _runtime(ctx: click.Context, need: str | Sequence[str] = ()) -> Runtime:
    """The CLI's runtime, built once from the plugins already loaded for this invocation.

    Run-time sources (MCP servers) are listed, and so started, only when a command needs them: ``need`` is
    ``ALL`` or the source ids to list. A command that calls no such source never waits for one.
    """
    obj = ctx.ensure_object(dict)
    if "runtime" not in obj:
        from junior_core._runtime.runtime import Runtime

        runtime = Runtime(_plugins(ctx), lazy_sources=True)
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


def _sources_of(ctx: click.Context, tool_name: str) -> list[str]:
    """The run-time sources a tool_name could belong to, by its ``<source>__`` prefix."""
    rt = _runtime(ctx)
    return [s.id for s in rt.source_info() if s.run_time and tool_name.startswith(tool_name_prefix(s.id))]


def _plugins(ctx: click.Context) -> PluginSet:
    root = ctx.find_root()
    plugin_set: PluginSet = root.obj["plugins"] if isinstance(root.obj, dict) and "plugins" in root.obj else _load()
    return plugin_set


def _load() -> PluginSet:
    from junior_core._plugins.plugin_set import load, strict_from_env

    return load(None, strict=strict_from_env())


def _emit(data: Any, as_json: bool, render: Callable[[Any], None]) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        render(data)


json_option = click.option("--json", "as_json", is_flag=True, help="Print the runtime's JSON exactly.")


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


@cli.command()
@json_option
@click.pass_context
def sources(ctx: click.Context, as_json: bool) -> None:
    """List the sources of every installed plugin."""
    rt = _runtime(ctx)

    def render(data: list[dict[str, str]]) -> None:
        print_table([[s["id"], s["description"]] for s in data], ["SOURCE", "DESCRIPTION"])
        for info in rt.source_info():
            if info.unavailable:
                click.echo(f"\n{info.id} is unavailable: {info.unavailable}")  # in full: the table cuts it

    _emit(rt.sources, as_json, render)
    if not rt.sources and not as_json:
        click.echo(NO_SOURCES, err=True)


NO_SOURCES = (
    "No sources: no junior plugin is installed. From a junior clone, install one with "
    "`pip install -e plugins/memory` (or build wheels with `make dist`, then "
    "`pip install --find-links dist junior-memory`); docs/authoring-sources.md shows how to write your own."
)


@cli.command()
@click.argument("query", required=False, default="")
@click.option("--source", "-s", default=None, help="Search inside one source id.")
@click.option("--limit", "-n", type=int, default=None, help="Maximum results, 1 to 20 (default 5).")
@click.option("--explain", is_flag=True, help="Show why each tool ranked: its words, fields, scores, admission.")
@click.option("--cursor", default=None, help="The next page of a listing (printed under the one before).")
@click.option("--tool", "tool", default=None, metavar="NAME",
              help="With --explain: why this tool_name is or is not returned (words lacked, the floor it missed).")
@json_option
@click.pass_context
def search(ctx: click.Context, query: str, source: str | None, limit: int | None, explain: bool,
           cursor: str | None, tool: str | None, as_json: bool) -> None:
    """Search the catalog the way searchTools does; an empty QUERY with --source lists that source's tools."""
    rt = _runtime(ctx, ALL if source is None else [source])
    if tool is not None and not explain:
        _fail("--tool explains one tool's place: give it with --explain.", code=2)
    if explain:
        # as the CLI's own user sees it
        result = rt.explain(query, source, limit, context=local_context(), tool=tool)
    else:
        result = rt.search_tools(query, source, limit, context=local_context(), cursor=cursor)
    if as_json:
        _emit(result, True, print)
    elif not result.get("ok", True):
        _fail(_for_people(result["error"], {"query": "QUERY", "source": "--source", "max_results": "--limit"}))
    elif source is not None and source not in {s.id for s in rt.source_info()}:
        known = ", ".join(s["id"] for s in rt.sources) or "(none installed)"
        _fail(
            f"unknown source {source!r}. Known sources: {known}. Pass one of them to --source, "
            "or leave --source out to search every source.",
            code=1,
        )
    elif source is not None and not result["tools"] and (down := _unavailable(rt, source)):
        _fail(f"{source} is unavailable: {down}.", code=1)  # not "try other words": no words would help
    elif explain:
        _render_reasons(result)
    else:
        _render_search(result, query, source, limit, {info.id for info in rt.source_info() if info.unavailable})
    if "hint" in result:
        ctx.exit(1)


def _unavailable(rt: Runtime, source_id: str) -> str | None:
    """Why a source is down (a run-time source whose server failed), or None."""
    return next((info.unavailable for info in rt.source_info() if info.id == source_id), None)


def _render_reasons(result: dict[str, Any]) -> None:
    """``Runtime.explain``'s answer for a person: per tool, what it matched and what let it in."""
    if "searched" in result:
        click.echo(f"searched for: {result['searched']}")
    if not result["tools"]:
        click.echo(result.get("hint") or "No tools matched.")
    for rank, tool in enumerate(result["tools"], 1):
        score = f"  score {tool['score']:.2f}" if "score" in tool else ""
        click.echo(f"{rank}. {tool['tool_name']}{score}")
        for word in tool["words"]:
            said = f" ({', '.join(word['said'])})" if word["said"] and word["said"] != [word["term"]] else ""
            click.echo(f"   {word['term']}{said} in {', '.join(word['fields']) or '?'}: +{word['added']:.2f}")
        for verb in tool.get("verbs", []):
            click.echo(f"   verb {verb['term']}: +{verb['added']:.2f}")
        admitted = tool.get("admitted")
        if admitted:
            details = ", ".join(f"{key} {value}" for key, value in admitted.items() if key != "by")
            click.echo(f"   admitted by {admitted['by']}" + (f": {details}" if details else ""))
        if "order" in tool:
            click.echo(f"   order: {tool['order']}")
    why = result.get("why_not")
    if why:
        _render_why_not(why)


def _render_why_not(why: dict[str, Any]) -> None:
    """The ``why_not`` part of ``Runtime.explain``'s answer for a person."""
    name = why["tool_name"]
    if why.get("known") is False:
        click.echo(f"{name}: {why['why']}.")
        return
    where = f"returned, rank {why['rank']}" if why.get("returned") else f"not returned: {why.get('why', '')}"
    click.echo(f"{name}: {where}")
    for word in why.get("words", []):
        click.echo(f"   holds {word['term']} in {', '.join(word['fields']) or '?'}: +{word['added']:.2f}")
    if why.get("lacked"):
        click.echo(f"   lacks: {', '.join(why['lacked'])}")
    floor = why.get("floor") or {}
    for clause in floor.get("clauses", []):
        click.echo(f"   floor, clause {clause['clause']}: held {clause['held']:.2f} of {clause['needed']:.2f} needed")
    if floor.get("telling word"):
        click.echo(f"   admitted by telling word {floor['telling word']}")


def _for_people(err: dict[str, Any], names: dict[str, str], tool_name: str | None = None) -> str:
    """An error written for the model, reworded for a person at a terminal (options, not JSON fields)."""
    if err.get("code") == "invalid_arguments" and err.get("details"):
        lines = []
        for detail in err["details"]:
            path = detail["path"]
            top = path.split("/", 1)[0]
            where = names.get(top, f"{names.get('*', '')} at '{path}'".strip()) if path != "(root)" else ""
            lines.append(f"{where or names.get('*', 'input')}: {detail['message']}")
        if tool_name:
            lines.append(f"See what {tool_name} takes with `junior show {tool_name}`.")
        return "\n".join(lines)
    if err.get("code") == "unknown_tool":
        shown = f"no tool named {tool_name!r}." if tool_name else "no such tool."
        suggestions = err.get("suggestions") or []
        hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
        return f"{shown}{hint} Find tool names with `junior search WORDS`."
    return str(err.get("message", ""))


def _render_search(result: dict[str, Any], query: str, source: str | None, limit: int | None,
                   down: set[str]) -> None:
    """A searchTools answer as a table, and how to see what it left out; a source that is down is never offered."""
    import shlex

    others = [s["id"] for s in result.get("sources", []) if s["id"] != source and s["id"] not in down]
    if not result["tools"]:
        where = f" in {result['source']}" if result.get("source") else ""
        click.echo(f"No tools matched{where} ({result['total_eligible_tools']} searched). Try other words", nl=False)
        click.echo(f", or --source with one of: {', '.join(others)}." if others else ".")
        return
    if result.get("weak"):
        click.echo(result.get("hint", ""))
    print_table([[t["tool_name"], t["description"]] for t in result["tools"]], ["TOOL_NAME", "SUMMARY"])
    shown, total = len(result["tools"]), result.get("total_matches", len(result["tools"]))
    click.echo()
    if not query.strip() and source is None:
        click.echo(f"A sample of {shown} of {result['total_eligible_tools']} tools. List one source's tools with "
                   f"`junior search \"\" --source SOURCE`" + (f", SOURCE one of: {', '.join(others)}." if others
                                                             else "."))
    elif result.get("next_cursor"):
        again = ["junior", "search", query, *(["--source", source] if source else []),
                 *(["--limit", str(limit)] if limit else []), "--cursor", result["next_cursor"]]
        counted = "matches" if query.strip() else "tools"
        click.echo(f"{shown} of {total} {counted}; the next page: `{shlex.join(again)}`.")
    elif shown < total:
        more = f"--limit {min(total, 20)} shows " + ("them all" if total <= 20 else "20")
        click.echo(f"{shown} of {total} matches; {more}.")
    click.echo("Run one with `junior exec TOOL_NAME`.")


@cli.command(name="exec")
@click.argument("tool_name")
@click.option("--args", "args_json", default="{}", help="The tool's arguments as a JSON object.")
@click.option("--user", default=None, help="Actor user id (default: the OS user).")
@click.option("--team", default="local", show_default=True, help="Actor and conversation team id.")
@click.option("--platform", default="local", show_default=True, help="Platform of actor and conversation.")
@click.option("--channel", default="cli", show_default=True, help="Conversation channel id.")
@click.option("--thread", default="main", show_default=True, help="Conversation thread timestamp or id.")
@click.option("--private", is_flag=True, help="Treat the conversation as private.")
@click.option("--tool-call-id", default=None, help="Idempotency: a retried call with the same id is not repeated.")
@json_option
@click.pass_context
def exec_(
    ctx: click.Context,
    tool_name: str,
    args_json: str,
    user: str | None,
    team: str,
    platform: str,
    channel: str,
    thread: str,
    private: bool,
    tool_call_id: str | None,
    as_json: bool,
) -> None:
    """Run one tool by its exact tool_name, as executeTool does."""
    from junior_core._protocol.limits import loads

    try:
        arguments = loads(args_json)
    except json.JSONDecodeError as exc:
        _fail(f"--args is not valid JSON: {exc.msg} at position {exc.pos}")
    if not isinstance(arguments, dict):
        _fail(f"--args must be a JSON object, got {type(arguments).__name__}")
    try:
        context = local_context(
            platform=platform, team=team, user=user, channel=channel, thread=thread, private=private
        )
    except ValueError as exc:
        _fail(str(exc))
    if tool_call_id:
        context = ToolContext(context.actor, context.conversation, tool_call_id)
    rt = _runtime(ctx, _sources_of(ctx, tool_name))
    result = rt.execute_tool(tool_name, arguments, context)
    if as_json:
        _emit(result, True, print)
    elif result["ok"]:
        click.echo(json.dumps(result["result"], indent=2, ensure_ascii=False))
    else:
        err = result["error"]
        message = _for_people(err, {"*": "--args"}, tool_name)
        click.echo(f"error ({err['code']}): {message}", err=True)
        _candidates(err, tool_name)
    if not result["ok"]:
        ctx.exit(1)


def _candidates(err: dict[str, Any], tool_name: str) -> None:
    """The candidates an error lists (an ambiguous forget): each one's id, content and the words it matched."""
    candidates = [c for c in err.get("candidates") or () if isinstance(c, dict)]
    if not candidates:
        return
    for candidate in candidates:
        matched = candidate.get("matched")
        said = f"  (matched: {', '.join(map(str, matched))})" if matched else ""
        click.echo(f"  {candidate.get('id', '?')}  {candidate.get('content', '')}{said}", err=True)
    if all("id" in c for c in candidates):
        click.echo(f"Run it again with one id: junior exec {tool_name} --args '{{\"id\": \"ID\"}}'", err=True)


@cli.command()
@click.argument("tool_name")
@json_option
@click.pass_context
def show(ctx: click.Context, tool_name: str, as_json: bool) -> None:
    """Show one tool in full: description, input schema, source, exposure, annotations."""
    rt = _runtime(ctx, _sources_of(ctx, tool_name))
    entry = rt.catalog_tool(tool_name)
    if entry is None:  # executeTool's answer to a name no tool has: close names, or the source being down
        err = rt.execute_tool(tool_name, {}, local_context())["error"]
        _fail(_for_people(err, {}, tool_name), code=1)
    tool = entry.tool
    data = {
        "tool_name": entry.tool_name,
        "name": tool.name,
        "source": entry.source_id,
        "plugin": entry.plugin,
        "exposure": rt.exposure_of(entry.tool_name),  # after junior.toml's [tools] and the host's rules
        "declared_exposure": tool.exposure,
        "description": tool.description,
        "input_schema": tool.input_schema,
        "annotations": dict(tool.annotations or {}),
        "timeout_s": tool.timeout_s if tool.timeout_s is not None else rt.options.default_timeout_s,
    }

    def render(d: dict[str, Any]) -> None:
        click.echo(f"{d['tool_name']}\n")
        click.echo(f"{d['description'].strip()}\n")
        click.echo(f"source:      {d['source']} (plugin {d['plugin']})")
        click.echo(f"exposure:    {d['exposure']}")
        hints = ", ".join(f"{k}={json.dumps(v)}" for k, v in d["annotations"].items()) or "-"
        click.echo(f"annotations: {hints}")
        click.echo(f"timeout:     {d['timeout_s']:g} s")
        click.echo("input_schema:")
        click.echo(json.dumps(d["input_schema"], indent=2, ensure_ascii=False))

    _emit(data, as_json, render)


@cli.command()
@json_option
@click.pass_context
def plugins(ctx: click.Context, as_json: bool) -> None:
    """List plugins: loaded and failed, with reasons; warn of summaries a model sees cut mid-sentence."""
    from junior_core.testing import summary_warnings

    rt = _runtime(ctx)
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

    _emit(data, as_json, render)


@cli.command()
@json_option
@click.pass_context
def tools(ctx: click.Context, as_json: bool) -> None:
    """Show the tools a model is given (searchTools, executeTool, direct tools)."""
    rt = _runtime(ctx, ALL)
    data = rt.model_tools(local_context())

    def render(rows: list[dict[str, Any]]) -> None:
        for row in rows:
            click.echo(f"## {row['name']}\n{row['description']}\n")

    _emit(data, as_json, render)


@cli.command()
@click.option("--rebuild", is_flag=True, help="Build this catalog's index again and store it.")
@click.option("--clear", is_flag=True, help="Delete every stored index (they are rebuilt when needed).")
@json_option
@click.pass_context
def index(ctx: click.Context, rebuild: bool, clear: bool, as_json: bool) -> None:
    """Show where the search index is stored, its fingerprint and size; rebuild or clear it."""
    if rebuild and clear:
        _fail("use --rebuild or --clear, not both")
    if clear:
        from junior_core.discovery.store import IndexCache

        cache = IndexCache()
        removed = cache.clear()
        click.echo(f"removed {removed} stored index{'es' if removed != 1 else ''} from {cache.directory}")
        if cache.refused:
            click.echo(f"the cache is not used: {cache.refused}", err=True)
        return
    rt = _runtime(ctx, ALL)  # the catalog `junior search` searches, run-time sources included
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

    _emit(data, as_json, render)


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
        _fail(str(exc))
    if model is None:
        _fail("no model: pass --model or set JUNIOR_MODEL, e.g. echo (offline, needs no key: it searches the "
              "tools for your message and runs the best match), openai:gpt-4.1 or "
              "openai-compatible:http://127.0.0.1:8080/v1#model")
    if no_memory:
        from junior_core._runtime.runtime import Runtime

        plugin_set = _plugins(ctx)
        kept = [plugin_set.pm.get_plugin(name) for name in plugin_set.loaded if name != "memory"]
        rt = Runtime([plugin for plugin in kept if plugin is not None])
        ctx.call_on_close(rt.close)
    else:
        rt = _runtime(ctx, ALL)
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
        _fail(str(exc))
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
    for plugin, other in _plugins(ctx).config_files():
        other_path = Path(other).expanduser()
        missing = "" if other_path.is_file() else "  (missing)"
        click.echo(f"{other_path.absolute()}  ({plugin}){missing}")


def _fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def build_cli() -> click.Group:
    """The ``junior`` group with every loaded plugin's commands added."""
    plugin_set = _load()
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
