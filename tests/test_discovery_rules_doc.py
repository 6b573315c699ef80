"""docs/discovery.md documents every rule switch and every ranking setting, and names none that is gone."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from junior_core._discovery import switches
from junior_core._discovery.settings import RankingConfig

DOC = Path(__file__).resolve().parent.parent / "docs" / "discovery.md"
_ROW = re.compile(r"^\| `([a-z_0-9]+)` \|(.+)\|\s*$", re.MULTILINE)


def _documented(heading: str) -> dict[str, str]:
    """The first column's names of the table under ``heading``, each with the rest of its row."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    section = text[start : end if end != -1 else len(text)]
    return {match.group(1): match.group(2) for match in _ROW.finditer(section)}


def test_every_rule_switch_is_documented_with_its_measured_cost() -> None:
    documented = _documented("## Rule switches")
    assert set(switches.SWITCHES) <= set(documented), sorted(set(switches.SWITCHES) - set(documented))
    assert set(documented) <= set(switches.SWITCHES), f"documented but gone: {sorted(set(documented) - set(switches.SWITCHES))}"
    for name in switches.SWITCHES:
        cells = [cell.strip() for cell in documented[name].split("|")]
        assert len(cells) >= 2 and all(cells[:2]), f"{name}: says what it does and what its ablation measured"


def test_every_setting_is_documented_with_its_measured_cost() -> None:
    fields = [field.name for field in attrs.fields(RankingConfig)]
    documented = _documented("## Settings")
    assert set(fields) <= set(documented), sorted(set(fields) - set(documented))
    assert set(documented) <= set(fields), f"documented but gone: {sorted(set(documented) - set(fields))}"
    for name in fields:
        cells = [cell.strip() for cell in documented[name].split("|")]
        assert len(cells) >= 3 and all(cells[:3]), f"{name}: its default, what it does, what its ablation measured"


def test_a_switch_is_on_unless_switched_off_and_unknown_names_are_refused() -> None:
    name = next(iter(switches.SWITCHES))
    assert switches.on(name)
    with switches.switched_off(name):
        assert not switches.on(name)
    assert switches.on(name)
    with pytest.raises(ValueError, match="unknown rule switch"), switches.switched_off("no_such_rule"):
        pass
