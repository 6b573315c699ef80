"""Run by ``tests/test_the_test_suite.py`` in a pytest of its own: everything a test session commonly writes to a
user's directories (not collected on its own: its name does not start with ``test_``)."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from junior_core import Runtime
from tests.helpers import notes_plugin


def test_write_where_junior_and_its_libraries_write_by_default() -> None:
    rt = Runtime(plugins=[notes_plugin()], index_cache=True)  # the search index and its key, in the user's dirs
    try:
        assert rt.search_tools("write a note")["tools"]
    finally:
        rt.close()
    for directory in (platformdirs.user_cache_dir("junior"), platformdirs.user_data_dir("junior"),
                      platformdirs.user_config_dir("junior"), platformdirs.user_state_dir("junior")):
        Path(directory).mkdir(parents=True, exist_ok=True)
        (Path(directory) / "probe").write_text("written by a test")
    (Path.home() / ".probe").write_text("written by a test")  # what a library writing to ~ would do
