"""The pytest plugin ``junior`` (entry point ``pytest11``): fixtures for testing plugins and bots."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from junior_core.testing import ContextFactory, RuntimeFactory

__all__ = ["junior_context", "junior_runtime"]


@pytest.fixture
def junior_runtime() -> Iterator[RuntimeFactory]:
    """``junior_runtime(plugin, ..., entry_points=False)``: a runtime, closed when the test ends."""
    factory = RuntimeFactory()
    try:
        yield factory
    finally:
        factory.close()


@pytest.fixture
def junior_context() -> ContextFactory:
    """``junior_context(user=..., channel=..., ...)``: a Slack-shaped ``ToolContext`` with its own tool_call_id."""
    return ContextFactory()
