"""Model-in-the-loop discovery: a model finds and runs tools through junior's own searchTools and executeTool.

The catalog is junior-memory (SQLite in a scratch directory; the local user ``ada`` in a public local conversation)
plus the 527 LiveMCPBench tools with their real schemas and annotations. executeTool on a LiveMCPBench tool answers
a short canned result that says the call was simulated (no server stands behind these tools); memory tools really
run. The model gets exactly what a bot's model gets: junior's system prompt, the runtime's tool definitions and
each answer as the JSON text the agent loop sends.

Request sets (``--set``), each request labelled with the catalog tools it needs (``none``: nothing installed serves
it); the labels are written to transcripts and never shown to the model:

- ``slack`` (40): from the tuning halves only, so their misses may be read. ``discovery_requests.json`` "tuning":
  memory requests 0, 9, 18 and 27 of each memory tool (four wording styles; 16), every third ``shared_verbs``
  request on a LiveMCPBench tool (the tool the writer named; 9), and the ``no_match`` requests of the topics
  nothing installed serves (email, calendar, tickets, kubernetes, cache, storage; 8);
  ``discovery_requests_second.json``: the ``no_match`` requests of the topics chat, reminder and tickets (7).
  15 requests nothing serves.
- ``livemcpbench`` (30): LiveMCPBench's annotated tasks (``data/livemcpbench/all_annotations.json``) whose every
  annotated tool is in tools.json (90 of 95), every third in file order. An annotated tool name held by several
  servers counts as found through any of them.
- ``livemcpbench-heldout`` (30): the next third of the same tasks (the second of every three), recorded after the
  ranking of its date; its misses are never read while tuning, and the figures of a change are compared on it.
- a path to a JSON list of ``{"id", "text", "label", "intended": [[tool_name, ...], ...]}`` (tests, new sets).

Subcommands:

- ``run --set S --out FILE``: drives the model named by ``--model`` or ``$JUNIOR_MODEL`` (``openai:<model>``,
  ``openai-compatible:<base_url>#<model>``...; keys as for ``junior chat``) through one conversation per request
  with junior's agent loop, at most ``--max-steps`` model calls each, and writes a JSONL transcript.
- ``start --set S --out DIR``, ``call DIR JSON``, ``done DIR TEXT``, ``show DIR``: the same conversation one tool
  call at a time, for a stand-in model at a shell; it prints only what a model would see.
- ``score FILE``: the transcript's figures. ``replay FILE``: its searchTools calls re-run against today's ranking
  and answer shape, with the same figures.

A transcript is JSONL: a header (``kind: header``: model, date, junior commit, request set, provenance, optional
``floors``), then one line per request (``kind: request``: request, label, intended, calls with name, arguments,
answer size in characters, tools shown, ``weak``; executed tools; final text; stop reason).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent))  # last: benchmarks/mcp.py must not shadow the mcp SDK

from _data import REPO, DatasetPlugin, livemcpbench

from junior_core import Runtime, ToolContext
from junior_core._base.errors import ModelError
from junior_core._protocol import error
from junior_core.context import Message, local_context
from junior_core.llm.agent import DEFAULT_INSTRUCTIONS, _system, run_turn
from junior_core.llm.types import decode_arguments

DATA = Path(__file__).resolve().parent / "data"
TRANSCRIPTS = DATA / "transcripts"
FORMAT = 1
USER = "ada"
MEMORY_PICKS = (0, 9, 18, 27)
CATALOG_STRIDE = 3
NONE_TOPICS_FIRST = frozenset({"email", "calendar", "tickets", "kubernetes", "cache", "storage"})
NONE_TOPICS_SECOND = frozenset({"chat", "reminder", "tickets"})
TASK_STRIDE = 3
TOP = 5
CATALOG = ("junior-memory on SQLite + the 527 LiveMCPBench tools (tools.json @ a928e57d1ee7), "
           "LiveMCPBench calls simulated")
DEFAULT_MAX_STEPS = 8
DEFAULT_MAX_CALLS = 10


# ---------------------------------------------------------------- request sets


@dataclass
class Request:
    """One request and what serves it: ``intended`` holds one group of alternative tool_names per tool needed."""

    id: str
    text: str
    label: str
    intended: list[list[str]] = field(default_factory=list)


def _load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def _by_name() -> dict[str, list[str]]:
    """LiveMCPBench tool name as the data spells it -> every catalog tool_name carrying it."""
    out: dict[str, list[str]] = {}
    for (_server, name), tool_name in livemcpbench().by_server.items():
        out.setdefault(name, []).append(tool_name)
    return out


def slack_requests() -> list[Request]:
    first = _load("discovery_requests.json")["tuning"]
    second = _load("discovery_requests_second.json")["second"]
    by_server = livemcpbench().by_server
    out: list[Request] = []
    for tool in ("remember", "forget", "list", "search"):
        for i in MEMORY_PICKS:
            name = f"memory__{tool}"
            out.append(Request(f"memory-{tool}-{i}", first["memory"][tool][i]["text"], name, [[name]]))
    live = [item for item in first["shared_verbs"] if item["catalog"] == "livemcpbench"]
    for i, item in enumerate(live):
        if i % CATALOG_STRIDE == 0:
            name = by_server[(item["server"], item["tool"])]
            out.append(Request(f"catalog-{i}", item["text"], name, [[name]]))
    for half, items, topics in (("first", first["no_match"], NONE_TOPICS_FIRST),
                                ("second", second["no_match"], NONE_TOPICS_SECOND)):
        for i, item in enumerate(items):
            if item["topic"] in topics:
                out.append(Request(f"none-{half}-{i}", item["text"], "none", []))
    return out


def annotated_tools(task: Mapping[str, Any]) -> list[str]:
    """The tool names of a LiveMCPBench task's annotation ("1. get-weread-rank\\n2. ..." -> [...])."""
    raw = str(task["Annotator Metadata"]["Tools"])
    return [re.sub(r"^\s*\d+[.)]\s*", "", line).strip() for line in raw.splitlines() if line.strip()]


def livemcpbench_requests(offset: int = 0) -> list[Request]:
    tasks = _load("livemcpbench/all_annotations.json")
    by_name = _by_name()
    usable = [t for t in tasks if all(name in by_name for name in annotated_tools(t))]
    out = []
    for task in usable[offset::TASK_STRIDE]:
        names = annotated_tools(task)
        out.append(Request(f"task-{task['task_id']}", task["Question"], ", ".join(names),
                           [sorted(by_name[name]) for name in names]))
    return out


SETS = ("slack", "livemcpbench", "livemcpbench-heldout")
SET_HELP = f"{', '.join(SETS)} or a JSON file"


def request_set(name: str) -> list[Request]:
    """One of ``SETS``, or a JSON file of requests."""
    if name == "slack":
        return slack_requests()
    if name == "livemcpbench":
        return livemcpbench_requests()
    if name == "livemcpbench-heldout":
        return livemcpbench_requests(offset=1)
    path = Path(name)
    if not path.is_file():
        raise SystemExit(f"unknown request set {name!r}: use {', '.join(SETS)} or a JSON file of requests")
    items = json.loads(path.read_text(encoding="utf-8"))
    try:
        return [Request(str(i["id"]), str(i["text"]), str(i["label"]), [list(g) for g in i.get("intended", [])])
                for i in items]
    except (KeyError, TypeError) as exc:
        raise SystemExit(f"{path}: each request needs id, text, label and intended ({exc})") from exc


# ---------------------------------------------------------------- catalog


def _simulated(tool_name: str) -> Callable[[dict[str, Any], ToolContext], dict[str, Any]]:
    def handler(arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        return {"simulated": True,
                "note": f"{tool_name} is a stand-in in this evaluation: the call was accepted, nothing was run."}

    return handler


@contextmanager
def catalog(folder: Path, *, index_cache: bool = False,
            index_factory: Callable[[], Any] | None = None) -> Iterator[Runtime]:
    """Memory on SQLite in ``folder`` plus the LiveMCPBench tools, whose calls are simulated.

    ``index_cache``: keep the search index in ``folder`` (the step commands, one process per call, reuse it).
    ``index_factory``: the search index to use (the ablation's, with a rule or setting changed).
    """
    from junior_memory.plugin import MemoryPlugin

    live = livemcpbench(handler=_simulated)
    memory = MemoryPlugin(url=f"sqlite:///{folder / 'memory.sqlite3'}", embedder=False)
    cache: bool | Path = folder / "index-cache" if index_cache else False
    with Runtime(plugins=[DatasetPlugin([live]), memory], index_cache=cache, index_factory=index_factory) as rt:
        yield rt


def conversation(request_id: str) -> ToolContext:
    """The local user in a public local conversation of its own."""
    return local_context(user=USER, thread=f"eval-{request_id}")


def answer_text(answer: Mapping[str, Any]) -> str:
    """The tool answer exactly as the agent loop sends it to the model."""
    return json.dumps(answer, ensure_ascii=False)


def _tool_lists(value: Any) -> Iterator[list[str]]:
    """Every ``tools`` list of an answer, as tool_names in order (also inside per-query blocks)."""
    if isinstance(value, Mapping):
        tools = value.get("tools")
        if isinstance(tools, list):
            yield [str(t["tool_name"]) for t in tools if isinstance(t, Mapping) and "tool_name" in t]
        for key, item in value.items():
            if key != "tools":
                yield from _tool_lists(item)
    elif isinstance(value, list):
        for item in value:
            yield from _tool_lists(item)


def _weak(value: Any) -> bool | None:
    """True or False when the answer (or a per-query block) carries ``weak``; None when no such field exists."""
    found: bool | None = None
    if isinstance(value, Mapping):
        if isinstance(value.get("weak"), bool):
            found = bool(value["weak"])
        for item in value.values():
            inner = _weak(item)
            if inner is not None:
                found = inner or bool(found)
    elif isinstance(value, list):
        for item in value:
            inner = _weak(item)
            if inner is not None:
                found = inner or bool(found)
    return found


def call_record(name: str, arguments: Any, answer: Mapping[str, Any]) -> dict[str, Any]:
    lists = list(_tool_lists(answer)) if name == "searchTools" else []
    return {
        "name": name,
        "arguments": arguments,
        "answer_chars": len(answer_text(answer)),
        "ok": answer.get("ok") is not False,
        "shown": [t for tools in lists for t in tools],
        "top": [t for tools in lists for t in tools[:TOP]],
        "weak": _weak(answer) if name == "searchTools" else None,
    }


def executed(calls: Sequence[Mapping[str, Any]]) -> list[str]:
    return [str(c["arguments"].get("tool_name")) for c in calls
            if c["name"] == "executeTool" and isinstance(c["arguments"], Mapping) and c.get("ok")]


def request_record(request: Request, calls: list[dict[str, Any]], final: str, stop: str,
                   error: str | None = None) -> dict[str, Any]:
    record = {"kind": "request", **asdict(request), "calls": calls, "executed": executed(calls),
              "final": final, "stop": stop}
    if error:
        record["error"] = error
    return record


def junior_commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip()


def header(model: str, set_name: str, count: int, provenance: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "header", "format": FORMAT, "model": model,
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "junior_commit": junior_commit(), "request_set": set_name, "requests": count,
            "provenance": provenance, "catalog": CATALOG, **extra}


def _set_label(name: str) -> str:
    return name if name in SETS else Path(name).name


# ---------------------------------------------------------------- run: a model over the wire


def run(model: Any, requests: Sequence[Request], out: Path, *, set_name: str, provenance: str = "",
        max_steps: int = DEFAULT_MAX_STEPS, echo: Callable[[str], None] = print) -> None:
    """One conversation per request through ``run_turn``; the transcript goes to ``out`` (JSONL)."""
    name = str(getattr(model, "name", "") or type(model).__name__)
    with tempfile.TemporaryDirectory(prefix="junior-agent-eval-") as scratch, catalog(Path(scratch)) as rt, \
            out.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps(header(name, _set_label(set_name), len(requests),
                                       provenance or f"run by benchmarks/agent_discovery.py with {name}",
                                       max_steps=max_steps), ensure_ascii=False) + "\n")
        for n, request in enumerate(requests, 1):
            context = conversation(request.id)
            message = Message("user", request.text, actor=context.actor)
            error = None
            try:
                turn = run_turn(model, rt, context, [message], max_steps=max_steps)
            except ModelError as exc:
                turn, error = exc.turn, exc.reason
            calls = [call_record(c.name, c.arguments, c.result) for c in (turn.tool_calls if turn else ())]
            record = request_record(request, calls, turn.text if turn else "",
                                    turn.stop_reason if turn else "model_error", error)
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            handle.flush()
            echo(f"{n}/{len(requests)} {request.id}: {len(calls)} calls, executed {record['executed'] or 'nothing'}"
                 + (f" ({error})" if error else ""))


# ---------------------------------------------------------------- step: a stand-in model at a shell


def _state_path(folder: Path) -> Path:
    return folder / "state.json"


def _read_state(folder: Path) -> dict[str, Any]:
    path = _state_path(folder)
    if not path.is_file():
        raise SystemExit(f"{folder} holds no evaluation: begin with `start --set ... --out {folder}`")
    state: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return state


def _write_state(folder: Path, state: Mapping[str, Any]) -> None:
    tmp = _state_path(folder).with_suffix(".tmp")
    tmp.write_text(json.dumps(state, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(_state_path(folder))


def _requests_of(state: Mapping[str, Any]) -> list[Request]:
    return [Request(**r) for r in state["requests"]]


def _system_prompt(rt: Runtime, context: ToolContext, text: str) -> str:
    """The system prompt ``run_turn`` sends for this request (instructions, the speaker, recalled memory)."""
    return _system(DEFAULT_INSTRUCTIONS, context, rt.prompt_context(context, text, host=False))


def _user_message(context: ToolContext, text: str) -> str:
    assert context.actor is not None
    return f"<@{context.actor.user_id}>: {text}"


def _tool_definitions(rt: Runtime, context: ToolContext) -> str:
    tools = [{"name": t["name"], "description": t["description"], "input_schema": t["input_schema"]}
             for t in rt.model_tools(context)]
    return json.dumps(tools, ensure_ascii=False, indent=1)


def _print_request(rt: Runtime, state: Mapping[str, Any], *, tools: bool) -> str:
    requests = _requests_of(state)
    index = int(state["index"])
    if index >= len(requests):
        return f"The set is finished: {len(requests)} requests. Transcript: {state['transcript']}"
    request = requests[index]
    context = conversation(request.id)
    parts = [f"=== request {index + 1} of {len(requests)}: a new conversation ===",
             "--- system prompt ---", _system_prompt(rt, context, request.text)]
    if tools:
        parts += ["--- tools ---", _tool_definitions(rt, context)]
    parts += ["--- user ---", _user_message(context, request.text)]
    return "\n".join(parts)


def step_start(set_name: str, folder: Path, provenance: str, max_calls: int = DEFAULT_MAX_CALLS,
               model: str = "stand-in") -> str:
    requests = request_set(set_name)
    folder.mkdir(parents=True, exist_ok=True)
    if _state_path(folder).exists():
        raise SystemExit(f"{folder} already holds an evaluation: `show {folder}` to go on, or use another folder")
    transcript = folder / "transcript.jsonl"
    transcript.write_text(json.dumps(header(model, _set_label(set_name), len(requests),
                                            provenance or "a stand-in model driving the step interface",
                                            max_calls=max_calls), ensure_ascii=False) + "\n", encoding="utf-8")
    state = {"set": set_name, "requests": [asdict(r) for r in requests], "index": 0, "calls": [], "serial": 0,
             "transcript": str(transcript), "max_calls": max_calls}
    _write_state(folder, state)
    with catalog(folder, index_cache=True) as rt:
        return _print_request(rt, state, tools=True)


def step_call(folder: Path, raw: str) -> str:
    state = _read_state(folder)
    requests = _requests_of(state)
    if state["index"] >= len(requests):
        raise SystemExit("the set is finished: nothing to call")
    try:
        call = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SystemExit(
            f"the call is not JSON ({exc}): pass '{{\"name\": \"searchTools\", \"arguments\": {{...}}}}'"
        ) from None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str) or "arguments" not in call:
        raise SystemExit('a call is {"name": "searchTools" or "executeTool", "arguments": {...}}')
    if len(state["calls"]) >= int(state["max_calls"]):
        raise SystemExit(f"this request has had its {state['max_calls']} calls: end it with `done {folder} TEXT`")
    request = requests[state["index"]]
    state["serial"] += 1
    context = conversation(request.id).for_call(f"call_{state['serial']}")
    # As on the wire: arguments given as a JSON string are decoded, and undecodable ones refused.
    arguments, problem = decode_arguments(call["arguments"])
    if problem is not None:
        answer = error("invalid_arguments", f"{call['name']}: {problem}.")
    else:
        with catalog(folder, index_cache=True) as rt:
            answer = rt.call_model_tool(call["name"], arguments, context)
    state["calls"].append(call_record(call["name"], arguments if problem is None else call["arguments"], answer))
    _write_state(folder, state)
    return answer_text(answer)


def step_done(folder: Path, final: str) -> str:
    state = _read_state(folder)
    requests = _requests_of(state)
    if state["index"] >= len(requests):
        raise SystemExit("the set is finished already")
    record = request_record(requests[state["index"]], state["calls"], final, "answered")
    with Path(state["transcript"]).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    state["index"] += 1
    state["calls"] = []
    _write_state(folder, state)
    with catalog(folder, index_cache=True) as rt:
        return _print_request(rt, state, tools=False)


def step_show(folder: Path) -> str:
    state = _read_state(folder)
    with catalog(folder, index_cache=True) as rt:
        return _print_request(rt, state, tools=True)


# ---------------------------------------------------------------- score and replay


def read_transcript(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not lines or lines[0].get("kind") != "header":
        raise SystemExit(f"{path}: a transcript starts with its header line (kind: header)")
    return lines[0], [line for line in lines[1:] if line.get("kind") == "request"]


def _share(hits: int, total: int) -> float | None:
    return round(hits / total, 4) if total else None


def _is_memory(record: Mapping[str, Any]) -> bool:
    return str(record["label"]).startswith("memory__")


def figures(records: Sequence[Mapping[str, Any]], *, with_execution: bool = True) -> dict[str, Any]:
    """The figures of a transcript's requests (``calls`` as recorded, or as replayed)."""
    served = [r for r in records if r["intended"]]
    unserved = [r for r in records if not r["intended"]]
    groups = shown = top = ran = 0
    for r in served:
        seen = {t for c in r["calls"] for t in c.get("shown", ())}
        first = {t for c in r["calls"] for t in c.get("top", ())}
        done = set(r.get("executed", ()))
        for group in r["intended"]:
            groups += 1
            shown += bool(seen & set(group))
            top += bool(first & set(group))
            ran += bool(done & set(group))
    searches = [c for r in records for c in r["calls"] if c["name"] == "searchTools"]
    sizes = [c["answer_chars"] for c in searches]
    empty = [c["answer_chars"] for c in searches if c.get("ok") and not c.get("shown")]
    declined = sum(1 for r in unserved
                   if not r.get("executed")
                   or any(c.get("weak") for c in r["calls"] if c["name"] == "searchTools"))
    memory_searches = [(r, c) for r in records if _is_memory(r) for c in r["calls"]
                       if c["name"] == "searchTools" and isinstance(c["arguments"], Mapping)
                       and c["arguments"].get("source") == "memory"]
    out: dict[str, Any] = {
        "requests": len(records),
        "served_requests": len(served),
        "unserved_requests": len(unserved),
        "intended_tools": groups,
        "intended_shown": _share(shown, groups),
        "intended_shown_top5": _share(top, groups),
        "searches_per_request": round(len(searches) / len(records), 2) if records else None,
        "search_answers": len(sizes),
        "answer_chars_median": statistics.median(sizes) if sizes else None,
        "answer_chars_max": max(sizes) if sizes else None,
        "no_match_chars_max": max(empty) if empty else None,
        "unserved_no_tool_or_weak": _share(declined, len(unserved)),
        "weak_field_seen": any(c.get("weak") is not None for c in searches),
        "memory_source_searches": len(memory_searches),
        "memory_source_searches_showing_intended": _share(
            sum(1 for r, c in memory_searches if r["label"] in c.get("shown", ())), len(memory_searches)),
        "served_memory_requests_marked_weak": sum(
            1 for r in records if _is_memory(r) and any(c.get("weak") for c in r["calls"])),
    }
    if with_execution:
        out["intended_executed"] = _share(ran, groups)
    return out


def misses(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per served request with an intended tool in no top 5: the tools missed and the queries sent."""
    lines = []
    for r in records:
        first = {t for c in r["calls"] for t in c.get("top", ())}
        missed = [group[0] if len(group) == 1 else "|".join(group) for group in r["intended"]
                  if not first & set(group)]
        if missed:
            queries = [c["arguments"] for c in r["calls"] if c["name"] == "searchTools"]
            lines.append(f"{r['id']}: not in a top {TOP}: {', '.join(missed)}; searches: "
                         + json.dumps(queries, ensure_ascii=False))
    return lines


def replay_records(records: Sequence[Mapping[str, Any]], folder: Path,
                   index_factory: Callable[[], Any] | None = None, baseline: bool = False) -> list[dict[str, Any]]:
    """Each request with its searchTools calls re-run today (other calls dropped; what ran is kept); with
    ``baseline``, its queries ranked by rank-bm25 instead (``bm25_ranker``)."""
    out = []
    with catalog(folder, index_factory=index_factory) as rt:
        rank = bm25_ranker(rt) if baseline else None
        for record in records:
            context = conversation(str(record["id"]))
            calls = []
            for n, call in enumerate(c for c in record["calls"] if c["name"] == "searchTools"):
                answer = rank(call["arguments"]) if rank is not None else None
                if answer is None:
                    answer = rt.call_model_tool("searchTools", call["arguments"], context.for_call(f"replay_{n}"))
                calls.append(call_record("searchTools", call["arguments"], answer))
            out.append({**record, "calls": calls})
    return out


def bm25_ranker(rt: Runtime) -> Callable[[Any], dict[str, Any] | None]:
    """searchTools' queries ranked by rank-bm25's ``BM25Okapi`` over the runtime's tools (name, description,
    parameters; ``benchmarks/search.py``'s text and tokens), top 5 per query, inside ``source`` when one is given:
    the baseline junior's ranking is compared with. None for a call without query text (a source's listing,
    ``tool_names``), which keeps junior's answer, so only ranking differs."""
    import numpy
    from rank_bm25 import BM25Okapi
    from search import bm25_tokens, document

    entries = sorted(rt.catalog_tools(), key=lambda e: e.tool_name)
    bm25 = BM25Okapi([bm25_tokens(document(e)) for e in entries])
    sources = numpy.array([e.source_id for e in entries])

    def top(query: str, source: Any) -> list[str]:
        scores = bm25.get_scores(bm25_tokens(query))
        if isinstance(source, str) and source:
            scores = numpy.where(sources == source, scores, -numpy.inf)
        order = [int(i) for i in numpy.argsort(-scores, kind="stable")[:TOP] if numpy.isfinite(scores[i])]
        return [entries[i].tool_name for i in order if scores[i] > 0]

    def rank(arguments: Any) -> dict[str, Any] | None:
        arguments = arguments if isinstance(arguments, Mapping) else {}
        texts = [arguments["query"]] if isinstance(arguments.get("query"), str) else []
        texts += [q for q in arguments.get("queries") or () if isinstance(q, str)]
        texts = [t for t in texts if t.strip()]
        if not texts:
            return None
        return {"queries": [{"tools": [{"tool_name": t} for t in top(text, arguments.get("source"))]}
                            for text in texts]}

    return rank


def replay(path: Path, *, missed: list[str] | None = None,
           index_factory: Callable[[], Any] | None = None, baseline: bool = False) -> dict[str, Any]:
    """The figures of ``path``'s searches re-run today (``baseline``: ranked by rank-bm25 instead, ``bm25_ranker``);
    ``missed`` collects the lines of ``misses``."""
    _, records = read_transcript(path)
    with tempfile.TemporaryDirectory(prefix="junior-agent-replay-") as scratch:
        replayed = replay_records(records, Path(scratch), index_factory, baseline)
    if missed is not None:
        missed.extend(misses(replayed))
    return figures(replayed, with_execution=False)


def floors_of(path: Path) -> dict[str, dict[str, float]]:
    """A transcript's floors: its header's ``floors``, else ``<name>.floors.json`` beside it."""
    head, _ = read_transcript(path)
    floors = head.get("floors")
    sidecar = path.with_suffix(".floors.json")
    if not floors and sidecar.is_file():
        floors = json.loads(sidecar.read_text(encoding="utf-8"))
    return dict(floors or {})


def check_floors(found: Mapping[str, Any], floors: Mapping[str, Mapping[str, float]]) -> list[str]:
    """What misses its floor: ``{"figure": {"min": x}}`` or ``{"figure": {"max": x}}``; [] when all hold."""
    misses = []
    for name, bounds in floors.items():
        value = found.get(name)
        if value is None:
            misses.append(f"{name}: no figure (floor {dict(bounds)})")
            continue
        if "min" in bounds and value < bounds["min"]:
            misses.append(f"{name}: {value} < min {bounds['min']}")
        if "max" in bounds and value > bounds["max"]:
            misses.append(f"{name}: {value} > max {bounds['max']}")
    return misses


ABLATED = {"slack": ("memory_source_searches_showing_intended", "intended_shown_top5", "unserved_no_tool_or_weak"),
           "livemcpbench": ("intended_shown_top5",),
           "v5": ("memory_source_searches_showing_intended", "intended_shown_top5", "unserved_no_tool_or_weak")}
"""The figures ``ablate`` compares per kept transcript (``<set>-*.jsonl`` in ``benchmarks/data/transcripts``)."""


def ablate(labels: list[str] | None = None, json_path: str | None = None) -> list[dict[str, Any]]:
    """The kept transcripts' searches replayed with each rule switch off and each setting at its neutral value in
    turn (``_ablation``): what each one pays on queries a model wrote, which no setting was tuned on."""
    import time

    import _ablation
    from _data import write_json

    kept = {name: sorted(TRANSCRIPTS.glob(f"{name}-*.jsonl")) for name in ABLATED}
    rows: list[dict[str, Any]] = []
    for label, off, changes in _ablation.select(labels):
        start = time.perf_counter()
        row: dict[str, Any] = {"variant": label, "kind": "transcripts"}
        with _ablation.applied(off, changes) as factory:
            for name, paths in kept.items():
                for path in paths:
                    found = replay(path, index_factory=factory)
                    for key in ABLATED[name]:
                        row[f"{path.stem} {key}"] = None if found[key] is None else round(100 * found[key], 1)
        rows.append(row)
        if json_path:  # after each variant, so a long run that is stopped keeps what it measured
            write_json(rows, json_path)
        print(f"  {label}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return rows


def render(title: str, found: Mapping[str, Any]) -> str:
    width = max(len(k) for k in found)
    return "\n".join([title, *(f"  {k:<{width}}  {v}" for k, v in found.items())])


# ---------------------------------------------------------------- command line


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="drive an OpenAI-compatible (or Anthropic) model through a request set")
    p_run.add_argument("--set", dest="set_name", default="slack", help=SET_HELP)
    p_run.add_argument("--out", type=Path, required=True, help="transcript to write (JSONL)")
    p_run.add_argument("--model", default=None, help="model spec (default: $JUNIOR_MODEL)")
    p_run.add_argument("--base-url", default=None, help="OpenAI-compatible base URL (ending in /v1); with --model")
    p_run.add_argument("--api-key", default=None, help="key for --base-url (default: $JUNIOR_MODEL_API_KEY)")
    p_run.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS, help="model calls per request")
    p_run.add_argument("--limit", type=int, default=None, help="only the first N requests")
    p_run.add_argument("--provenance", default="", help="how the transcript was made, stored in its header")
    p_start = sub.add_parser("start", help="begin a step-by-step evaluation for a stand-in model")
    p_start.add_argument("--set", dest="set_name", required=True, help=SET_HELP)
    p_start.add_argument("--out", type=Path, required=True, help="folder for the state and transcript.jsonl")
    p_start.add_argument("--provenance", default="", help="who or what stands in for the model")
    p_start.add_argument("--model", default="stand-in", help="the name of the model standing in, for the header")
    p_start.add_argument("--max-calls", type=int, default=DEFAULT_MAX_CALLS, help="tool calls per request")
    p_call = sub.add_parser("call", help="one tool call: '{\"name\": ..., \"arguments\": {...}}'")
    p_call.add_argument("folder", type=Path)
    p_call.add_argument("call")
    p_done = sub.add_parser("done", help="end the current request with the final answer")
    p_done.add_argument("folder", type=Path)
    p_done.add_argument("final")
    p_show = sub.add_parser("show", help="reprint the current request with the system prompt and tools")
    p_show.add_argument("folder", type=Path)
    p_score = sub.add_parser("score", help="a transcript's figures")
    p_score.add_argument("file", type=Path)
    p_score.add_argument("--json", action="store_true")
    p_score.add_argument("--misses", action="store_true", help="list requests whose intended tool was in no top 5")
    p_replay = sub.add_parser("replay", help="re-run a transcript's searches against today's ranking")
    p_replay.add_argument("file", type=Path)
    p_replay.add_argument("--json", action="store_true")
    p_replay.add_argument("--misses", action="store_true", help="list requests whose intended tool was in no top 5")
    p_replay.add_argument("--check", action="store_true", help="exit 1 when a figure misses the transcript's floors")
    p_replay.add_argument("--baseline", action="store_true",
                          help="rank the same queries with rank-bm25 instead (only the top-5 figures compare)")
    p_ablate = sub.add_parser("ablate", help="replay the kept transcripts with each rule and setting off in turn")
    p_ablate.add_argument("labels", nargs="*", help="only the variants whose label holds one of these")
    p_ablate.add_argument("--json", default=None, metavar="PATH", help="write the rows here after each variant")
    args = parser.parse_args(argv)

    if args.command == "run":
        model = _model(args)
        requests = request_set(args.set_name)[: args.limit]
        run(model, requests, args.out, set_name=args.set_name, provenance=args.provenance, max_steps=args.max_steps,
            echo=lambda line: print(line, file=sys.stderr))
        _, records = read_transcript(args.out)
        out(render(f"{args.out} ({len(records)} requests)", figures(records)))
    elif args.command == "start":
        out(step_start(args.set_name, args.out, args.provenance, args.max_calls, args.model))
    elif args.command == "call":
        out(step_call(args.folder, args.call))
    elif args.command == "done":
        out(step_done(args.folder, args.final))
    elif args.command == "show":
        out(step_show(args.folder))
    elif args.command == "score":
        head, records = read_transcript(args.file)
        found = figures(records)
        out(json.dumps(found, indent=2) if args.json else
            render(f"{args.file}: {head.get('model')}, {head.get('request_set')}, {len(records)} requests", found))
        if args.misses:
            out("\n".join(misses(records)) or f"every intended tool was in some top {TOP}")
    elif args.command == "ablate":
        rows = ablate(args.labels or None, args.json)
        base = rows[0]
        for row in rows:
            cells = [f"{k.split(' ', 1)[0]} {k.split(' ', 1)[1]}: "
                     + (f"{v}" if row is base or v is None or base[k] is None else f"{v - base[k]:+.1f}")
                     for k, v in row.items() if k not in ("variant", "kind")]
            out(f"{row['variant']}: " + "; ".join(cells))
    elif args.command == "replay":
        missed: list[str] = []
        found = replay(args.file, missed=missed, baseline=args.baseline)
        title = f"{args.file} replayed with rank-bm25" if args.baseline else f"{args.file} replayed today"
        out(json.dumps(found, indent=2) if args.json else render(title, found))
        if args.misses:
            out("\n".join(missed) or f"every intended tool was in some top {TOP}")
        below = [] if args.baseline else check_floors(found, floors_of(args.file))
        if below:
            out("below floor: " + "; ".join(below))
            if args.check:
                return 1
    return 0


def _model(args: argparse.Namespace) -> Any:
    from junior_core.llm import ModelConfigError, model_from_env, model_from_spec

    try:
        if args.base_url:
            if not args.model:
                raise SystemExit("--base-url needs --model NAME (the model the server serves)")
            env = {**os.environ, **({"JUNIOR_MODEL_API_KEY": args.api_key} if args.api_key else {})}
            return model_from_spec(f"openai-compatible:{args.base_url}#{args.model}", env)
        model = model_from_spec(args.model) if args.model else model_from_env()
    except ModelConfigError as exc:
        raise SystemExit(str(exc)) from exc
    if model is None:
        raise SystemExit("no model: set JUNIOR_MODEL (e.g. openai-compatible:http://127.0.0.1:8080/v1#model), "
                         "or pass --model, or --base-url with --model; a stand-in uses `start`/`call`/`done`")
    return model


if __name__ == "__main__":
    sys.exit(main())
