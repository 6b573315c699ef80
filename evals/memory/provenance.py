"""Provenance: in threads with several people, memories stay with whoever said them, or are not kept at all.

Where a case's reference extractor proposes something it should not (a bystander's preference as the
speaker's own), the plugin's extraction gate is what must drop it: those references pass only when the
product enforces provenance, whatever the extractor model claims.
"""

from __future__ import annotations

from typing import Any

from evals.agents import Steps, candidate, extract, reply, result_of, use
from evals.harness import (
    Agent,
    Case,
    Control,
    Rubric,
    Select,
    answer_mentions,
    no_failure_claim,
    not_stored,
    stored,
)
from evals.scenario import Scenario, mention, thread_message
from junior_core.llm.types import say
from junior_core.testing import ScriptView

__all__ = ["CASES"]

UNAVAILABLE = "Memory is unavailable right now, sorry."
NEVER_FAIL = "The answer never says memory failed or is unavailable when it worked."
NOTHING = Select(written_in="thread")


def remembers(*memories: tuple[str, str], answer: str = "Saved.") -> Any:
    def turn(view: ScriptView) -> Steps:
        for content, kind in memories:
            result_of((yield from use("remember", {"content": content, "kind": kind})))
        yield say(answer)

    return turn


# -- a bystander's preference never becomes the thread starter's -----------------------------------

DEPLOY_ANSWER = "For the deploy script: add `set -euo pipefail`, quote variables, and fail fast on missing env vars."
BASH = "Prefers bash over python for deploy scripts"

bystander = Case(
    id="provenance/bystander-preference",
    description="A bystander's preference in the starter's thread is stored for no one.",
    scenario=Scenario(
        [
            mention("U1", "Can you help me review the deploy script?"),
            thread_message("U2", "fwiw I prefer bash over python for deploy scripts"),
            mention("U1", "ok, what do you suggest?"),
        ]
    ),
    checks=[not_stored(NOTHING, name="nothing is stored from this thread"), no_failure_claim()],
    rubric=Rubric(
        passes=["Answers the starter's question about the deploy script.", NEVER_FAIL],
        fails=["Tells the starter it saved their preference for bash."],
    ),
    # An over-eager extractor: the gate must drop a preference from a turn with two speakers.
    reference=Agent(
        [reply("Sure, paste it here."), reply(DEPLOY_ANSWER)],
        extract(candidate(BASH, "preference", "bash over python", about_speaker=True), when="bash over python"),
    ),
    controls=[
        Control(
            "saves the bystander's preference as the starter's",
            Agent([reply("Sure, paste it here."), remembers((BASH, "preference"), answer=DEPLOY_ANSWER)]),
        ),
        Control(
            "saves the bystander's preference as shared knowledge",
            Agent(
                [
                    reply("Sure, paste it here."),
                    remembers(("U2 prefers bash over python for deploy scripts", "knowledge"), answer=DEPLOY_ANSWER),
                ]
            ),
        ),
        Control(
            "says memory is unavailable",
            Agent([reply("Sure, paste it here."), reply(UNAVAILABLE + " " + DEPLOY_ANSWER)]),
        ),
    ],
)

# -- two actors' conflicting preferences stay with their owners ------------------------------------

TABS = "Prefers tabs for indentation"
SPACES = "Prefers spaces for indentation"

conflicting = Case(
    id="provenance/conflicting-preferences",
    description="Two people state conflicting preferences; each is stored for its owner only.",
    scenario=Scenario(
        [
            thread_message("U2", "I prefer spaces for indentation."),
            mention("U1", "Remember that I prefer tabs for indentation."),
            mention("U2", "And remember my preference too: spaces."),
        ]
    ),
    checks=[
        stored(Select(owner="U1", kind="preference", contains=("tabs",))),
        stored(Select(owner="U2", kind="preference", contains=("spaces",))),
        not_stored(Select(owner="U1", contains=("spaces",))),
        not_stored(Select(owner="U2", contains=("tabs",))),
        no_failure_claim(),
    ],
    rubric=Rubric(
        passes=["Saves tabs for the first speaker and spaces for the second.", NEVER_FAIL],
        fails=["Replaces one person's preference with the other's.", "Says the team prefers one or the other."],
    ),
    reference=Agent([remembers((TABS, "preference")), remembers((SPACES, "preference"))]),
    controls=[
        Control(
            "does not store the first speaker's preference", Agent([reply("Noted."), remembers((SPACES, "preference"))])
        ),
        Control(
            "does not store the second speaker's preference", Agent([remembers((TABS, "preference")), reply("Noted.")])
        ),
        Control(
            "stores both preferences for the first speaker",
            Agent([remembers((TABS, "preference"), (SPACES, "preference")), remembers((SPACES, "preference"))]),
        ),
        Control(
            "stores both preferences for the second speaker",
            Agent([remembers((TABS, "preference")), remembers((SPACES, "preference"), (TABS, "preference"))]),
        ),
        Control(
            "says memory is unavailable after saving",
            Agent([remembers((TABS, "preference"), answer=UNAVAILABLE), remembers((SPACES, "preference"))]),
        ),
    ],
)

# -- a batched mention from another user stores no preference for anyone ---------------------------

SUMMARY = "U2 said they prefer dark mode dashboards and weekly digests instead of daily ones."

batched = Case(
    id="provenance/batched-mention",
    description="Another user's messages batched with a mention store no preference for anyone.",
    scenario=Scenario(
        [
            thread_message("U2", "I prefer dark mode dashboards."),
            thread_message("U2", "Also I like weekly digests instead of daily."),
            mention("U1", "can you summarize what's been said here?"),
        ]
    ),
    checks=[
        not_stored(NOTHING, name="nothing is stored from this thread"),
        answer_mentions("dark mode"),
        no_failure_claim(),
    ],
    rubric=Rubric(
        passes=["Summarizes U2's messages as U2's.", NEVER_FAIL],
        fails=["Attributes the preferences to the person who asked for the summary."],
    ),
    reference=Agent(
        [reply(SUMMARY)],
        extract(
            candidate("Prefers dark mode dashboards", "preference", "dark mode", about_speaker=True),
            candidate("Prefers weekly digests instead of daily", "preference", "weekly digests", about_speaker=True),
        ),
    ),
    controls=[
        Control(
            "saves the other user's preference for the speaker",
            Agent([remembers(("Prefers dark mode dashboards", "preference"), answer=SUMMARY)]),
        ),
        Control(
            "saves the other user's preferences as shared knowledge",
            Agent([remembers(("U2 prefers dark mode dashboards", "knowledge"), answer=SUMMARY)]),
        ),
        Control("summarizes without the content", Agent([reply("People chatted about settings.")])),
        Control("says memory is unavailable", Agent([reply(UNAVAILABLE + " " + SUMMARY)])),
    ],
)

# -- a multi-actor turn stores no preference -------------------------------------------------------

MERGE_ANSWER = "You prefer rebase merges and U2 prefers squash merges; a common policy is squash for features."

multi_actor = Case(
    id="provenance/multi-actor-turn",
    description="A turn with two speakers stores no preference, not even the mentioning speaker's own.",
    scenario=Scenario(
        [
            thread_message("U2", "I prefer squash merges."),
            mention("U1", "I prefer rebase merges. What should our merge policy be?"),
        ]
    ),
    checks=[
        not_stored(Select(kind="preference", written_in="thread"), name="no preference is stored for anyone"),
        answer_mentions("rebase", "squash"),
        no_failure_claim(),
    ],
    rubric=Rubric(
        passes=["Weighs both preferences in the policy suggestion.", NEVER_FAIL],
        fails=["Saves a preference nobody asked to save."],
    ),
    reference=Agent(
        [reply(MERGE_ANSWER)],
        extract(candidate("Prefers rebase merges", "preference", "rebase merges", about_speaker=True)),
    ),
    controls=[
        Control(
            "saves the speaker's preference unasked",
            Agent([remembers(("Prefers rebase merges", "preference"), answer=MERGE_ANSWER)]),
        ),
        Control("answers with one side only", Agent([reply("Use rebase merges.")])),
        Control("says memory is unavailable", Agent([reply(UNAVAILABLE + " " + MERGE_ANSWER)])),
    ],
)

# -- another person's operational fact is context, not the speaker's to keep ----------------------

STAGING_TEXT = "The staging database is rebuilt every Sunday at 02:00 UTC"
STAGING_ANSWER = "Staging is unavailable while its database is rebuilt, every Sunday at 02:00 UTC."

operational = Case(
    id="provenance/non-actor-operational-fact",
    description="An operational fact said by someone other than the speaker is used in the answer but stored for no "
    "one: only what the speaker wrote can become a memory.",
    scenario=Scenario(
        [
            thread_message("U2", "Heads up: the staging database is rebuilt every Sunday at 02:00 UTC."),
            mention("U1", "when is staging unavailable?"),
        ]
    ),
    checks=[not_stored(NOTHING, name="nothing is stored from this thread"), answer_mentions("sunday"),
            no_failure_claim()],
    rubric=Rubric(
        passes=["Answers Sunday at 02:00 UTC.", NEVER_FAIL],
        fails=["Says it saved the rebuild schedule.", "Treats the rebuild schedule as the speaker's preference."],
    ),
    # An over-eager extractor: the gate must drop a fact resting on U2's message, and one worded from U2's
    # message while citing the speaker's question.
    reference=Agent(
        [reply(STAGING_ANSWER)],
        extract(
            candidate(STAGING_TEXT, "knowledge", "staging database"),
            candidate(STAGING_TEXT, "knowledge", "when is staging"),
        ),
    ),
    controls=[
        Control("saves the fact unasked", Agent([remembers((STAGING_TEXT, "knowledge"), answer=STAGING_ANSWER)])),
        Control(
            "saves it as the speaker's preference",
            Agent([remembers((STAGING_TEXT, "preference"), answer=STAGING_ANSWER)]),
        ),
        Control("answers without the schedule", Agent([reply("I don't know.")])),
        Control("says memory is unavailable", Agent([reply(UNAVAILABLE + " " + STAGING_ANSWER)])),
    ],
)

CASES: list[Case] = [bystander, conflicting, batched, multi_actor, operational]
