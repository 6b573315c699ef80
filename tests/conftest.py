"""Shared fixtures: in-process plugins built per test; runtimes come from the testing kit (``junior_core.testing``).

Helpers that tests import live in ``tests/helpers.py``; nothing imports this file.
"""

from __future__ import annotations

import pytest
from hypothesis import settings

from junior_core import Runtime
from junior_core.testing import RuntimeFactory
from tests.helpers import HYPOTHESIS_PROFILE, notes_plugin, weather_plugin

# Property tests: the quick profile (the default) runs a tenth of each test's examples; CI (.ci/run) sets
# HYPOTHESIS_PROFILE=full for every one of them.
settings.register_profile("quick", max_examples=20, deadline=None)
settings.register_profile("full", max_examples=100, deadline=None)
settings.load_profile(HYPOTHESIS_PROFILE)


@pytest.fixture
def make_runtime(junior_runtime: RuntimeFactory) -> RuntimeFactory:
    """Build runtimes from explicit plugins; every one is closed after the test (the kit's ``junior_runtime``)."""
    return junior_runtime


@pytest.fixture
def rt(junior_runtime: RuntimeFactory) -> Runtime:
    return junior_runtime(notes_plugin(), weather_plugin())
