"""What a memory may contain: size limits, credential refusals, and the normal form used for dedup."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import UTC, date, datetime, time, timedelta

from junior_core import ToolError

__all__ = [
    "MAX_CONTENT",
    "check_content",
    "check_text",
    "content_hash",
    "format_time",
    "normalise",
    "parse_expires",
    "utcnow",
]

MAX_CONTENT = 4000

# Lone UTF-16 surrogates (a broken "\ud83d" escape decodes to one): no database can store them as UTF-8.
_SURROGATE = re.compile(r"[\ud800-\udfff]")

# Control characters other than tab, newline and carriage return: Postgres refuses NUL, and none belong in a memory.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def check_text(value: str, field: str) -> str:
    """``value`` if it is valid Unicode text, else ``ToolError('invalid_arguments')`` naming ``field``."""
    if _SURROGATE.search(value):
        raise ToolError(
            "invalid_arguments",
            f"{field} is not valid Unicode text: it holds a lone surrogate (often half of a broken emoji escape "
            "such as \\ud83d). Nothing was saved or read; send the text again as plain UTF-8.",
            details=[{"path": field, "message": "contains a lone UTF-16 surrogate"}],
        )
    return value


def check_content(content: str) -> str:
    """Return the content to store (surrounding whitespace trimmed) or raise a ``ToolError`` saying why not."""
    from junior_memory.credentials import credential_kind  # loaded by the first memory written, not at start-up

    text = check_text(content, "content").strip()
    if not text:
        raise ToolError("rejected", "The memory is empty. Nothing was saved; pass the fact to remember as content.")
    if len(text) > MAX_CONTENT:
        raise ToolError(
            "rejected",
            f"The memory is {len(text)} characters; the limit is {MAX_CONTENT}. Nothing was saved; "
            "remember one short, durable fact per call.",
        )
    if _CONTROL.search(text):
        raise ToolError(
            "rejected", "The memory contains control characters. Nothing was saved; send plain text."
        )
    found = credential_kind(text)
    if found is not None:
        raise ToolError(
            "rejected",
            f"This looks like it contains {found}. Memory never stores credentials, so nothing was saved. "
            "Tell the user to keep secrets in a secret manager; you may remember where a secret is kept, "
            "never the secret itself. If it is not a secret (an id, a hash), remember a link to it or a "
            "description instead.",
            found=found,
        )
    return text


def normalise(content: str) -> str:
    """The form two memories must share to count as the same: NFKC, case-folded, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", content).casefold()
    text = " ".join(text.split())
    return text.rstrip(".!;").strip()


def content_hash(content: str) -> str:
    """SHA-256 of the normal form: the dedup key within a scope and kind."""
    return hashlib.sha256(normalise(content).encode("utf-8")).hexdigest()


def utcnow() -> datetime:
    return datetime.now(UTC)


def parse_expires(value: str | None, now: datetime) -> datetime | None:
    """``None`` or ``"never"`` → no expiry; an ISO-8601 date and time (naive means UTC) in the future.

    A date alone ("2027-03-31", what "until March 31" means) keeps the memory through the end of that day, UTC: it
    expires at the next day's midnight UTC, so a date of today is still in the future.
    """
    if value is None or value.strip().lower() == "never":
        return None
    raw = value.strip()
    try:
        if len(raw) == 10:
            day = date.fromisoformat(raw)
            parsed = (datetime.combine(day + timedelta(days=1), time(0), tzinfo=UTC) if day < date.max
                      else datetime.combine(day, time.max, tzinfo=UTC))
        else:
            parsed = datetime.fromisoformat(raw)
    except ValueError:
        raise ToolError(
            "invalid_arguments",
            f"expires_at {value[:40]!r} is not 'never' or an ISO-8601 date/time such as '2026-06-30' or "
            "'2026-06-30T17:00:00Z'. Nothing was saved; call again with a valid value or leave it out.",
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        parsed = parsed.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:00:00-05:00 is past the last representable instant
        raise ToolError(
            "invalid_arguments",
            f"expires_at {raw[:40]!r} is out of range. Nothing was saved; use a date before 9999-12-31, or 'never'.",
            details=[{"path": "expires_at", "message": "out of range"}],
        ) from None
    if parsed <= now:
        raise ToolError(
            "rejected",
            f"expires_at {raw} is in the past: today is {now.astimezone(UTC).date().isoformat()} (UTC), now "
            f"{format_time(now)}. Nothing was saved; use a later date (a date alone lasts through its end, UTC) "
            "or time, or 'never'.",
            details=[{"path": "expires_at", "message": "in the past", "today": now.astimezone(UTC).date().isoformat()}],
        )
    return parsed


def format_time(value: datetime | None) -> str | None:
    """ISO-8601 in UTC with a ``Z``, or None."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
