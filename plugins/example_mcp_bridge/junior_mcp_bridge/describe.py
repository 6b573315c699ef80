"""A bridged server's source description and why it is down, in the words the model reads.

Light on purpose: ``junior sources`` builds descriptions from the tool cache without importing the session code.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from junior_mcp_bridge.config import ServerConfig

__all__ = ["INSTRUCTIONS_LIMIT", "NAME_LIMIT", "STDERR_QUOTE_LIMIT", "described", "plain_line", "quoted_line",
           "unavailable_reason"]

# Bounds on what a server's own words may add to searchTools' description (characters).
INSTRUCTIONS_LIMIT = 120
NAME_LIMIT = 60
STDERR_QUOTE_LIMIT = 45
"""The last stderr line quoted in a down source's description and in ``unavailable`` answers (characters): short
enough that the description of a server named in a few words, with its reason, fits searchTools' 180-character
summary."""
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_TAG = re.compile(r"</?[A-Za-z!?][^<>]*>")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"[`*#<>\[\]{}|~]+|(?<!\w)_+|_+(?!\w)")
_SPACE = re.compile(r"\s+")
_BEFORE_PUNCTUATION = re.compile(r" ([,.;:!?])")


def plain_line(text: str, limit: int) -> str:
    """The first non-blank line of ``text`` as plain words: no control characters or markup, at most ``limit``.

    A server's ``instructions`` can be long, multi-line and written to steer a model; only a label belongs in a
    source description.
    """
    line = next(filter(None, (_plain(part) for part in _ANSI.sub("", text).splitlines())), "")
    if len(line) > limit:
        cut = line[: limit - 3]
        cut = cut.rsplit(" ", 1)[0] if " " in cut[limit // 2 :] else cut
        line = cut.rstrip(" -:;,.") + "..."
    return line


def quoted_line(text: str, limit: int) -> str:
    """``plain_line`` of ``text`` in double quotes (its own double quotes made single, so it cannot end the
    quotation), ``limit`` counting the quotes; empty if nothing is left."""
    line = plain_line(text, limit - 2).replace('"', "'")
    return f'"{line}"' if line else ""


def _plain(line: str) -> str:
    # Format characters (zero-width, bidi overrides) vanish; other controls and separators become spaces.
    line = "".join("" if unicodedata.category(ch) == "Cf" else " " if unicodedata.category(ch)[0] in "CZ" else ch
                   for ch in line)
    line = _MARKUP.sub("", _LINK.sub(r"\1", _TAG.sub(" ", line)))
    return _BEFORE_PUNCTUATION.sub(r"\1", _SPACE.sub(" ", line)).strip(" -:;,")



def described(config: ServerConfig, instructions: str | None, title: str | None, name: str | None) -> str:
    """From config, else the first line of the server's instructions, else its title or name.

    What a server sends is untrusted and sits in searchTools' description on every turn, so it is cut to
    one plain line; a configured description is the owner's own words and is used as written.
    """
    if config.description:
        return config.description
    line = quoted_line(instructions or "", INSTRUCTIONS_LIMIT)
    if line:
        # Quoted and attributed: the server's words never read as junior's own in searchTools' description.
        return f"MCP server {config.name!r}, in its own words: {line}"
    label = plain_line(title or name or "", NAME_LIMIT)
    if label:
        return f"Tools of the MCP server {label}."
    return f"Tools of the MCP server {config.name!r}."


def unavailable_reason(problem: str | None, retryable: bool, advice: str | None,
                       stderr_tail: Sequence[str] = ()) -> str:
    """Why a server is down, for the model and ``junior sources``: a fixed category, what to do, and the last
    line the server wrote to stderr (usually the fix: "GITHUB_TOKEN is not set"), as one plain line."""
    advice = advice or ("try again later" if retryable else "it needs its configuration fixed (`junior mcp check`)")
    said = quoted_line(stderr_tail[-1], STDERR_QUOTE_LIMIT + 2) if stderr_tail else ""
    quoted = f"; stderr: {said}" if said else ""  # short: the description's summary is 180 characters
    return f"{problem or 'not running'}; {advice}{quoted}"
