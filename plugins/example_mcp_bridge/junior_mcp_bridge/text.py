"""What a bridged server says, made safe to index, show and send (``junior_core.text``); URLs made safe to print."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from junior_core.text import clean_json, clean_text

__all__ = ["clean_json", "clean_text", "display_url", "mask_urls"]

_SECRET_KEY = re.compile(r"pass|pwd|secret|token|key|auth|sig", re.IGNORECASE)
_URL_IN_TEXT = re.compile(r"\bhttps?://[^\s'\"<>]*[^\s'\"<>.,:;)\]]", re.IGNORECASE)
MASK = "***"


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
