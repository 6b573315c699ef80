"""``python -m evals check|run|list``: the scripted self-check for CI, and live runs against a model."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals.backends import ENV_POSTGRES, backend_from
from evals.harness import Case, CaseReport, RunResult, report_json, results_table

SUITES = {
    "workflows": "evals.memory.workflows",
    "provenance": "evals.memory.provenance",
    "continuity": "evals.memory.continuity",
    "discovery": "evals.discovery",
}


def load(suites: Sequence[str]) -> list[Case]:
    cases: list[Case] = []
    for name in suites or SUITES:
        if name not in SUITES:
            raise SystemExit(f"unknown suite {name!r}; choose from {', '.join(SUITES)}")
        cases += importlib.import_module(SUITES[name]).CASES
    return cases


def _select(cases: list[Case], pattern: str | None) -> list[Case]:
    if not pattern:
        return cases
    chosen = [c for c in cases if pattern in c.id]
    if not chosen:
        raise SystemExit(f"no case id contains {pattern!r}")
    return chosen


def _write(path: str | None, text: str) -> None:
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text + "\n", encoding="utf-8")
        print(f"JSON report: {path}")


def known_note(reports: Sequence[CaseReport]) -> str:
    known = sum(rep.reference.outcome == "known" for rep in reports)
    return f" ({known} more fail as marked known issues)" if known else ""


def _check(args: argparse.Namespace) -> int:
    from evals.harness import check

    cases = _select(load(args.suite), args.case)
    backend = backend_from(args.postgres if args.postgres is not None else None)
    started = time.perf_counter()

    def progress(result: RunResult) -> None:
        if args.verbose or not result.good:
            print(f"  {result.case} / {result.agent}: {result.outcome}", file=sys.stderr, flush=True)

    try:
        reports = check(cases, backend, wire=args.wire, progress=progress)
    finally:
        backend.close()
    results: list[RunResult] = [r for rep in reports for r in (rep.reference, *rep.controls)]
    # A caught control is the harness working; listing all of them buries the rows that need a look.
    shown = results if args.verbose else [r for r in results if not r.good]
    if shown:
        print(results_table(shown))
        print()
    bad = [rep for rep in reports if not rep.ok]
    for rep in reports:
        for name in rep.undepended:
            print(f"NO CONTROL DEPENDS ON: {rep.case.id}: {name!r} (remove it and every control is still caught)")
        if rep.reference.error or any(c.error for c in rep.controls):
            for run in (rep.reference, *rep.controls):
                if run.error:
                    print(f"ERROR in {run.case} / {run.agent}:\n{run.error}")
    controls = [c for rep in reports for c in rep.controls]
    checks = sum(len(rep.case.checks) for rep in reports)
    undepended = sum(len(rep.undepended) for rep in reports)
    summary = (
        f"evals check ({backend.name}, {args.wire} wire): {len(reports)} cases, "
        f"{sum(rep.reference.outcome == 'pass' for rep in reports)}/{len(reports)} reference runs pass"
        f"{known_note(reports)}, "
        f"{sum(c.good for c in controls)}/{len(controls)} negative controls caught, "
        f"{checks - undepended}/{checks} checks proven necessary by a control, "
        f"{time.perf_counter() - started:.1f} s"
    )
    _write(args.json, report_json(results, mode="check", backend=backend.name, summary=summary))
    print(summary)
    if bad:
        print("FAILED: " + ", ".join(rep.case.id for rep in bad))
        return 1
    print("OK" if args.verbose else "OK (--verbose lists every run)")
    return 0


def _run(args: argparse.Namespace) -> int:
    from evals.harness import run_case
    from evals.judge import Judge
    from junior_core.llm import ModelConfigError, model_from_env, model_from_spec

    spec = args.model or os.environ.get("JUNIOR_MODEL", "").strip()
    if not spec:
        print(
            "SKIPPED: no model configured. Pass --model openai:<model> | anthropic:<model> | "
            "openai-compatible:<base_url>#<model>, or set JUNIOR_MODEL.",
            file=sys.stderr,
        )
        return 0
    try:
        model = model_from_spec(spec)
        judge_model = model_from_spec(args.judge) if args.judge else (model_from_env("JUNIOR_JUDGE_MODEL") or model)
    except ModelConfigError as exc:
        print(f"SKIPPED: {exc}", file=sys.stderr)
        return 0
    cases = _select(load(args.suite), args.case)
    backend = backend_from(args.postgres if args.postgres is not None else None)
    judge = None if args.no_judge else Judge(judge_model)
    results: list[RunResult] = []
    try:
        for case in cases:
            result = run_case(
                case, backend, agent_name=model.name, role="live", chat=model, extractor=model, judge=judge
            )
            print(f"  {result.case}: {result.outcome} {result.score:.2f}", file=sys.stderr, flush=True)
            results.append(result)
    finally:
        backend.close()
    print(results_table(results))
    passed = sum(r.outcome == "pass" for r in results)
    summary = (
        f"evals run ({model.name}, judge {'off' if judge is None else judge_model.name}, {backend.name}): "
        f"{passed}/{len(results)} cases pass"
    )
    _write(args.json, report_json(results, mode="run", model=model.name, backend=backend.name, summary=summary))
    print(summary)
    return 0 if passed == len(results) else 1


def _list(args: argparse.Namespace) -> int:
    for case in _select(load(args.suite), args.case):
        print(f"{case.id}: {case.description}")
        for item in case.checks:
            print(f"    check: {item.name}")
        for control in case.controls:
            print(f"    control: {control.name}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("suite", nargs="*", help=f"suites to run (default all): {', '.join(SUITES)}")
        p.add_argument("--case", help="only cases whose id contains this text")
        p.add_argument("--json", metavar="PATH", help="write the JSON report here")
        p.add_argument(
            "--postgres",
            nargs="?",
            const=True,
            default=None,
            metavar="URL",
            help=f"run on Postgres: a database per run on URL's server (default ${ENV_POSTGRES}, "
            "else postgresql+psycopg://postgres@127.0.0.1:5432/test); SQLite otherwise",
        )
        p.add_argument("-v", "--verbose", action="store_true")

    p_check = sub.add_parser("check", help="reference agents and negative controls, scripted; no model, no network")
    common(p_check)
    p_check.add_argument(
        "--wire",
        choices=["openai", "anthropic"],
        default="openai",
        help="wire format the scripted models speak (default openai)",
    )
    p_check.set_defaults(func=_check)
    p_run = sub.add_parser("run", help="live run against a model; skipped with a message when none is configured")
    common(p_run)
    p_run.add_argument("--model", help="openai:<model>, anthropic:<model> or openai-compatible:<base_url>#<model>")
    p_run.add_argument("--judge", help="model for rubric criteria (default $JUNIOR_JUDGE_MODEL, else --model)")
    p_run.add_argument("--no-judge", action="store_true", help="deterministic checks only")
    p_run.set_defaults(func=_run)
    p_list = sub.add_parser("list", help="list cases, their checks and controls")
    common(p_list)
    p_list.set_defaults(func=_list)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING if not args.verbose else logging.INFO)
    code: Any = args.func(args)
    return int(code)


if __name__ == "__main__":
    raise SystemExit(main())
