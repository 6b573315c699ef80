"""An example junior source: unit conversions for temperature and length."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from junior_core import Source, ToolError, hookimpl, tool

_TEMPERATURE = {
    "celsius": (lambda c: c, lambda c: c),
    "fahrenheit": (lambda f: (f - 32) * 5 / 9, lambda c: c * 9 / 5 + 32),
    "kelvin": (lambda k: k - 273.15, lambda c: c + 273.15),
}
_METRES = {"centimetre": 0.01, "foot": 0.3048, "inch": 0.0254, "kilometre": 1000.0, "metre": 1.0, "mile": 1609.344,
           "millimetre": 0.001, "yard": 0.9144}

Temperature = Literal["celsius", "fahrenheit", "kelvin"]
Length = Literal["centimetre", "foot", "inch", "kilometre", "metre", "mile", "millimetre", "yard"]
READ_ONLY = {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}


@tool(annotations=READ_ONLY)
def convert_temperature(
    value: Annotated[float, "The quantity to convert."],
    from_unit: Annotated[Temperature, "Unit of the given value."],
    to_unit: Annotated[Temperature, "Unit to convert to."],
) -> dict[str, Any]:
    """Convert a temperature between Celsius, Fahrenheit and Kelvin."""
    celsius = _TEMPERATURE[from_unit][0](value)
    if celsius < -273.15:
        raise ToolError("rejected", "That temperature is below absolute zero; check the value and unit.")
    return {"value": round(_TEMPERATURE[to_unit][1](celsius), 6), "unit": to_unit}


@tool(annotations=READ_ONLY)
def convert_length(value: float, from_unit: Length, to_unit: Length) -> dict[str, Any]:
    """Convert a length or distance between metric and imperial units (metres, feet, miles, ...).

    Args:
        value: The quantity to convert.
        from_unit: Unit of the given value.
        to_unit: Unit to convert to.
    """
    metres = value * _METRES[from_unit]
    return {"value": round(metres / _METRES[to_unit], 6), "unit": to_unit}


@hookimpl
def register_sources(register: Any) -> None:
    register(Source("units", "Unit conversions: temperature and length."), tools=[convert_temperature, convert_length])
