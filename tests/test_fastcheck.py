"""The quick argument check agrees with jsonschema on every plain schema, and declines the rest."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from junior_core._schemas.fastcheck import compile_check
from tests.helpers import examples

SCALAR_SCHEMAS = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["string", "integer", "number", "boolean", "null", ["string", "null"]])},
        optional={"minLength": st.integers(0, 3), "maxLength": st.integers(0, 5), "minimum": st.integers(-2, 2),
                  "maximum": st.floats(-2, 2), "pattern": st.sampled_from(["^a", "b$", "[0-9]"]),
                  "description": st.text(max_size=5)},
    ),
    st.fixed_dictionaries({"enum": st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, unique=True)}),
)
SCHEMAS = st.recursive(
    SCALAR_SCHEMAS,
    lambda inner: st.one_of(
        st.fixed_dictionaries({"type": st.just("array"), "items": inner},
                              optional={"minItems": st.integers(0, 2), "maxItems": st.integers(0, 3)}),
        st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]), inner,
                                                                       max_size=3)},
            optional={"required": st.lists(st.sampled_from(["a", "b"]), unique=True, max_size=2),
                      "additionalProperties": st.booleans()},
        ),
    ),
    max_leaves=6,
)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-3, 3) | st.sampled_from(["", "a", "ab", "b1", "c"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner,
                                                                 max_size=3),
    max_leaves=8,
)


@settings(max_examples=examples(1500), deadline=None)
@given(schema=SCHEMAS, value=VALUES)
def test_quick_check_agrees_with_jsonschema(schema: dict[str, Any], value: Any) -> None:
    check = compile_check(schema)
    assert check is not None, schema
    assert check(value) == Draft202012Validator(schema).is_valid(value), (schema, value)


def test_schemas_beyond_the_plain_subset_are_declined() -> None:
    for schema in [
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {}}},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"enum": [1, True]},
        {"type": "object", "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}}},
        {"type": "array", "items": [{"type": "string"}]},
    ]:
        assert compile_check(schema) is None, schema


def test_integers_and_booleans_follow_jsonschema() -> None:
    check = compile_check({"type": "object", "properties": {"n": {"type": "integer"}}})
    assert check is not None
    assert check({"n": 5.0}) is True
    assert check({"n": True}) is False and check({"n": 5.5}) is False
