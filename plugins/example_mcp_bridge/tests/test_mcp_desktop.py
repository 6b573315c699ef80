"""The desktop-client setup of docs/mcp-bridge.md, run as written: its Claude Desktop block's command, with the
repository's docs/examples/junior.toml, under a desktop client's bare environment (``env -i PATH=/usr/bin:/bin``)."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import anyio
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "mcp-bridge.md"
EXAMPLE = ROOT / "docs" / "examples" / "junior.toml"
VENV = Path(sys.executable).parent.parent


def claude_desktop_block() -> dict[str, object]:
    text = DOC.read_text()
    after = text[text.index("Claude Desktop (`claude_desktop_config.json`):"):]
    block = re.search(r"```json\n(.*?)```", after, re.S)
    assert block is not None
    entry: dict[str, object] = json.loads(block.group(1))["mcpServers"]["junior"]
    return entry


def test_the_documented_claude_desktop_block_serves_the_example_servers(tmp_path: Path, no_orphans: None) -> None:
    from mcp import Client, StdioServerParameters, stdio_client

    assert shutil.which("mcp-server-time", path="/usr/bin:/bin") is None  # the point of the test
    entry = claude_desktop_block()
    # The two placeholders the docs ask the reader to replace, and nothing else.
    command = str(entry["command"]).replace("/path/to/venv", str(VENV))
    env = {key: value.replace("/path/to/junior.toml", str(EXAMPLE))
           for key, value in dict(entry["env"]).items()}  # type: ignore[call-overload]
    assert env == {"JUNIOR_CONFIG": str(EXAMPLE)}
    home = tmp_path / "home"
    home.mkdir()
    bare = ["-i", "PATH=/usr/bin:/bin", f"HOME={home}", *(f"{k}={v}" for k, v in env.items())]
    params = StdioServerParameters(command="env", args=[*bare, command, *entry["args"]])  # type: ignore[misc]

    async def session() -> dict[str, object]:
        async with Client(stdio_client(params), read_timeout_seconds=90) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert {"searchTools", "executeTool"} <= tools
            found = await client.call_tool("searchTools", {"source": "mcp:time", "query": "current time"})
            assert "mcp__time__get_current_time" in json.dumps(found.structured_content)
            result = await client.call_tool("executeTool", {"tool_name": "mcp__time__get_current_time",
                                                            "arguments": {"timezone": "UTC"}})
            answer: dict[str, object] = result.structured_content or {}
            return answer

    answer = anyio.run(session)
    assert answer.get("ok") is True, answer
    assert '"timezone": "UTC"' in json.dumps(answer["result"]), answer
