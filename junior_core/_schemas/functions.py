"""Tools from plain typed functions: ``@tool`` and ``Param``, and the words of their settings.

This module only marks functions, so a plugin importing it costs nothing at ``junior --help``; the JSON Schema
and handler are read by ``junior_core._schemas.signatures`` and made a ``Tool`` by ``Tool.from_function`` when a
function is registered, once per function.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypedDict, TypeVar, Unpack, overload

from junior_core._base.errors import ToolDefinitionError

if TYPE_CHECKING:
    import attrs

__all__ = ["EXPOSURES", "Exposure", "Param", "ToolDefinitionError", "ToolSettings", "check_exposure", "tool"]

F = TypeVar("F", bound=Callable[..., Any])

MARK = "__junior_tool__"

# The exposure words: here, beneath the catalog, so that ``Tool`` can check its own exposure without importing
# ``junior_core._catalog.exposure`` (the host's rules and ``Reach``, which name the catalog's types).
Exposure = Literal["deferred", "direct", "hidden"]
# Also the order the [tools] table is read in, and a later rule wins a tie: of two equally specific patterns,
# hidden beats direct and direct beats deferred (hiding is the safe side of a tie; direct is a host's choice).
EXPOSURES: tuple[Exposure, ...] = ("deferred", "direct", "hidden")


def check_exposure(instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    """attrs validator: ``value`` is one of ``EXPOSURES``."""
    if value not in EXPOSURES:
        raise ValueError(f"exposure must be one of {', '.join(EXPOSURES)}, got {value!r}")


class Param:
    """Describes and bounds one parameter: ``Annotated[int, Param("How many.", minimum=1, maximum=50)]``.

    Bounds map to JSON Schema keywords (``min_length`` to ``minLength``, ...) and must suit the type.
    """

    # A plain class rather than attrs: plugins import it at start-up, and attrs builds classes slowly.
    __slots__ = (
        "description", "exclusive_maximum", "exclusive_minimum", "max_items", "max_length", "maximum", "min_items",
        "min_length", "minimum", "pattern",
    )

    def __init__(
        self,
        description: str | None = None,
        *,
        minimum: float | None = None,
        maximum: float | None = None,
        exclusive_minimum: float | None = None,
        exclusive_maximum: float | None = None,
        min_length: int | None = None,
        max_length: int | None = None,
        pattern: str | None = None,
        min_items: int | None = None,
        max_items: int | None = None,
    ) -> None:
        self.description = description
        self.minimum = minimum
        self.maximum = maximum
        self.exclusive_minimum = exclusive_minimum
        self.exclusive_maximum = exclusive_maximum
        self.min_length = min_length
        self.max_length = max_length
        self.pattern = pattern
        self.min_items = min_items
        self.max_items = max_items

    def _given(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__ if getattr(self, name) is not None}

    def __repr__(self) -> str:
        return f"Param({', '.join(f'{key}={value!r}' for key, value in self._given().items())})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Param) and self._given() == other._given()

    def __hash__(self) -> int:
        return hash(tuple(self._given().items()))


class ToolSettings(TypedDict, total=False):
    """What ``@tool(...)`` and ``Tool.from_function(fn, ...)`` take, each as the ``Tool`` field of that name."""

    name: str | None
    description: str | None
    keywords: Iterable[str] | None
    annotations: Mapping[str, Any] | None
    exposure: Exposure | None
    timeout_s: float | None


SETTINGS = frozenset(ToolSettings.__annotations__)


def check_settings(settings: Mapping[str, Any], where: str) -> None:
    """``TypeError`` for a keyword that is not a tool setting, as Python gives for an unknown argument."""
    unknown = sorted(set(settings) - SETTINGS)
    if unknown:
        raise TypeError(f"{where} got an unexpected keyword argument {unknown[0]!r}")


@overload
def tool(fn: F, /) -> F: ...


@overload
def tool(**settings: Unpack[ToolSettings]) -> Callable[[F], F]: ...


def tool(fn: F | None = None, /, **settings: Unpack[ToolSettings]) -> F | Callable[[F], F]:
    """Mark a function (or method) as a tool; pass it in ``register(source, tools=[...])``.

    The function stays an ordinary function (call it directly in tests). Its parameters' type hints become the
    ``input_schema``, its docstring the description; ``name`` defaults to the function's name, and
    ``keywords``, ``annotations``, ``exposure`` and ``timeout_s`` are those of ``Tool``.
    """
    check_settings(settings, "tool()")
    marked: dict[str, Any] = dict(settings)  # a copy: later changes to the caller's values do not reach the tool
    if isinstance(marked.get("keywords"), Iterable) and not isinstance(marked["keywords"], str):
        marked["keywords"] = tuple(marked["keywords"])
    if isinstance(marked.get("annotations"), Mapping):
        marked["annotations"] = dict(marked["annotations"])

    def mark(function: F) -> F:
        if not callable(function):
            raise ToolDefinitionError(f"@tool decorates a function, got {type(function).__name__}")
        setattr(function, MARK, marked)
        return function

    return mark(fn) if fn is not None else mark
