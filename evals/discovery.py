"""Discovery: natural requests to remember, recall, list and forget find the right memory tool first in searchTools.

Each request runs twice: searching inside source ``memory`` and searching the whole catalog, where the
stand-in notes, reminders and tickets sources compete for the same words. The scripted reference searches
with the user's words verbatim; a live model writes its own query, and the same check applies to it.
"""

from __future__ import annotations

from typing import Any

from evals.agents import Steps
from evals.harness import Agent, Case, Control, Rubric, searched_top
from evals.scenario import Scenario, mention
from junior_core.llm.types import call, say
from junior_core.testing import ScriptView

__all__ = ["CASES", "REQUESTS"]

# Findings of this suite kept failing on purpose until fixed: ``{case key: what is wrong}``. The check goes
# red once a marked case passes, so the marker is removed with the fix.
KNOWN_ISSUES: dict[str, str] = {
    "remember-save[all]": "across all sources memory__search (19.3) edges out memory__remember (18.7): the words after "
                          "the colon count toward search since the colon-payload grammar was deleted (it paid nothing "
                          "on the model's transcripts); inside source memory remember is first",
}

REQUESTS: list[tuple[str, str, str]] = [
    ("remember-preference", "Please remember that I prefer terse PR summaries.", "memory__remember"),
    ("remember-procedure", "Keep in mind for later: deploys need two approvals from now on.", "memory__remember"),
    ("remember-save", "Save a preference for me: I like answers with code first.", "memory__remember"),
    ("remember-store", "Store a new memory: our staging database is refreshed every Monday.", "memory__remember"),
    ("recall", "What did I tell you about how I like code reviews?", "memory__search"),
    ("recall-team", "Do you have anything saved about how we triage flaky webhooks?", "memory__search"),
    ("list", "Show me everything you have stored about me.", "memory__list"),
    ("forget", "Forget what I told you about PR summaries.", "memory__forget"),
    ("forget-outdated", "That rule about two deploy approvals is no longer true, please delete it.", "memory__forget"),
]


def searches(query: str | None, source: str | None) -> Any:
    def turn(view: ScriptView) -> Steps:
        found = yield call(
            "searchTools",
            {"query": query if query is not None else view.user_text.split(": ", 1)[-1], "source": source},
        )
        names = [t["tool_name"] for t in found.get("tools", [])]
        yield say(f"I would use {names[0]}." if names else "I found no tool for that.")

    return turn


def _case(slug: str, text: str, expected: str, source: str | None) -> Case:
    where = "in source memory" if source else "across all sources"
    key = f"{slug}[{'memory' if source else 'all'}]"
    return Case(
        id=f"discovery/{key}",
        known_issue=KNOWN_ISSUES.get(key),
        description=f"{text!r} finds {expected} first {where}.",
        scenario=Scenario([mention("U1", text)]),
        checks=[searched_top(expected, top=1)],
        rubric=Rubric(passes=[f"Finds and uses {expected} for the request."]),
        reference=Agent([searches(None, source)]),
        controls=[
            Control("never searches", Agent([lambda view: say("I can't do that.")])),
            Control("searches the wrong source", Agent([searches(None, "tickets")])),
            Control("searches with a vague query", Agent([searches("help", source)])),
        ],
    )


CASES: list[Case] = [_case(slug, text, tool, src) for slug, text, tool in REQUESTS for src in ("memory", None)]
