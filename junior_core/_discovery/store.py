"""Built search indexes kept on disk, so a process whose catalog is unchanged opens one instead of rebuilding.

Each index is a directory ``index-<fingerprint>`` under the cache directory (``JUNIOR_CACHE_DIR``, else
platformdirs' user cache dir for ``junior``, then ``search-index/``) holding Whoosh's files,
``junior-index.json`` (the fingerprint, each document's tool_name and source, the list of Whoosh's files) and
``junior-index.mac``: an HMAC-SHA256 of those files keyed by a secret only the user can read
(``index-key`` in junior's config dir, ``JUNIOR_CONFIG_DIR`` overrides).

An index is built in memory, written to a private ``tmp-*`` directory (0700, files 0600) and renamed into place in
one step, so processes starting together on an empty cache each answer from their own build and exactly one copy
stays; a reader never sees a half-written index. Nothing on disk reaches Whoosh unchecked (``trust``). Deleting
(pruning, ``junior index --clear``, replacing a damaged index) never follows a symlink and removes only directories
junior made (they hold its ``junior-index.json``) inside a cache directory that passed the checks. Anything else
wrong with the cache (unreadable, corrupt, read-only, full) costs a rebuild in memory and one log line, never an
error.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import shutil
import stat
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from junior_core._discovery import trust
from junior_core._discovery.documents import IndexedDocs

__all__ = ["IndexCache", "IndexedDocs"]

T = TypeVar("T")

log = logging.getLogger("junior.search")

META = trust.META
MAC = "junior-index.mac"
KEEP = 8
"""Indexes kept besides the one just stored: one per catalog a user switches between (tests, configs)."""
MAX_AGE_S = 30 * 24 * 3600
STALE_TMP_S = 3600

class IndexCache:
    """Stores and opens Whoosh indexes by catalog fingerprint; every failure falls back to memory."""

    def __init__(self, directory: Path | str | None = None, key_path: Path | str | None = None) -> None:
        self.directory = Path(directory) if directory is not None else trust.default_cache_dir()
        self.key_path = Path(key_path) if key_path is not None else trust.default_key_path()
        self._key: bytes | None = None
        self._warned = False
        self.refused: str | None = None
        """Why this cache is not used, once a check failed; None while it is."""

    def path(self, fingerprint: str) -> Path:
        return self.directory / self._name(fingerprint)

    @staticmethod
    def _name(fingerprint: str) -> str:
        return f"index-{fingerprint[:32]}"

    def _problem(self, message: str, *args: Any) -> None:
        # One line per process for a cache that keeps failing the same way, not one per rebuild.
        (log.debug if self._warned else log.warning)(message, *args)
        self._warned = True

    def _refuse(self, exc: trust.CacheRefused) -> None:
        self.refused = str(exc)
        self._problem("search index cache %s is not used: %s; searching from memory", self.directory, exc)

    # -- the directory and the key ------------------------------------------------------------
    def _existing_root(self, say_unreadable: bool) -> int | None:
        """The checked cache directory's fd, or None when it is absent, unreadable or not trusted (said once)."""
        try:
            return self._root(create=False)
        except FileNotFoundError:
            return None
        except trust.CacheRefused as exc:
            self._refuse(exc)
            return None
        except OSError as exc:
            if say_unreadable:
                self._problem("search index cache %s cannot be read (%s); searching from memory", self.directory, exc)
            return None

    def _root(self, create: bool) -> int:
        """The checked cache directory's fd; ``FileNotFoundError`` when absent, ``CacheRefused`` if not trusted."""
        if self.refused is not None:
            raise trust.CacheRefused(self.refused)
        if not hasattr(os, "geteuid") or os.open not in os.supports_dir_fd:
            raise trust.CacheRefused("this system cannot check who owns the cache")
        if create:
            self.directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.mkdir(self.directory, 0o700)
        fd = trust.open_dir(self.directory)
        try:
            info = os.fstat(fd)
            problem = trust.owner_problem(info, "the directory")
            if problem is not None:
                raise trust.CacheRefused(
                    f"{problem}: make it yours alone (mode 700) or set JUNIOR_CACHE_DIR elsewhere")
            if stat.S_IMODE(info.st_mode) & 0o077:
                with contextlib.suppress(OSError):  # an older junior made it 0755: only the user may list it
                    os.fchmod(fd, 0o700)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def key(self) -> bytes:
        """The HMAC key: ``index-key`` (0600, the user's), made on first use; ``CacheRefused`` if unusable."""
        if self._key is not None:
            return self._key
        key = self._key = trust.read_key(self.key_path)
        return key

    # -- reading -------------------------------------------------------------------------------
    def open(self, fingerprint: str, docs: IndexedDocs, use: Callable[[Any, IndexedDocs, str], T]) -> T | None:
        """``use(index, stored docs, path)`` on the stored index for ``fingerprint``, checked against ``docs``.

        None when absent or unusable; a failure inside ``use`` (a damaged segment a searcher cannot read) counts as
        unusable too.
        """
        name = self._name(fingerprint)
        root = self._existing_root(say_unreadable=True)
        if root is None:
            return None
        try:
            try:
                index_fd = trust.open_dir(name, dir_fd=root)
            except FileNotFoundError:
                return None
            try:
                opened = self._open(index_fd, fingerprint, docs, use)
                with contextlib.suppress(OSError):  # last use, for pruning; a read-only cache still opens
                    os.utime(META, dir_fd=index_fd, follow_symlinks=False)
            finally:
                os.close(index_fd)
        except trust.CacheRefused as exc:
            self._refuse(trust.CacheRefused(f"{name}: {exc}"))
            os.close(root)
            return None
        except Exception as exc:  # noqa: BLE001 - any damage means: rebuild
            self._problem("search index cache %s is unusable (%s: %s); rebuilding it", self.directory / name,
                          type(exc).__name__, exc)
            self._discard(root, name)
            os.close(root)
            return None
        os.close(root)
        return opened

    def _open(self, index_fd: int, fingerprint: str, docs: IndexedDocs,
              use: Callable[[Any, IndexedDocs, str], T]) -> T:
        info = os.fstat(index_fd)
        problem = trust.owner_problem(info, "the index directory")
        if problem is not None:
            if info.st_uid != trust.current_uid():
                raise trust.CacheRefused(problem)
            raise trust.Damaged(problem)
        try:
            mac = trust.read_file(index_fd, MAC).decode("ascii").strip()
        except trust.Damaged:
            raise trust.Damaged("it is not signed") from None
        meta_bytes = trust.read_file(index_fd, META)
        meta = json.loads(meta_bytes)
        listed = meta.get("files") if isinstance(meta, dict) else None
        if not isinstance(listed, list) or not all(isinstance(n, str) and n not in (META, MAC) for n in listed):
            raise trust.Damaged("its file list is missing")
        files = {n: trust.read_file(index_fd, n) for n in listed}
        if not hmac.compare_digest(mac, trust.sign(self.key(), {META: meta_bytes, **files})):
            raise trust.Damaged("its signature does not match its files")
        # Only now, with every byte checked, does anything reach Whoosh (which unpickles parts of it).
        if meta.get("fingerprint") != fingerprint:
            raise ValueError("fingerprint does not match")
        stored = IndexedDocs.from_json(meta)
        if stored.names != docs.names or stored.sources != docs.sources:
            raise ValueError("documents do not match the catalog")
        from junior_core._discovery.whoosh_parts import (
            MemoryStorage,  # Whoosh loads with the first index opened or built
        )

        storage = MemoryStorage()
        storage.files = files
        index = storage.open_index()
        if index.doc_count_all() != len(docs.names):
            raise ValueError("document count does not match")
        return use(index, stored, str(self.directory / self._name(fingerprint)))

    # -- writing -------------------------------------------------------------------------------
    def store(self, fingerprint: str, docs: IndexedDocs, storage: Any) -> str | None:
        """Write the files of an in-memory Whoosh ``storage`` as the index for ``fingerprint``; its path or None."""
        final = self._name(fingerprint)
        tmp = f"tmp-{uuid.uuid4().hex}"
        try:
            root = self._root(create=True)
        except trust.CacheRefused as exc:
            self._refuse(exc)
            return None
        except OSError as exc:
            self._problem("cannot store the search index under %s (%s); searching from memory", self.directory, exc)
            return None
        try:
            key = self.key()
            files = {name: bytes(storage.files[name]) for name in storage.list()}
            meta = {"fingerprint": fingerprint, "created": time.time(), "files": sorted(files), **docs.to_json()}
            meta_bytes = json.dumps(meta).encode("utf-8")
            mac = trust.sign(key, {META: meta_bytes, **files})
            os.mkdir(tmp, 0o700, dir_fd=root)
            tmp_fd = trust.open_dir(tmp, dir_fd=root)
            try:
                # The metadata first: it is how pruning knows a temporary directory is junior's.
                trust.write_file(tmp_fd, META, meta_bytes)
                for name, data in files.items():
                    trust.write_file(tmp_fd, name, data)
                trust.write_file(tmp_fd, MAC, mac.encode("ascii") + b"\n")
            finally:
                os.close(tmp_fd)
            try:
                os.rename(tmp, final, src_dir_fd=root, dst_dir_fd=root)
            except OSError:
                if not trust.is_junior_dir(root, final):
                    raise
                # Another process stored the same index first: theirs stays, ours goes.
                self._delete(root, tmp)
        except trust.CacheRefused as exc:
            self._delete(root, tmp)
            os.close(root)
            self._refuse(exc)
            return None
        except OSError as exc:
            self._delete(root, tmp)
            os.close(root)
            self._problem("cannot store the search index under %s (%s); searching from memory", self.directory, exc)
            return None
        try:
            self._prune(root, keep=final)
        finally:
            os.close(root)
        return str(self.directory / final)

    # -- deleting: only junior's own directories, never through a symlink -------------------------
    def _delete(self, root: int, name: str) -> bool:
        """Delete junior's directory ``name`` inside ``root``; whether it was junior's to delete."""
        if not trust.is_junior_dir(root, name):
            return False
        # rmtree with dir_fd works through file descriptors: it unlinks symlinks inside, never follows them.
        shutil.rmtree(name, ignore_errors=True, dir_fd=root)
        return True

    def _discard(self, root: int, name: str) -> bool:
        """Move junior's index ``name`` out of the way (atomically, so no reader opens it), then delete it."""
        if not trust.is_junior_dir(root, name):
            return False
        trash = f"tmp-{uuid.uuid4().hex}"
        try:
            os.rename(name, trash, src_dir_fd=root, dst_dir_fd=root)
        except OSError:
            return False
        self._delete(root, trash)
        return True

    def _children(self) -> tuple[int, list[str]] | None:
        """The checked cache directory's fd and entries; None when it is absent, unreadable or not trusted."""
        root = self._existing_root(say_unreadable=False)
        if root is None:
            return None
        try:
            return root, sorted(os.listdir(root))
        except OSError:
            os.close(root)
            return None

    def prune(self, keep: str | None = None) -> list[Path]:
        """Delete abandoned temporary directories and all but the ``KEEP`` most recently used indexes."""
        try:
            root = self._root(create=False)
        except (OSError, trust.CacheRefused):
            return []
        try:
            return self._prune(root, keep)
        finally:
            os.close(root)

    def _prune(self, root: int, keep: str | None) -> list[Path]:
        removed: list[Path] = []
        now = time.time()
        try:
            children = os.listdir(root)
        except OSError:
            return removed
        indexes: list[tuple[float, str]] = []
        for child in children:
            try:
                if child.startswith("tmp-"):
                    info = os.stat(child, dir_fd=root, follow_symlinks=False)
                    if now - info.st_mtime > STALE_TMP_S and self._delete(root, child):
                        removed.append(self.directory / child)
                elif child.startswith("index-") and child != keep and trust.is_junior_dir(root, child):
                    try:
                        child_fd = trust.open_dir(child, dir_fd=root)
                    except trust.CacheRefused:
                        continue
                    try:
                        used = os.stat(META, dir_fd=child_fd, follow_symlinks=False).st_mtime
                    except OSError:
                        used = os.fstat(child_fd).st_mtime
                    finally:
                        os.close(child_fd)
                    indexes.append((used, child))
            except OSError:
                continue
        indexes.sort(reverse=True)
        for rank, (used, child) in enumerate(indexes):
            if (rank >= KEEP or now - used > MAX_AGE_S) and self._discard(root, child):
                removed.append(self.directory / child)
        return removed

    def remove(self, fingerprint: str) -> None:
        """Delete the stored index for ``fingerprint``, if any."""
        listed = self._children()
        if listed is None:
            return
        root, _ = listed
        try:
            self._discard(root, self._name(fingerprint))
        finally:
            os.close(root)

    def clear(self) -> int:
        """Delete every stored index (and temporary directory) junior made; how many indexes there were."""
        listed = self._children()
        if listed is None:
            return 0
        root, children = listed
        count = 0
        try:
            for child in children:
                if child.startswith("index-"):
                    count += self._discard(root, child)
                elif child.startswith("tmp-"):
                    self._delete(root, child)
        finally:
            os.close(root)
        return count

    def entries(self) -> list[dict[str, Any]]:
        """Stored indexes, most recently used first: path, fingerprint, documents, bytes."""
        listed = self._children()
        if listed is None:
            return []
        root, children = listed
        rows = []
        try:
            for child in children:
                if not child.startswith("index-") or not trust.is_junior_dir(root, child):
                    continue
                row: dict[str, Any] = {"path": str(self.directory / child), "fingerprint": None, "tools": None,
                                       "bytes": None, "last_used": None}
                try:
                    child_fd = trust.open_dir(child, dir_fd=root)
                except (OSError, trust.CacheRefused):
                    rows.append(row)
                    continue
                try:
                    meta = json.loads(trust.read_file(child_fd, META))
                    size = sum(os.stat(n, dir_fd=child_fd, follow_symlinks=False).st_size
                               for n in os.listdir(child_fd))
                    row.update(fingerprint=meta.get("fingerprint"), tools=len(meta.get("names", [])), bytes=size,
                               last_used=os.stat(META, dir_fd=child_fd, follow_symlinks=False).st_mtime)
                except (OSError, ValueError, trust.Damaged, trust.CacheRefused, AttributeError):
                    pass
                finally:
                    os.close(child_fd)
                rows.append(row)
        finally:
            os.close(root)
        rows.sort(key=lambda r: -(r["last_used"] or 0))
        return rows
