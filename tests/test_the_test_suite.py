"""The test suite's own rules: every session has its own home, so tests never write outside their temporary
directories; no test imports a conftest; ``make test-fast`` leaves out only what ``make test`` runs besides."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import platformdirs
import pytest

from junior_core._base.config import user_config_dir

ROOT = Path(__file__).parent.parent
PROBE = Path(__file__).parent / "isolation_probe.py"
SESSION_VARIABLES = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
                     "JUNIOR_CACHE_DIR", "JUNIOR_CONFIG_DIR")


def _inside(path: str | Path, root: str | Path) -> bool:
    return Path(path).resolve().is_relative_to(Path(root).resolve())


def test_the_session_home_is_a_temporary_directory_every_user_directory_points_into() -> None:
    home = os.environ["JUNIOR_TEST_SESSION_HOME"]
    assert _inside(home, tempfile.gettempdir()) and Path(home).name.startswith("junior-test-home-")
    for name in SESSION_VARIABLES:
        assert _inside(os.environ[name], home), f"{name}={os.environ[name]} is outside the session home {home}"
    for path in (Path.home(), platformdirs.user_cache_dir("junior"), platformdirs.user_data_dir("junior"),
                 platformdirs.user_config_dir("junior"), user_config_dir()):
        assert _inside(path, home), f"{path} is outside the session home {home}"


def _tree(root: Path) -> dict[str, float]:
    """Every path under ``root``, with its modification time."""
    return {str(path.relative_to(root)): path.lstat().st_mtime for path in root.rglob("*")}


@pytest.mark.slow
def test_a_test_run_leaves_the_users_home_and_directories_untouched(tmp_path: Path) -> None:
    # A user whose home holds the usual directories, and a pytest run in it of a test writing where junior,
    # platformdirs and libraries write by default.
    home = tmp_path / "user"
    for sub in (".cache/junior", ".config/junior", ".local/share/junior"):
        (home / sub).mkdir(parents=True)
    (home / ".config" / "junior" / "junior.toml").write_text("# the user's own\n")
    before = _tree(home)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("XDG_", "JUNIOR_", "PYTEST_")) and key != "HYPOTHESIS_PROFILE"}
    env["HOME"] = str(home)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(PROBE)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout
    assert _tree(home) == before, "the test run wrote in the user's home"


def test_no_test_imports_a_conftest() -> None:
    # pytest imports every conftest.py as `conftest`, so an import of one finds whichever came last: shared
    # helpers live in helpers modules (tests/helpers.py, plugins/*/tests/<plugin>_helpers.py).
    importing = re.compile(r"^\s*(from|import)\s+([\w.]+\.)?conftest\b", re.MULTILINE)
    files = [*(ROOT / "tests").rglob("*.py"), *(ROOT / "plugins").glob("*/tests/**/*.py")]
    assert len(files) > 50
    offenders = [str(path.relative_to(ROOT)) for path in files if importing.search(path.read_text())]
    assert offenders == []


def test_make_test_fast_skips_only_slow_tests_and_ci_runs_make_test() -> None:
    makefile = (ROOT / "Makefile").read_text()
    fast = re.search(r"^test-fast:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert fast is not None and '-m "not slow"' in fast.group(1)
    full = re.search(r"^test:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert full is not None and "-m" not in full.group(1).split("pytest", 1)[1].split("\n", 1)[0]
    assert re.search(r"^make test$", (ROOT / ".ci" / "run").read_text(), re.MULTILINE)
