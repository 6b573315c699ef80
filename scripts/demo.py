"""End-to-end demo: the installed plugins, searches, and tool calls through executeTool.

Everything it writes (the memory database, the junior.toml that bridges `mcp-server-time` as source `mcp:time`,
the search-index cache) lives in a temporary directory removed at the end, so it never touches your own memory
and a second run shows the same thing. One line per step; `--verbose` prints every answer's JSON in full.
Exits non-zero if any step does not do what it shows.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

LINE = 120  # a step's line is cut past this many characters, and says so


class Steps:
    """Prints one line per step, ✓ or ✗, and remembers the failures."""

    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose
        self.failures: list[str] = []

    def __call__(self, asked: str, answer: Any, got: str, ok: bool) -> None:
        line = f"{'✓' if ok else '✗'} {asked} → {got}"
        if len(line) > LINE:
            line = line[: LINE - 7] + "… (cut)"
        print(line)
        if self.verbose:
            print(json.dumps(answer, indent=2, ensure_ascii=False))
        if not ok:
            self.failures.append(asked)


def names(answer: dict[str, Any], count: int = 3) -> str:
    tools = [t["tool_name"] for t in answer.get("tools", [])[:count]]
    return ", ".join(tools) or "no tools"


def outcome(answer: dict[str, Any]) -> str:
    if answer.get("ok"):
        return "ok: " + json.dumps(answer["result"], ensure_ascii=False)
    return f"error {answer['error']['code']}: {answer['error']['message']}"


def run(step: Steps, workdir: Path) -> None:
    from junior_core import Runtime
    from junior_core.cli import local_context

    config = workdir / "junior.toml"
    config.write_text(
        "[mcp.servers.time]\n"
        f"command = {json.dumps(sys.executable)}\n"
        'args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]\n'
        'description = "Current time and timezone conversions."\n'
        "timeout_s = 20\n"
    )
    os.environ["JUNIOR_CONFIG"] = str(config)
    os.environ["JUNIOR_MEMORY_URL"] = f"sqlite:///{workdir / 'memory.sqlite3'}"
    os.environ["JUNIOR_CACHE_DIR"] = str(workdir / "cache")
    os.environ["JUNIOR_CONFIG_DIR"] = str(workdir / "config")  # the index key, with the cache it signs
    # Keyword recall: semantic recall would download its model into the user cache on first use.
    os.environ["JUNIOR_MEMORY_EMBEDDING_MODEL"] = "off"
    context = local_context(user="demo-user", channel="demo")

    with Runtime.from_entry_points() as rt:
        plugins = [info.to_dict() for info in rt.plugins]
        loaded = [p["name"] for p in plugins if p["status"] == "loaded"]
        step("load the installed plugins", plugins, "loaded " + (", ".join(loaded) or "none"),
             all(p["status"] == "loaded" for p in plugins))
        source_ids = [s["id"] for s in rt.sources]
        step("list the sources searchTools describes", rt.sources, ", ".join(source_ids),
             bool(source_ids))

        if "units" in source_ids:
            search = rt.search_tools("convert 100 celsius to fahrenheit")
            step('searchTools "convert 100 celsius to fahrenheit"', search, names(search, 2),
                 names(search, 1) == "units__convert_temperature")
            result = rt.call_model_tool(
                "executeTool",
                {"tool_name": "units__convert_temperature",
                 "arguments": {"value": 100, "from_unit": "celsius", "to_unit": "fahrenheit"}},
                context,
            )
            step("executeTool units__convert_temperature 100 °C", result, outcome(result),
                 result.get("result") == {"value": 212.0, "unit": "fahrenheit"})

        if "memory" in source_ids:
            search = rt.search_tools("remember that I prefer terse PR summaries")
            step('searchTools "remember that I prefer terse PR summaries"', search, names(search),
                 "memory__remember" in names(search))
            inside = rt.search_tools("save a preference", source="memory")
            step('searchTools "save a preference" inside memory', inside, names(inside),
                 names(inside, 1) == "memory__remember")
            remembered = rt.execute_tool(
                "memory__remember", {"content": "Prefers terse PR summaries", "kind": "preference"}, context
            )
            step("executeTool memory__remember", remembered,
                 "stored" if remembered.get("ok") and remembered["result"].get("created") else outcome(remembered),
                 remembered.get("ok") is True and remembered["result"].get("created") is True)
            listed = rt.execute_tool("memory__list", {}, context)
            contents = [m["content"] for m in listed.get("result", {}).get("memories", [])]
            step("executeTool memory__list", listed, "; ".join(contents) or outcome(listed),
                 contents == ["Prefers terse PR summaries"])
            recall = rt.prompt_context(context, "write the summary for my PR")
            step('prompt_context before "write the summary for my PR"', recall,
                 "recalled the preference" if any("terse PR summaries" in b for b in recall) else "nothing recalled",
                 any("terse PR summaries" in block for block in recall))

        if "mcp:time" in source_ids:
            search = rt.search_tools("what time is it", source="mcp:time")
            step('searchTools "what time is it" inside mcp:time', search, names(search),
                 "mcp__time__get_current_time" in names(search))
            now = rt.execute_tool("mcp__time__get_current_time", {"timezone": "UTC"}, context)
            result = now.get("result") or {}
            stamp = (result.get("structured_content") or {}).get("datetime") if isinstance(result, dict) else None
            got = f"ok: {stamp or json.dumps(result)}" if now.get("ok") else outcome(now)
            step("executeTool mcp__time__get_current_time (an MCP server)", now, got, now.get("ok") is True)
        else:
            step("bridge the MCP time server", None, "junior-mcp-bridge is not installed",
                 "mcp" not in {i.name for i in rt.plugins})

        wrong = rt.call_model_tool("executeTool", {"tool_name": "memory__list", "limit": 5}, context)
        step("a model mistake: arguments at the top level", wrong,
             f"{wrong['error']['code']}: nest them under 'arguments'",
             wrong.get("error", {}).get("code") == "invalid_arguments")

        catalog = [
            {"name": e.tool_name, "description": e.tool.description, "input_schema": e.tool.input_schema}
            for e in rt.catalog_tools() if e.tool.exposure != "hidden"
        ]
        given = rt.model_tools()
        full, sent = len(json.dumps(catalog)), len(json.dumps(given))
        print(
            f"\nThe model was given {len(given)} tools instead of all {len(catalog)} in the catalog: "
            f"{sent:,} characters of tool definitions instead of {full:,} ({1 - sent / full:.0%} less context), "
            + ("and it found and ran the right tool at every step." if not step.failures else "but some steps failed.")
            if full > sent else f"\nThe model was given {len(given)} tools for {len(catalog)} in the catalog."
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--verbose", "-v", action="store_true", help="print every answer's JSON in full")
    args = parser.parse_args(argv)
    step = Steps(args.verbose)
    with tempfile.TemporaryDirectory(prefix="junior-demo-") as workdir:
        run(step, Path(workdir))
    if step.failures:
        print(f"{len(step.failures)} step(s) did not do what they show: {'; '.join(step.failures)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
