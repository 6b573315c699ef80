"""Every test session gets its own search-index cache and config dir, so tests never read or fill the user's."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_MADE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get("JUNIOR_CACHE_DIR"):
        os.environ["JUNIOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="junior-test-cache-")
        _MADE.append(os.environ["JUNIOR_CACHE_DIR"])
    if not os.environ.get("JUNIOR_CONFIG_DIR"):  # the index key lives there
        os.environ["JUNIOR_CONFIG_DIR"] = tempfile.mkdtemp(prefix="junior-test-config-")
        _MADE.append(os.environ["JUNIOR_CONFIG_DIR"])


def pytest_unconfigure(config: pytest.Config) -> None:
    for path in _MADE:
        shutil.rmtree(path, ignore_errors=True)
