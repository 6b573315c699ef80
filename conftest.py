"""Every test session gets its own home: tests and the processes they start never read or write the user's.

``HOME`` and the XDG base directories point into one temporary directory for the session, so junior's search
index and MCP tool-list caches, its config dir (the index key), the memory database's default place, the
fastembed model cache and ONNX Runtime's ``~/.cache/Microsoft`` all land there; it is removed at the end.
``tests/test_the_test_suite.py`` checks it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

# Where each variable points inside the session's home; children inherit them.
SESSION_DIRS = {
    "HOME": "home",
    "XDG_CACHE_HOME": "home/.cache",
    "XDG_CONFIG_HOME": "home/.config",
    "XDG_DATA_HOME": "home/.local/share",
    "XDG_STATE_HOME": "home/.local/state",
    "JUNIOR_CACHE_DIR": "home/.cache/junior",
    "JUNIOR_CONFIG_DIR": "home/.config/junior",  # the index key lives there
}
SESSION_HOME_ENV = "JUNIOR_TEST_SESSION_HOME"
"""The session's temporary home, for the test that checks nothing is written outside it."""

_MADE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    # Semantic recall's default model would be downloaded on first use; tests that exercise it pass their own
    # embedder (a fake, or the model shipped for the integration test), so no test depends on a download.
    os.environ.setdefault("JUNIOR_MEMORY_EMBEDDING_MODEL", "off")
    root = tempfile.mkdtemp(prefix="junior-test-home-")
    _MADE.append(root)
    os.environ[SESSION_HOME_ENV] = root
    for name, relative in SESSION_DIRS.items():
        path = Path(root, relative)
        path.mkdir(parents=True, exist_ok=True)
        os.environ[name] = str(path)


def pytest_unconfigure(config: pytest.Config) -> None:
    for path in _MADE:
        shutil.rmtree(path, ignore_errors=True)


DATA_SKIP = "JUNIOR_DATA_DIR"
"""In the reason of every skip for want of the public benchmark data (``tests.helpers.needs_data``)."""


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Say in one line how many tests the missing benchmark data skipped, and how to get it."""
    skipped = terminalreporter.stats.get("skipped", [])
    wanting = [report for report in skipped if DATA_SKIP in str(getattr(report, "longrepr", ""))]
    if wanting:
        terminalreporter.write_line(
            f"{len(wanting)} skipped for want of the public benchmark data: README.md's Data section says how to "
            "fetch it into ../shared/data (or set JUNIOR_DATA_DIR)"
        )
