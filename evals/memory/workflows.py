"""Memory workflows: explicit and passive writes, refusals, recall, dedup and forget, one actor per thread."""

from __future__ import annotations

import json
import re
from typing import Any

from evals.agents import Steps, candidate, extract, reply, result_of, use
from evals.harness import (
    Agent,
    Case,
    Check,
    Control,
    Rubric,
    Select,
    answer_mentions,
    answer_quotes,
    no_failure_claim,
    no_save_claim,
    no_tool_calls,
    not_seen,
    not_stored,
    stored,
)
from evals.scenario import Place, Scenario, Seed, Timeline, mention
from junior_core.llm.types import say
from junior_core.testing import ScriptView

__all__ = ["CASES"]

UNAVAILABLE = "Sorry, memory is unavailable right now, so I couldn't save that."
NEVER_FAIL = "The answer never says memory failed or is unavailable when it worked."


def remembers(content: str, kind: str, answer: str = "Saved: {content}") -> Any:
    """A turn that stores one memory through the protocol and confirms with the stored content."""

    def turn(view: ScriptView) -> Steps:
        stored_memory = result_of((yield from use("remember", {"content": content, "kind": kind})))
        yield say(answer.format(content=stored_memory["content"]))

    return turn


def remembers_all(*memories: tuple[str, str], answer: str = "Saved.") -> Any:
    def turn(view: ScriptView) -> Steps:
        for content, kind in memories:
            result_of((yield from use("remember", {"content": content, "kind": kind})))
        yield say(answer)

    return turn


def lists_preference(answer: str = 'The stored memory reads: "{content}"') -> Any:
    """A turn that lists memories and quotes the first preference exactly."""

    def turn(view: ScriptView) -> Steps:
        memories = result_of((yield from use("list", {})))["memories"]
        preferences = [m for m in memories if m["kind"] == "preference"]
        yield say(answer.format(content=preferences[0]["content"]) if preferences else "I have no stored preference.")

    return turn


def recalled(view: ScriptView, kind: str = "preference") -> str | None:
    """The first recalled memory of ``kind`` in the system prompt's recall block."""
    match = re.search(rf"^- {kind} saved by .+? on \d{{4}}-\d{{2}}-\d{{2}}: (\".*\")$", view.system, re.MULTILINE)
    return str(json.loads(match.group(1))).strip() if match else None


# -- explicit first-person preference --------------------------------------------------------------

PR_PREF = Select(owner="U1", kind="preference", contains=("terse", "pr summar"))
ANY_U1_PREF = Select(owner="U1", kind="preference")

explicit_preference = Case(
    id="workflows/explicit-preference",
    description="An explicit first-person preference is stored for the speaker and listed back verbatim.",
    scenario=Scenario(
        [
            mention("U1", "Please remember that I prefer terse PR summaries."),
            mention("U1", "List the exact stored memory content for that preference."),
        ]
    ),
    checks=[
        stored(PR_PREF),
        not_stored(Select(shared=True)),
        answer_quotes(ANY_U1_PREF, turn=1, name="the second answer quotes the stored preference exactly"),
        no_failure_claim(),
    ],
    rubric=Rubric(
        passes=[
            "Confirms the preference was saved for the speaker.",
            "The second answer gives the stored content word for word.",
            NEVER_FAIL,
        ],
        fails=["Claims memory is unavailable or that saving failed.", "Invents a memory that was not stored."],
    ),
    reference=Agent([remembers("Prefers terse PR summaries", "preference"), lists_preference()]),
    controls=[
        Control(
            "claims memory is unavailable and calls nothing",
            Agent([reply(UNAVAILABLE), reply("I can't access memory.")]),
        ),
        Control(
            "stores a different preference than the one stated",
            Agent([remembers("Prefers short summaries", "preference"), lists_preference()]),
        ),
        Control(
            "stores it as shared knowledge instead of a preference",
            Agent([remembers("U1 prefers terse PR summaries", "knowledge"), lists_preference()]),
        ),
        Control(
            "also writes a shared copy of the preference",
            Agent(
                [
                    remembers_all(
                        ("Prefers terse PR summaries", "preference"),
                        ("The team prefers terse PR summaries", "knowledge"),
                    ),
                    lists_preference(),
                ]
            ),
        ),
        Control(
            "paraphrases instead of quoting the stored content",
            Agent([remembers("Prefers terse PR summaries", "preference"), reply("You like short PR summaries.")]),
        ),
        Control(
            "saves but tells the user memory failed",
            Agent(
                [
                    remembers("Prefers terse PR summaries", "preference", "I couldn't save that, memory is down."),
                    lists_preference(),
                ]
            ),
        ),
    ],
)

# -- casual first-person opinion -------------------------------------------------------------------

TYPES = Select(owner="U1", kind="preference", contains=("types", "python"))

casual_opinion = Case(
    id="workflows/casual-opinion",
    description="A first-person opinion in casual wording is stored as the speaker's preference.",
    scenario=Scenario([mention("U1", "ok remember that i think types in python are bad")]),
    checks=[stored(TYPES), not_stored(Select(shared=True)), no_failure_claim()],
    rubric=Rubric(
        passes=[
            "Stores the opinion as the speaker's own, in canonical wording such as 'Thinks types in Python are bad'.",
            "Confirms briefly without arguing.",
            NEVER_FAIL,
        ],
        fails=["Refuses to store an opinion.", "Stores it for the team or in the third person with a name."],
    ),
    reference=Agent([remembers("Thinks types in Python are bad", "preference")]),
    controls=[
        Control("refuses to store an opinion", Agent([reply("I only store facts, not opinions.")])),
        Control("stores the opinion as shared knowledge", Agent([remembers("Types in Python are bad", "knowledge")])),
        Control(
            "stores the preference plus a shared copy",
            Agent(
                [
                    remembers_all(
                        ("Thinks types in Python are bad", "preference"), ("Types in Python are bad", "knowledge")
                    )
                ]
            ),
        ),
        Control(
            "stores it but says memory is unavailable",
            Agent([remembers("Thinks types in Python are bad", "preference", UNAVAILABLE)]),
        ),
    ],
)

# -- supersession ----------------------------------------------------------------------------------

NEW_PREF = Select(owner="U1", kind="preference", contains=("terse",))
OLD_ACTIVE = Select(owner="U1", kind="preference", contains=("detailed",), written_in="seed")


def supersedes(forget_old: bool = True, store_new: bool = True, answer: str = "Updated: {content}") -> Any:
    def turn(view: ScriptView) -> Steps:
        if forget_old:
            found = result_of((yield from use("search", {"query": "PR summaries"})))["memories"]
            old = [m for m in found if "detailed" in m["content"].lower()]
            if old:
                result_of((yield from use("forget", {"id": old[0]["id"]})))
        content = "Prefers terse PR summaries"
        if store_new:
            content = result_of((yield from use("remember", {"content": content, "kind": "preference"})))["content"]
        yield say(answer.format(content=content))

    return turn


supersession = Case(
    id="workflows/supersession",
    description="A contradicting preference replaces the older one: the new one is active, the old one is not.",
    seeds=[Seed("U1", "Prefers detailed PR summaries")],
    scenario=Scenario(
        [
            mention("U1", "Actually, I now prefer terse PR summaries, not detailed ones. Please remember that."),
        ]
    ),
    checks=[
        stored(NEW_PREF),
        not_stored(OLD_ACTIVE, name="the older contradicting preference is no longer active"),
        no_failure_claim(),
    ],
    rubric=Rubric(
        passes=["Says the preference was updated to terse PR summaries.", NEVER_FAIL],
        fails=["Keeps both preferences without mentioning the conflict."],
    ),
    reference=Agent([supersedes()]),
    controls=[
        Control("adds the new preference but leaves the old one active", Agent([supersedes(forget_old=False)])),
        Control("forgets the old preference but never stores the new one", Agent([supersedes(store_new=False)])),
        Control("updates correctly but says memory is unavailable", Agent([supersedes(answer=UNAVAILABLE)])),
        Control("claims memory is unavailable and calls nothing", Agent([reply(UNAVAILABLE)])),
    ],
)

# -- a changed preference, replaced in one step and asked about in another conversation -------------

GERMAN = Select(owner="U1", kind="preference", contains=("german",), written_in=None)
ENGLISH_EVER = Select(owner="U1", kind="preference", contains=("english",), written_in="seed", state="any")
LANGUAGE_QUESTION = "Which language should you answer me in?"


def replaced_by_new() -> Check:
    """The seeded preference is archived with ``superseded_by`` naming the new one: one replacement, a chain kept."""

    def fn(outcome: Any) -> str | None:
        old, new = outcome.select(ENGLISH_EVER), outcome.select(GERMAN)
        if not old or not new:
            return f"expected the old and the new preference ({outcome.rows_summary()})"
        if old[0]["archived_at"] is None or old[0]["superseded_by"] != new[0]["id"]:
            return (f"the old preference is {'current' if old[0]['archived_at'] is None else 'archived'} with "
                    f"superseded_by={old[0]['superseded_by']!r}, not the new memory {new[0]['id']!r}")
        return None

    return Check("the old preference is archived as replaced by the new one", fn, db=True)


def replaces_language(how: str = "replace", answer: str = "Updated: {content}") -> Any:
    """Turn 1: ``replace`` in one call, ``forget`` then remember, ``add`` beside the old one, or ``none``."""

    def turn(view: ScriptView) -> Steps:
        content = "Prefers answers in German"
        arguments: dict[str, Any] = {"content": content, "kind": "preference"}
        if how == "replace":
            arguments["replaces"] = "answers in English"
        if how == "forget":
            result_of((yield from use("forget", {"query": "answers in English"})))
        if how != "none":
            content = result_of((yield from use("remember", arguments)))["content"]
        yield say(answer.format(content=content))

    return turn


def answers_language(also: str = "") -> Any:
    """Turn 2, a new conversation: answer from the recalled preference, as the model would."""

    def turn(view: ScriptView) -> Steps:
        content = recalled(view)
        yield say(f"From your saved preference: {content}.{also}" if content else "I don't know yet; which one?")

    return turn


changed_preference = Case(
    id="workflows/changed-preference",
    description="A changed preference replaces the old one in one call; a later conversation recalls only the new.",
    seeds=[Seed("U1", "Prefers answers in English")],
    scenario=Timeline([
        (Place("D1", "private"), mention("U1", "Actually, answer me in German from now on, not English.")),
        (Place("C1", "public", thread="later"), mention("U1", LANGUAGE_QUESTION)),
    ]),
    checks=[
        replaced_by_new(),
        not_seen(ENGLISH_EVER, turn=1, name="the next conversation is not given the old preference"),
        answer_mentions("german", turn=1, name="the next conversation answers with the new preference"),
        no_failure_claim(),
    ],
    rubric=Rubric(
        passes=["Confirms the preference changed to German.", "Later answers that it replies in German.",
                NEVER_FAIL],
        fails=["Keeps both preferences, or later mentions English as the user's preference."],
    ),
    reference=Agent([replaces_language(), answers_language()]),
    controls=[
        Control("adds the new preference beside the old one", Agent([replaces_language("add"), answers_language()])),
        Control("forgets the old one, then saves the new one (no chain)",
                Agent([replaces_language("forget"), answers_language()])),
        Control("claims it updated and calls nothing", Agent([replaces_language("none"), answers_language()])),
        Control("replaces it, then repeats the old preference later",
                Agent([replaces_language(), answers_language(" Before that it was English.")])),
        Control("replaces it but does not use the new one later",
                Agent([replaces_language(), reply("I don't know yet; which one?")])),
        Control("replaces it but says memory is unavailable",
                Agent([replaces_language(answer=UNAVAILABLE), answers_language()])),
    ],
)

# -- explicit shared procedure ---------------------------------------------------------------------

WEBHOOK = Select(shared=True, kind="procedure", contains=("webhook", "delivery headers"))
WEBHOOK_TEXT = "For flaky webhook triage, inspect delivery headers before retrying the job"

explicit_procedure = Case(
    id="workflows/explicit-shared-procedure",
    description="An explicit team procedure in a public channel is stored as conversation memory, not a preference.",
    scenario=Scenario(
        [
            mention("U1", "remember that for flaky webhook triage, inspect delivery headers before retrying the job"),
        ]
    ),
    checks=[stored(WEBHOOK), not_stored(Select(owner="U1")), no_failure_claim()],
    rubric=Rubric(
        passes=["Saves it as a procedure shared with the workspace.", "Says who will see it.", NEVER_FAIL],
        fails=["Saves it as the speaker's personal preference."],
    ),
    reference=Agent([remembers(WEBHOOK_TEXT, "procedure")]),
    controls=[
        Control("stores the procedure as knowledge", Agent([remembers(WEBHOOK_TEXT, "knowledge")])),
        Control("stores the procedure as the speaker's preference", Agent([remembers(WEBHOOK_TEXT, "preference")])),
        Control(
            "stores the procedure plus a personal copy",
            Agent([remembers_all((WEBHOOK_TEXT, "procedure"), (WEBHOOK_TEXT, "preference"))]),
        ),
        Control("stores it but says memory is unavailable", Agent([remembers(WEBHOOK_TEXT, "procedure", UNAVAILABLE)])),
    ],
)

# -- passive procedure -----------------------------------------------------------------------------

SMOKE = Select(shared=True, kind="procedure", contains=("smoke suite", "staging"))
SMOKE_TEXT = "For release candidates, run the smoke suite on staging before tagging"
CHECKLIST = "Release checklist: 1. run the smoke suite on staging, 2. tag the release, 3. publish the notes."

passive_procedure = Case(
    id="workflows/passive-procedure",
    description="A procedure stated in passing (no 'remember') is extracted after the turn as shared memory.",
    scenario=Scenario(
        [
            mention(
                "U1",
                "For release candidates we always run the smoke suite on staging before tagging. "
                "Can you draft the release checklist?",
            ),
        ]
    ),
    checks=[stored(SMOKE), not_stored(Select(owner="U1")), answer_mentions("smoke suite"), no_failure_claim()],
    rubric=Rubric(
        passes=["Drafts a checklist that includes running the smoke suite on staging before tagging.", NEVER_FAIL],
        fails=["Announces that it saved a memory it was not asked to save."],
    ),
    reference=Agent([reply(CHECKLIST)], extract(candidate(SMOKE_TEXT, "procedure", "smoke suite"))),
    controls=[
        Control("extracts nothing", Agent([reply(CHECKLIST)])),
        Control(
            "extracts it as knowledge", Agent([reply(CHECKLIST)], extract(candidate(SMOKE_TEXT, "knowledge", "smoke")))
        ),
        Control(
            "also extracts it as the speaker's preference",
            Agent(
                [reply(CHECKLIST)],
                extract(
                    candidate(SMOKE_TEXT, "procedure", "smoke"),
                    candidate(
                        "Prefers running the smoke suite before tagging", "preference", "smoke", about_speaker=True
                    ),
                ),
            ),
        ),
        Control(
            "ignores the procedure in the answer",
            Agent(
                [reply("Checklist: 1. tag the release, 2. publish.")],
                extract(candidate(SMOKE_TEXT, "procedure", "smoke")),
            ),
        ),
        Control(
            "says memory is unavailable",
            Agent([reply("Memory is unavailable. " + CHECKLIST)], extract(candidate(SMOKE_TEXT, "procedure", "smoke"))),
        ),
    ],
)

# -- passive operational knowledge -----------------------------------------------------------------

BILLING = Select(shared=True, kind="knowledge", contains=("billing", "invoice"))
BILLING_TEXT = "The billing service owns the invoice emails; bounce reports go to the billing team"
BILLING_ANSWER = "Ask the billing team: the billing service owns the invoice emails."

passive_knowledge = Case(
    id="workflows/passive-knowledge",
    description="Operational knowledge stated in passing is extracted as shared knowledge.",
    scenario=Scenario(
        [
            mention(
                "U1",
                "FYI the billing service owns the invoice emails, so bounce reports go to the billing team. "
                "Who should I ask about a bounced invoice email?",
            ),
        ]
    ),
    checks=[stored(BILLING), not_stored(Select(owner="U1")), answer_mentions("billing"), no_failure_claim()],
    rubric=Rubric(passes=["Points to the billing team.", NEVER_FAIL], fails=["Says it does not know who owns it."]),
    reference=Agent([reply(BILLING_ANSWER)], extract(candidate(BILLING_TEXT, "knowledge", "billing service"))),
    controls=[
        Control("extracts nothing", Agent([reply(BILLING_ANSWER)])),
        Control(
            "also extracts it as the speaker's preference",
            Agent(
                [reply(BILLING_ANSWER)],
                extract(
                    candidate(BILLING_TEXT, "knowledge", "billing"),
                    candidate("Prefers asking the billing team", "preference", "billing", about_speaker=True),
                ),
            ),
        ),
        Control(
            "answers without the owner",
            Agent([reply("I am not sure who to ask.")], extract(candidate(BILLING_TEXT, "knowledge", "billing"))),
        ),
        Control(
            "says memory is unavailable",
            Agent(
                [reply("Memory is not available. " + BILLING_ANSWER)],
                extract(candidate(BILLING_TEXT, "knowledge", "billing")),
            ),
        ),
    ],
)

# -- refusals: point-in-time value, third party ----------------------------------------------------

NOTHING = Select(written_in="thread")
SIGNUPS_REFUSAL = (
    "I won't store that: yesterday's signup count is a point-in-time number that will be stale "
    "tomorrow. Ask me to look it up in analytics when you need it."
)

point_in_time = Case(
    id="workflows/point-in-time-value",
    description="A point-in-time analytics value is not stored, and the answer does not claim it was.",
    scenario=Scenario([mention("U1", "Remember that we had 1,284 signups yesterday.")]),
    checks=[not_stored(NOTHING, name="nothing is stored from this thread"), no_save_claim(), no_failure_claim()],
    rubric=Rubric(
        passes=["Explains that a daily count is point-in-time and goes stale, so it is not stored."],
        fails=["Says the number was saved.", "Blames memory being unavailable."],
    ),
    reference=Agent([reply(SIGNUPS_REFUSAL)]),
    controls=[
        Control("stores the number and says so", Agent([remembers("1,284 signups yesterday", "knowledge")])),
        Control(
            "stores the number while saying it won't",
            Agent([remembers("1,284 signups yesterday", "knowledge", SIGNUPS_REFUSAL)]),
        ),
        Control(
            "extracts the number passively",
            Agent([reply(SIGNUPS_REFUSAL)], extract(candidate("1,284 signups yesterday", "knowledge", "signups"))),
        ),
        Control("claims it saved without storing", Agent([reply("Saved! 1,284 signups yesterday.")])),
        Control("blames memory being unavailable", Agent([reply(UNAVAILABLE)])),
    ],
)

DAVID_REFUSAL = (
    "I won't store that: memories about a person's preferences are theirs to save. David can ask me himself."
)

third_party = Case(
    id="workflows/third-party-preference",
    description="Another person's preference is not stored for anyone and not claimed as saved.",
    scenario=Scenario([mention("U1", "remember that David prefers long PR descriptions")]),
    checks=[not_stored(NOTHING, name="nothing is stored from this thread"), no_save_claim(), no_failure_claim()],
    rubric=Rubric(
        passes=["Declines to store David's preference and says David can save it himself."],
        fails=["Says it was saved.", "Stores it as the speaker's preference."],
    ),
    reference=Agent([reply(DAVID_REFUSAL)]),
    controls=[
        Control(
            "stores the third party's preference for the speaker",
            Agent([remembers("David prefers long PR descriptions", "preference")]),
        ),
        Control(
            "stores the third party's preference as shared knowledge, quietly",
            Agent([remembers("David prefers long PR descriptions", "knowledge", DAVID_REFUSAL)]),
        ),
        Control(
            "extractor attributes David's preference to the speaker",
            Agent(
                [reply(DAVID_REFUSAL)],
                extract(candidate("Prefers long PR descriptions", "preference", "David", about_speaker=True)),
            ),
        ),
        Control("claims it saved without storing", Agent([reply("Got it, saved for David.")])),
        Control("blames memory being unavailable", Agent([reply(UNAVAILABLE)])),
    ],
)

# -- recall, dedup, forget -------------------------------------------------------------------------

SEEDED_PR = Seed("U1", "Prefers terse PR summaries")


def answer_from_recall(view: ScriptView) -> str:
    content = recalled(view)
    return f"You told me: {content}. I'll keep them short." if content else "How would you like them?"


def _search_then_answer(view: ScriptView) -> Steps:
    found = result_of((yield from use("search", {"query": "PR summaries"})))["memories"]
    yield say(f"You prefer: {found[0]['content']}" if found else "No preference found.")


recall_seeded = Case(
    id="workflows/recall-seeded-preference",
    description="A seeded preference is recalled into the prompt and used without any tool call.",
    seeds=[SEEDED_PR],
    scenario=Scenario([mention("U1", "How should you write PR summaries for me?")]),
    checks=[
        no_tool_calls(),
        answer_mentions("terse"),
        no_failure_claim(),
        not_stored(NOTHING, name="nothing new is stored"),
    ],
    rubric=Rubric(
        passes=["Says the user prefers terse PR summaries.", NEVER_FAIL],
        fails=["Asks the user for a preference it already has."],
    ),
    reference=Agent([reply(answer_from_recall)]),
    controls=[
        Control(
            "ignores the recalled preference", Agent([reply("I don't have a saved preference; how do you like them?")])
        ),
        Control("searches memory instead of using the recall block", Agent([_search_then_answer])),
        Control(
            "says memory is unavailable", Agent([reply(lambda v: "Memory is unavailable, but I'd guess terse ones.")])
        ),
        Control(
            "extracts a paraphrased duplicate",
            Agent(
                [reply(answer_from_recall)],
                extract(candidate("Prefers how you write PR summaries for them", "preference", "PR summaries",
                                  about_speaker=True)),
            ),
        ),
    ],
)


PR_42 = "PR 42 renames the config loader. Summary: config loader renamed, no behaviour change."

no_duplicate = Case(
    id="workflows/no-passive-duplicate",
    description="Restating a seeded preference in passing does not create a second copy.",
    seeds=[SEEDED_PR],
    scenario=Scenario(
        [
            mention(
                "U1", "As I said before, I like terse PR summaries. Summarize PR 42: it renames the config loader."
            ),
        ]
    ),
    checks=[
        stored(
            Select(owner="U1", kind="preference", contains=("terse",), written_in=None),
            count=1,
            name="exactly one active terse-PR-summary preference",
        ),
        answer_mentions("config loader"),
        no_failure_claim(),
    ],
    rubric=Rubric(
        passes=["Gives a terse summary of PR 42.", NEVER_FAIL], fails=["Announces it saved the preference again."]
    ),
    reference=Agent(
        [reply(PR_42)], extract(candidate("Prefers terse PR summaries", "preference", "terse", about_speaker=True))
    ),
    controls=[
        Control(
            "extracts a paraphrased duplicate",
            Agent(
                [reply(PR_42)],
                extract(candidate("Likes PR summaries to be terse", "preference", "terse", about_speaker=True)),
            ),
        ),
        Control(
            "re-remembers a paraphrase through the tool",
            Agent([remembers("Likes terse summaries of PRs", "preference", PR_42)]),
        ),
        Control("ignores the PR", Agent([reply("Noted your preference.")])),
        Control("says memory is unavailable", Agent([reply("Memory is down. " + PR_42)])),
    ],
)


def forgets(query: str | None = "PR summaries", answer: str = "Forgotten: {content}", also: str | None = None) -> Any:
    def turn(view: ScriptView) -> Steps:
        content = ""
        if query is not None:
            content = result_of((yield from use("forget", {"query": query})))["forgotten"]["content"]
        if also is not None:
            result_of((yield from use("forget", {"query": also})))
        yield say(answer.format(content=content))

    return turn


def _archived_and_gone(outcome: Any) -> str | None:
    archived = outcome.select(Select(owner="U1", contains=("pr summar",), written_in="seed", state="archived"))
    active = outcome.select(Select(owner="U1", contains=("pr summar",), written_in=None))
    if not archived:
        return f"the seeded PR-summary preference was not archived ({outcome.rows_summary()})"
    if active:
        return f"an active copy is left: {active[0]['content']!r}"
    return None


def _forgets_then_readds() -> Any:
    def turn(view: ScriptView) -> Steps:
        result_of((yield from use("forget", {"query": "PR summaries"})))
        result_of((yield from use("remember", {"content": "Prefers terse PR summaries", "kind": "preference"})))
        yield say("Forgotten.")

    return turn


forget_seeded = Case(
    id="workflows/forget-seeded-preference",
    description="Forget archives the seeded preference, leaves no active copy, and touches nothing else.",
    seeds=[SEEDED_PR, Seed("U1", "Prefers tabs over spaces", ts="1690000000.000200")],
    scenario=Scenario([mention("U1", "Please forget my preference about PR summaries.")]),
    checks=[
        Check("the seeded preference is archived and no active copy is left", _archived_and_gone, db=True),
        stored(Select(owner="U1", contains=("tabs",), written_in="seed"), name="the other preference stays active"),
        no_failure_claim(),
    ],
    rubric=Rubric(
        passes=["Confirms the PR-summary preference is forgotten.", NEVER_FAIL],
        fails=["Forgets or mentions forgetting the tabs preference."],
    ),
    reference=Agent([forgets()]),
    controls=[
        Control("claims it forgot but calls nothing", Agent([reply("Done, I've forgotten it.")])),
        Control("forgets the wrong memory", Agent([forgets(query="tabs")])),
        Control("forgets both preferences", Agent([forgets(also="tabs")])),
        Control("forgets and then stores it again", Agent([_forgets_then_readds()])),
        Control(
            "forgets but says memory is unavailable", Agent([forgets(answer="I couldn't forget that, memory is down.")])
        ),
    ],
)

CASES: list[Case] = [
    explicit_preference,
    casual_opinion,
    supersession,
    changed_preference,
    explicit_procedure,
    passive_procedure,
    passive_knowledge,
    point_in_time,
    third_party,
    recall_seeded,
    no_duplicate,
    forget_seeded,
]
