"""Author spread: one author's volume cannot fill another person's recall or search.

A search answer of ``k`` places holds at most ``ceil(k * author_share)`` memories of one author (the actor who
saved them; memories with no known author count as one author) while another author's memories match; when no
one else's match, one author may fill every place. ``author_share`` (default 0.5; 1 turns the spread off) is read
from ``JUNIOR_MEMORY_AUTHOR_SHARE`` or else ``[plugins.memory] author_share`` of junior.toml.

The database's candidates are spread too (``per_author``): each author brings at most a share of the candidate
pool, so thousands of one author's notes that out-rank everyone else's cannot keep the others out of the pool
before the floor and the ordering see them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from junior_memory.relevance import Hit

__all__ = ["DEFAULT_AUTHOR_SHARE", "author_share_from_config", "per_author", "spread"]

DEFAULT_AUTHOR_SHARE = 0.5
ENV = "JUNIOR_MEMORY_AUTHOR_SHARE"


def _share(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ValueError(f"must be a number above 0 and at most 1 (1 turns the spread off), not {value!r}")
    return float(value)


def author_share_from_config() -> float:
    """``JUNIOR_MEMORY_AUTHOR_SHARE``, else ``author_share`` of ``[plugins.memory]``, else 0.5."""
    from junior_core import ConfigError, config_path, plugin_settings

    raw = os.environ.get(ENV, "").strip()
    if raw:
        try:
            return _share(float(raw))
        except ValueError:
            raise ConfigError(f"{ENV}={raw!r}: must be a number above 0 and at most 1 (1 turns the spread "
                              "off)") from None
    settings = plugin_settings("memory")
    if "author_share" not in settings:
        return DEFAULT_AUTHOR_SHARE
    try:
        return _share(settings["author_share"])
    except ValueError as exc:
        raise ConfigError(f"{config_path()}: [plugins.memory] author_share: {exc}") from None


def places(k: int, share: float) -> int:
    """The most of ``k`` places one author may take while others match."""
    return max(1, math.ceil(k * share - 1e-9))


def per_author(pool: int, limit: int, share: float) -> int:
    """Candidates one author may bring to a pool of ``pool`` read for ``limit`` results (at least ``limit``, so
    one author alone still fills the answer)."""
    return max(places(pool, share), limit)


def spread(hits: Sequence[Hit], k: int, share: float) -> list[Hit]:
    """The first ``k`` of ``hits`` (best first) with at most ``places(k, share)`` of one author when ``hits``
    hold another author's too (then the answer may be shorter than ``k``); one author's alone fill it. Order is
    kept."""
    if share >= 1:
        return list(hits[:k])
    cap = places(k, share)
    authors = {hit.record.actor_key for hit in hits}
    if len(authors) < 2:
        return list(hits[:k])
    taken: dict[str | None, int] = {}
    chosen: list[Hit] = []
    for hit in hits:
        if len(chosen) == k:
            break
        author = hit.record.actor_key
        if taken.get(author, 0) >= cap:
            continue
        taken[author] = taken.get(author, 0) + 1
        chosen.append(hit)
    return chosen
