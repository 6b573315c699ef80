"""An example junior source: unit conversions for temperature and length."""

from __future__ import annotations

from typing import Any

from junior_core import Source, Tool, ToolContext, ToolError, hookimpl

_TEMPERATURE = {
    "celsius": (lambda c: c, lambda c: c),
    "fahrenheit": (lambda f: (f - 32) * 5 / 9, lambda c: c * 9 / 5 + 32),
    "kelvin": (lambda k: k - 273.15, lambda c: c + 273.15),
}
_METRES = {"millimetre": 0.001, "centimetre": 0.01, "metre": 1.0, "kilometre": 1000.0, "inch": 0.0254,
           "foot": 0.3048, "yard": 0.9144, "mile": 1609.344}


def convert_temperature(arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    to_celsius, _ = _TEMPERATURE[arguments["from_unit"]]
    _, from_celsius = _TEMPERATURE[arguments["to_unit"]]
    celsius = to_celsius(arguments["value"])
    if celsius < -273.15:
        raise ToolError("rejected", "That temperature is below absolute zero; check the value and unit.")
    return {"value": round(from_celsius(celsius), 6), "unit": arguments["to_unit"]}


def convert_length(arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]:
    metres = arguments["value"] * _METRES[arguments["from_unit"]]
    return {"value": round(metres / _METRES[arguments["to_unit"]], 6), "unit": arguments["to_unit"]}


def _schema(units: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "value": {"type": "number", "description": "The quantity to convert."},
            "from_unit": {"enum": units, "description": "Unit of the given value."},
            "to_unit": {"enum": units, "description": "Unit to convert to."},
        },
        "required": ["value", "from_unit", "to_unit"],
        "additionalProperties": False,
    }


@hookimpl
def register_sources(register: Any) -> None:
    register(
        Source("units", "Unit conversions: temperature and length."),
        tools=[
            Tool(
                "convert_temperature",
                "Convert a temperature between Celsius, Fahrenheit and Kelvin.",
                _schema(sorted(_TEMPERATURE)),
                convert_temperature,
                annotations={"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
            ),
            Tool(
                "convert_length",
                "Convert a length or distance between metric and imperial units (metres, feet, miles, ...).",
                _schema(sorted(_METRES)),
                convert_length,
                annotations={"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
            ),
        ],
    )
