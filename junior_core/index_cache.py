"""Built search indexes kept on disk, so a process whose catalog is unchanged opens one instead of rebuilding.

Each index is a Whoosh ``FileStorage`` directory ``index-<fingerprint>`` under the cache directory
(``JUNIOR_CACHE_DIR``, else platformdirs' user cache dir for ``junior``, then ``search-index/``), with
``junior-index.json`` beside Whoosh's files: the fingerprint and each document's tool_name and source.

An index is built in memory, written to a private ``tmp-*`` directory and renamed into place in one step, so
processes starting together on an empty cache each answer from their own build and exactly one copy stays;
a reader never sees a half-written index. Anything wrong with the cache (unreadable, corrupt, read-only, full,
a name that is not a directory) costs a rebuild in memory and one log line, never an error.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import attrs

__all__ = ["IndexCache", "IndexedDocs", "default_cache_dir"]

T = TypeVar("T")

log = logging.getLogger("junior.search")

META = "junior-index.json"
KEEP = 8
"""Indexes kept besides the one just stored: one per catalog a user switches between (tests, configs)."""
MAX_AGE_S = 30 * 24 * 3600
STALE_TMP_S = 3600


@attrs.frozen
class IndexedDocs:
    """What a Whoosh index holds besides postings, by doc number: tool_name, source, which tools write, and
    which need an argument (a search term, an id) rather than listing what there is."""

    names: list[str]
    sources: list[str]
    writes: list[int]
    needs_input: list[int] = attrs.field(factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"names": self.names, "sources": self.sources, "writes": self.writes, "needs_input": self.needs_input}

    @classmethod
    def from_json(cls, data: Any) -> IndexedDocs:
        names, sources, writes = data["names"], data["sources"], data["writes"]
        needs_input = data.get("needs_input", [])
        if not all(isinstance(v, list) for v in (names, sources, writes, needs_input)):
            raise ValueError("malformed index metadata")
        if len(names) != len(sources) or not all(isinstance(n, str) for n in names + sources):
            raise ValueError("malformed index metadata")
        return cls(names, sources, [int(w) for w in writes], [int(n) for n in needs_input])


def default_cache_dir() -> Path:
    """``$JUNIOR_CACHE_DIR``, else the user cache directory, then ``search-index``."""
    configured = os.environ.get("JUNIOR_CACHE_DIR")
    if configured:
        return Path(configured).expanduser() / "search-index"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("junior")) / "search-index"


class IndexCache:
    """Stores and opens Whoosh indexes by catalog fingerprint; every failure falls back to memory."""

    def __init__(self, directory: Path | str | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self._warned = False

    def path(self, fingerprint: str) -> Path:
        return self.directory / f"index-{fingerprint[:32]}"

    def _problem(self, message: str, *args: Any) -> None:
        # One line per process for a cache that keeps failing the same way, not one per rebuild.
        (log.debug if self._warned else log.warning)(message, *args)
        self._warned = True

    # -- reading -------------------------------------------------------------------------------
    def open(self, fingerprint: str, docs: IndexedDocs, use: Callable[[Any, IndexedDocs, str], T]) -> T | None:
        """``use(index, stored docs, path)`` on the stored index for ``fingerprint``, checked against ``docs``.

        None when absent or unusable; a failure inside ``use`` (a damaged segment a searcher cannot read) counts as
        unusable too.
        """
        path = self.path(fingerprint)
        if not path.is_dir():
            return None
        try:
            meta = json.loads((path / META).read_text(encoding="utf-8"))
            if meta.get("fingerprint") != fingerprint:
                raise ValueError("fingerprint does not match")
            stored = IndexedDocs.from_json(meta)
            if stored.names != docs.names or stored.sources != docs.sources:
                raise ValueError("documents do not match the catalog")
            from whoosh.filedb.filestore import FileStorage

            index = FileStorage(str(path), readonly=True).open_index()
            if index.doc_count_all() != len(docs.names):
                raise ValueError("document count does not match")
            opened = use(index, stored, str(path))
        except Exception as exc:  # noqa: BLE001 - any damage means: rebuild
            self._problem("search index cache %s is unusable (%s: %s); rebuilding it", path, type(exc).__name__, exc)
            self._discard(path)
            return None
        with contextlib.suppress(OSError):  # last use, for pruning; a read-only cache still opens
            os.utime(path / META)
        return opened

    # -- writing -------------------------------------------------------------------------------
    def store(self, fingerprint: str, docs: IndexedDocs, storage: Any) -> str | None:
        """Write the files of an in-memory Whoosh ``storage`` as the index for ``fingerprint``; its path or None."""
        final = self.path(fingerprint)
        tmp = self.directory / f"tmp-{uuid.uuid4().hex}"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tmp.mkdir()
            for name in storage.list():
                with open(tmp / name, "wb") as out:
                    out.write(storage.files[name])
            meta = {"fingerprint": fingerprint, "created": time.time(), **docs.to_json()}
            (tmp / META).write_text(json.dumps(meta), encoding="utf-8")
            try:
                os.rename(tmp, final)
            except OSError:
                if not final.is_dir():
                    raise
                # Another process stored the same index first: theirs stays, ours goes.
                shutil.rmtree(tmp, ignore_errors=True)
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            self._problem("cannot store the search index under %s (%s); searching from memory", self.directory, exc)
            return None
        self.prune(keep=final)
        return str(final)

    def _discard(self, path: Path) -> None:
        """Move a damaged index out of the way (atomically), then delete it."""
        trash = self.directory / f"tmp-{uuid.uuid4().hex}"
        try:
            os.rename(path, trash)
        except OSError:
            return
        shutil.rmtree(trash, ignore_errors=True)

    def prune(self, keep: Path | None = None) -> list[Path]:
        """Delete abandoned temporary directories and all but the ``KEEP`` most recently used indexes."""
        removed: list[Path] = []
        now = time.time()
        try:
            children = list(self.directory.iterdir())
        except OSError:
            return removed
        indexes: list[tuple[float, Path]] = []
        for child in children:
            try:
                if child.name.startswith("tmp-") and now - child.stat().st_mtime > STALE_TMP_S:
                    shutil.rmtree(child, ignore_errors=True)
                    removed.append(child)
                elif child.name.startswith("index-") and child != keep:
                    meta = child / META
                    used = meta.stat().st_mtime if meta.exists() else child.stat().st_mtime
                    indexes.append((used, child))
            except OSError:
                continue
        indexes.sort(reverse=True)
        for rank, (used, child) in enumerate(indexes):
            if rank >= KEEP or now - used > MAX_AGE_S:
                self._discard(child)
                removed.append(child)
        return removed

    def remove(self, fingerprint: str) -> None:
        """Delete the stored index for ``fingerprint``, if any."""
        self._discard(self.path(fingerprint))

    def clear(self) -> int:
        """Delete every stored index; how many there were."""
        count = 0
        try:
            children = list(self.directory.iterdir())
        except OSError:
            return 0
        for child in children:
            if child.name.startswith(("index-", "tmp-")):
                count += child.name.startswith("index-")
                self._discard(child)
        return count

    def entries(self) -> list[dict[str, Any]]:
        """Stored indexes, most recently used first: path, fingerprint, documents, bytes."""
        rows = []
        try:
            children = sorted(self.directory.glob("index-*"))
        except OSError:
            return []
        for child in children:
            try:
                meta = json.loads((child / META).read_text(encoding="utf-8"))
                size = sum(f.stat().st_size for f in child.iterdir())
                rows.append({"path": str(child), "fingerprint": meta.get("fingerprint"),
                             "tools": len(meta.get("names", [])), "bytes": size,
                             "last_used": (child / META).stat().st_mtime})
            except (OSError, ValueError):
                rows.append({"path": str(child), "fingerprint": None, "tools": None, "bytes": None,
                             "last_used": None})
        rows.sort(key=lambda r: -(r["last_used"] or 0))
        return rows
