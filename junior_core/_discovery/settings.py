"""How searchTools ranks: the parameters of the BM25F score, the relevance floor and the request's intent.

Its own module so that text analysis (``analysis``) and the index (``index``, ``documents``, ``scoring``) can all
read it without importing each other.
"""

from __future__ import annotations

import attrs

__all__ = ["RankingConfig"]


@attrs.frozen
class RankingConfig:
    """Ranking parameters; the defaults are what ``benchmarks/retrieval.py`` and ``benchmarks/memory_intent.py``
    measured on their tuning halves."""

    name_weight: float = 3.0
    description_weight: float = 1.0
    params_weight: float = 0.3
    source_weight: float = 0.2
    k1: float = 3.0
    name_b: float = 0.3
    """BM25F length normalisation of names and keywords: they are short, and their length says little."""
    text_b: float = 0.75
    """BM25F length normalisation of descriptions, parameters and source text, as BM25 has it. A lower
    description b (0.5) cost 1.8 R@5 on the mixed catalog's tuning half."""
    term_repeats: float = 5.0
    """How many times a word counts in one field of a tool however often it is repeated there (0: every time): a
    bridged server's description that says "memory preference list forget" fifty times buys nothing by it."""
    action_weight: float = 1.0
    source_action_weight: float = 1.5
    """What a request verb a tool states adds inside one source, where the verb decides between siblings."""
    typo_weight: float = 0.8
    """What a word corrected for a typo counts for, against 1 for a word spelled right; 0 corrects nothing."""
    typo_ratio: float = 2.0
    """Among equally near corrections of a typo, the best is taken only when at least this many times more tools
    use it than the next; else the word stays as written."""
    english_count: int = 500
    """A word of the English list (``spelling.english``) counts as English when the list saw it at least this
    often: the rare tail holds archaic words and misspellings ("wether" 374, "calender" 98)."""
    relevance_floor: float = 0.5
    """The share of a clause's ask words' idf a tool must match to pass the floor by coverage; with
    ``telling_share`` 0 as well, every tool that matches a word is returned."""
    reference_tools: float = 100.0
    """How many installed tools the reference catalog (2,876 public function docs' words, ``junior_core/data``)
    counts as when rarity (idf) is reckoned: in a catalog of four tools every word looks rare, so the reference says
    which words tools in general share ("delete", "list") and which are telling ("forget"); in a catalog of
    thousands it barely moves anything. 0 reckons rarity from the installed tools alone."""
    telling_share: float = 0.05
    """A word of what searchTools shows of a tool (name, title, summary) or of its keywords admits the tool past
    the floor when at most this share of the tools outside its source use it (the reference included); 0 admits
    by coverage alone."""
    source_share: float = 0.5
    """In a search of every source, at most this share of an answer's places (rounded up) go to one source while
    tools of other sources matched too, unless the request names that source: the rest of its tools follow the
    others'. 0 lets one source fill an answer."""
    bridged_margin: float = 0.1
    """A bridged server's tool (source ``mcp:...``) ranks as if its score were this share lower: on a tie or near
    tie an installed plugin's tool comes first. Then the score, then tool_name."""

    payload_weight: float = 0.5
    """What a word of the request's payload ("forget my preference about <...>") counts for in the score: it says
    what to look for or drop, not which tool. It never counts toward the floor's coverage."""

    def weight(self, field: str) -> float:
        """BM25F weight of ``field``; declared keywords weigh as description words do."""
        return float(getattr(self, f"{field}_weight", 1.0))

    def b(self, field: str) -> float:
        """BM25F length normalisation of ``field``: ``name_b`` for names and keywords, ``text_b`` for the rest."""
        return self.name_b if field in ("name", "keywords") else self.text_b
