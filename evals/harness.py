"""The eval harness: cases, checks that read the real database, scripted controls, and the reports.

A ``Case`` is a Slack-style scenario plus deterministic checks (database and
transcript assertions) and rubric criteria for a model judge. Every case carries
a scripted reference agent that follows the protocol and scripted negative
controls that misbehave. ``check`` runs them all without a model: the reference
must pass every check, every control must be caught, and every check must be the
only one catching at least one control (remove it and that control would pass).
"""

from __future__ import annotations

import json
import re
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import attrs

from evals.backends import Backend
from evals.distractors import Distractors
from evals.scenario import AnyScenario, Seed
from junior_core import Runtime, ToolContext
from junior_core.llm.agent import Turn, run_turn
from junior_core.llm.types import ModelClient, say
from junior_core.testing import Script, ScriptedModel, ScriptView

__all__ = [
    "Agent",
    "Case",
    "Check",
    "CheckResult",
    "Control",
    "MemoryReader",
    "Outcome",
    "Rubric",
    "RunResult",
    "Select",
    "check",
    "not_seen",
    "run_case",
]

MEMORIES = "junior_memory_memories"


def _tuple(value: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(value)


# -- agents ----------------------------------------------------------------------------------------


def no_extraction(view: ScriptView) -> Any:
    """An extractor script that proposes nothing."""
    return say('{"memories": []}')


@attrs.frozen
class Agent:
    """A scripted agent: one chat script per mention (the last one repeats) and an extractor script."""

    turns: tuple[Script, ...] = attrs.field(converter=_tuple)
    extractor: Script = no_extraction

    def chat_model(self, wire: Literal["openai", "anthropic"] = "openai") -> ScriptedModel:
        """A fresh ScriptedModel playing ``turns`` in order."""
        scripts = list(self.turns)
        state = {"turn": 0}

        def dispatch(view: ScriptView) -> Any:
            # ScriptedModel calls the script once at the start of each turn (generators take it from there).
            index = min(state["turn"], len(scripts) - 1)
            state["turn"] += 1
            return scripts[index](view)

        return ScriptedModel(dispatch, wire=wire, name="scripted-agent")

    def extractor_model(self, wire: Literal["openai", "anthropic"] = "openai") -> ScriptedModel:
        return ScriptedModel(self.extractor, wire=wire, name="scripted-extractor")


@attrs.frozen
class Control:
    """A negative control: a scripted agent that misbehaves in a named way; some check must catch it."""

    name: str
    agent: Agent


@attrs.frozen
class Rubric:
    """Criteria for a model judge: what a good answer does, and what it must not do."""

    passes: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    fails: tuple[str, ...] = attrs.field(default=(), converter=_tuple)


# -- reading the database --------------------------------------------------------------------------


class MemoryReader:
    """Reads ``junior_memory_memories`` straight from the database, independent of the plugin's code."""

    def __init__(self, url: str) -> None:
        from sqlalchemy import create_engine

        self.engine = create_engine(url)

    def rows(self) -> list[dict[str, Any]]:
        from sqlalchemy import MetaData, Table, select

        with self.engine.connect() as conn:
            table = Table(MEMORIES, MetaData(), autoload_with=conn)
            return [dict(r._mapping) for r in conn.execute(select(table))]

    def close(self) -> None:
        self.engine.dispose()


@attrs.frozen
class Select:
    """A selection of memory rows: scope and subject, kind, content words, source_key, state.

    ``owner``: a user's personal memories (scope ``personal``, subject the actor key).
    ``shared``: the conversation scope of the scenario (the workspace in a public channel, the channel itself in
    a private one; for a ``Timeline``, its home conversation's). ``written_in``: rows whose source_key is the
    scenario's thread (``thread``), the seed thread (``seed``), or anywhere (None). ``state``: ``active``,
    ``archived`` or ``any``.
    """

    owner: str | None = None
    shared: bool = False
    kind: str | None = None
    contains: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    written_in: Literal["thread", "seed"] | None = "thread"
    state: Literal["active", "archived", "any"] = "active"

    def __attrs_post_init__(self) -> None:
        if self.owner is not None and self.shared:
            raise ValueError("a selection is either one owner's personal memories or the shared scope, not both")

    def describe(self) -> str:
        parts: list[str] = [self.state]
        if self.owner:
            parts.append(f"personal memory of {self.owner}")
        elif self.shared:
            parts.append("shared conversation memory")
        else:
            parts.append("memory in any scope")
        if self.kind:
            parts.append(f"of kind {self.kind}")
        if self.contains:
            parts.append("containing " + " + ".join(repr(c) for c in self.contains))
        if self.written_in:
            parts.append(f"written in the {self.written_in} thread")
        return " ".join(parts)

    def apply(
        self, rows: Iterable[dict[str, Any]], scenario: AnyScenario, seed_source_keys: Sequence[str]
    ) -> list[dict[str, Any]]:
        out = []
        for row in rows:
            if self.state == "active" and row["archived_at"] is not None:
                continue
            if self.state == "archived" and row["archived_at"] is None:
                continue
            if self.owner is not None and not (
                row["scope"] == "personal" and row["subject_key"] == scenario.actor_key(self.owner)
            ):
                continue
            if self.shared:
                if not (row["scope"] == "conversation" and row["subject_key"] == scenario.shared_key):
                    continue
            if self.kind is not None and row["kind"] != self.kind:
                continue
            content = str(row["content"]).lower()
            if not all(word.lower() in content for word in self.contains):
                continue
            if self.written_in == "thread" and row["source_key"] != scenario.source_key:
                continue
            if self.written_in == "seed" and row["source_key"] not in seed_source_keys:
                continue
            out.append(row)
        return out


# -- outcomes and checks ---------------------------------------------------------------------------


@attrs.frozen
class Outcome:
    """What a run left behind: the turns and the database rows."""

    scenario: AnyScenario
    turns: tuple[Turn, ...]
    rows: tuple[dict[str, Any], ...]
    seed_source_keys: tuple[str, ...]

    def select(self, selection: Select) -> list[dict[str, Any]]:
        return selection.apply(self.rows, self.scenario, self.seed_source_keys)

    def answer(self, turn: int = -1) -> str:
        return self.turns[turn].text

    def rows_summary(self) -> str:
        if not self.rows:
            return "the database holds no memories"
        shown = [
            f"{r['scope']}/{r['kind']} {r['subject_key']} {'archived' if r['archived_at'] else 'active'} "
            f"{str(r['content'])[:60]!r}"
            for r in self.rows[:6]
        ]
        return "rows: " + "; ".join(shown)


CheckFn = Callable[[Outcome], "str | None"]


@attrs.frozen
class Check:
    """One deterministic assertion; ``fn`` returns None when it holds, else the reason it does not."""

    name: str
    fn: CheckFn = attrs.field(eq=False)
    db: bool = False


def stored(selection: Select, *, count: int | None = None, name: str | None = None) -> Check:
    """The selection is not empty (or holds exactly ``count`` rows)."""

    def fn(outcome: Outcome) -> str | None:
        found = outcome.select(selection)
        if count is None and not found:
            return f"expected {selection.describe()}, found none ({outcome.rows_summary()})"
        if count is not None and len(found) != count:
            return f"expected {count} {selection.describe()}, found {len(found)} ({outcome.rows_summary()})"
        return None

    return Check(name or f"stores {selection.describe()}" + (f" (exactly {count})" if count else ""), fn, db=True)


def not_stored(selection: Select, *, name: str | None = None) -> Check:
    """The selection is empty: emptiness is the asserted outcome, said explicitly."""

    def fn(outcome: Outcome) -> str | None:
        found = outcome.select(selection)
        if found:
            return f"expected no {selection.describe()}, found {len(found)}: {found[0]['content']!r}"
        return None

    return Check(name or f"stores no {selection.describe()}", fn, db=True)


def answer_quotes(selection: Select, *, turn: int = -1, name: str | None = None) -> Check:
    """The answer of ``turn`` contains the stored content of the selected row, exactly."""

    def fn(outcome: Outcome) -> str | None:
        found = outcome.select(selection)
        if not found:
            return f"nothing to quote: no {selection.describe()}"
        answer = outcome.answer(turn)
        if not any(str(r["content"]) in answer for r in found):
            return f"answer {answer[:120]!r} does not contain the stored content {found[0]['content']!r}"
        return None

    return Check(name or f"answer quotes the stored {selection.describe()}", fn, db=True)


def answer_mentions(*words: str, turn: int = -1, name: str | None = None) -> Check:
    """The answer of ``turn`` mentions every one of ``words`` (case-insensitive)."""

    def fn(outcome: Outcome) -> str | None:
        answer = outcome.answer(turn).lower()
        missing = [w for w in words if w.lower() not in answer]
        return f"answer {outcome.answer(turn)[:120]!r} does not mention {missing}" if missing else None

    return Check(name or "answer mentions " + ", ".join(repr(w) for w in words), fn)


FAILURE_CLAIM = re.compile(
    r"\b(memory|it|that|the tool|saving)\b[^.]{0,30}\b(is|was|seems|appears)\b[^.]{0,20}"
    r"\b(unavailable|down|broken|not available|not working|failing)\b"
    r"|\b(couldn't|could not|can't|cannot|unable to|failed to|wasn't able to|was not able to)\b[^.]{0,20}"
    r"\b(save|store|remember|access|reach|forget|recall)\b"
    r"|\bno (access to )?(long-term )?memory\b|\bdon't have (access to )?(a )?memory\b",
    re.IGNORECASE,
)

SAVE_CLAIM = re.compile(r"\b(saved|stored|noted|remembered|i'll remember|i will remember|got it)\b", re.IGNORECASE)
NEGATION = re.compile(r"\b(not|won't|didn't|haven't|nothing|never|no)\b", re.IGNORECASE)


def no_failure_claim(*, name: str = "no answer says memory failed or is unavailable") -> Check:
    def fn(outcome: Outcome) -> str | None:
        for turn in outcome.turns:
            match = FAILURE_CLAIM.search(turn.text)
            if match:
                return f"answer claims a failure: {match.group(0)!r} in {turn.text[:120]!r}"
        return None

    return Check(name, fn)


def no_save_claim(*, name: str = "no answer claims something was saved") -> Check:
    def fn(outcome: Outcome) -> str | None:
        for turn in outcome.turns:
            # A negation counts only in the claim's own sentence, before it ("Saved! Nothing else to do." is
            # a claim); a bare acknowledgement ("got it", "noted") is negated by its sentence anywhere.
            for sentence in re.split(r"(?<=[.!?])\s+", turn.text):
                for match in SAVE_CLAIM.finditer(sentence):
                    weak = match.group(0).lower() in ("got it", "noted")
                    scope = sentence if weak else sentence[: match.start()]
                    if not NEGATION.search(scope):
                        return f"answer claims a save: {match.group(0)!r} in {turn.text[:120]!r}"
        return None

    return Check(name, fn)


def not_seen(selection: Select, *, turn: int, name: str | None = None) -> Check:
    """Turn ``turn`` was not handed the selected memories (recall block, tool results) and its answer does not
    say them (their content, or every word of the selection's ``contains``).

    An empty selection fails: with nothing stored there is nothing that could have leaked, and passing would
    say nothing.
    """

    def fn(outcome: Outcome) -> str | None:
        found = outcome.select(selection)
        if not found:
            return f"nothing that could leak: no {selection.describe()} ({outcome.rows_summary()})"
        seen = outcome.turns[turn]
        answer = seen.text.lower()
        for row in found:
            content = str(row["content"])
            words = selection.contains and all(w.lower() in answer for w in selection.contains)
            if content.lower() in answer or words:
                return f"the answer says it: {seen.text[:120]!r}"
            if content in seen.system or any(content in block for block in seen.context_blocks):
                return f"recall handed it {content!r}"
            for call in seen.tool_calls:
                if content in json.dumps(call.result, ensure_ascii=False, default=str):
                    return f"{call.tool_name} returned {content!r}"
        return None

    return Check(name or f"turn {turn + 1} is not given and does not say the {selection.describe()}", fn, db=True)


def no_tool_calls(*, turn: int = -1, name: str | None = None) -> Check:
    def fn(outcome: Outcome) -> str | None:
        calls = outcome.turns[turn].tool_calls
        return f"the turn called {[c.tool_name for c in calls]}" if calls else None

    return Check(name or "the turn calls no tool", fn)


def searched_top(
    tool_name: str, *, top: int = 3, source: str | Literal["any"] | None = "any", name: str | None = None
) -> Check:
    """A searchTools call of the turn (with ``source`` when given) returned ``tool_name`` within its first ``top``."""

    def fn(outcome: Outcome) -> str | None:
        searches = [
            c
            for t in outcome.turns
            for c in t.tool_calls
            if c.name == "searchTools" and (source == "any" or (c.arguments or {}).get("source") == source)
        ]
        if not searches:
            return "the agent never called searchTools" + ("" if source == "any" else f" with source {source!r}")
        for call in searches:
            names = [t.get("tool_name") for t in call.result.get("tools", [])][:top]
            if tool_name in names:
                return None
        shown = [[t.get("tool_name") for t in c.result.get("tools", [])][:top] for c in searches]
        return f"{tool_name} not in the top {top} of any search: {shown}"

    return Check(name or f"searchTools returns {tool_name} in the top {top}", fn)


# -- cases and runs --------------------------------------------------------------------------------


@attrs.frozen
class Case:
    """One eval: a scenario, its checks and rubric, a reference agent, and negative controls."""

    id: str
    description: str
    scenario: AnyScenario
    checks: tuple[Check, ...] = attrs.field(converter=_tuple)
    reference: Agent
    controls: tuple[Control, ...] = attrs.field(converter=_tuple)
    seeds: tuple[Seed, ...] = attrs.field(default=(), converter=_tuple)
    rubric: Rubric = Rubric()
    known_issue: str | None = None
    plugins: Callable[[], list[object]] = attrs.field(default=lambda: [Distractors()], eq=False)  # type: ignore[assignment]

    def __attrs_post_init__(self) -> None:
        names = [c.name for c in self.checks]
        if len(set(names)) != len(names):
            raise ValueError(f"case {self.id}: check names must be unique, got {names}")
        if not self.controls:
            raise ValueError(f"case {self.id}: every case needs at least one negative control")


@attrs.frozen
class CheckResult:
    name: str
    ok: bool
    reason: str = ""
    db: bool = False


@attrs.frozen
class RunResult:
    """One agent's run of one case."""

    case: str
    agent: str
    role: Literal["reference", "control", "live"]
    checks: tuple[CheckResult, ...] = ()
    answers: tuple[str, ...] = ()
    tool_calls: tuple[str, ...] = ()
    error: str | None = None
    rubric: dict[str, Any] | None = None
    seconds: float = 0.0
    known_issue: str | None = None

    @property
    def failed(self) -> list[str]:
        return [c.name for c in self.checks if not c.ok]

    @property
    def outcome(self) -> str:
        if self.error is not None:
            return "ERROR"
        if self.role == "control":
            return "caught" if self.failed else "MISSED"
        rubric_ok = self.rubric is None or self.rubric.get("ok", True)
        passed = not self.failed and rubric_ok
        if self.role == "reference" and self.known_issue is not None:
            # Strict, like pytest's strict xfail: a known issue that no longer fails must lose its marker.
            return "FIXED" if passed else "known"
        return "pass" if passed else "FAIL"

    @property
    def good(self) -> bool:
        return self.outcome in ("pass", "caught", "known")

    @property
    def score(self) -> float:
        if self.rubric is not None and "score" in self.rubric:
            return float(self.rubric["score"])
        if not self.checks:
            return 0.0
        return sum(c.ok for c in self.checks) / len(self.checks)

    def reasons(self) -> list[str]:
        if self.error is not None:
            return [self.error.strip().splitlines()[-1]]
        out = [f"known issue: {self.known_issue}"] if self.known_issue and self.role == "reference" else []
        if self.outcome == "FIXED":
            out.append("passes now: remove known_issue from the case")
        out += [f"{c.name}: {c.reason}" for c in self.checks if not c.ok]
        if self.rubric is not None:
            out += list(self.rubric.get("reasons", []))
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "agent": self.agent,
            "role": self.role,
            "outcome": self.outcome,
            "score": round(self.score, 3),
            "reasons": self.reasons(),
            "checks": [attrs.asdict(c) for c in self.checks],
            "answers": list(self.answers),
            "tool_calls": list(self.tool_calls),
            "rubric": self.rubric,
            "error": self.error,
            "seconds": round(self.seconds, 3),
        }


def _seed(runtime: Runtime, case: Case) -> tuple[str, ...]:
    keys = []
    for index, seed in enumerate(case.seeds):
        scenario = case.scenario
        context = ToolContext(
            scenario.actor(seed.user),
            scenario.conversation(message_ts=seed.ts, thread_ts=seed.ts),
            tool_call_id=f"seed-{index}",
        )
        result = runtime.execute_tool("memory__remember", {"content": seed.content, "kind": seed.kind}, context)
        if not result.get("ok"):
            raise RuntimeError(f"case {case.id}: seeding {seed.content!r} failed: {result}")
        keys.append(f"slack:{scenario.team}:{scenario.channel}:{seed.ts}")
    return tuple(keys)


def play(case: Case, runtime: Runtime, model: ModelClient) -> list[Turn]:
    """Replay the scenario's mentions through ``run_turn``."""
    answers: list[str] = []
    turns: list[Turn] = []
    for turn_input in case.scenario.turns(answers):
        turn = run_turn(model, runtime, turn_input.context, list(turn_input.messages))
        turns.append(turn)
        answers.append(turn.text)
    return turns


def run_case(
    case: Case,
    backend: Backend,
    *,
    agent_name: str,
    role: Literal["reference", "control", "live"],
    chat: ModelClient,
    extractor: ModelClient | None,
    judge: Callable[[Case, Outcome], dict[str, Any]] | None = None,
) -> RunResult:
    """Run one agent through one case on a fresh database and evaluate every check."""
    from junior_memory.model_helpers import ModelExtractor
    from junior_memory.plugin import MemoryPlugin

    started = time.perf_counter()
    turns: list[Turn] = []
    try:
        with backend.database() as url:
            # Keyword recall: the cases check the memory protocol, and must not wait on a model download.
            plugin = MemoryPlugin(url=url, extractor=ModelExtractor(extractor) if extractor is not None else None,
                                  embedder=False)
            with Runtime(plugins=[plugin, *case.plugins()]) as runtime:
                seed_keys = _seed(runtime, case)
                turns = play(case, runtime, chat)
            reader = MemoryReader(url)
            try:
                rows = reader.rows()
            finally:
                reader.close()
        outcome = Outcome(case.scenario, tuple(turns), tuple(rows), seed_keys)
        results = []
        for item in case.checks:
            try:
                reason = item.fn(outcome)
            except Exception as exc:  # noqa: BLE001 - a check that crashes fails, with its error as the reason
                reason = f"check raised {type(exc).__name__}: {exc}"
            results.append(CheckResult(item.name, reason is None, reason or "", item.db))
        rubric = judge(case, outcome) if judge is not None else None
        return RunResult(
            case.id,
            agent_name,
            role,
            tuple(results),
            tuple(t.text for t in turns),
            tuple(c.tool_name for t in turns for c in t.tool_calls),
            None,
            rubric,
            time.perf_counter() - started,
        )
    except Exception:  # noqa: BLE001 - reported as an ERROR row, never a crash of the whole suite
        return RunResult(
            case.id,
            agent_name,
            role,
            answers=tuple(t.text for t in turns),
            error=traceback.format_exc(),
            seconds=time.perf_counter() - started,
        )


# -- check mode ------------------------------------------------------------------------------------


@attrs.frozen
class CaseReport:
    """A case under ``check``: the reference run, the control runs, and which checks no control depends on."""

    case: Case
    reference: RunResult
    controls: tuple[RunResult, ...]
    undepended: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.reference.good and all(c.good for c in self.controls) and not self.undepended


def removal_check(case: Case, controls: Sequence[RunResult]) -> tuple[str, ...]:
    """The checks no control depends on: removing one of them lets no control pass that failed before.

    A control depends on a check when that check is the only one it fails; a
    control that errored depends on nothing.
    """
    depended = {run.failed[0] for run in controls if run.error is None and len(run.failed) == 1}
    return tuple(c.name for c in case.checks if c.name not in depended)


def check(
    cases: Sequence[Case],
    backend: Backend,
    *,
    wire: Literal["openai", "anthropic"] = "openai",
    progress: Callable[[RunResult], None] | None = None,
) -> list[CaseReport]:
    """Run every case's reference and controls with scripted models; no network, no model."""
    reports = []
    for case in cases:

        def one(agent: Agent, name: str, role: Literal["reference", "control"], case: Case = case) -> RunResult:
            result = run_case(
                case,
                backend,
                agent_name=name,
                role=role,
                chat=agent.chat_model(wire),
                extractor=agent.extractor_model(wire),
            )
            if role == "reference" and case.known_issue is not None:
                result = attrs.evolve(result, known_issue=case.known_issue)
            if progress is not None:
                progress(result)
            return result

        reference = one(case.reference, "reference", "reference")
        controls = tuple(one(c.agent, c.name, "control") for c in case.controls)
        reports.append(CaseReport(case, reference, controls, removal_check(case, controls)))
    return reports


def results_table(results: Sequence[RunResult], width: int = 100) -> str:
    """A plain-text table: case, agent, outcome, score, reasons."""
    header = f"{'case':<40} {'agent':<36} {'outcome':<8} {'score':>5}  reasons"
    lines = [header, "-" * len(header)]
    for r in results:
        reasons = "; ".join(r.reasons())
        if len(reasons) > width:
            reasons = reasons[: width - 3] + "..."
        lines.append(f"{r.case:<40} {r.agent[:36]:<36} {r.outcome:<8} {r.score:>5.2f}  {reasons}")
    return "\n".join(lines)


def report_json(results: Sequence[RunResult], **meta: Any) -> str:
    return json.dumps({**meta, "results": [r.to_json() for r in results]}, indent=2, default=str)
