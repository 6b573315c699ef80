"""Reviewing explicit writes before they are stored: canonical wording, kind, refusals."""

from __future__ import annotations

from typing import Literal, Protocol

import attrs

from junior_core import ToolContext

__all__ = ["MemoryReviewer", "Review"]


@attrs.frozen
class Review:
    """A reviewer's decision on an explicit write: store ``content`` as ``kind``, or refuse with ``reason``."""

    verdict: Literal["accept", "refuse"]
    content: str
    kind: str
    reason: str = ""


class MemoryReviewer(Protocol):
    """Looks at a ``memory__remember`` call before it is stored (``junior_memory.model_helpers.ModelReviewer``)."""

    def review(self, content: str, kind: str, context: ToolContext) -> Review:
        """Accept (possibly reworded or reclassified) or refuse the write."""
        ...
