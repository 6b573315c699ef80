"""Why each tool ranked where it did: what one search records when asked (``Trace``), read out as data.

The scoring pass is the one searchTools runs: ``scoring`` and ``index`` write into a ``Trace`` as they score, so
the reasons are the figures the ranking used, not a second computation. What a trace holds per tool:

- ``words``: each request term that matched the tool, the request words that gave it, the fields of the tool's
  document holding it (``documents.fields_holding``), and what it added to the score (idf · weight · saturated
  BM25F pseudo-frequency);
- ``verbs``: each request verb the tool states as its action, and what it added (``scoring.add_actions``);
- ``admitted``: what let the tool past the relevance floor: a telling word, its source (another of its tools said
  a telling word), coverage of a clause's ask words, or no floor (a source chosen, the floor off);
- ``order``: why it stands below tools with a higher score (readers first for a request that asks to read), or
  above all of them (its exact name).

The words' and verbs' figures add up to ``score``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from junior_core._discovery.analysis import PHRASE_MARK

__all__ = ["Trace"]


@attrs.define
class Trace:
    """Filled while one search scores (by doc number); ``tools`` holds the reasons of the tools it returned."""

    words: dict[int, dict[str, float]] = attrs.field(factory=dict)
    verbs: dict[int, dict[str, float]] = attrs.field(factory=dict)
    admitted: dict[int, dict[str, Any]] = attrs.field(factory=dict)
    order: dict[int, str] = attrs.field(factory=dict)
    searched: str | None = None
    """The request as searched, when a typo was corrected."""
    tools: list[dict[str, Any]] = attrs.field(factory=list)
    watch: int | None = None
    """One tool (doc number) whose floor and rank to record whether or not it is returned (why not)."""
    floor: dict[str, Any] = attrs.field(factory=dict)
    """For ``watch``: per clause the share of the clause's rarity it held and the share it needed, and the
    telling word that admitted it, if any (``floor.admit``)."""
    rank: int | None = None
    """For ``watch``: its place among every tool that passed the floor, in answer order (1 = first)."""

    def word(self, doc: int, term: str, added: float) -> None:
        found = self.words.setdefault(doc, {})
        found[term] = found.get(term, 0.0) + added

    def verb(self, doc: int, term: str, added: float) -> None:
        found = self.verbs.setdefault(doc, {})
        found[term] = found.get(term, 0.0) + added

    def read_out(self, docs: Iterable[tuple[int, float]], names: list[str], query: str,
                 analyze: Callable[[str], list[str]], fields_of: Callable[[str], Mapping[str, set[str]]]) -> None:
        """The reasons of the returned ``docs`` (with their scores), in rank order, into ``tools``."""
        said: dict[str, list[str]] = {}
        for raw in query.split():
            word = raw.strip("\"'`“”‘’()[]{}<>,;:.!?*")
            for term in analyze(word):
                if word not in said.setdefault(term, []):
                    said[term].append(word)
        for doc, score in docs:
            name = names[doc]
            fields = fields_of(name)
            words = [
                {"term": term.replace(PHRASE_MARK, " "), "said": said.get(term, []),
                 "fields": [field for field, terms in fields.items() if term in terms], "added": round(added, 4)}
                for term, added in sorted(self.words.get(doc, {}).items(), key=lambda item: (-item[1], item[0]))
            ]
            verbs = [{"term": term, "added": round(added, 4)} for term, added in self.verbs.get(doc, {}).items()]
            row: dict[str, Any] = {"tool_name": name, "score": round(score, 4), "words": words}
            if verbs:
                row["verbs"] = verbs
            row["admitted"] = self.admitted.get(doc, {"by": "no floor"})
            if doc in self.order:
                row["order"] = self.order[doc]
            self.tools.append(row)

    def exact(self, tool_name: str) -> None:
        """``tool_name`` was put first for being the query itself (``answers``)."""
        for row in self.tools:
            if row["tool_name"] == tool_name:
                self.tools.remove(row)
                break
        else:
            row = {"tool_name": tool_name, "words": []}
        row["order"] = "first: the query is its name"
        self.tools.insert(0, row)
