"""Schemas from real MCP servers that use draft-04 bounds still become callable junior tools."""

from __future__ import annotations

from junior_mcp_bridge.convert import modern_schema

from junior_core import Runtime, Source, Tool, hookimpl

# The shape of a real server's tool (pdf-reader-mcp read_pdf): draft-04 boolean exclusiveMinimum.
DRAFT4 = {
    "type": "object",
    "properties": {
        "pages": {"type": "array", "items": {"type": "integer", "minimum": 0, "exclusiveMinimum": True}},
        "scale": {"type": "number", "maximum": 4, "exclusiveMaximum": False},
    },
}


def test_draft4_bounds_become_2020_12_bounds() -> None:
    assert modern_schema(DRAFT4) == {
        "type": "object",
        "properties": {
            "pages": {"type": "array", "items": {"type": "integer", "exclusiveMinimum": 0}},
            "scale": {"type": "number", "maximum": 4},
        },
    }


def test_converted_schema_validates_as_the_server_meant() -> None:
    tool = Tool("read_pdf", "Read pages of a PDF.", modern_schema(DRAFT4), lambda arguments, context: "read")

    class P:
        @hookimpl
        def register_sources(self, register: object) -> None:
            register(Source("mcp:pdf", "PDF reader."), tools=[tool])  # type: ignore[operator]

    with Runtime(plugins=[P()]) as rt:
        assert rt.execute_tool("mcp__pdf__read_pdf", {"pages": [1, 2]})["ok"] is True
        refused = rt.execute_tool("mcp__pdf__read_pdf", {"pages": [0]})
        assert refused["error"]["code"] == "invalid_arguments" and refused["error"]["details"][0]["path"] == "pages/0"
