"""benchmarks/agent_discovery.py: a model over the OpenAI wire, the step interface, score, replay and its floors."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from junior_core.llm.agent import DEFAULT_INSTRUCTIONS
from junior_core.llm.types import ModelReply, call, say
from junior_core.testing import ChatCompletionsServer, ScriptView
from tests.helpers import DATA_DIR, needs_data

REPO = Path(__file__).resolve().parent.parent
BENCHMARKS = REPO / "benchmarks"
DATA = DATA_DIR
TINY = Path(__file__).resolve().parent / "data" / "agent_discovery_tiny.jsonl"

needs_livemcpbench = needs_data("livemcpbench")


def _load() -> ModuleType:
    sys.path.append(str(BENCHMARKS))  # after site-packages, so benchmarks/mcp.py never shadows the mcp SDK
    spec = importlib.util.spec_from_file_location("junior_bench_agent_discovery", BENCHMARKS / "agent_discovery.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


agent = _load()

TWO = [
    {"id": "r1", "text": "remember that I prefer tabs", "label": "memory__remember",
     "intended": [["memory__remember"]]},
    {"id": "r2", "text": "send an email to the team saying the release is delayed", "label": "none", "intended": []},
]


def script(view: ScriptView) -> Generator[ModelReply, Any, None] | ModelReply:
    if "remember" in view.user_text:
        return _remember()
    return _decline()


def _remember() -> Generator[ModelReply, Any, None]:
    found = yield call("searchTools", {"query": "remember a preference", "source": "memory"})
    name = found["tools"][0]["tool_name"]
    yield call("executeTool", {"tool_name": name, "arguments": {"content": "ada prefers tabs", "kind": "preference"}})
    yield say("Saved.")


def _decline() -> Generator[ModelReply, Any, None]:
    yield call("searchTools", {"query": "send email"})
    yield say("Nothing here sends email.")


@pytest.fixture
def server() -> Iterator[ChatCompletionsServer]:
    model = ChatCompletionsServer(script, model="local")
    try:
        yield model
    finally:
        model.close()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@needs_livemcpbench
def test_run_drives_a_model_on_the_openai_wire_and_records_each_call(
    server: ChatCompletionsServer, tmp_path: Path
) -> None:
    from junior_core.llm import model_from_spec

    out = tmp_path / "run.jsonl"
    requests = [agent.Request(**r) for r in TWO]
    agent.run(model_from_spec(server.spec, env={}), requests, out, set_name="tiny", provenance="scripted",
              echo=lambda line: None)
    head, first, second = _lines(out)
    assert (head["kind"], head["model"], head["request_set"], head["requests"], head["provenance"]) == (
        "header", server.spec, "tiny", 2, "scripted")
    assert len(head["junior_commit"]) == 40 and head["date"].startswith("20")
    assert [(c["name"], c["arguments"]) for c in first["calls"]] == [
        ("searchTools", {"query": "remember a preference", "source": "memory"}),
        ("executeTool", {"tool_name": "memory__remember",
                         "arguments": {"content": "ada prefers tabs", "kind": "preference"}}),
    ]
    assert first["executed"] == ["memory__remember"] and first["final"] == "Saved."
    assert first["label"] == "memory__remember" and first["stop"] == "answered"
    assert "memory__remember" in first["calls"][0]["shown"]
    # Each size is that of the tool message the model was sent next.
    sent = [m["content"] for body in server.requests for m in body["messages"][-1:] if m["role"] == "tool"]
    recorded = [c["answer_chars"] for r in (first, second) for c in r["calls"]]
    assert recorded == [len(text) for text in sent] and all(size > 100 for size in recorded)
    assert [(c["name"], c["arguments"]) for c in second["calls"]] == [("searchTools", {"query": "send email"})]
    assert second["executed"] == [] and second["label"] == "none" and second["intended"] == []
    # The model saw junior's own system prompt and only the two tools.
    body = server.requests[0]
    assert body["messages"][0]["content"].startswith(DEFAULT_INSTRUCTIONS)
    assert [t["function"]["name"] for t in body["tools"]] == ["searchTools", "executeTool"]
    found = agent.figures(_lines(out)[1:])
    assert (found["intended_shown"], found["intended_executed"], found["unserved_no_tool_or_weak"]) == (1.0, 1.0, 1.0)


@pytest.mark.slow
@needs_livemcpbench
def test_step_prints_only_what_a_model_sees_and_writes_the_same_transcript(tmp_path: Path) -> None:
    requests = tmp_path / "two.json"
    requests.write_text(json.dumps(TWO), encoding="utf-8")
    folder = tmp_path / "eval"
    printed: list[str] = []

    def step(*argv: str) -> str:
        before = len(printed)
        assert agent.main(list(argv), out=printed.append) == 0
        return "\n".join(printed[before:])

    start = step("start", "--set", str(requests), "--out", str(folder), "--provenance", "a person at a shell",
                 "--model", "person")
    assert DEFAULT_INSTRUCTIONS in start and "<@ada>: remember that I prefer tabs" in start
    tools = json.loads(start.split("--- tools ---\n", 1)[1].split("\n--- user ---", 1)[0])
    assert [t["name"] for t in tools] == ["searchTools", "executeTool"]
    assert all(t["description"] and t["input_schema"]["type"] == "object" for t in tools)
    for secret in ("memory__remember", "intended", "label", "none"):
        assert secret not in start.split("--- user ---")[1]
    assert "intended" not in start and "label" not in start

    answer = step("call", str(folder), json.dumps(
        {"name": "searchTools", "arguments": {"query": "remember a preference", "source": "memory"}}))
    parsed = json.loads(answer)
    assert parsed["ok"] is True and parsed["tools"][0]["tool_name"] == "memory__remember"
    ran = json.loads(step("call", str(folder), json.dumps(
        {"name": "executeTool", "arguments": {"tool_name": "memory__remember",
                                              "arguments": {"content": "ada prefers tabs", "kind": "preference"}}})))
    assert ran["ok"] is True and ran["tool_name"] == "memory__remember"

    following = step("done", str(folder), "Saved.")
    assert "request 2 of 2" in following and "<@ada>: send an email to the team" in following
    assert "--- tools ---" not in following
    assert "request 2 of 2" in step("show", str(folder)) and "--- tools ---" in step("show", str(folder))
    simulated = json.loads(step("call", str(folder), json.dumps(
        {"name": "executeTool", "arguments": {"tool_name": "mcp__git__git_log", "arguments": {"repo_path": "."}}})))
    assert simulated["result"]["simulated"] is True
    assert "finished" in step("done", str(folder), "I cannot send email.")

    head, first, second = _lines(folder / "transcript.jsonl")
    assert (head["kind"], head["model"], head["provenance"], head["requests"]) == (
        "header", "person", "a person at a shell", 2)
    assert [c["name"] for c in first["calls"]] == ["searchTools", "executeTool"]
    assert first["calls"][0]["answer_chars"] == len(answer)
    assert first["executed"] == ["memory__remember"] and first["final"] == "Saved."
    assert second["executed"] == ["mcp__git__git_log"] and second["final"] == "I cannot send email."
    with pytest.raises(SystemExit, match="finished"):
        agent.main(["call", str(folder), '{"name": "searchTools", "arguments": {"query": "x"}}'], out=printed.append)


def test_step_refuses_a_call_that_is_not_a_tool_call(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="holds no evaluation"):
        agent.main(["call", str(tmp_path), "{}"], out=print)
    (tmp_path / "state.json").write_text(json.dumps(
        {"requests": TWO, "index": 0, "calls": [], "serial": 0, "max_calls": 2, "transcript": "t.jsonl"}))
    with pytest.raises(SystemExit, match="not JSON"):
        agent.main(["call", str(tmp_path), "searchTools(memory)"], out=print)
    with pytest.raises(SystemExit, match='"name": "searchTools" or "executeTool"'):
        agent.main(["call", str(tmp_path), '{"query": "x"}'], out=print)
    printed: list[str] = []
    # Arguments a model sends as a JSON string are decoded as on the wire; bad ones get the wire's refusal.
    assert agent.main(["call", str(tmp_path), '{"name": "searchTools", "arguments": "{bad"}'], out=printed.append) == 0
    refusal = json.loads(printed[0])
    assert refusal["ok"] is False and refusal["error"]["code"] == "invalid_arguments"
    assert "not valid JSON" in refusal["error"]["message"]
    state = json.loads((tmp_path / "state.json").read_text())
    assert [(c["name"], c["arguments"], c["answer_chars"]) for c in state["calls"]] == [
        ("searchTools", "{bad", len(printed[0]))]
    if (DATA / "livemcpbench").is_dir():  # a string holding a JSON object is recorded as the object it holds
        text = json.dumps({"query": "remember", "source": "memory"})
        assert agent.main(["call", str(tmp_path), json.dumps({"name": "searchTools", "arguments": text})],
                          out=printed.append) == 0
        assert json.loads(printed[1])["ok"] is True
        state = json.loads((tmp_path / "state.json").read_text())
        assert state["calls"][1]["arguments"] == {"query": "remember", "source": "memory"}
        assert "memory__remember" in state["calls"][1]["shown"]
    else:
        state["calls"].append(state["calls"][0])
        (tmp_path / "state.json").write_text(json.dumps(state))
    with pytest.raises(SystemExit, match="had its 2 calls"):
        agent.main(["call", str(tmp_path), '{"name": "searchTools", "arguments": {}}'], out=print)


def test_score_counts_what_the_transcript_recorded() -> None:
    head, records = agent.read_transcript(TINY)
    found = agent.figures(records)
    assert head["request_set"] == "tiny"
    assert found["requests"] == 3 and found["served_requests"] == 2 and found["unserved_requests"] == 1
    assert found["intended_shown"] == 0.5  # the git request's recorded search showed nothing
    assert found["intended_executed"] == 0.5
    assert found["searches_per_request"] == 1.0
    assert (found["answer_chars_median"], found["answer_chars_max"]) == (900, 1500)
    assert found["unserved_no_tool_or_weak"] == 1.0
    assert found["memory_source_searches"] == 1 and found["memory_source_searches_showing_intended"] == 1.0
    assert found["weak_field_seen"] is False
    assert agent.misses(records) == [
        'catalog-git-log: not in a top 5: mcp__git__git_log; searches: [{"query": "git commit log"}]']


def test_weak_is_read_when_answers_carry_it_and_absent_otherwise() -> None:
    unserved = {"label": "none", "intended": [], "executed": ["mcp__a__b"], "calls": [
        {"name": "searchTools", "arguments": {"query": "email"}, "answer_chars": 10, "ok": True,
         "shown": ["mcp__a__b"], "top": ["mcp__a__b"], "weak": None}]}
    assert agent.figures([unserved])["unserved_no_tool_or_weak"] == 0.0
    record = agent.call_record("searchTools", {"query": "email"},
                               {"ok": True, "weak": True, "tools": [{"tool_name": "mcp__a__b"}]})
    assert record["weak"] is True and record["shown"] == ["mcp__a__b"]
    assert agent.figures([{**unserved, "calls": [record]}])["unserved_no_tool_or_weak"] == 1.0
    batch = {"ok": True, "results": [{"query": "a", "weak": False, "tools": [{"tool_name": "x"}]},
                                     {"query": "b", "weak": True, "tools": [{"tool_name": "y"}]}]}
    assert agent.call_record("searchTools", {}, batch)["weak"] is True
    assert agent.call_record("searchTools", {}, batch)["shown"] == ["x", "y"]


@needs_livemcpbench
def test_replay_reruns_the_recorded_searches_against_todays_ranking() -> None:
    found = agent.replay(TINY)
    # Recorded, the git search showed nothing; today's ranking puts git_log in the top five.
    assert found["intended_shown_top5"] == 1.0 and found["intended_shown"] == 1.0
    assert "intended_executed" not in found
    assert found["memory_source_searches"] == 1 and found["memory_source_searches_showing_intended"] == 1.0
    assert found["searches_per_request"] == 1.0 and found["search_answers"] == 3
    assert 500 < found["answer_chars_median"] <= found["answer_chars_max"]
    assert found["unserved_no_tool_or_weak"] == 1.0


def test_floors_come_from_the_header_or_a_sidecar_and_say_what_misses(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"kind": "header", "floors": {"intended_shown_top5": {"min": 0.6}}}) + "\n")
    assert agent.floors_of(path) == {"intended_shown_top5": {"min": 0.6}}
    path.write_text(json.dumps({"kind": "header"}) + "\n")
    path.with_suffix(".floors.json").write_text(json.dumps({"answer_chars_median": {"max": 2000}}))
    assert agent.floors_of(path) == {"answer_chars_median": {"max": 2000}}
    floors = {"intended_shown_top5": {"min": 0.6}, "answer_chars_median": {"max": 2000}, "no_match_chars_max": {"max": 1}}
    assert agent.check_floors({"intended_shown_top5": 0.7, "answer_chars_median": 1800, "no_match_chars_max": None},
                              floors) == ["no_match_chars_max: no figure (floor {'max': 1})"]
    assert agent.check_floors({"intended_shown_top5": 0.5, "answer_chars_median": 2100}, floors)[:2] == [
        "intended_shown_top5: 0.5 < min 0.6", "answer_chars_median: 2100 > max 2000"]


KEPT = sorted(agent.TRANSCRIPTS.glob("*.jsonl"))


@needs_livemcpbench
@pytest.mark.parametrize("transcript", KEPT, ids=[p.stem for p in KEPT])
def test_kept_transcripts_replay_above_their_floors(transcript: Path) -> None:
    floors = agent.floors_of(transcript)
    assert floors, f"{transcript.name}: a kept transcript carries floors (header 'floors' or a .floors.json)"
    found = agent.replay(transcript)
    assert agent.check_floors(found, floors) == []


def test_the_ablation_merges_the_model_queries_figures_into_each_variants_costs(tmp_path: Path) -> None:
    import _ablation  # importable: _load put benchmarks/ on sys.path

    key = "livemcpbench-standin-1 intended_shown_top5"
    memory = "slack-standin-1 memory_source_searches_showing_intended"
    runs = [{"variant": "all on", "kind": "transcripts", key: 60.0, memory: 100.0},
            {"variant": "rule asks off", "kind": "transcripts", key: 57.5, memory: 93.8},
            {"variant": "k1 = 1.2", "kind": "transcripts", key: 60.0, memory: 100.0}]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(runs), encoding="utf-8")
    merged = {e["variant"]: e for e in _ablation.merge([str(path)])["variants"]}
    assert merged["rule asks off"]["costs"] == {key: 2.5, memory: 6.2}
    assert merged["rule asks off"]["pays"] is True
    assert merged["k1 = 1.2"]["pays"] is False  # moved nothing on the model's queries
    row = next(line for line in _ablation.markdown({"variants": list(merged.values())}).splitlines()
               if line.startswith("| rule asks off"))
    assert "| -6.2 / – / -2.5 |" in row


@needs_livemcpbench
def test_the_bm25_baseline_ranks_the_same_queries_inside_their_source(tmp_path: Path) -> None:
    _, records = agent.read_transcript(TINY)
    replayed = agent.replay_records(records, tmp_path, baseline=True)
    memory_search, git_search = replayed[0]["calls"][0], replayed[1]["calls"][0]
    assert memory_search["top"] and all(t.startswith("memory__") for t in memory_search["top"])
    assert "mcp__git__git_log" in git_search["top"] and len(git_search["top"]) == agent.TOP
    assert not any(c["weak"] for r in replayed for c in r["calls"])  # plain BM25 flags nothing
    found = agent.figures(replayed, with_execution=False)
    assert found["intended_shown_top5"] == 1.0
