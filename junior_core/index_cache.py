"""Built search indexes kept on disk, so a process whose catalog is unchanged opens one instead of rebuilding.

Each index is a directory ``index-<fingerprint>`` under the cache directory (``JUNIOR_CACHE_DIR``, else
platformdirs' user cache dir for ``junior``, then ``search-index/``) holding Whoosh's files,
``junior-index.json`` (the fingerprint, each document's tool_name and source, the list of Whoosh's files) and
``junior-index.mac``: an HMAC-SHA256 of those files keyed by a secret only the user can read
(``index-key`` in junior's config dir, ``JUNIOR_CONFIG_DIR`` overrides).

Whoosh unpickles parts of an index, so opening one runs whatever it holds. Nothing on disk reaches Whoosh
unchecked: the cache directory must be a real directory (not a symlink) owned by the user and writable by
nobody else; each index directory and file must be the user's too; and the files' HMAC must match. The checked
bytes are then read into memory and Whoosh opens those, so a file swapped after the check is never read. A
cache directory that fails these checks is not used (the index lives in memory, one log line says why); an index
that fails them is replaced.

An index is built in memory, written to a private ``tmp-*`` directory (0700, files 0600) and renamed into
place in one step, so processes starting together on an empty cache each answer from their own build and
exactly one copy stays; a reader never sees a half-written index. Deleting (pruning, ``junior index --clear``,
replacing a damaged index) never follows a symlink and removes only directories junior made (they hold its
``junior-index.json``) inside a cache directory that passed the checks. Anything else wrong with the cache
(unreadable, corrupt, read-only, full) costs a rebuild in memory and one log line, never an error.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import logging
import os
import secrets
import shutil
import stat
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import attrs

__all__ = ["CacheRefused", "IndexCache", "IndexedDocs", "default_cache_dir", "default_key_path", "sign"]

T = TypeVar("T")

log = logging.getLogger("junior.search")

META = "junior-index.json"
MAC = "junior-index.mac"
KEY_FILE = "index-key"
KEEP = 8
"""Indexes kept besides the one just stored: one per catalog a user switches between (tests, configs)."""
MAX_AGE_S = 30 * 24 * 3600
STALE_TMP_S = 3600

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_MAC_PREFIX = "hmac-sha256:"


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
    from platformdirs import user_cache_dir  # only without JUNIOR_CACHE_DIR, when an index is first stored

    return Path(user_cache_dir("junior")) / "search-index"


def default_key_path() -> Path:
    """``index-key`` in junior's config dir (``JUNIOR_CONFIG_DIR``, else platformdirs' user config dir)."""
    from junior_core.config import user_config_dir

    return user_config_dir() / KEY_FILE


class CacheRefused(Exception):
    """The cache (or its key) is not the user's alone: it is not used; the message says why and what to do."""


class _Damaged(Exception):
    """A stored index that is not what junior wrote: it is replaced."""


def _current_uid() -> int:
    return os.geteuid()


def _owner_problem(info: os.stat_result, what: str) -> str | None:
    if info.st_uid != _current_uid():
        return f"{what} belongs to another user (uid {info.st_uid})"
    if info.st_mode & 0o022:
        return f"{what} can be written by other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def _open_dir(name: str | Path, dir_fd: int | None = None) -> int:
    """A directory's fd, never through a symlink; ``CacheRefused`` when ``name`` is a symlink."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            with contextlib.suppress(OSError):
                if stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
                    raise CacheRefused(f"{name} is a symbolic link, and junior deletes nothing through one") from None
        raise


def sign(key: bytes, files: dict[str, bytes]) -> str:
    """The MAC of an index's files (name and content of each, in name order) under ``key``."""
    mac = hmac.new(key, b"junior-index\0", hashlib.sha256)
    for name in sorted(files):
        data = files[name]
        mac.update(name.encode("utf-8") + b"\0" + len(data).to_bytes(8, "big"))
        mac.update(data)
    return _MAC_PREFIX + mac.hexdigest()


def _read_file(dir_fd: int, name: str) -> bytes:
    """A regular file of the user's, read through one fd that is checked first; ``_Damaged`` otherwise."""
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        raise _Damaged(f"{name} is missing") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Damaged(f"{name} is a symbolic link") from None
        raise
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise _Damaged(f"{name} is not a regular file")
        problem = _owner_problem(info, name)
        if problem is not None:
            if info.st_uid != _current_uid():
                raise CacheRefused(problem)
            raise _Damaged(problem)
        return f.read()


def _write_file(dir_fd: int, name: str, data: bytes) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=dir_fd)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


class IndexCache:
    """Stores and opens Whoosh indexes by catalog fingerprint; every failure falls back to memory."""

    def __init__(self, directory: Path | str | None = None, key_path: Path | str | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.key_path = Path(key_path) if key_path is not None else default_key_path()
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

    def _refuse(self, exc: CacheRefused) -> None:
        self.refused = str(exc)
        self._problem("search index cache %s is not used: %s; searching from memory", self.directory, exc)

    # -- the directory and the key ------------------------------------------------------------
    def _existing_root(self, say_unreadable: bool) -> int | None:
        """The checked cache directory's fd, or None when it is absent, unreadable or not trusted (said once)."""
        try:
            return self._root(create=False)
        except FileNotFoundError:
            return None
        except CacheRefused as exc:
            self._refuse(exc)
            return None
        except OSError as exc:
            if say_unreadable:
                self._problem("search index cache %s cannot be read (%s); searching from memory", self.directory, exc)
            return None

    def _root(self, create: bool) -> int:
        """The checked cache directory's fd; ``FileNotFoundError`` when absent, ``CacheRefused`` if not trusted."""
        if self.refused is not None:
            raise CacheRefused(self.refused)
        if not hasattr(os, "geteuid") or os.open not in os.supports_dir_fd:
            raise CacheRefused("this system cannot check who owns the cache")
        if create:
            self.directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.mkdir(self.directory, 0o700)
        fd = _open_dir(self.directory)
        try:
            info = os.fstat(fd)
            problem = _owner_problem(info, "the directory")
            if problem is not None:
                raise CacheRefused(f"{problem}: make it yours alone (mode 700) or set JUNIOR_CACHE_DIR elsewhere")
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
        path = self.key_path
        try:
            if not path.exists():
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
                try:
                    with os.fdopen(fd, "w", encoding="ascii") as f:
                        f.write(secrets.token_hex(32) + "\n")
                    with contextlib.suppress(FileExistsError):  # another process made it first: use theirs
                        os.link(tmp, path)
                finally:
                    tmp.unlink(missing_ok=True)
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
        except OSError as exc:
            raise CacheRefused(f"the index key {path} cannot be read or made ({exc.strerror or exc})") from None
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if info.st_uid != _current_uid() or info.st_mode & 0o077 or not stat.S_ISREG(info.st_mode):
                raise CacheRefused(
                    f"the index key {path} is not the user's alone (mode {stat.S_IMODE(info.st_mode):o}, uid "
                    f"{info.st_uid}); delete it and a new one is made"
                )
            text = f.read(200).strip()
        try:
            key = bytes.fromhex(text.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            key = b""
        if len(key) < 16:
            raise CacheRefused(f"the index key {path} holds no valid key; delete it and a new one is made")
        self._key = key
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
                index_fd = _open_dir(name, dir_fd=root)
            except FileNotFoundError:
                return None
            try:
                opened = self._open(index_fd, fingerprint, docs, use)
                with contextlib.suppress(OSError):  # last use, for pruning; a read-only cache still opens
                    os.utime(META, dir_fd=index_fd, follow_symlinks=False)
            finally:
                os.close(index_fd)
        except CacheRefused as exc:
            self._refuse(CacheRefused(f"{name}: {exc}"))
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
        problem = _owner_problem(info, "the index directory")
        if problem is not None:
            if info.st_uid != _current_uid():
                raise CacheRefused(problem)
            raise _Damaged(problem)
        try:
            mac = _read_file(index_fd, MAC).decode("ascii").strip()
        except _Damaged:
            raise _Damaged("it is not signed") from None
        meta_bytes = _read_file(index_fd, META)
        meta = json.loads(meta_bytes)
        listed = meta.get("files") if isinstance(meta, dict) else None
        if not isinstance(listed, list) or not all(isinstance(n, str) and n not in (META, MAC) for n in listed):
            raise _Damaged("its file list is missing")
        files = {n: _read_file(index_fd, n) for n in listed}
        if not hmac.compare_digest(mac, sign(self.key(), {META: meta_bytes, **files})):
            raise _Damaged("its signature does not match its files")
        # Only now, with every byte checked, does anything reach Whoosh (which unpickles parts of it).
        if meta.get("fingerprint") != fingerprint:
            raise ValueError("fingerprint does not match")
        stored = IndexedDocs.from_json(meta)
        if stored.names != docs.names or stored.sources != docs.sources:
            raise ValueError("documents do not match the catalog")
        from junior_core._whoosh import MemoryStorage  # Whoosh loads with the first index opened or built

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
        except CacheRefused as exc:
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
            mac = sign(key, {META: meta_bytes, **files})
            os.mkdir(tmp, 0o700, dir_fd=root)
            tmp_fd = _open_dir(tmp, dir_fd=root)
            try:
                # The metadata first: it is how pruning knows a temporary directory is junior's.
                _write_file(tmp_fd, META, meta_bytes)
                for name, data in files.items():
                    _write_file(tmp_fd, name, data)
                _write_file(tmp_fd, MAC, mac.encode("ascii") + b"\n")
            finally:
                os.close(tmp_fd)
            try:
                os.rename(tmp, final, src_dir_fd=root, dst_dir_fd=root)
            except OSError:
                if not self._is_junior_dir(root, final):
                    raise
                # Another process stored the same index first: theirs stays, ours goes.
                self._delete(root, tmp)
        except CacheRefused as exc:
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
    @staticmethod
    def _is_junior_dir(root: int, name: str) -> bool:
        """A real directory of the user's, inside ``root``, holding junior's metadata file (or nothing yet)."""
        try:
            info = os.stat(name, dir_fd=root, follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != _current_uid():
                return False
            fd = _open_dir(name, dir_fd=root)
        except (OSError, CacheRefused):
            return False
        try:
            if not os.listdir(fd):
                return True  # a temporary directory whose writer stopped before its first file
            meta = os.stat(META, dir_fd=fd, follow_symlinks=False)
            return stat.S_ISREG(meta.st_mode) and meta.st_uid == _current_uid()
        except OSError:
            return False
        finally:
            os.close(fd)

    def _delete(self, root: int, name: str) -> bool:
        """Delete junior's directory ``name`` inside ``root``; whether it was junior's to delete."""
        if not self._is_junior_dir(root, name):
            return False
        # rmtree with dir_fd works through file descriptors: it unlinks symlinks inside, never follows them.
        shutil.rmtree(name, ignore_errors=True, dir_fd=root)
        return True

    def _discard(self, root: int, name: str) -> bool:
        """Move junior's index ``name`` out of the way (atomically, so no reader opens it), then delete it."""
        if not self._is_junior_dir(root, name):
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
        except (OSError, CacheRefused):
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
                elif child.startswith("index-") and child != keep and self._is_junior_dir(root, child):
                    try:
                        child_fd = _open_dir(child, dir_fd=root)
                    except CacheRefused:
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
                if not child.startswith("index-") or not self._is_junior_dir(root, child):
                    continue
                row: dict[str, Any] = {"path": str(self.directory / child), "fingerprint": None, "tools": None,
                                       "bytes": None, "last_used": None}
                try:
                    child_fd = _open_dir(child, dir_fd=root)
                except (OSError, CacheRefused):
                    rows.append(row)
                    continue
                try:
                    meta = json.loads(_read_file(child_fd, META))
                    size = sum(os.stat(n, dir_fd=child_fd, follow_symlinks=False).st_size
                               for n in os.listdir(child_fd))
                    row.update(fingerprint=meta.get("fingerprint"), tools=len(meta.get("names", [])), bytes=size,
                               last_used=os.stat(META, dir_fd=child_fd, follow_symlinks=False).st_mtime)
                except (OSError, ValueError, _Damaged, CacheRefused, AttributeError):
                    pass
                finally:
                    os.close(child_fd)
                rows.append(row)
        finally:
            os.close(root)
        rows.sort(key=lambda r: -(r["last_used"] or 0))
        return rows
