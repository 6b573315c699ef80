"""The four distributions as wheels: built, installed into a fresh venv without a clone, their entry points seen.

Slow (a few seconds): the venv borrows the test venv's third-party packages through a ``.pth`` line instead of
downloading them, so only junior's own wheels are installed, from the built files alone (``--no-index``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = {"junior-core": ROOT, "junior-memory": ROOT / "plugins/memory",
            "junior-mcp-bridge": ROOT / "plugins/example_mcp_bridge", "junior-slack": ROOT / "plugins/slack"}
pytestmark = pytest.mark.slow

# The session's own index cache and key (conftest.py), never the user's.
_KEEP = ("JUNIOR_CACHE_DIR", "JUNIOR_CONFIG_DIR")


def _copy(src: Path, dst: Path) -> Path:
    """The project's files without tests or build leftovers, so building never writes into the clone."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(
        ".venv", "tests", "plugins", "docs", "evals", "benchmarks", "scripts", "dist", "build", "*.egg-info",
        "__pycache__", ".*"))
    return dst


def _third_party(into: Path) -> Path:
    """Links to the test venv's installed packages, minus junior's own (so the wheels are what gets imported)."""
    into.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        name = entry.name.lower()
        if name.startswith(("junior", "__editable__", "_junior")) or name.endswith(".pth"):
            continue
        (into / entry.name).symlink_to(entry)
    return into


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("dist")
    sources = [_copy(path, tmp / "src" / name) for name, path in PROJECTS.items()]
    wheels = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(wheels), *map(str, sources)], check=True, capture_output=True, text=True)
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "borrowed.pth").write_text(str(_third_party(tmp / "borrowed")) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-index",
         "--find-links", str(wheels), "junior-memory", "junior-mcp-bridge", "junior-slack"],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    return env_dir


def test_make_dist_builds_the_wheels_it_documents() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "DISTS := . plugins/memory plugins/example_mcp_bridge plugins/slack\n" in makefile
    assert "--wheel-dir dist $(DISTS)" in makefile
    # Every distribution in the clone is built, and the README says which wheels that makes.
    assert {str(p.parent.relative_to(ROOT)) for p in ROOT.glob("plugins/*/pyproject.toml")} == \
        {str(p.relative_to(ROOT)) for p in PROJECTS.values()} - {"."}
    readme = (ROOT / "README.md").read_text()
    (line,) = [line for line in readme.splitlines() if line.startswith("make dist ")]
    assert [name.replace("-", "_") in line for name in PROJECTS] == [True] * len(PROJECTS), line


def test_wheels_install_without_a_clone_and_their_plugins_load(installed: Path, tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("JUNIOR_") or key in _KEEP}
    env.update(JUNIOR_MEMORY_URL=f"sqlite:///{tmp_path / 'memory.sqlite3'}", JUNIOR_CONFIG=str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("")
    done = subprocess.run([str(installed / "bin" / "junior"), "plugins", "--json"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    plugins = {p["name"]: p for p in json.loads(done.stdout)}
    assert set(plugins) == {"memory", "mcp", "slack"}, plugins  # not the clone's example plugin: the wheels alone
    assert (plugins["memory"]["distribution"], plugins["memory"]["status"]) == ("junior-memory", "loaded")
    assert (plugins["mcp"]["distribution"], plugins["mcp"]["status"]) == ("junior-mcp-bridge", "loaded")
    assert (plugins["slack"]["distribution"], plugins["slack"]["status"]) == ("junior-slack", "loaded")
    # The slack entry point's command is on the installed junior, and says what it lacks before starting.
    served = subprocess.run([str(installed / "bin" / "junior"), "slack", "serve"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert served.returncode == 1 and served.stderr.startswith("Error: SLACK_BOT_TOKEN is not set"), served.stderr
    where = subprocess.run([str(installed / "bin" / "python"), "-c", "import junior_core; print(junior_core.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(installed)), where


def test_every_distribution_ships_the_licence_and_its_metadata(installed: Path) -> None:
    licence = (ROOT / "LICENSE").read_text()
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence and "END OF TERMS" in licence
    code = ("import json, sys; from importlib import metadata as m; d = m.distribution(sys.argv[1]); "
            "print(json.dumps({k: d.metadata.get_all(k) for k in ('License-Expression', 'License-File', "
            "'Project-URL', 'Author', 'Classifier')} | {'license': d.read_text('licenses/LICENSE'), "
            "'readme': d.metadata.get_payload()}))")
    for name, project in PROJECTS.items():
        assert (project / "LICENSE").read_text() == licence, f"{name}: LICENSE differs from the repository's"
        meta = json.loads(subprocess.run([str(installed / "bin" / "python"), "-c", code, name], cwd=installed,
                                         capture_output=True, text=True, check=True).stdout)
        assert meta["License-Expression"] == ["Apache-2.0"] and meta["License-File"] == ["LICENSE"], name
        assert meta["license"] == licence, name
        assert {url.split(",")[0] for url in meta["Project-URL"]} >= {"Homepage", "Source", "Issues"}, name
        assert meta["Author"] and "Programming Language :: Python :: 3.11" in meta["Classifier"], name
        assert "](../" not in meta["readme"], f"{name}: its README links outside the package"
        requires = tomllib.loads((project / "pyproject.toml").read_text())["project"]["requires-python"]
        assert requires == ">=3.11", name
