"""Why each tool ranked where it did (``explain``): ``scoring``, ``floor`` and ``index`` write into a ``Trace`` as
they score, so the reasons are the figures the ranking used, not a second computation. Per tool: ``words`` (each
matched term, the request words that gave it, the fields holding it, what it added), ``verbs`` (each stated action
and what it added; the two add up to ``score``), ``admitted`` (what let it past the floor) and ``order`` (why it
stands below a higher score, or first: its exact name)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from junior_core._discovery.analysis import PHRASE_MARK

__all__ = ["Trace"]


def _add(table: dict[int, dict[str, float]], doc: int, term: str, added: float) -> None:
    found = table.setdefault(doc, {})
    found[term] = found.get(term, 0.0) + added


@attrs.define
class Trace:
    """Filled while one search scores (by doc number); ``tools`` holds the reasons of the tools it returned."""

    words: dict[int, dict[str, float]] = attrs.field(factory=dict)
    verbs: dict[int, dict[str, float]] = attrs.field(factory=dict)
    admitted: dict[int, dict[str, Any]] = attrs.field(factory=dict)
    order: dict[int, str] = attrs.field(factory=dict)
    searched: str | None = None  # the request as searched, when a typo was corrected
    tools: list[dict[str, Any]] = attrs.field(factory=list)
    watch: int | None = None  # a tool (doc number) whose floor and rank are recorded, returned or not
    floor: dict[str, Any] = attrs.field(factory=dict)  # ``watch``'s share held and needed per clause, telling word
    rank: int | None = None  # ``watch``'s place among every tool that passed the floor (1 = first)

    def reset(self) -> None:
        """Empty the record, keeping ``watch``: a search asked again after its index was rebuilt starts afresh."""
        fresh = Trace(watch=self.watch)
        for field in attrs.fields(Trace):
            setattr(self, field.name, getattr(fresh, field.name))

    def word(self, doc: int, term: str, added: float) -> None:
        _add(self.words, doc, term, added)

    def verb(self, doc: int, term: str, added: float) -> None:
        _add(self.verbs, doc, term, added)

    def read_out(self, docs: Iterable[tuple[int, float]], names: list[str], query: str,
                 analyze: Callable[[str], list[str]], fields_of: Callable[[str], Mapping[str, set[str]]]) -> None:
        """The reasons of the returned ``docs`` (with their scores), in rank order, into ``tools``."""
        said: dict[str, list[str]] = {}  # term -> the request's words giving it
        for raw in query.split():
            word = raw.strip("\"'`“”‘’()[]{}<>,;:.!?*")
            for term in analyze(word):
                if word not in said.setdefault(term, []):
                    said[term].append(word)
        for doc, score in docs:
            fields = fields_of(names[doc])
            words = [{"term": term.replace(PHRASE_MARK, " "), "said": said.get(term, []),
                      "fields": [field for field, terms in fields.items() if term in terms], "added": round(added, 4)}
                     for term, added in sorted(self.words.get(doc, {}).items(), key=lambda item: (-item[1], item[0]))]
            row: dict[str, Any] = {"tool_name": names[doc], "score": round(score, 4), "words": words}
            if self.verbs.get(doc):
                row["verbs"] = [{"term": term, "added": round(added, 4)} for term, added in self.verbs[doc].items()]
            row["admitted"] = self.admitted.get(doc, {"by": "no floor"})
            if doc in self.order:
                row["order"] = self.order[doc]
            self.tools.append(row)

    def exact(self, tool_name: str) -> None:
        """``tool_name`` was put first for being the query itself."""
        row = next((row for row in self.tools if row["tool_name"] == tool_name), None)
        if row is None:
            row = {"tool_name": tool_name, "words": []}
        else:
            self.tools.remove(row)
        self.tools.insert(0, {**row, "order": "first: the query is its name"})
