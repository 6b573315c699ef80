"""Host policy: which tools the model gets directly, finds by search, or never sees, decided by the host."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from fnmatch import fnmatchcase
from typing import Literal, cast

import attrs

from junior_core.catalog import EXPOSURES

__all__ = ["Exposure", "ExposurePolicy", "ExposureRule"]

Exposure = Literal["deferred", "direct", "hidden"]
PATTERN = re.compile(r"^[A-Za-z0-9_:*?\[\]!-]{1,200}$")
_WILDCARDS = frozenset("*?[]!")


def _check_pattern(instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    if not isinstance(value, str) or not PATTERN.match(value):
        raise ValueError(
            f"invalid tool pattern {value!r}: a tool_name or source id, with * ? [...] wildcards "
            "(e.g. 'memory__*', 'mcp:git', 'mcp:*')"
        )


def _check_exposure(instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    if value not in EXPOSURES:
        raise ValueError(f"exposure must be one of {', '.join(EXPOSURES)}, got {value!r}")


@attrs.frozen
class ExposureRule:
    """``pattern`` (a glob over tool_names and source ids) gets ``exposure``; ``origin`` says who set it."""

    pattern: str = attrs.field(validator=_check_pattern)
    exposure: Exposure = attrs.field(validator=_check_exposure)
    origin: str = "api"

    def rank(self, tool_name: str, source_id: str) -> tuple[int, int] | None:
        """How specifically this rule names the tool (higher wins), or None if it does not match."""
        if self.pattern == tool_name:
            return (1, len(self.pattern))
        if fnmatchcase(tool_name, self.pattern) or fnmatchcase(source_id, self.pattern):
            return (0, sum(char not in _WILDCARDS for char in self.pattern))
        return None


class ExposurePolicy:
    """The host's exposure rules over the tools' own; ``version`` increases on every change.

    Among the rules matching a tool, the one naming its tool_name exactly wins, then the pattern with the most
    literal (non-wildcard) characters; a tie goes to the rule set later. No matching rule: the tool's own
    ``exposure``.
    """

    def __init__(self, rules: Iterable[ExposureRule] = ()) -> None:
        self._rules: list[ExposureRule] = []
        self._lock = threading.Lock()
        self.version = 0
        for rule in rules:
            self.add(rule)

    @property
    def rules(self) -> list[ExposureRule]:
        """In the order they were set (the later of two equally specific rules wins)."""
        return list(self._rules)

    def add(self, rule: ExposureRule) -> None:
        """Set ``rule``; one set earlier for the same pattern is replaced."""
        with self._lock:
            self._rules = [r for r in self._rules if r.pattern != rule.pattern] + [rule]
            self.version += 1

    def exposure(self, tool_name: str, source_id: str, own: str) -> Exposure:
        """The exposure the host gives a tool whose own exposure is ``own``."""
        best: tuple[int, int, int] | None = None
        chosen = own
        for order, rule in enumerate(self._rules):
            rank = rule.rank(tool_name, source_id)
            if rank is not None and (best is None or (*rank, order) > best):
                best, chosen = (*rank, order), rule.exposure
        return cast(Exposure, chosen)
