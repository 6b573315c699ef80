"""Everything behind searchTools, in stages that run one way: analyse, read, score, admit, order, answer.

The runtime uses ``Discovery`` (``answers``). Each stage writes its part of ``explain`` into ``reasons.Trace``:

- analyse: ``analysis`` (text to index terms), ``documents`` (a tool's fields, BM25F weights, fingerprint),
  ``whoosh_parts`` (junior's Whoosh posting format, schema and writer), ``index`` (the Whoosh snapshot per catalog
  version, built or reopened), ``store`` (indexes kept on disk, checked before Whoosh reads one).
- read: ``scoring`` (a request read once: clauses, terms, verbs, question), ``spelling`` (typos).
- score: ``scoring`` (BM25F term at a time, the one idf, the request's verbs added).
- admit: ``floor`` (the relevance floor, and the evidence: matched, unmatched, weak).
- order: ``index.ordered`` (readers first, a source's share, a bridged server's margin).
- answer: ``answers`` (the view, searchTools and its answers' size, explain, executeTool's misses).

``settings`` (``RankingConfig``) holds every ranking parameter, ``switches`` every rule switch and English word list.
"""

from junior_core._discovery.answers import Discovery

__all__ = ["Discovery"]
