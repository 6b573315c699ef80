"""The eval harness itself: selections, checks, the removal check, check mode on a real database, the judge."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evals.__main__ import main
from evals.agents import reply
from evals.backends import SqliteBackend
from evals.harness import (
    Agent,
    Case,
    CheckResult,
    Control,
    Outcome,
    Rubric,
    RunResult,
    Select,
    check,
    no_failure_claim,
    no_save_claim,
    not_seen,
    not_stored,
    removal_check,
    stored,
)
from evals.judge import Judge
from evals.memory.workflows import remembers
from evals.scenario import Scenario, mention
from junior_core.llm.types import say
from junior_core.testing import ScriptedModel, ScriptView

pytest.importorskip("junior_memory.plugin")

SCENARIO = Scenario([mention("U1", "remember that I prefer tea")])


def row(**fields: Any) -> dict[str, Any]:
    base = {
        "scope": "personal",
        "subject_key": "slack:T1:U1",
        "kind": "preference",
        "content": "Prefers tea",
        "source_key": SCENARIO.source_key,
        "archived_at": None,
    }
    return base | fields


def outcome(*rows: dict[str, Any]) -> Outcome:
    return Outcome(SCENARIO, (), tuple(rows), ("slack:T1:C1:1690000000.000100",))


def test_selection_is_scoped_by_subject_scope_kind_and_source_key() -> None:
    tea = Select(owner="U1", kind="preference", contains=("tea",))
    assert outcome(row()).select(tea)
    assert not outcome(row(subject_key="slack:T1:U2")).select(tea)
    assert not outcome(row(scope="conversation")).select(tea)
    assert not outcome(row(kind="knowledge")).select(tea)
    assert not outcome(row(source_key="slack:T1:C1:1690000000.000100")).select(tea)
    assert outcome(row(source_key="slack:T1:C1:1690000000.000100")).select(Select(owner="U1", written_in="seed"))
    assert not outcome(row(archived_at="2024-01-01")).select(tea)
    shared = Select(shared=True)
    assert outcome(row(scope="conversation", subject_key="slack:T1")).select(shared)
    assert not outcome(row(scope="conversation", subject_key="slack:T2")).select(shared)


def test_an_empty_selection_fails_unless_emptiness_is_the_assertion() -> None:
    tea = Select(owner="U1", contains=("tea",))
    assert stored(tea).fn(outcome()) is not None
    assert "found none" in str(stored(tea).fn(outcome()))
    assert not_stored(tea).fn(outcome()) is None
    assert not_stored(tea).fn(outcome(row())) is not None
    assert stored(tea, count=1).fn(outcome(row(), row(content="Prefers tea, strong"))) is not None


@pytest.mark.parametrize(
    ("text", "failure", "save"),
    [
        ("Sorry, memory is unavailable right now.", True, False),
        ("I couldn't save that.", True, False),
        ("Saved: Prefers tea", False, True),
        ("I won't store that: it is David's preference.", False, False),
        ("Got it, nothing was saved.", False, False),
        ("Saved! Nothing else to do.", False, True),
        ("Nothing else came up. I saved your preference.", False, True),
    ],
)
def test_answer_claims_are_recognised(text: str, failure: bool, save: bool) -> None:
    class T:
        def __init__(self, text: str) -> None:
            self.text = text

    run = Outcome(SCENARIO, (T(text),), (), ())  # type: ignore[arg-type]
    assert (no_failure_claim().fn(run) is not None) is failure
    assert (no_save_claim().fn(run) is not None) is save


def test_removal_check_names_checks_no_control_depends_on() -> None:
    checks = [stored(Select(owner="U1")), no_failure_claim(), no_save_claim()]
    case = Case(
        id="t",
        description="",
        scenario=SCENARIO,
        checks=checks,
        reference=Agent([reply("x")]),
        controls=[Control("c", Agent([reply("x")]))],
    )

    def run(*failed: str, error: str | None = None) -> RunResult:
        results = tuple(CheckResult(c.name, c.name not in failed) for c in checks)
        return RunResult("t", "c", "control", results, error=error)

    # The first control fails two checks: removing either still leaves it caught, so it proves neither.
    controls = [run(checks[0].name, checks[1].name), run(checks[2].name), run(checks[1].name, error="boom")]
    assert removal_check(case, controls) == (checks[0].name, checks[1].name)
    assert removal_check(case, [*controls, run(checks[0].name), run(checks[1].name)]) == ()


TEA = Select(owner="U1", kind="preference", contains=("tea",))


def tea_case(*controls: Control) -> Case:
    return Case(
        id="test/tea",
        description="remember tea",
        scenario=SCENARIO,
        checks=[stored(TEA), no_failure_claim()],
        reference=Agent([remembers("Prefers tea", "preference")]),
        controls=list(controls),
    )


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_check_mode_on_sqlite_passes_reference_and_catches_controls(wire: str) -> None:
    case = tea_case(
        Control("stores nothing", Agent([reply("Done.")])),
        Control("says memory is down", Agent([remembers("Prefers tea", "preference", "Memory is down, sorry.")])),
    )
    (report,) = check([case], SqliteBackend(), wire=wire)  # type: ignore[arg-type]
    assert report.reference.outcome == "pass", report.reference.reasons()
    assert report.reference.tool_calls == ("searchTools", "memory__remember")
    assert [c.outcome for c in report.controls] == ["caught", "caught"]
    assert report.undepended == () and report.ok


def test_check_mode_reports_a_control_nothing_catches_and_an_unproven_check() -> None:
    case = tea_case(Control("behaves like the reference", Agent([remembers("Prefers tea", "preference")])))
    (report,) = check([case], SqliteBackend())
    assert report.controls[0].outcome == "MISSED"
    assert set(report.undepended) == {c.name for c in case.checks}
    assert not report.ok


def test_a_known_issue_must_keep_failing() -> None:
    case = Case(
        id="test/known",
        description="",
        scenario=SCENARIO,
        checks=[stored(TEA)],
        reference=Agent([reply("Done.")]),
        controls=[Control("stores nothing", Agent([reply("Done.")]))],
        known_issue="tea is never stored",
    )
    (report,) = check([case], SqliteBackend())
    assert report.reference.outcome == "known" and report.ok
    fixed = Case(
        id="test/fixed",
        description="",
        scenario=SCENARIO,
        checks=[stored(TEA)],
        reference=Agent([remembers("Prefers tea", "preference")]),
        controls=[Control("stores nothing", Agent([reply("Done.")]))],
        known_issue="tea is never stored",
    )
    (report,) = check([fixed], SqliteBackend())
    assert report.reference.outcome == "FIXED" and not report.ok


def test_judge_scores_pass_and_fail_criteria() -> None:
    def grader(view: ScriptView) -> Any:
        assert "active personal preference for slack:T1:U1: 'Prefers tea'" in view.user_text
        return say(
            json.dumps(
                {
                    "criteria": [
                        {"id": "P1", "holds": True, "reason": "saved"},
                        {"id": "F1", "holds": True, "reason": "it claimed failure"},
                    ]
                }
            )
        )

    case = Case(
        id="j",
        description="",
        scenario=SCENARIO,
        checks=[no_failure_claim()],
        reference=Agent([reply("x")]),
        controls=[Control("c", Agent([reply("x")]))],
        rubric=Rubric(passes=["Saves the preference."], fails=["Claims memory failed."]),
    )
    verdict = Judge(ScriptedModel(grader))(case, outcome(row()))
    assert verdict["score"] == 0.5 and verdict["ok"] is False
    assert verdict["reasons"] == ["rubric F1 'Claims memory failed.': it claimed failure"]


def test_run_without_a_model_is_skipped_loudly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("JUNIOR_MODEL", raising=False)
    assert main(["run", "workflows"]) == 0
    assert "SKIPPED: no model configured" in capsys.readouterr().err
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["run", "--model", "openai:gpt-4.1"]) == 0
    assert "SKIPPED: openai:gpt-4.1: OPENAI_API_KEY is not set" in capsys.readouterr().err


def test_not_seen_fails_when_the_memory_reached_the_turn_or_its_answer_and_on_nothing_stored() -> None:
    from junior_core.llm.agent import ToolCallRecord, Turn

    shared = row(scope="conversation", subject_key="slack:T1", kind="procedure",
                 content="Deploys go through the release channel")
    check_ = not_seen(Select(shared=True, contains=("deploys", "release channel")), turn=0, name="unseen")

    def seen(text: str = "I don't know that yet.", system: str = "You are junior.", found: str = "") -> str | None:
        calls = (ToolCallRecord("c1", "executeTool", {}, {"ok": True, "result": {"memories": [found]}}),)
        turn = Turn(text, (), calls, 2, "answered", system)
        return check_.fn(Outcome(SCENARIO, (turn,), (shared,), ()))

    assert seen() is None
    assert "the answer says it" in (seen("From memory: deploys go through the release channel.") or "")
    assert "the answer says it" in (seen("Deploys? Through the Release Channel, always.") or "")  # its words
    assert "recall handed it" in (seen(system='- procedure: "Deploys go through the release channel"') or "")
    assert "executeTool returned" in (seen(found="Deploys go through the release channel") or "")
    nothing = Outcome(SCENARIO, (Turn("I don't know that yet.", (), (), 1, "answered", ""),), (), ())
    assert "nothing that could leak" in (check_.fn(nothing) or "")
