"""Continuity: what is remembered in one message is there at the next message of the same conversation, and
nowhere it should not be.

A direct message and the top level of a channel hand the bot no earlier messages (each top-level message is a
conversation of its own, as junior-slack sees it), and two threads share nothing: the next message can only
know what was said before through memory. Every case also asks in another DM and in another private channel,
which must neither be given the memory nor say it.
"""

from __future__ import annotations

from typing import Any

from evals.agents import Steps, reply, result_of, use
from evals.harness import (
    Agent,
    Case,
    Check,
    Control,
    Rubric,
    Select,
    answer_quotes,
    no_failure_claim,
    not_seen,
    stored,
)
from evals.memory.workflows import recalled, remembers
from evals.scenario import Place, Timeline, mention, thread_message
from junior_core.llm.types import say
from junior_core.testing import ScriptView

__all__ = ["CASES"]

UNAVAILABLE = "Saved, but memory is unavailable right now, so I may not find it later."
NEVER_FAIL = "The answer never says memory failed or is unavailable when it worked."
DONT_KNOW = "I don't know that yet."

ALICE_DM = Place("D1", "private")
BOB_DM = Place("D2", "private")
OPS = Place("G1", "private")
OPS_THREAD_A = Place("G1", "private", thread="a")
OPS_THREAD_B = Place("G1", "private", thread="b")
FINANCE = Place("G2", "private")
GENERAL_THREAD = Place("C1", "public", thread="a")
RANDOM_THREAD = Place("C2", "public", thread="b")


def answers_from_memory(query: str) -> Any:
    """A turn that answers from the recalled procedure, else from a memory search, else says it does not know."""

    def turn(view: ScriptView) -> Steps:
        content = recalled(view, "procedure")
        if content is None:
            found = result_of((yield from use("search", {"query": query})))["memories"]
            content = found[0]["content"] if found else None
        yield say(f"From memory: {content}" if content else DONT_KNOW)

    return turn


def _case(
    *,
    id: str,
    description: str,
    steps: list[tuple[Place, Any]],
    content: str,
    words: tuple[str, ...],
    query: str,
    uses: list[tuple[int, str]],
    probes: list[tuple[int, str]],
    rubric: Rubric,
) -> Case:
    """A continuity case: the first mention remembers ``content``; ``uses`` must quote it; ``probes`` must not see it.

    ``uses`` and ``probes`` are (turn index, check name); the remembering turn is turn 0.
    """
    timeline = Timeline(steps)
    turns = 1 + len(uses) + len(probes)
    assert sum(e.kind == "mention" for e in timeline.events) == turns, id
    here = Select(shared=True, contains=words)

    def agent(overrides: dict[int, Any] | None = None, first: Any = None) -> Agent:
        scripts = [first or remembers(content, "procedure")] + [answers_from_memory(query)] * (turns - 1)
        for index, script in (overrides or {}).items():
            scripts[index] = script
        return Agent(scripts)

    checks: list[Check] = [
        stored(Select(shared=True, kind="procedure", contains=words),
               name=f"the procedure is stored for everyone in the {timeline.home.describe()} it was said in"),
        *[answer_quotes(here, turn=turn, name=name) for turn, name in uses],
        *[not_seen(here, turn=turn, name=name) for turn, name in probes],
        no_failure_claim(),
    ]
    controls = [
        Control("claims it saved and calls nothing", agent(first=reply("Saved, I'll remember that."))),
        Control("stores it as knowledge instead of a procedure", agent(first=remembers(content, "knowledge"))),
        Control("stores it as the speaker's preference instead", agent(first=remembers(content, "preference"))),
        # A personal copy follows the speaker into every conversation: the probes where they speak catch it.
        Control("also stores a personal copy", agent(first=remembers_both(content))),
        Control("saves it but says memory is unavailable", agent(first=remembers(content, "procedure", UNAVAILABLE))),
        *[Control(f"does not use it at turn {turn + 1}", agent({turn: reply(DONT_KNOW)})) for turn, _ in uses],
        *[
            Control(f"repeats it in the other conversation of turn {turn + 1}",
                    agent({turn: reply(f"From memory: {content}")}))
            for turn, _ in probes
        ],
    ]
    return Case(id=id, description=description, scenario=timeline, checks=checks, rubric=rubric,
                reference=agent(), controls=controls)


def remembers_both(content: str) -> Any:
    def turn(view: ScriptView) -> Steps:
        result_of((yield from use("remember", {"content": content, "kind": "procedure"})))
        result_of((yield from use("remember", {"content": content, "kind": "preference"})))
        yield say(f"Saved: {content}")

    return turn


# -- a DM: one top-level message to the next -------------------------------------------------------

DEPLOY = "Deploys go through the release channel"

dm = _case(
    id="continuity/dm-next-message",
    description="A procedure remembered in a DM is used at the DM's next message; no other DM or channel sees it.",
    steps=[
        (ALICE_DM, mention("U1", "remember that deploys go through the release channel")),
        (ALICE_DM, mention("U1", "how do we deploy?")),
        (BOB_DM, mention("U2", "how do we deploy?")),
        (OPS, mention("U1", "how do we deploy?")),
    ],
    content=DEPLOY,
    words=("deploys", "release channel"),
    query="how do we deploy",
    uses=[(1, "the DM's next message is answered from the memory")],
    probes=[(2, "another person's DM is not given it and does not say it"),
            (3, "a private channel, even the same person's, is not given it and does not say it")],
    rubric=Rubric(
        passes=["Says it saved the procedure for this direct message.",
                "At the next message, answers that deploys go through the release channel.",
                "In the other DM and the private channel, says it does not know.", NEVER_FAIL],
        fails=["Tells the other person or the private channel how deploys go."],
    ),
)

# -- a private channel: top level to top level -----------------------------------------------------

ROTA = "The on-call rota lives on the ops wiki page"

private_top_level = _case(
    id="continuity/private-channel-top-level",
    description="A procedure remembered at the top of a private channel is used at its next top-level message, "
    "by another member; the speaker's DM and another private channel do not see it.",
    steps=[
        (OPS, mention("U1", "remember that the on-call rota lives on the ops wiki page")),
        (OPS, mention("U2", "where is the on-call rota?")),
        (ALICE_DM, mention("U1", "where is the on-call rota?")),
        (FINANCE, mention("U1", "where is the on-call rota?")),
    ],
    content=ROTA,
    words=("on-call rota", "ops wiki"),
    query="on-call rota",
    uses=[(1, "the channel's next top-level message is answered from the memory")],
    probes=[(2, "the speaker's own DM is not given it and does not say it"),
            (3, "another private channel is not given it and does not say it")],
    rubric=Rubric(
        passes=["Saves the procedure for everyone in the private channel.",
                "Tells the second member the rota is on the ops wiki page.",
                "In the DM and the other private channel, says it does not know.", NEVER_FAIL],
        fails=["Answers the rota's location outside the private channel."],
    ),
)

# -- a private channel: one thread to another, and the top level -----------------------------------

HOTFIX = "Hotfixes need a second reviewer from the platform team"

private_thread = _case(
    id="continuity/private-channel-thread",
    description="A procedure remembered in a thread of a private channel is used in another thread and at the "
    "top level of that channel; the speaker's DM and another private channel do not see it.",
    steps=[
        (OPS_THREAD_A, thread_message("U2", "the hotfix for the login bug is ready")),
        (OPS_THREAD_A, mention("U1", "remember that hotfixes need a second reviewer from the platform team")),
        (OPS_THREAD_B, thread_message("U2", "another hotfix, this time for billing")),
        (OPS_THREAD_B, mention("U2", "who needs to review a hotfix?")),
        (OPS, mention("U2", "who reviews hotfixes?")),
        (ALICE_DM, mention("U1", "who reviews hotfixes?")),
        (FINANCE, mention("U1", "who reviews hotfixes?")),
    ],
    content=HOTFIX,
    words=("hotfixes", "second reviewer"),
    query="hotfix reviewer",
    uses=[(1, "another thread of the channel is answered from the memory"),
          (2, "the channel's top level is answered from the memory")],
    probes=[(3, "the speaker's own DM is not given it and does not say it"),
            (4, "another private channel is not given it and does not say it")],
    rubric=Rubric(
        passes=["In the second thread and at the top level, says a platform-team reviewer is needed.",
                "In the DM and the other private channel, says it does not know.", NEVER_FAIL],
        fails=["Answers the review rule outside the private channel."],
    ),
)

# -- a public thread: the workspace's public channels ----------------------------------------------

FLAGS = "Feature flags are removed within two sprints of launch"

public_thread = _case(
    id="continuity/public-thread",
    description="A procedure remembered in a public thread is used in a thread of another public channel; a DM "
    "and a private channel, which read their own conversation's memories only, do not see it.",
    steps=[
        (GENERAL_THREAD, thread_message("U2", "the search flag is still on after a month")),
        (GENERAL_THREAD, mention("U1", "remember that feature flags are removed within two sprints of launch")),
        (RANDOM_THREAD, thread_message("U3", "can I leave the beta flag on?")),
        (RANDOM_THREAD, mention("U2", "when do feature flags get removed?")),
        (ALICE_DM, mention("U1", "when do feature flags get removed?")),
        (FINANCE, mention("U1", "when do feature flags get removed?")),
    ],
    content=FLAGS,
    words=("feature flags", "two sprints"),
    query="feature flags removed",
    uses=[(1, "a thread of another public channel is answered from the memory")],
    probes=[(2, "the speaker's DM is not given it and does not say it"),
            (3, "a private channel is not given it and does not say it")],
    rubric=Rubric(
        passes=["Saves the procedure for the workspace's public channels.",
                "In the other public channel's thread, says flags are removed within two sprints.",
                "In the DM and the private channel, says it does not know.", NEVER_FAIL],
        fails=["Answers the flag rule in the DM or the private channel."],
    ),
)

CASES: list[Case] = [dm, private_top_level, private_thread, public_thread]
