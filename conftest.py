"""Every test session gets its own search-index cache and config dir, so tests never read or fill the user's."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_MADE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    # Semantic recall's default model would be downloaded on first use; tests that exercise it pass their own
    # embedder (a fake, or the model shipped for the integration test), so no test depends on a download.
    os.environ.setdefault("JUNIOR_MEMORY_EMBEDDING_MODEL", "off")
    if not os.environ.get("JUNIOR_CACHE_DIR"):
        os.environ["JUNIOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="junior-test-cache-")
        _MADE.append(os.environ["JUNIOR_CACHE_DIR"])
    if not os.environ.get("JUNIOR_CONFIG_DIR"):  # the index key lives there
        os.environ["JUNIOR_CONFIG_DIR"] = tempfile.mkdtemp(prefix="junior-test-config-")
        _MADE.append(os.environ["JUNIOR_CONFIG_DIR"])


def pytest_unconfigure(config: pytest.Config) -> None:
    for path in _MADE:
        shutil.rmtree(path, ignore_errors=True)
