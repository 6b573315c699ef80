"""JSON Schema ``pattern``s matched with RE2, whose time is linear in the text whatever the pattern.

Tool schemas come from plugins and MCP servers; a pattern such as ``^(a+)+$`` makes a backtracking engine
(Python's ``re``, which jsonschema uses) take minutes on a short string while holding the GIL. RE2 has no
backtracking. It also has no lookaround or backreferences: a pattern using them is not enforced here (it is
never held against the arguments) and is logged once; the tool's own server still validates its input.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["search", "searcher", "validator_for"]

log = logging.getLogger("junior.runtime")


@functools.lru_cache(maxsize=4096)
def searcher(pattern: str) -> Callable[[str], bool] | None:
    """``text -> whether pattern matches somewhere in text``, or None when RE2 cannot run the pattern."""
    import re2

    options = re2.Options()
    options.log_errors = False  # a refused pattern is reported below, once, not on stderr
    try:
        compiled = re2.compile(pattern, options)
    except (re2.error, TypeError, ValueError) as exc:
        log.warning("schema pattern %.200r is not enforced: RE2 cannot run it (%s)", pattern, exc)
        return None
    find = compiled.search
    return lambda text: find(text) is not None


def search(pattern: str, text: str, unsupported: bool) -> bool:
    """Whether ``pattern`` matches in ``text``; ``unsupported`` is the answer when RE2 cannot run the pattern."""
    found = searcher(pattern)
    return unsupported if found is None else found(text)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError  # jsonschema loads with a tool's first full validation

    if validator.is_type(instance, "string") and not search(pattern, instance, unsupported=True):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key, unsupported=False):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


@functools.cache
def _draft_keyword(keyword: str) -> Callable[..., Iterator[Any]]:
    """Draft 2020-12's own implementation of ``keyword``, from the validator class's public ``VALIDATORS``."""
    from jsonschema import Draft202012Validator

    found: Callable[..., Iterator[Any]] = Draft202012Validator.VALIDATORS[keyword]
    return found


def _additional_properties(validator: Any, extra: Any, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    additional_properties = _draft_keyword("additionalProperties")
    if not validator.is_type(instance, "object") or not schema.get("patternProperties"):
        yield from additional_properties(validator, extra, instance, schema)
        return
    # jsonschema's own finder matches patternProperties with ``re``; the same rule, with RE2.
    patterns = list(schema["patternProperties"])
    known = schema.get("properties", {})
    unmatched = {
        key
        for key in instance
        if key not in known and not any(search(pattern, key, unsupported=True) for pattern in patterns)
    }
    plain = {key: instance[key] for key in unmatched}
    narrowed = {k: v for k, v in schema.items() if k != "patternProperties"}
    yield from additional_properties(validator, extra, plain, narrowed)


@functools.cache
def validator_for() -> Any:
    """The Draft 2020-12 validator class with ``pattern``, ``patternProperties`` and ``additionalProperties``
    matched by RE2."""
    from jsonschema import Draft202012Validator, validators

    extend: Any = validators.extend
    return extend(
        Draft202012Validator,
        {"pattern": _pattern, "patternProperties": _pattern_properties, "additionalProperties": _additional_properties},
    )
