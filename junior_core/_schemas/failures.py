"""jsonschema's failures read for an ``invalid_arguments`` answer, which ``protocol`` words and clips.

The first ten by path, each as ``(path, reason)``. jsonschema's reason starts with the failing value quoted in
full; a long one is shortened there, so that what comes after it ("is too long", "is not of type 'integer'")
survives the answer's cut.
"""

from __future__ import annotations

from typing import Any

__all__ = ["failures"]

SHOWN = 10
"""Failures listed at most; the model fixes the first ones and calls again."""


def failures(errors: list[Any]) -> list[tuple[str, str]]:
    """``(path, reason)`` of the first ``SHOWN`` of jsonschema's ``errors`` by path; the root's path is ``(root)``."""
    out = []
    for err in sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), e.message))[:SHOWN]:
        path = "/".join(str(part) for part in err.absolute_path)
        out.append((path or "(root)", _reason(err)))
    return out


_LIMITS = {
    "maxLength": "at most {:,} characters", "minLength": "at least {:,} characters",
    "maxItems": "at most {:,} items", "minItems": "at least {:,} items",
}
"""The limit a length failure names: jsonschema says only "is too long"."""


def _reason(err: Any) -> str:
    limit = _LIMITS.get(err.validator)
    said = _said(err)
    if limit is not None and isinstance(err.validator_value, int):
        return f"{said}: {limit.format(err.validator_value)}"
    return said


def _said(err: Any) -> str:
    message: str = err.message
    instance, quoted = err.instance, repr(err.instance)
    if len(quoted) <= 60 or quoted not in message:
        return message
    if isinstance(instance, str):
        short = f"{instance[:40]!r}… ({len(instance)} characters)"
    elif isinstance(instance, list | dict):
        short = f"{quoted[:40]}… ({len(instance)} {'items' if isinstance(instance, list) else 'keys'})"
    else:
        short = f"{quoted[:40]}…"
    return message.replace(quoted, short, 1)
