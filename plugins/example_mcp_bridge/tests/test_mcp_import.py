"""Loading the plugin stays cheap: the MCP SDK is imported only when a server is started."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_loading_the_entry_point_does_not_import_the_sdk() -> None:
    code = "import sys, junior_mcp_bridge; print(sorted(m for m in ('mcp', 'anyio', 'pydantic') if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == "[]"
