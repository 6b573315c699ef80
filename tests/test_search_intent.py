"""Intent on top of the words: declared keywords, a request's verbs, and questions ranking readers first."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from junior_core import Runtime, Source, Tool
from junior_core._discovery.scoring import Intent
from tests.helpers import OBJECT, SourcePlugin, echo


@pytest.mark.parametrize(
    ("text", "verbs", "question"),
    [
        ("Jot down that I like bullet points", ("jot",), False),
        ("I like answers with code first, save that", ("save",), False),
        ("What do you remember about me?", ("remember",), True),
        ("do you recall who owns billing?", ("recall",), True),
        ("is there a memory about rate limits?", (), True),
        # A how-to is read as any question (reading it as a request to act moved no measured figure).
        ("how do I create a repository?", ("create",), True),
        # A negation opening a clause is read as its verb; only an action word some tool states counts as one
        # (a rule reading negations apart moved no measured figure: docs/discovery.md).
        ("don't forget the milk", ("don't",), False),
        # A passive question's participle is read as its verb; only an action word some tool states counts as one
        # (a rule setting passives apart moved no measured figure: docs/discovery.md).
        ("what is stored about the payments service?", ("stored",), True),
        ("what was decided about deploys", ("decided",), True),
        ("", (), False),
    ],
)
def test_intent_reads_verbs_and_questions(text: str, verbs: tuple[str, ...], question: bool) -> None:
    intent = Intent.of(text)
    assert (intent.verbs, intent.question) == (verbs, question)

def test_keywords_must_be_short_words_or_phrases() -> None:
    assert Tool("t", "A tool.", OBJECT, echo, keywords="jot down").keywords == ("jot down",)
    with pytest.raises(ValueError, match="keywords"):
        Tool("t", "A tool.", OBJECT, echo, keywords=["ok", ""])
    with pytest.raises(ValueError, match="at most 32"):
        Tool("t", "A tool.", OBJECT, echo, keywords=[f"w{i}" for i in range(33)])


def notes(keywords: bool) -> SourcePlugin:
    def kw(*words: str) -> tuple[str, ...]:
        return words if keywords else ()

    writes = {"readOnlyHint": False}
    reads = {"readOnlyHint": True}
    return SourcePlugin(Source("notes", "Personal notes."), [
        Tool("add_note", "Add a note about a topic.", OBJECT, echo, annotations=writes, keywords=kw("jot", "scribble")),
        Tool("remove_note", "Remove a note about a topic.", OBJECT, echo, annotations=writes, keywords=kw("erase")),
        Tool("show_notes", "Show the notes about a topic.", OBJECT, echo, annotations=reads, keywords=kw("display")),
    ])


def first(rt: Runtime, query: str, source: str | None = None) -> str:
    return str(rt.search_tools(query, source=source)["tools"][0]["tool_name"])


def test_a_declared_keyword_finds_its_tool(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes(keywords=True))
    assert first(rt, "scribble something down") == "notes__add_note"
    bare = make_runtime(notes(keywords=False), index_cache=False)
    assert bare.search_tools("scribble something down")["tools"] == []


def test_the_leading_verb_outweighs_the_other_words(make_runtime: Callable[..., Runtime]) -> None:
    # "note about a topic" is in every description; only the verb tells the tools apart.
    rt = make_runtime(notes(keywords=True))
    assert first(rt, "erase the note about a topic") == "notes__remove_note"
    assert first(rt, "jot a note about a topic") == "notes__add_note"
    assert first(rt, "erase the note about a topic", "notes") == "notes__remove_note"


def test_a_question_ranks_readers_before_writers(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes(keywords=False))
    assert first(rt, "add a note about a topic") == "notes__add_note"
    # The same words as a question: the read-only tool comes first, the writers after it.
    asked = [t["tool_name"] for t in rt.search_tools("do you have a note about a topic?")["tools"]]
    assert asked[0] == "notes__show_notes" and set(asked[1:]) == {"notes__add_note", "notes__remove_note"}

def test_keywords_are_words_of_the_tool_and_phrases_match_whole(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes(keywords=True))
    assert first(rt, "things to scribble") == "notes__add_note"
    # A declared word is analysed like the tool's own text: "scribbled" is "scribble" too.
    assert first(rt, "things scribbled yesterday") == "notes__add_note"
    phrases = make_runtime(SourcePlugin(Source("notes", "Personal notes."), [
        Tool("add_note", "Add a note about a topic.", OBJECT, echo, keywords=("keep in mind",)),
        Tool("show_notes", "Show the notes about a topic.", OBJECT, echo),
    ]), index_cache=False)
    # A phrase matches as the phrase; its words one by one ("keep", "mind") are not the tool's.
    assert first(phrases, "please keep in mind: standups are at 9") == "notes__add_note"
    assert phrases.search_tools("keep the window open, never mind")["tools"] == []

def test_the_first_clause_that_asks_decides_a_question() -> None:
    def acts(word: str) -> bool:
        return word in {"save", "remember", "forget"}

    chatty = "hey! hope you're good. so I totally blanked, what did we save about the canary stage?"
    assert Intent.of(chatty, acts).question
    # Without knowing the tools' actions, "hope" opens a clause of its own and may be its verb.
    assert not Intent.of(chatty).question
    assert Intent.of("morning :sunny: quick one, anything remembered about the review day?", acts).question
    assert not Intent.of("lol ok. forget that, would you?", acts).question
    assert Intent.of("what you got on me?", acts).question  # no clause decides: the question mark does


def test_chat_before_a_question_does_not_hide_it(make_runtime: Callable[..., Runtime]) -> None:
    from tests.helpers import names, notebook

    rt = make_runtime(notebook(), index_cache=False)
    found = names(rt.search_tools("haha sorry for the spam today, ok so: what did I save?"))
    assert found and found[0] in {"notebook__list", "notebook__search"}, found
