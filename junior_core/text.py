"""Text from plugins and the servers behind them, made safe to index, show on a terminal and send to a model.

A tool's description, a schema's descriptions, a source's description or a tool's result may come from a
program junior does not trust (an MCP server). Terminal escape sequences in them can rewrite a terminal's title
or the clipboard (OSC 52) when ``junior show`` prints them; bidi overrides and zero-width characters make a
person read something else than the model is told. ``clean_text`` removes all of these and keeps the words.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

__all__ = ["clean_json", "clean_text", "clip", "is_clean_json_text"]

ELLIPSIS = "..."


def clip(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its start, trailing spaces dropped, and ``...``: the one
    way junior shortens a message, a summary, a title, a table cell or a log value."""
    if len(text) <= limit:
        return text
    return text[: max(limit - len(ELLIPSIS), 0)].rstrip() + ELLIPSIS

# Terminal escape sequences, removed whole so no payload (an OSC 52 clipboard write, a window title) is left:
# CSI (ESC [ or 0x9b), OSC (ESC ] or 0x9d, ended by BEL or ST), DCS/SOS/PM/APC strings, and two-byte escapes.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
# Characters that end a line on some terminal or in some reader: one newline each, so a carriage return cannot
# send the cursor back to overwrite what came before it on the line.
_LINE_ENDS = frozenset("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_DROPPED = frozenset(("Cc", "Cf", "Cs"))
# In JSON text (``ensure_ascii=False``), the escapes of the control characters other than newline and tab.
_JSON_CONTROLS = ("\\u00", "\\r", "\\b", "\\f")


class _Translation(dict[int, "str | None"]):
    """``str.translate``'s table, filled on demand: a code point is looked up once."""

    def __missing__(self, code: int) -> str | None:
        char = chr(code)
        if char in "\n\t":
            value: str | None = char
        elif char in _LINE_ENDS:
            value = "\n"
        elif unicodedata.category(char) in _DROPPED:
            value = None
        else:
            value = char
        if len(self) < 65_536:  # text in every script stays cached; a flood of rare code points does not grow it
            self[code] = value
        return value


_TABLE = _Translation()


def is_clean(text: str) -> bool:
    """Whether ``clean_text`` would leave ``text`` as it is (without running it: the common case is fast)."""
    return text.isprintable() or text.replace("\n", " ").replace("\t", " ").isprintable()


def clean_text(text: str) -> str:
    """``text`` without terminal escape sequences, control characters (but newline and tab) or format characters.

    Format characters (Unicode ``Cf``: bidi overrides and isolates, zero-width spaces and joiners, the byte order
    mark, tag characters) vanish; carriage returns, vertical tabs, form feeds and line or paragraph separators
    become newlines (``\\r\\n`` one newline). Letters, digits, punctuation and spaces of every script are kept.
    """
    if is_clean(text):
        return text
    return _ESCAPES.sub("", text).replace("\r\n", "\n").translate(_TABLE)


def is_clean_json_text(text: str) -> bool:
    """Whether JSON text (dumped with ``ensure_ascii=False``) holds no string ``clean_text`` would change.

    May answer False for clean data (a backslash followed by ``b`` in a string): then ``clean_json`` finds out.
    """
    return text.isprintable() and not any(escape in text for escape in _JSON_CONTROLS)


def clean_json(value: Any) -> Any:
    """``value`` (JSON data) with every string cleaned, object keys included; ``value`` itself when nothing changes.

    Raises ``RecursionError`` for hostile data nested past the interpreter's recursion limit, as ``json.dumps`` does.
    """
    return value if _is_clean_json(value) else _cleaned(value)


_SEQUENCES = (list, tuple)
_CHECK_BUDGET = 100_000
"""Containers the quick check reads before handing the rest to ``_cleaned`` (which stops at a cycle by recursing)."""


def _is_clean_json(value: Any) -> bool:
    """Whether no string in ``value`` would change; iterative, and read once per call of a tool or registration."""
    stack = [value]
    budget = _CHECK_BUDGET
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if not is_clean(node):
                return False
        elif isinstance(node, dict):
            budget -= 1
            stack.extend(node)
            stack.extend(node.values())
        elif isinstance(node, _SEQUENCES):
            budget -= 1
            stack.extend(node)
        if budget < 0:
            return False
    return True


def _cleaned(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list | tuple):
        return [_cleaned(item) for item in value]
    if isinstance(value, dict):
        return {_cleaned(key): _cleaned(item) for key, item in value.items()}
    return value
