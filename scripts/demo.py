"""End-to-end demo: the installed plugins, a search, and tool calls through executeTool.

Runs on the embedded defaults (memory in SQLite under the user data dir) with the `mcp-server-time` MCP
server bridged in as source `mcp:time`. Exits non-zero if any step does not do what it shows.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from junior_core import Runtime
from junior_core.cli import local_context

failures: list[str] = []


def show(title: str, data: Any) -> None:
    print(f"\n=== {title}")
    print(json.dumps(data, indent=2, ensure_ascii=False)[:2500])


def check(condition: bool, what: str) -> None:
    print(f"[{'ok' if condition else 'FAILED'}] {what}")
    if not condition:
        failures.append(what)


def main() -> int:
    config = Path(tempfile.mkdtemp(prefix="junior-demo-")) / "junior.toml"
    config.write_text(
        "[mcp.servers.time]\n"
        f"command = {json.dumps(sys.executable)}\n"
        'args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]\n'
        'description = "Current time and timezone conversions."\n'
        "timeout_s = 20\n"
    )
    os.environ.setdefault("JUNIOR_CONFIG", str(config))
    context = local_context(user="demo-user", channel="demo")

    with Runtime.from_entry_points() as rt:
        show("plugins", [info.to_dict() for info in rt.plugins])
        check(all(info.status == "loaded" for info in rt.plugins), "every installed plugin loaded")
        show("sources (what the searchTools description lists)", rt.sources)
        source_ids = {s["id"] for s in rt.sources}
        show("model tools", [t["name"] for t in rt.model_tools()])

        if "units" in source_ids:
            search = rt.search_tools("convert 100 celsius to fahrenheit")
            show("searchTools: convert 100 celsius to fahrenheit", search)
            check(search["tools"][0]["tool_name"] == "units__convert_temperature", "unit conversion found first")
            result = rt.call_model_tool(
                "executeTool",
                {"tool_name": "units__convert_temperature",
                 "arguments": {"value": 100, "from_unit": "celsius", "to_unit": "fahrenheit"}},
                context,
            )
            show("executeTool units__convert_temperature", result)
            check(result.get("result") == {"value": 212.0, "unit": "fahrenheit"}, "100 °C is 212 °F")

        if "memory" in source_ids:
            search = rt.search_tools("remember that I prefer terse PR summaries")
            show("searchTools: remember that I prefer terse PR summaries", search)
            top3 = [t["tool_name"] for t in search["tools"][:3]]
            check("memory__remember" in top3, "memory__remember in the top 3 with no source given")
            inside = rt.search_tools("save a preference", source="memory")
            check(inside["tools"][0]["tool_name"] == "memory__remember", "memory__remember first inside `memory`")
            remembered = rt.execute_tool(
                "memory__remember", {"content": "Prefers terse PR summaries", "kind": "preference"}, context
            )
            show("executeTool memory__remember", remembered)
            check(remembered.get("ok") is True, "the preference was stored (or found already stored)")
            listed = rt.execute_tool("memory__list", {}, context)
            show("executeTool memory__list", listed)
            contents = [m["content"] for m in listed.get("result", {}).get("memories", [])]
            check("Prefers terse PR summaries" in contents, "the stored preference is listed")
            recall = rt.prompt_context(context, "write the summary for my PR")
            show("prompt_context before the next turn", recall)
            check(any("terse PR summaries" in block for block in recall), "the preference is recalled")

        if "mcp:time" in source_ids:
            search = rt.search_tools("what time is it", source="mcp:time")
            show("searchTools inside mcp:time", search)
            now = rt.execute_tool("mcp__time__get_current_time", {"timezone": "UTC"}, context)
            show("executeTool mcp__time__get_current_time", now)
            check(now.get("ok") is True, "the MCP time server answered through the bridge")
        else:
            check("mcp" not in {i.name for i in rt.plugins}, "mcp:time is listed when the bridge is installed")

        wrong = rt.call_model_tool("executeTool", {"tool_name": "memory__list", "limit": 5}, context)
        show("a model mistake: arguments at the top level", wrong)
        check(wrong["error"]["code"] == "invalid_arguments", "mistakes are structured errors that say what to do")

    print(f"\n{len(failures)} step(s) failed" if failures else "\ndemo finished: every step did what it showed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
