"""The documented example source, really installed, shows up in `junior sources` and works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import junior_example_units
import pytest

from junior_core.testing import RuntimeFactory, assert_error, assert_found, assert_ok

pytestmark = pytest.mark.slow

JUNIOR = Path(sys.executable).parent / "junior"

# The session's own index cache and key (conftest.py), never the user's.
_KEEP = ("JUNIOR_CACHE_DIR", "JUNIOR_CONFIG_DIR")


def test_installed_example_is_listed_by_the_junior_command() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUNIOR_") or k in _KEEP} | {"JUNIOR_LOAD_PLUGINS": "units"}
    proc = subprocess.run([str(JUNIOR), "sources", "--json"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [{"id": "units", "description": "Unit conversions: temperature and length."}]


def test_example_as_documented(junior_runtime: RuntimeFactory) -> None:
    rt = junior_runtime(junior_example_units)
    assert_found(rt.search_tools("fahrenheit"), "units__convert_temperature", first=True)
    out = rt.execute_tool("units__convert_length", {"value": 1, "from_unit": "mile", "to_unit": "metre"})
    assert assert_ok(out) == {"value": 1609.344, "unit": "metre"}
    cold = rt.execute_tool("units__convert_temperature", {"value": -500, "from_unit": "celsius", "to_unit": "kelvin"})
    assert "absolute zero" in assert_error(cold, "rejected")["message"]
