"""Everything behind searchTools: a request's parse, the index and its stored copies, scoring, typos, the answers.

The runtime uses ``Discovery`` (``answers``); the modules, from the answer down:

- ``answers``: searchTools and executeTool's misses over the view of the catalog a model may reach; ``explain``.
- ``sizing``: an answer within its size: schemas shortened, tools left to the next page, a small no-match.
- ``names``: tools by name: ``tool_names``, a listing's sample, close names for executeTool's misses.
- ``evidence``: ``matched``, ``unmatched`` and ``weak``: what an answer found and did not.
- ``view``: what searchTools answers from, per exposure table.
- ``reasons``: why each tool ranked, recorded by the scoring pass when asked.
- ``index``: the Whoosh snapshot per catalog version, built or reopened, and one search over it.
- ``documents``: what the index holds of each tool (fields, BM25F weights, fingerprint).
- ``scoring``: the score per tool, the relevance floor, rarity, the request's verbs.
- ``query``: a request read once: clauses, terms and weights, intent.
- ``spelling``: typos corrected against the installed tools' words.
- ``text``: text to index terms, keyword phrases, summaries.
- ``rules``: every English word list the parse and the analysis read.
- ``settings``: ``RankingConfig``, every ranking parameter.
- ``store`` and ``trust``: indexes kept on disk, and the checks before Whoosh reads one.
- ``whoosh_parts``: junior's Whoosh posting format, schema and segment writer.
"""

from junior_core.discovery.answers import Discovery

__all__ = ["Discovery"]
