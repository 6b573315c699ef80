"""What a bridged server says, made safe to index, show and send; URLs made safe to print."""

from __future__ import annotations

import re
import unicodedata
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["clean_json", "clean_text", "display_url", "mask_urls"]

# Terminal escape sequences, removed whole so no payload (an OSC 52 clipboard write, a window title) is left:
# CSI (ESC [ or 0x9b), OSC (ESC ] or 0x9d, ended by BEL or ST), DCS/SOS/PM/APC strings, and two-byte escapes.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
_KEEP = {"\n", "\t"}
_SECRET_KEY = re.compile(r"pass|pwd|secret|token|key|auth|sig", re.IGNORECASE)
_URL_IN_TEXT = re.compile(r"\bhttps?://[^\s'\"<>]*[^\s'\"<>.,:;)\]]", re.IGNORECASE)
MASK = "***"


def clean_text(text: str) -> str:
    """``text`` without escape sequences, control characters (but newline and tab) or format characters.

    Format characters (Unicode ``Cf``: bidi overrides and isolates, zero-width spaces and joiners, tag
    characters) can hide or reorder what a person reads and a model is told; line and paragraph separators
    become newlines.
    """
    if text.isascii() and text.isprintable():
        return text
    text = _ESCAPES.sub("", text)
    return "".join(
        "\n" if ch in "\u2028\u2029" else ch
        for ch in text
        if ch in _KEEP or unicodedata.category(ch) not in ("Cc", "Cf")
    )


def clean_json(value: Any) -> Any:
    """``value`` (JSON data) with every string cleaned, keys included."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [clean_json(item) for item in value]
    if isinstance(value, dict):
        return {clean_text(key) if isinstance(key, str) else key: clean_json(item) for key, item in value.items()}
    return value


def display_url(url: str) -> str:
    """``url`` with its password and secret-looking query values (``?api_key=``, ``token``) replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user, colon, _ = userinfo.partition(":")
        netloc = f"{user}{':' + MASK if colon else ''}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_SECRET_KEY.search(key) for key, _ in pairs):
            query = urlencode([(key, MASK if _SECRET_KEY.search(key) else value) for key, value in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def mask_urls(text: str) -> str:
    """``text`` with every http(s) URL in it passed through ``display_url`` (error messages quote them)."""
    return _URL_IN_TEXT.sub(lambda match: display_url(match.group(0)), text)
