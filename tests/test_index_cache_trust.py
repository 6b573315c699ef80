"""What the index cache trusts: only the user's own, signed indexes reach Whoosh; deleting never leaves the cache."""

from __future__ import annotations

import json
import logging
import os
import pickle
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import junior_core._discovery.store
import junior_core._discovery.whoosh_parts
from junior_core import Runtime
from junior_core._discovery.store import KEEP, IndexCache, sign
from junior_core.testing import assert_error
from tests.helpers import notes_plugin, weather_plugin

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ["weather forecast", "delete a note", "write a note with tags", "find notes by words"]
EXPECTED = ["weather__get_forecast", "notes__delete_note", "notes__add_note", "notes__find_notes"]
NOBODY = 65534
as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("JUNIOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("JUNIOR_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "cache" / "search-index"


def stored(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("index-*")) if cache_dir.is_dir() else []


def answers(rt: Runtime) -> list[str]:
    return [rt.search_tools(q)["tools"][0]["tool_name"] for q in QUERIES]


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "junior.search" and r.levelno >= logging.WARNING]


def forbid_building(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the index was rebuilt")

    monkeypatch.setattr(junior_core._discovery.whoosh_parts, "write_documents", fail)


# A later process: a fresh interpreter opening the cache the way every start does.
LATER = textwrap.dedent(
    """
    import json, logging, sys
    sys.path.insert(0, {root!r})
    logging.basicConfig(level=logging.WARNING, format="%(name)s %(message)s")
    from junior_core import Runtime
    from tests.helpers import notes_plugin, weather_plugin

    with Runtime(plugins=[notes_plugin(), weather_plugin()]) as rt:
        print(json.dumps([rt.search_tools(q)["tools"][0]["tool_name"] for q in {queries!r}]))
        print(json.dumps(rt.index_info()["path"]))
    """
)


def later_process(tmp_path: Path) -> tuple[list[str], str | None, str]:
    """Answers, the stored index's path (None: in memory) and the log of a new process on the same cache."""
    script = tmp_path / "later.py"
    script.write_text(LATER.format(root=str(ROOT), queries=QUERIES))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env=os.environ.copy())
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    return json.loads(lines[0]), json.loads(lines[1]), done.stderr


class Planted:
    """Unpickling it writes the marker file: what another user's index would run as the victim."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (exec, (f"open({str(self.marker)!r}, 'w').write('ran')",))


def plant(index_dir: Path, marker: Path) -> None:
    """Rewrite the index's table of contents so that opening it unpickles ``Planted`` (junior's metadata kept)."""
    from whoosh.fields import Schema
    from whoosh.filedb.filestore import FileStorage
    from whoosh.index import TOC

    storage = FileStorage(str(index_dir))
    toc = TOC.read(storage, "MAIN")
    assert toc.generation == 1
    toc.schema._fields["planted"] = Planted(marker)
    assert b"exec" in pickle.dumps(toc.schema)
    clean = Schema.clean
    Schema.clean = lambda self: None  # Whoosh would call the planted object's clean() while writing
    try:
        (index_dir / "_MAIN_1.toc").unlink()
        toc.write(storage, "MAIN")
    finally:
        Schema.clean = clean  # type: ignore[method-assign]


def built(cache_dir: Path, make_runtime: Callable[..., Runtime]) -> Path:
    assert answers(make_runtime(notes_plugin(), weather_plugin())) == EXPECTED
    [index_dir] = stored(cache_dir)
    return index_dir


# -- 1. nobody else's code runs ------------------------------------------------------------------

@pytest.mark.slow
def test_a_planted_index_never_runs_and_is_replaced(cache_dir: Path, tmp_path: Path,
                                                     make_runtime: Callable[..., Runtime]) -> None:
    index_dir = built(cache_dir, make_runtime)
    marker = tmp_path / "planted-code-ran"
    plant(index_dir, marker)
    found, path, log = later_process(tmp_path)
    assert not marker.exists(), "the planted pickle ran"
    assert found == EXPECTED
    assert "signature does not match" in log and log.count("junior.search") == 1
    assert path == str(index_dir), "a good index took the planted one's place"
    found, _, log = later_process(tmp_path)
    assert found == EXPECTED and log == "" and not marker.exists()


def test_a_planted_index_with_its_own_signature_file_is_not_opened(
    cache_dir: Path, tmp_path: Path, make_runtime: Callable[..., Runtime], caplog: pytest.LogCaptureFixture
) -> None:
    index_dir = built(cache_dir, make_runtime)
    marker = tmp_path / "planted-code-ran"
    plant(index_dir, marker)
    meta = json.loads((index_dir / "junior-index.json").read_bytes())
    meta["files"] = sorted(p.name for p in index_dir.iterdir() if not p.name.startswith("junior-index"))
    (index_dir / "junior-index.json").write_text(json.dumps(meta))
    files = {p.name: p.read_bytes() for p in index_dir.iterdir() if p.name != "junior-index.mac"}
    (index_dir / "junior-index.mac").write_text(sign(b"a key the attacker made up", files))
    with caplog.at_level(logging.WARNING, logger="junior.search"):
        assert answers(make_runtime(notes_plugin(), weather_plugin())) == EXPECTED
    assert not marker.exists()
    assert len(warnings(caplog)) == 1 and "signature does not match" in warnings(caplog)[0]


def test_an_unsigned_index_from_an_older_junior_is_rebuilt_not_opened(
    cache_dir: Path, make_runtime: Callable[..., Runtime], caplog: pytest.LogCaptureFixture
) -> None:
    index_dir = built(cache_dir, make_runtime)
    (index_dir / "junior-index.mac").unlink()
    with caplog.at_level(logging.WARNING, logger="junior.search"):
        rt = make_runtime(notes_plugin(), weather_plugin())
        assert answers(rt) == EXPECTED
    assert len(warnings(caplog)) == 1 and "not signed" in warnings(caplog)[0]
    assert (index_dir / "junior-index.mac").is_file()


def test_the_cache_and_the_key_are_the_users_alone(cache_dir: Path, tmp_path: Path,
                                                    make_runtime: Callable[..., Runtime]) -> None:
    index_dir = built(cache_dir, make_runtime)
    mode = lambda p: stat.S_IMODE(p.stat().st_mode)  # noqa: E731
    assert mode(cache_dir) == 0o700 and mode(index_dir) == 0o700
    assert {mode(p) for p in index_dir.iterdir()} == {0o600}
    key = tmp_path / "config" / "index-key"
    assert mode(key) == 0o600 and mode(key.parent) == 0o700
    assert len(bytes.fromhex(key.read_text().strip())) == 32


def test_a_0755_cache_from_an_older_junior_is_made_private(cache_dir: Path, make_runtime: Callable[..., Runtime],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    built(cache_dir, make_runtime)
    cache_dir.chmod(0o755)
    forbid_building(monkeypatch)
    assert answers(make_runtime(notes_plugin(), weather_plugin())) == EXPECTED
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700


def test_a_cache_others_can_write_is_not_used(cache_dir: Path, tmp_path: Path, make_runtime: Callable[..., Runtime],
                                              caplog: pytest.LogCaptureFixture) -> None:
    index_dir = built(cache_dir, make_runtime)
    marker = tmp_path / "planted-code-ran"
    plant(index_dir, marker)
    cache_dir.chmod(0o777)
    before = sorted(p.name for p in index_dir.iterdir())
    with caplog.at_level(logging.WARNING, logger="junior.search"):
        rt = make_runtime(notes_plugin(), weather_plugin())
        assert answers(rt) == EXPECTED
    assert rt.index_info()["state"] == "in memory", "in memory"
    assert not marker.exists()
    [line] = warnings(caplog)
    assert "is not used" in line and "can be written by other users (mode 777)" in line
    assert sorted(p.name for p in index_dir.iterdir()) == before, "nothing written or deleted there"
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o777, "left as it is: the user decides"


def test_an_index_file_others_can_write_is_replaced_not_opened(
    cache_dir: Path, make_runtime: Callable[..., Runtime], caplog: pytest.LogCaptureFixture
) -> None:
    index_dir = built(cache_dir, make_runtime)
    [toc] = index_dir.glob("*.toc")
    toc.chmod(0o666)
    with caplog.at_level(logging.WARNING, logger="junior.search"):
        assert answers(make_runtime(notes_plugin(), weather_plugin())) == EXPECTED
    [line] = warnings(caplog)
    assert "can be written by other users (mode 666)" in line
    assert {stat.S_IMODE(p.stat().st_mode) for p in index_dir.iterdir()} == {0o600}


def test_a_cache_of_another_user_is_not_used_uid_check(cache_dir: Path, make_runtime: Callable[..., Runtime],
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    built(cache_dir, make_runtime)
    monkeypatch.setattr(junior_core._discovery.store, "current_uid", lambda: os.geteuid() + 1)
    with caplog.at_level(logging.WARNING, logger="junior.search"):
        rt = make_runtime(notes_plugin(), weather_plugin())
        assert answers(rt) == EXPECTED
    assert rt.index_info()["state"] == "in memory"
    [line] = warnings(caplog)
    assert f"belongs to another user (uid {os.geteuid()})" in line


@as_root
@pytest.mark.parametrize("whose", ["cache directory", "index directory", "index file"])
def test_another_users_cache_is_not_used(cache_dir: Path, tmp_path: Path, make_runtime: Callable[..., Runtime],
                                         caplog: pytest.LogCaptureFixture, whose: str) -> None:
    index_dir = built(cache_dir, make_runtime)
    marker = tmp_path / "planted-code-ran"
    plant(index_dir, marker)
    [toc] = index_dir.glob("*.toc")
    target = {"cache directory": cache_dir, "index directory": index_dir, "index file": toc}[whose]
    os.chown(target, NOBODY, NOBODY)
    before = sorted(p.name for p in index_dir.iterdir())
    with caplog.at_level(logging.WARNING, logger="junior.search"):
        rt = make_runtime(notes_plugin(), weather_plugin())
        assert answers(rt) == EXPECTED
    assert rt.index_info()["state"] == "in memory"
    assert not marker.exists()
    [line] = warnings(caplog)
    assert "is not used" in line and f"belongs to another user (uid {NOBODY})" in line
    assert sorted(p.name for p in index_dir.iterdir()) == before, "another user's files are left alone"


def test_a_key_others_can_read_is_not_used(cache_dir: Path, tmp_path: Path, make_runtime: Callable[..., Runtime],
                                           caplog: pytest.LogCaptureFixture) -> None:
    built(cache_dir, make_runtime)
    (tmp_path / "config" / "index-key").chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="junior.search"):
        rt = make_runtime(notes_plugin(), weather_plugin())
        assert answers(rt) == EXPECTED
    assert rt.index_info()["state"] == "in memory"
    [line] = warnings(caplog)
    assert "index key" in line and "mode 644" in line


def test_a_new_key_means_rebuilding_not_trusting(cache_dir: Path, tmp_path: Path,
                                                 make_runtime: Callable[..., Runtime],
                                                 caplog: pytest.LogCaptureFixture) -> None:
    built(cache_dir, make_runtime)
    (tmp_path / "config" / "index-key").unlink()
    with caplog.at_level(logging.WARNING, logger="junior.search"):
        assert answers(make_runtime(notes_plugin(), weather_plugin())) == EXPECTED
    assert "signature does not match" in warnings(caplog)[0]
    assert (tmp_path / "config" / "index-key").is_file()


# -- 2. deleting never leaves the cache ----------------------------------------------------------

def outside_entries(outside: Path) -> dict[str, bytes]:
    """Things in a directory that is not junior's cache, named and dated as junior's own would be."""
    old = time.time() - 40 * 24 * 3600
    made: dict[str, bytes] = {}
    for i in range(KEEP + 3):
        entry = outside / f"index-{i:032x}"
        entry.mkdir(parents=True)
        (entry / "junior-index.json").write_text(json.dumps({"fingerprint": f"{i:032x}"}))
        (entry / "data.bin").write_bytes(b"someone else's data")
        os.utime(entry / "junior-index.json", (old, old))
    stale = outside / "tmp-stale"
    stale.mkdir()
    (stale / "junior-index.json").write_text("{}")
    (stale / "precious.txt").write_text("keep me")
    os.utime(stale, (old, old))
    for path in sorted(outside.rglob("*")):
        if path.is_file():
            made[str(path.relative_to(outside))] = path.read_bytes()
    return made


def still_there(outside: Path) -> dict[str, bytes]:
    return {str(p.relative_to(outside)): p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()}


def test_a_cache_dir_that_is_a_symlink_is_neither_used_nor_pruned_nor_cleared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_runtime: Callable[..., Runtime],
    caplog: pytest.LogCaptureFixture,
) -> None:
    outside = tmp_path / "elsewhere"
    made = outside_entries(outside)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "search-index").symlink_to(outside)
    monkeypatch.setenv("JUNIOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("JUNIOR_CONFIG_DIR", str(tmp_path / "config"))
    with caplog.at_level(logging.WARNING, logger="junior.search"):
        rt = make_runtime(notes_plugin(), weather_plugin())
        assert answers(rt) == EXPECTED
    IndexCache().prune()
    from click.testing import CliRunner

    from junior_core.cli import build_cli

    cleared = CliRunner().invoke(build_cli(), ["index", "--clear"])
    assert cleared.exit_code == 0
    assert still_there(outside) == made
    assert sorted(p.name for p in outside.iterdir()) == sorted(
        [f"index-{i:032x}" for i in range(KEEP + 3)] + ["tmp-stale"]
    )
    assert "removed 0 stored indexes" in cleared.output and "is a symbolic link" in cleared.stderr
    assert rt.index_info()["state"] == "in memory"
    assert "is a symbolic link" in warnings(caplog)[0]


def test_symlinks_inside_the_cache_are_never_followed(cache_dir: Path, tmp_path: Path,
                                                      make_runtime: Callable[..., Runtime]) -> None:
    index_dir = built(cache_dir, make_runtime)
    outside = tmp_path / "elsewhere"
    made = outside_entries(outside)
    old = time.time() - 40 * 24 * 3600
    (cache_dir / f"index-{'f' * 32}").symlink_to(outside / f"index-{0:032x}")
    (cache_dir / "tmp-link").symlink_to(outside / "tmp-stale")
    os.utime(cache_dir / "tmp-link", (old, old), follow_symlinks=False)
    ours = cache_dir / "tmp-abandoned"  # junior's own leftover, holding a link out of the cache
    ours.mkdir()
    (ours / "junior-index.json").write_text("{}")
    (ours / "out").symlink_to(outside)
    os.utime(ours, (old, old))
    foreign = cache_dir / "tmp-not-juniors"  # no junior metadata: not junior's to delete
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    os.utime(foreign, (old, old))
    cache = IndexCache(cache_dir)
    assert cache.prune() == [cache_dir / "tmp-abandoned"]
    assert cache.clear() == 1
    assert still_there(outside) == made
    assert sorted(p.name for p in cache_dir.iterdir()) == [f"index-{'f' * 32}", "tmp-link", "tmp-not-juniors"]
    assert not index_dir.exists()


def test_pruning_keeps_what_is_not_junior_s(cache_dir: Path, make_runtime: Callable[..., Runtime]) -> None:
    cache_dir.mkdir(parents=True, mode=0o700)
    old = time.time() - 40 * 24 * 3600
    unrelated = cache_dir / "index-made-by-hand"
    unrelated.mkdir()
    (unrelated / "readme.txt").write_text("not an index")
    os.utime(unrelated, (old, old))
    assert answers(make_runtime(notes_plugin(), weather_plugin())) == EXPECTED
    assert len(stored(cache_dir)) == 2, "the new index was stored beside it"
    assert unrelated.is_dir() and (unrelated / "readme.txt").read_text() == "not an index"


# -- 3. damaged indexes are rebuilt ---------------------------------------------------------------

def flip_postings(index_dir: Path) -> None:
    """Damage every postings block header of the stored index (the pickled block info no longer loads)."""
    [postings] = index_dir.glob("*.pst")
    data = postings.read_bytes()
    damaged = data.replace(b"\x80\x02(", b"\x80\xff(")
    assert damaged != data and len(damaged) == len(data)
    postings.write_bytes(damaged)


def resign(index_dir: Path) -> None:
    """Sign the index's files as they are now, as if the damage had happened before junior signed them."""
    key = IndexCache(index_dir.parent).key()
    files = {p.name: p.read_bytes() for p in index_dir.iterdir() if p.name != "junior-index.mac"}
    (index_dir / "junior-index.mac").write_text(sign(key, files))


@pytest.mark.slow
def test_byte_flips_in_stored_postings_are_rebuilt_before_any_search(cache_dir: Path, tmp_path: Path,
                                                                      make_runtime: Callable[..., Runtime]) -> None:
    index_dir = built(cache_dir, make_runtime)
    flip_postings(index_dir)
    found, path, log = later_process(tmp_path)
    assert found == EXPECTED
    assert path == str(index_dir) and log.count("junior.search") == 1
    found, _, log = later_process(tmp_path)
    assert found == EXPECTED and log == ""


@pytest.mark.slow
def test_an_index_that_raises_while_searching_is_rebuilt_once(cache_dir: Path, tmp_path: Path,
                                                               make_runtime: Callable[..., Runtime]) -> None:
    index_dir = built(cache_dir, make_runtime)
    flip_postings(index_dir)
    resign(index_dir)  # it opens: the damage shows only when a search reads the postings
    found, path, log = later_process(tmp_path)
    assert found == EXPECTED
    [line] = log.splitlines()
    assert "failed while searching" in line and "rebuilding it" in line
    assert path is not None
    found, _, log = later_process(tmp_path)
    assert found == EXPECTED and log == "", "the rebuilt index was stored in place of the damaged one"


def test_an_index_that_keeps_raising_fails_the_search_after_one_rebuild(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    rt = make_runtime(notes_plugin(), weather_plugin(), index_cache=False)
    assert answers(rt) == EXPECTED
    builds: list[int] = []
    real = junior_core._discovery.whoosh_parts.write_documents

    def counting(*args: Any, **kwargs: Any) -> None:
        builds.append(1)
        real(*args, **kwargs)

    def broken(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("damaged block")

    monkeypatch.setattr(junior_core._discovery.whoosh_parts, "write_documents", counting)
    from whoosh.reading import SegmentReader

    monkeypatch.setattr(SegmentReader, "postings", broken)
    with caplog.at_level(logging.WARNING, logger="junior.search"):
        # The model is told the search failed (the operator's log has the traceback), both times. Words no
        # earlier search read: a snapshot keeps the postings it has read.
        assert_error(rt.search_tools("current temperature and wind"), "tool_failed")
        assert_error(rt.search_tools("current temperature and wind"), "tool_failed")
    assert builds == [1], "rebuilt once, not once per search"
    assert len([m for m in warnings(caplog) if "failed while searching" in m]) == 1
