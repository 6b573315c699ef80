"""The commands that find and run tools: ``junior search`` (and ``--explain``), ``junior exec`` and ``junior show``,
and how their answers read for people."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from junior_core.context import ToolContext, local_context
from junior_core.tables import print_table

if TYPE_CHECKING:
    from junior_core._runtime.runtime import Runtime

from junior_core.cli._common import ALL, cli_runtime, emit, fail, json_option, sources_of


@click.command()
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
    rt = cli_runtime(ctx, ALL if source is None else [source])
    if tool is not None and not explain:
        fail("--tool explains one tool's place: give it with --explain.", code=2)
    if explain:
        # as the CLI's own user sees it
        result = rt.explain(query, source, limit, context=local_context(), tool=tool)
    else:
        result = rt.search_tools(query, source, limit, context=local_context(), cursor=cursor)
    if as_json:
        emit(result, True, print)
    elif not result.get("ok", True):
        fail(_for_people(result["error"], {"query": "QUERY", "source": "--source", "max_results": "--limit"}))
    elif source is not None and source not in {s.id for s in rt.source_info()}:
        known = ", ".join(s["id"] for s in rt.sources) or "(none installed)"
        fail(
            f"unknown source {source!r}. Known sources: {known}. Pass one of them to --source, "
            "or leave --source out to search every source.",
            code=1,
        )
    elif source is not None and not result["tools"] and (down := _unavailable(rt, source)):
        fail(f"{source} is unavailable: {down}.", code=1)  # not "try other words": no words would help
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


@click.command(name="exec")
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
        fail(f"--args is not valid JSON: {exc.msg} at position {exc.pos}")
    if not isinstance(arguments, dict):
        fail(f"--args must be a JSON object, got {type(arguments).__name__}")
    try:
        context = local_context(
            platform=platform, team=team, user=user, channel=channel, thread=thread, private=private
        )
    except ValueError as exc:
        fail(str(exc))
    if tool_call_id:
        context = ToolContext(context.actor, context.conversation, tool_call_id)
    rt = cli_runtime(ctx, sources_of(ctx, tool_name))
    result = rt.execute_tool(tool_name, arguments, context)
    if as_json:
        emit(result, True, print)
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


@click.command()
@click.argument("tool_name")
@json_option
@click.pass_context
def show(ctx: click.Context, tool_name: str, as_json: bool) -> None:
    """Show one tool in full: description, input schema, source, exposure, annotations."""
    rt = cli_runtime(ctx, sources_of(ctx, tool_name))
    entry = rt.catalog_tool(tool_name)
    if entry is None:  # executeTool's answer to a name no tool has: close names, or the source being down
        err = rt.execute_tool(tool_name, {}, local_context())["error"]
        fail(_for_people(err, {}, tool_name), code=1)
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

    emit(data, as_json, render)
