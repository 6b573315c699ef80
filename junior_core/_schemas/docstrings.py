"""Docstrings read for tools: the description, and each parameter's from an ``Args:`` or ``:param:`` section."""

from __future__ import annotations

import inspect
import re

__all__ = ["parse_docstring"]

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments):\s*$")
_GOOGLE_PARAM = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_REST_FIELD = re.compile(r"^:(type|param|arg|argument|key|keyword)\b")
_LIST_ITEM = re.compile(r"^([-*+•]|\d+[.)])\s")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """``(description, {parameter: description})`` from a docstring with an ``Args:`` or ``:param:`` section.

    The description keeps every paragraph except the parameter section; lines wrapped for the source are
    joined (list items and indented lines keep their line breaks).
    """
    lines = inspect.cleandoc(doc).splitlines()
    params: dict[str, str] = {}
    kept: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _SECTION.match(line):
            i += 1
            current: str | None = None
            indent: int | None = None
            while i < len(lines) and (not lines[i].strip() or lines[i][0].isspace()):
                text = lines[i].strip()
                depth = len(lines[i]) - len(lines[i].lstrip())
                if text:
                    indent = depth if indent is None else indent
                    match = _GOOGLE_PARAM.match(text) if depth == indent else None
                    if match:
                        current = match.group(1).lstrip("*")
                        params[current] = match.group(3).strip()
                    elif current is not None:
                        params[current] = f"{params[current]} {text}".strip()
                i += 1
            continue
        if _REST_FIELD.match(line):
            match = _REST_PARAM.match(line)
            name = match.group(1) if match else None
            if match and name:
                params[name] = match.group(2).strip()
            i += 1
            while i < len(lines) and lines[i][:1].isspace() and lines[i].strip():
                if name:
                    params[name] = f"{params[name]} {lines[i].strip()}".strip()
                i += 1
            continue
        kept.append(line)
        i += 1
    paragraphs: list[str] = []
    block: list[str] = []
    for line in [*kept, ""]:
        if line.strip():
            block.append(line)
        elif block:
            paragraphs.append(_unwrap(block))
            block = []
    return "\n\n".join(paragraphs), params


def _unwrap(block: list[str]) -> str:
    out = block[0].rstrip()
    for line in block[1:]:
        if line[:1].isspace() or _LIST_ITEM.match(line):
            out += "\n" + line.rstrip()
        else:
            out += " " + line.strip()
    return out
