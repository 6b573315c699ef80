"""Tools from typed functions: schemas from type hints, descriptions from docstrings, arguments as keywords."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
from typing import Annotated, Any, Literal, NotRequired, TypedDict

import attrs
import pytest

from junior_core import Param, PluginError, Source, Tool, ToolContext, tool
from junior_core._schemas.docstrings import parse_docstring
from junior_core._schemas.functions import ToolDefinitionError
from junior_core._schemas.signatures import analyse
from junior_core.testing import ContextFactory, RuntimeFactory, assert_error, assert_found, assert_ok
from tests.helpers import SourcePlugin


def schema_of(fn: Any) -> dict[str, Any]:
    return Tool.from_function(fn).input_schema


def call(fn: Any, arguments: dict[str, Any], context: ToolContext | None = None) -> Any:
    """The tool's handler, as the runtime calls it (after validation)."""
    return Tool.from_function(fn).handler(arguments, context or ToolContext())


# -- scalar types, defaults, required ------------------------------------------------------------------------------
def scalars(text: str, count: int, ratio: float, loud: bool = False, label: str = "x", note: str | None = None) -> str:
    """Scalars."""
    return f"{text}|{count!r}|{ratio!r}|{loud!r}|{label}|{note!r}"


def test_scalars_map_to_json_types_and_defaults_make_a_parameter_optional() -> None:
    assert schema_of(scalars) == {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "loud": {"type": "boolean", "default": False},
            "label": {"type": "string", "default": "x"},
            "note": {"type": "string"},  # a None default: omit it, so null is neither shown nor accepted
        },
        "required": ["text", "count", "ratio"],
        "additionalProperties": False,
    }


def test_omitted_arguments_take_the_python_default_and_integral_floats_become_ints() -> None:
    assert call(scalars, {"text": "a", "count": 3.0, "ratio": 2}) == "a|3|2|False|x|None"
    assert call(scalars, {"text": "a", "count": 1, "ratio": 0.5, "note": "n", "loud": True}) == "a|1|0.5|True|x|'n'"


def unjsonable(ratio: float = float("nan")) -> None:
    """Has a default that JSON cannot hold."""


def test_a_default_that_is_not_json_is_left_out_of_the_schema() -> None:
    assert schema_of(unjsonable)["properties"] == {"ratio": {"type": "number"}}
    assert "required" not in schema_of(unjsonable)

    def later(count: int = 3, at: tuple[int, ...] = (1, 2)) -> None:
        """Defaults as JSON."""

    assert schema_of(later)["properties"] == {
        "count": {"type": "integer", "default": 3},
        "at": {"type": "array", "items": {"type": "integer"}, "default": [1, 2]},
    }


# -- Literal, Enum --------------------------------------------------------------------------------------------------
class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


class Size(enum.IntEnum):
    SMALL = 1
    LARGE = 2


def paint(colour: Colour, size: Size = Size.SMALL, finish: Literal["matt", "gloss"] = "matt",
          mixed: Literal[1, "one"] = 1) -> str:
    """Paint."""
    assert isinstance(colour, Colour) and isinstance(size, Size)
    return f"{colour.name}/{size.name}/{finish}/{mixed!r}"


def test_literals_and_enums_become_enums_and_enum_arguments_arrive_as_members() -> None:
    assert schema_of(paint)["properties"] == {
        "colour": {"type": "string", "enum": ["red", "green"]},
        "size": {"type": "integer", "enum": [1, 2], "default": 1},
        "finish": {"type": "string", "enum": ["matt", "gloss"], "default": "matt"},
        "mixed": {"enum": [1, "one"], "default": 1},
    }
    assert call(paint, {"colour": "green", "size": 2}) == "GREEN/LARGE/matt/1"


# -- containers and unions ------------------------------------------------------------------------------------------
def containers(tags: list[str], point: tuple[float, float], sizes: tuple[Size, ...], counts: dict[str, int],
               maybe: int | None, either: int | str = 0) -> dict[str, Any]:
    """Containers."""
    return {"tags": tags, "point": point, "sizes": sizes, "counts": counts, "maybe": maybe, "either": either}


def test_containers_and_unions() -> None:
    assert schema_of(containers)["properties"] == {
        "tags": {"type": "array", "items": {"type": "string"}},
        "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": False,
                  "minItems": 2, "maxItems": 2},
        "sizes": {"type": "array", "items": {"type": "integer", "enum": [1, 2]}},
        "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
        "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},  # no default: required, and null is a value
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}], "default": 0},
    }
    out = call(containers, {"tags": ["a"], "point": [1, 2.5], "sizes": [2, 1], "counts": {"a": 1}, "maybe": None})
    assert out == {"tags": ["a"], "point": (1, 2.5), "sizes": (Size.LARGE, Size.SMALL), "counts": {"a": 1},
                   "maybe": None, "either": 0}


# -- Annotated and Param --------------------------------------------------------------------------------------------
def described(
    query: Annotated[str, Param("Keywords to look for.", min_length=1, max_length=100)],
    limit: Annotated[int, Param("At most 50.", minimum=1, maximum=50)] = 10,
    note: Annotated[str | None, "A free note."] = None,
    tags: Annotated[list[str], Param(max_items=3)] = [],  # noqa: B006 - never mutated; shows an empty default
) -> None:
    """Annotated."""


def test_annotated_descriptions_and_param_bounds() -> None:
    assert schema_of(described)["properties"] == {
        "query": {"type": "string", "minLength": 1, "maxLength": 100, "description": "Keywords to look for."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "At most 50.", "default": 10},
        "note": {"type": "string", "description": "A free note."},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3, "default": []},
    }


def test_a_bound_that_does_not_suit_the_type_is_refused() -> None:
    def wrong(count: Annotated[int, Param(max_length=3)]) -> None:
        """Wrong bound."""

    with pytest.raises(ToolDefinitionError, match=r"wrong: parameter 'count': Param\(max_length=...\) applies to "
                                                  r"string values, not integer"):
        schema_of(wrong)


# -- nested objects -------------------------------------------------------------------------------------------------
@attrs.frozen
class Point:
    """A point on the map."""

    x: Annotated[float, "Degrees east."] = attrs.field(validator=lambda _, __, value: _check_x(value))
    y: float = 0.0
    label: str | None = None


def _check_x(value: float) -> None:
    if not -180 <= value <= 180:
        raise ValueError("x must be between -180 and 180")


class Window(TypedDict):
    start: str
    end: NotRequired[str]


@dataclasses.dataclass
class Style:
    colour: Colour = Colour.RED
    width: int = 1


def plot(points: list[Point], window: Window, style: Style | None = None, origin: Point | None = None) -> str:
    """Plot points."""
    assert all(isinstance(p, Point) for p in points) and isinstance(window, dict)
    return f"{points!r} {window!r} {style!r} {origin!r}"


def test_attrs_typeddict_and_dataclass_parameters_are_objects_and_arrive_as_instances() -> None:
    schema = schema_of(plot)
    point = {
        "type": "object",
        "description": "A point on the map.",
        "properties": {
            "x": {"type": "number", "description": "Degrees east."},
            "y": {"type": "number", "default": 0.0},
            "label": {"type": "string"},
        },
        "required": ["x"],
        "additionalProperties": False,
    }
    assert schema["properties"] == {
        "points": {"type": "array", "items": point},
        "window": {"type": "object", "properties": {"start": {"type": "string"}, "end": {"type": "string"}},
                   "required": ["start"], "additionalProperties": False},
        "style": {"type": "object", "properties": {
            "colour": {"type": "string", "enum": ["red", "green"], "default": "red"},
            "width": {"type": "integer", "default": 1}}, "additionalProperties": False},
        "origin": point,
    }
    assert schema["required"] == ["points", "window"]
    out = call(plot, {"points": [{"x": 1}, {"x": 2, "y": 3, "label": "b"}], "window": {"start": "9"},
                      "style": {"colour": "green"}})
    assert out == ("[Point(x=1, y=0.0, label=None), Point(x=2, y=3, label='b')] {'start': '9'} "
                   "Style(colour=<Colour.GREEN: 'green'>, width=1) None")


def test_a_nested_value_its_class_refuses_is_an_invalid_arguments_error(junior_runtime: RuntimeFactory) -> None:
    rt = junior_runtime(SourcePlugin(Source("maps", "Maps."), [plot]))  # type: ignore[list-item]
    answer = rt.execute_tool("maps__plot", {"points": [{"x": 500}], "window": {"start": "9"}})
    assert "x must be between -180 and 180" in assert_error(answer, "invalid_arguments")["message"]


@attrs.define
class Node:
    name: str
    children: list[Node] = attrs.Factory(list)


def test_a_recursive_class_is_refused_by_name() -> None:
    def tree(root: Node) -> None:
        """A tree."""

    with pytest.raises(ToolDefinitionError, match="field Node.children: Node refers to itself"):
        schema_of(tree)


# -- docstrings -----------------------------------------------------------------------------------------------------
def google(city: str, days: int = 3) -> None:
    """Forecast the weather
    for a city.

    Wrapped lines are joined; lists keep
    their breaks:
    - rain
    - snow

    Args:
        city: The city, as its
            English name.
        days (int): How many days ahead.

    Returns:
        The forecast.
    """


def rest(city: str) -> None:
    """Forecast the weather.

    :param city: The city,
        as its English name.
    :type city: str
    """


def test_docstring_summary_rest_and_parameter_sections() -> None:
    made = Tool.from_function(google)
    assert made.description == ("Forecast the weather for a city.\n\nWrapped lines are joined; lists keep their "
                                "breaks:\n- rain\n- snow\n\nReturns:\n    The forecast.")
    assert made.input_schema["properties"]["city"] == {"type": "string", "description": "The city, as its English name."}
    assert made.input_schema["properties"]["days"]["description"] == "How many days ahead."
    assert parse_docstring(rest.__doc__ or "") == ("Forecast the weather.", {"city": "The city, as its English name."})


def test_an_annotated_description_wins_over_the_docstring() -> None:
    def both(city: Annotated[str, "From the hint."]) -> None:
        """Both.

        Args:
            city: From the docstring.
        """

    assert schema_of(both)["properties"]["city"]["description"] == "From the hint."


def test_a_function_without_a_docstring_needs_a_description() -> None:
    def bare(city: str) -> None:
        pass

    with pytest.raises(ToolDefinitionError, match=r"test_functions\.\S*bare has no docstring"):
        Tool.from_function(bare)
    assert Tool.from_function(bare, description="Given here.").description == "Given here."


# -- context, async, methods, options ---------------------------------------------------------------------------------
def whoami(greeting: str, *, ctx: ToolContext) -> str:
    """Say who is speaking."""
    assert ctx.actor is not None
    return f"{greeting}, {ctx.actor.user_id} (call {ctx.tool_call_id})"


async def slow_echo(text: str, context: ToolContext | None = None, pauses: int = 0) -> dict[str, Any]:
    """Echo after handing the event loop to others ``pauses`` times."""
    for _ in range(pauses):
        await asyncio.sleep(0)  # suspends without waiting for time: the loop runs whatever else is ready
    return {"text": text, "call": context.tool_call_id if context else None}


def test_a_toolcontext_parameter_receives_the_context_and_is_not_in_the_schema(
    junior_runtime: RuntimeFactory, junior_context: ContextFactory
) -> None:
    assert schema_of(whoami) == {"type": "object", "properties": {"greeting": {"type": "string"}},
                                 "required": ["greeting"], "additionalProperties": False}
    assert "context" not in schema_of(slow_echo)["properties"]
    rt = junior_runtime(SourcePlugin(Source("people", "People."), [whoami]))  # type: ignore[list-item]
    context = junior_context(user="U0ALICE")
    assert assert_ok(rt.execute_tool("people__whoami", {"greeting": "Hi"}, context)) == (
        f"Hi, U0ALICE (call {context.tool_call_id})"
    )
    answer = rt.execute_tool("people__whoami", {"greeting": "Hi", "ctx": {}}, context)
    assert "'ctx' was unexpected" in assert_error(answer, "invalid_arguments")["details"][0]["message"]


def test_async_functions_are_async_tools(junior_runtime: RuntimeFactory, junior_context: ContextFactory) -> None:
    made = Tool.from_function(slow_echo)
    assert made.is_async and not Tool.from_function(whoami).is_async
    rt = junior_runtime(SourcePlugin(Source("echo", "Echo."), [slow_echo]))  # type: ignore[list-item]
    context = junior_context()
    out = rt.execute_tool("echo__slow_echo", {"text": "hi", "pauses": 3}, context)
    assert assert_ok(out) == {"text": "hi", "call": context.tool_call_id}
    assert asyncio.run(rt.aexecute_tool("echo__slow_echo", {"text": "again"}, context))["result"]["text"] == "again"


class Counter:
    def __init__(self, start: int) -> None:
        self.value = start

    @tool(name="bump", keywords=["increment", "add one"], annotations={"readOnlyHint": False},
          exposure="direct", timeout_s=5)
    def add(self, step: int = 1) -> int:
        """Add to the counter."""
        self.value += step
        return self.value


def test_methods_options_and_overrides() -> None:
    first, second = Counter(10), Counter(100)
    made = Tool.from_function(first.add)
    assert (made.name, made.keywords, made.annotations, made.exposure, made.timeout_s) == (
        "bump", ("increment", "add one"), {"readOnlyHint": False}, "direct", 5)
    assert made.input_schema["properties"] == {"step": {"type": "integer", "default": 1}}  # no self
    assert made.handler({"step": 2}, ToolContext()) == 12
    assert Tool.from_function(second.add).handler({}, ToolContext()) == 101  # bound to its own instance
    overridden = Tool.from_function(first.add, name="plus", exposure="hidden", keywords=["grow"])
    assert (overridden.name, overridden.exposure, overridden.keywords, overridden.timeout_s) == (
        "plus", "hidden", ("grow",), 5)
    assert first.add(5) == 17  # the decorated method is still an ordinary method


def test_the_analysis_is_computed_once_per_function() -> None:
    assert analyse(Counter(1).add) is analyse(Counter(2).add)
    assert analyse(scalars) is analyse(scalars)
    made = Tool.from_function(scalars)
    made.input_schema["properties"]["text"]["description"] = "changed"
    assert "description" not in Tool.from_function(scalars).input_schema["properties"]["text"]


# -- registration ---------------------------------------------------------------------------------------------------
def test_plain_and_marked_functions_register_search_and_run(junior_runtime: RuntimeFactory) -> None:
    rt = junior_runtime(SourcePlugin(Source("paint", "Paint things."), [paint, Counter(0).add]))  # type: ignore[list-item]
    assert [e.tool_name for e in rt.catalog_tools()] == ["paint__bump", "paint__paint"]
    assert_found(rt.search_tools("increment"), "paint__bump", first=True)
    assert assert_ok(rt.execute_tool("paint__paint", {"colour": "red", "finish": "gloss"})) == "RED/SMALL/gloss/1"
    answer = rt.execute_tool("paint__paint", {"colour": "blue"})
    assert assert_error(answer, "invalid_arguments")["details"][0]["path"] == "colour"


# -- errors ---------------------------------------------------------------------------------------------------------
def takes_a_set(names: set[str]) -> None:
    """Unsupported."""


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def f(names: set[str]) -> None:\n    'Doc.'",
         r"tool function tests\.dyn\.f: parameter 'names': unsupported type hint set\[str\]; use str, int"),
        ("def f(names) -> None:\n    'Doc.'", r"parameter 'names' has no type hint"),
        ("def f(*names: str) -> None:\n    'Doc.'", r"parameter 'names': \*args and \*\*kwargs cannot be described"),
        ("def f(names: str, /) -> None:\n    'Doc.'", r"parameter 'names' is positional-only"),
        ("def f(names: list) -> None:\n    'Doc.'", r"say what list holds, e\.g\. list\[str\]"),
        ("def f(names: dict[int, str]) -> None:\n    'Doc.'", r"use dict\[str, \.\.\.\], not dict\[int, str\]"),
        ("def f(names: 'Missing') -> None:\n    'Doc.'", r"cannot resolve the type hint 'Missing' \(NameError: name 'Missing' is not defined\); import"),
        ("def f(names: int | Colour) -> None:\n    'Doc.'", r"a union may combine an object, enum or tuple only with"),
    ],
)
def test_an_unusable_signature_is_refused_naming_the_function_and_parameter(source: str, message: str) -> None:
    namespace: dict[str, Any] = {"__name__": "tests.dyn", "Colour": Colour}
    exec(source, namespace)
    with pytest.raises(ToolDefinitionError, match=message):
        Tool.from_function(namespace["f"])


def test_registering_an_unusable_function_names_the_plugin(junior_runtime: RuntimeFactory) -> None:
    plugin = SourcePlugin(Source("sets", "Sets."), [takes_a_set], name="set-plugin")  # type: ignore[list-item]
    with pytest.raises(PluginError, match=r"plugin 'set-plugin': source 'sets': tool function "
                                          r"\S*test_functions\.takes_a_set: parameter 'names': unsupported"):
        junior_runtime(plugin)


def test_an_invalid_name_is_reported_with_the_function() -> None:
    with pytest.raises(ToolDefinitionError, match=r"tool function .*scalars: invalid tool name 'bad name'"):
        Tool.from_function(scalars, name="bad name")


def test_a_decorated_async_function_is_awaited(junior_runtime: Any) -> None:
    import functools

    def logged(fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

        return wrapper

    @logged
    async def shout(text: str) -> str:
        """Shout the text."""
        return text.upper()

    from tests.helpers import SourcePlugin

    rt = junior_runtime(SourcePlugin(Source("loud", "Loud things."), [Tool.from_function(shout)]))
    assert rt.execute_tool("loud__shout", {"text": "hi"}) == {"ok": True, "tool_name": "loud__shout", "result": "HI"}


@dataclasses.dataclass
class _Listed:
    items: list[str] | None = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class _Built:
    x: int
    y: dataclasses.InitVar[int]

    def __post_init__(self, y: int) -> None:
        pass


def test_factory_defaults_keep_null_literal_ints_arrive_as_ints_and_initvars_are_refused() -> None:
    def pick(options: _Listed, level: Literal[1, 2] = 1) -> str:
        """Pick."""
        return f"{options.items!r}|{level!r}"

    made = Tool.from_function(pick)
    assert {"type": "null"} in made.input_schema["properties"]["options"]["properties"]["items"]["anyOf"]
    assert made.handler({"options": {"items": None}, "level": 2.0}, None) == "None|2"

    def build(value: _Built) -> str:
        """Build."""
        return "built"

    with pytest.raises(ToolDefinitionError, match="needs y to be built"):
        Tool.from_function(build)
