"""Intent on top of the words: declared keywords, a request's verbs, and questions ranking readers first."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from junior_core import Runtime, Source, Tool
from junior_core.discovery.query import Intent
from tests.helpers import OBJECT, SourcePlugin, echo


@pytest.mark.parametrize(
    ("text", "verbs", "question"),
    [
        ("Please forget that I prefer terse PR summaries.", ("forget",), False),
        ("Jot down that I like bullet points", ("jot",), False),
        ("hey, could you please unsave my British English preference", ("unsave",), False),
        ("I like answers with code first, save that", ("save",), False),
        ("make a note that deploys need two approvals", ("note",), False),
        ("What do you remember about me?", ("remember",), True),
        ("do you recall who owns billing?", ("recall",), True),
        ("is there a memory about rate limits?", (), True),
        ("tell me what you know about me", (), True),
        # A how-to is read as any question (reading it as a request to act moved no measured figure).
        ("how do I create a repository?", ("create",), True),
        # A negation opening a clause is read as its verb; only an action word some tool states counts as one
        # (a rule reading negations apart moved no measured figure: docs/discovery.md).
        ("don't forget the milk", ("don't",), False),
        ("Kindly do the needful and remove the saved entry", ("remove",), False),
        # Courtesy that puts the verb later: "you can ...", "would you mind ...", "is it possible to ...".
        ("you can forget that I don't want mentions", ("forget",), False),
        ("would you mind removing that memory", ("removing",), False),
        ("Is it possible to erase the preference I gave you?", ("erase",), False),
        ("feel free to drop the old rule", ("drop",), False),
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


@pytest.mark.parametrize(("text", "stated"), [
    ("I'm looking for a red dress. Can you find me some options?", ("looking",)),
    ("we really need a new logo", ("need",)),
    ("I have been looking everywhere for it", ("looking",)),
    # An ask's verb is not a statement's: "I want to" and "I'd like to" are courtesy before the ask.
    ("I want to see the trending stories", ()),
    ("save that I like tabs", ()),
    ("the standup moved to 10", ()),
])
def test_intent_reads_the_verbs_of_statements_apart(text: str, stated: tuple[str, ...]) -> None:
    assert Intent.of(text).stated == stated
    # Only a word some tool states as its action is a statement's verb for the index.
    assert Intent.of(text, lambda word: False).stated == ()


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


def test_everything_is_asked_past_the_courtesy() -> None:
    assert Intent.of("could you tell me every preference you have").everything
    assert Intent.of("Full list of saved team procedures.").everything
    assert not Intent.of("remind the team about the standup every morning").everything


def test_everything_is_read_unless_a_verb_says_write(make_runtime: Callable[..., Runtime]) -> None:
    assert Intent.of("all stored notes").everything and not Intent.of("stored notes").everything
    rt = make_runtime(notes(keywords=True))
    # "all ... notes about a topic": nothing says write, so the reader comes first.
    assert first(rt, "all the notes about a topic") == "notes__show_notes"
    # "erase every note ...": the verb is a writer's, so the quantifier does not turn it into a read.
    assert first(rt, "erase every note about a topic") == "notes__remove_note"


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


def test_everything_prefers_the_reader_that_needs_no_search_terms(make_runtime: Callable[..., Runtime]) -> None:
    reads = {"readOnlyHint": True}
    query = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    rt = make_runtime(SourcePlugin(Source("issues", "Issues."), [
        Tool("search_issues", "Search issues by words; lists matching issues.", query, echo, annotations=reads),
        Tool("list_issues", "List issues.", OBJECT, echo, annotations=reads),
        Tool("close_issue", "Close an issue.", query, echo, annotations={"readOnlyHint": False}),
    ]))
    # Words alone favour search_issues (it says "issues" twice); "all" asks for a listing, which needs no terms.
    assert first(rt, "matching issues") == "issues__search_issues"
    assert first(rt, "all the matching issues") == "issues__list_issues"


def test_the_first_clause_that_asks_decides_a_question() -> None:
    def acts(word: str) -> bool:
        return word in {"save", "remember", "forget"}

    chatty = "hey! hope you're good. so I totally blanked, what did we save about the canary stage?"
    assert Intent.of(chatty, acts).question
    # Without knowing the tools' actions, "hope" opens a clause of its own and may be its verb.
    assert not Intent.of(chatty).question
    assert Intent.of("morning :sunny: quick one, anything remembered about the review day?", acts).question
    assert not Intent.of("Is it possible to erase the preference I gave you?", acts).question
    assert not Intent.of("lol ok. forget that, would you?", acts).question
    # A question word followed by its subject opens a subordinate clause, not a question.
    assert not Intent.of("When you write release notes, group them by impact and remember that", acts).question
    assert Intent.of("what you got on me?", acts).question  # no clause decides: the question mark does


def test_chat_before_a_question_does_not_hide_it(make_runtime: Callable[..., Runtime]) -> None:
    from tests.helpers import names, notebook

    rt = make_runtime(notebook(), index_cache=False)
    found = names(rt.search_tools("haha sorry for the spam today, ok so: what did I save about the standup?"))
    assert found and found[0] in {"notebook__list", "notebook__search"}, found


def test_chat_spellings_of_function_words_are_read_as_the_words(make_runtime: Callable[..., Runtime]) -> None:
    from junior_core.discovery.query import unchatted
    from tests.helpers import names, notebook

    assert unchatted("wat did u save abt the standup, pls?") == "what did you save about the standup, please?"
    assert unchatted("menu, bus, ux, u-boot, you're") == "menu, bus, ux, u-boot, you're"  # only whole words
    assert unchatted("What's saved? whats stored? who’s on call, that's it") == (
        "What is saved? what is stored? who is on call, that's it")
    rt = make_runtime(notebook(), index_cache=False)
    found = names(rt.search_tools("wat did u save abt the standup"))
    assert found and found[0] in {"notebook__list", "notebook__search"}, found
