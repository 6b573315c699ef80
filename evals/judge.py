"""Rubric criteria judged by a model: each pass criterion must hold, each fail criterion must not."""

from __future__ import annotations

import json
from typing import Any

from evals.harness import Case, Outcome
from junior_core.llm.types import ChatItem, ModelClient, ModelRequest

__all__ = ["JUDGE_INSTRUCTIONS", "Judge", "render_outcome"]

JUDGE_INSTRUCTIONS = """\
You grade one run of a chat assistant that has long-term memory tools. You get the conversation, every tool \
call with its result, the memories left in the database, and numbered criteria. For each criterion decide \
whether it describes what happened. Judge only from the evidence given. Answer with one JSON object and nothing \
else: {"criteria": [{"id": "P1", "holds": true, "reason": "<one short sentence>"}, ...]} with one entry per \
criterion id."""


def render_outcome(outcome: Outcome) -> str:
    """The run as the judge reads it: thread, tool calls, answers, and the memories stored."""
    lines = ["Conversation and tool calls:"]
    for index, turn in enumerate(outcome.turns, start=1):
        lines.append(f"-- turn {index}, in {outcome.scenario.where(index - 1)}")
        for message in turn.transcript:
            if message.role == "user":
                who = message.actor.user_id if message.actor else "someone"
                lines.append(f"<@{who}>: {message.text}")
            elif message.role == "tool":
                result = json.dumps(message.result, ensure_ascii=False, default=str)[:500]
                lines.append(
                    f"[tool {message.tool_name} {json.dumps(message.arguments, default=str)[:300]} -> {result}]"
                )
            elif message.text:
                lines.append(f"assistant: {message.text}")
    lines.append("Memories in the database after the run:")
    for row in outcome.rows:
        state = "archived" if row["archived_at"] else "active"
        lines.append(f"- {state} {row['scope']} {row['kind']} for {row['subject_key']}: {row['content']!r}")
    if not outcome.rows:
        lines.append("- none")
    return "\n".join(lines)


class Judge:
    """Asks ``model`` to grade a run against a case's rubric; returns ``{"ok", "score", "reasons", "criteria"}``."""

    def __init__(self, model: ModelClient) -> None:
        self.model = model

    def __call__(self, case: Case, outcome: Outcome) -> dict[str, Any]:
        criteria = {f"P{i}": c for i, c in enumerate(case.rubric.passes, start=1)}
        criteria |= {f"F{i}": c for i, c in enumerate(case.rubric.fails, start=1)}
        if not criteria:
            return {"ok": True, "score": 1.0, "reasons": [], "criteria": []}
        listing = "\n".join(
            f"{key} ({'should hold' if key.startswith('P') else 'must not hold'}): {text}"
            for key, text in criteria.items()
        )
        prompt = f"{render_outcome(outcome)}\n\nCriteria:\n{listing}"
        from junior_memory.model_helpers import parse_json_object

        try:
            reply = self.model.complete(ModelRequest(JUDGE_INSTRUCTIONS, (ChatItem("user", prompt),)))
            data = parse_json_object(reply.text) or {}
        except Exception as exc:  # noqa: BLE001 - a judge outage is a reason on the row, not a crash
            return {
                "ok": False,
                "score": 0.0,
                "reasons": [f"judge failed: {type(exc).__name__}: {exc}"],
                "criteria": [],
            }
        verdicts = {str(v.get("id")): v for v in data.get("criteria", []) if isinstance(v, dict)}
        results, reasons = [], []
        for key, text in criteria.items():
            verdict = verdicts.get(key)
            holds = verdict.get("holds") if verdict else None
            good = holds is True if key.startswith("P") else holds is False
            results.append(
                {
                    "id": key,
                    "criterion": text,
                    "holds": holds,
                    "ok": good,
                    "reason": (verdict or {}).get("reason", "no verdict"),
                }
            )
            if not good:
                reasons.append(f"rubric {key} {text!r}: {(verdict or {}).get('reason', 'no verdict')}")
        score = sum(r["ok"] for r in results) / len(results)
        return {"ok": not reasons, "score": score, "reasons": reasons, "criteria": results}
