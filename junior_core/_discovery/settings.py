"""How searchTools ranks: every number the score, the floor and the request's reading use (docs/discovery.md says
what each does and what its ablation measured). Its own module so that analysis, documents and scoring can all
read it without importing each other."""

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
    name_b: float = 0.3  # BM25F length normalisation of names and keywords: they are short, their length says little
    text_b: float = 0.75  # of descriptions, parameters and source text (0.5 cost 1.8 R@5 on the mixed catalog)
    term_repeats: float = 5.0  # times a word counts in one field of a tool however often repeated there (0: all)
    action_weight: float = 1.0  # what a request verb a tool states adds (times its idf), whole catalog
    source_action_weight: float = 1.5  # the same inside one source, where the verb decides between siblings
    typo_weight: float = 0.8  # what a word corrected for a typo counts for (1 for a word spelled right; 0: none)
    typo_ratio: float = 2.0  # the best of equally near corrections must be this many times more used than the next
    english_count: int = 500  # a word of the English list is English when the list saw it this often
    relevance_floor: float = 0.5  # the share of a clause's ask words' idf a tool must hold to pass by coverage
    reference_tools: float = 100.0  # how many installed tools the reference catalog counts as in idf (0: none)
    telling_share: float = 0.05  # a word at most this share of the tools outside a source use admits its tools
    source_share: float = 0.5  # the share of an answer's places (rounded up) one source holds while others matched
    bridged_margin: float = 0.1  # a bridged server's tool (``mcp:...``) ranks as if its score were this share lower
    payload_weight: float = 0.5  # what a payload word ("forget my preference about <...>") counts for in the score
    request_chars: int = 2000  # how much of a request is read into clauses
    max_clauses: int = 12
    intent_chars: int = 300  # how much of a request its verbs and whether it is a question are read from
    max_verbs: int = 3
    topic_words: int = 5  # a topic word ("about") opens a clause's payload only among its first this many words
    phrase_words: int = 5  # a clause's phrase terms (matched against declared keyword phrases): 2 to this many words
    phrase_window: int = 64  # ... taken from a clause's first this many words
    typo_length: int = 4  # a shorter word is never corrected, but for a stop word with two letters swapped
    swapped_stop_length: int = 3  # a stop word of at least this length with two letters swapped ("teh") is read as it
    typo_long: int = 6  # from this length a letter extra or wrong, or two missing, may be corrected too

    def weight(self, field: str) -> float:
        """BM25F weight of ``field``; declared keywords weigh as description words do."""
        return float(getattr(self, f"{field}_weight", 1.0))

    def b(self, field: str) -> float:
        """BM25F length normalisation of ``field``: ``name_b`` for names and keywords, ``text_b`` for the rest."""
        return self.name_b if field in ("name", "keywords") else self.text_b
