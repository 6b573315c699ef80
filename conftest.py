"""Every test session gets its own search-index cache, so tests never read or fill the user's."""

from __future__ import annotations

import os
import tempfile

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get("JUNIOR_CACHE_DIR"):
        os.environ["JUNIOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="junior-test-cache-")
