"""Built search indexes kept on disk, so a process whose catalog is unchanged opens one instead of rebuilding.

An index is a directory ``index-<fingerprint>`` holding Whoosh's files, ``junior-index.json`` (fingerprint, documents,
file list) and ``junior-index.mac`` (their HMAC under ``index-key`` in junior's config dir), written to a private
``tmp-*`` directory and renamed into place in one step: no reader sees half an index, one copy stays. Whoosh unpickles
parts of an index, so nothing reaches it unchecked: the cache directory, index directories and files must be the
user's, writable by nobody else, not symlinks, and the HMAC must match; Whoosh then reads the checked bytes from memory.
A cache failing these checks is not used, an index failing them is replaced, and only junior's own directories are
ever deleted. Any other failure costs a rebuild in memory and one log line, never an error.
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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from junior_core._discovery.documents import IndexedDocs

__all__ = ["IndexCache", "IndexedDocs"]

T = TypeVar("T")
log = logging.getLogger("junior.search")
META, MAC = "junior-index.json", "junior-index.mac"  # only directories holding META are junior's to delete
KEEP = 8
"""Indexes kept besides the one just stored: one per catalog a user switches between (tests, configs)."""
MAX_AGE_S, STALE_TMP_S = 30 * 24 * 3600, 3600
_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)  # every open: no symlink, not inherited
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FLAGS


class CacheRefused(Exception):
    """The cache (or its key) is not the user's alone: it is not used; the message says why and what to do."""


class Damaged(Exception):
    """A stored index that is not what junior wrote: it is replaced."""


def current_uid() -> int:
    return os.geteuid()


def owner_problem(info: os.stat_result, what: str) -> Exception | None:
    """``CacheRefused`` for another user's ``what``, ``Damaged`` for the user's own that others can write."""
    if info.st_uid != current_uid():
        return CacheRefused(f"{what} belongs to another user (uid {info.st_uid})")
    if info.st_mode & 0o022:
        return Damaged(f"{what} can be written by other users (mode {stat.S_IMODE(info.st_mode):o})")
    return None


@contextlib.contextmanager
def closing(fd: int) -> Iterator[int]:
    try:
        yield fd
    finally:
        os.close(fd)


def open_dir(name: str | Path, dir_fd: int | None = None) -> int:
    """A directory's fd, never through a symlink; ``CacheRefused`` when ``name`` is a symlink."""
    try:
        return os.open(name, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _FLAGS, dir_fd=dir_fd)
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
        mac.update(name.encode("utf-8") + b"\0" + len(files[name]).to_bytes(8, "big"))
        mac.update(files[name])
    return "hmac-sha256:" + mac.hexdigest()


def read_file(dir_fd: int, name: str) -> bytes:
    """A regular file of the user's, read through one fd that is checked first; ``Damaged`` otherwise."""
    try:
        fd = os.open(name, os.O_RDONLY | _FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise Damaged(f"{name} is missing") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Damaged(f"{name} is a symbolic link") from None
        raise
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Damaged(f"{name} is not a regular file")
        if (problem := owner_problem(info, name)) is not None:
            raise problem
        return f.read()


def write_file(dir_fd: int, name: str, data: bytes) -> None:
    with os.fdopen(os.open(name, _NEW_FILE, 0o600, dir_fd=dir_fd), "wb") as out:
        out.write(data)


def is_junior_dir(root: int, name: str) -> bool:
    """A real directory of the user's, inside ``root``, holding junior's ``META`` file (or nothing yet)."""
    try:
        info = os.stat(name, dir_fd=root, follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != current_uid():
            return False
        with closing(open_dir(name, dir_fd=root)) as fd:
            if not os.listdir(fd):
                return True  # a temporary directory whose writer stopped before its first file
            meta = os.stat(META, dir_fd=fd, follow_symlinks=False)
            return stat.S_ISREG(meta.st_mode) and meta.st_uid == current_uid()
    except (OSError, CacheRefused):
        return False


class IndexCache:
    """Whoosh indexes stored by catalog fingerprint; every failure falls back to memory."""

    def __init__(self, directory: Path | str | None = None, key_path: Path | str | None = None) -> None:
        """``directory``: else ``search-index`` in ``$JUNIOR_CACHE_DIR`` or the user cache dir; ``key_path``: else
        ``index-key`` in junior's config dir."""
        if directory is None and os.environ.get("JUNIOR_CACHE_DIR"):
            directory = Path(os.environ["JUNIOR_CACHE_DIR"]).expanduser() / "search-index"
        elif directory is None:
            from platformdirs import user_cache_dir  # only without JUNIOR_CACHE_DIR

            directory = Path(user_cache_dir("junior")) / "search-index"
        if key_path is None:
            from junior_core._base.config import user_config_dir

            key_path = user_config_dir() / "index-key"
        self.directory, self.key_path = Path(directory), Path(key_path)
        self.refused: str | None = None
        """Why this cache is not used, once a check failed; None while it is."""
        self._key: bytes | None = None
        self._warned = False

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

    def key(self) -> bytes:
        """The HMAC key in ``key_path`` (0600, the user's), made on first use; ``CacheRefused`` if unusable."""
        if self._key is not None:
            return self._key
        path = self.key_path
        try:
            if not path.exists():
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
                fd = os.open(tmp, _NEW_FILE, 0o600)
                try:
                    with os.fdopen(fd, "w", encoding="ascii") as f:
                        f.write(secrets.token_hex(32) + "\n")
                    with contextlib.suppress(FileExistsError):  # another process made it first: use theirs
                        os.link(tmp, path)
                finally:
                    tmp.unlink(missing_ok=True)
            fd = os.open(path, os.O_RDONLY | _FLAGS)
        except OSError as exc:
            raise CacheRefused(f"the index key {path} cannot be read or made ({exc.strerror or exc})") from None
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(fd)
            if info.st_uid != current_uid() or info.st_mode & 0o077 or not stat.S_ISREG(info.st_mode):
                raise CacheRefused(f"the index key {path} is not the user's alone (mode {stat.S_IMODE(info.st_mode):o}"
                                   f", uid {info.st_uid}); delete it and a new one is made")
            text = f.read(200).strip()
        with contextlib.suppress(ValueError):  # not ASCII, not hex
            key = bytes.fromhex(text.decode("ascii"))
            if len(key) >= 16:
                self._key = key
                return key
        raise CacheRefused(f"the index key {path} holds no valid key; delete it and a new one is made")

    @contextlib.contextmanager
    def _root(self, create: bool = False, failure: str | None = None, quiet: bool = False) -> Iterator[int | None]:
        """The checked cache directory's fd, or None: absent, not trusted (said unless ``quiet``) or failing (said by
        ``failure``)."""
        with contextlib.ExitStack() as stack:
            root: int | None = None
            try:
                if self.refused is not None:
                    raise CacheRefused(self.refused)
                if not hasattr(os, "geteuid") or os.open not in os.supports_dir_fd:
                    raise CacheRefused("this system cannot check who owns the cache")
                if create:
                    self.directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(self.directory, 0o700)
                fd = stack.enter_context(closing(open_dir(self.directory)))
                info = os.fstat(fd)
                if (problem := owner_problem(info, "the directory")) is not None:
                    raise CacheRefused(f"{problem}: make it yours alone (mode 700) or set JUNIOR_CACHE_DIR elsewhere")
                if stat.S_IMODE(info.st_mode) & 0o077:
                    with contextlib.suppress(OSError):  # an older junior made it 0755: only the user may list it
                        os.fchmod(fd, 0o700)
                root = fd
            except (CacheRefused, OSError) as exc:
                stack.close()
                if isinstance(exc, CacheRefused):
                    if not quiet:
                        self._refuse(exc)
                elif failure is not None and (create or not isinstance(exc, FileNotFoundError)):
                    self._problem(failure, self.directory, exc)
            yield root

    def open(self, fingerprint: str, docs: IndexedDocs, use: Callable[[Any, IndexedDocs, str], T]) -> T | None:
        """``use(index, stored docs, path)`` on the stored index for ``fingerprint`` if it matches ``docs``; None
        when absent or unusable (a failure inside ``use``, such as a damaged segment, counts as unusable)."""
        name = self._name(fingerprint)
        with self._root(failure="search index cache %s cannot be read (%s); searching from memory") as root:
            if root is None:
                return None
            try:
                return self._open(root, name, fingerprint, docs, use)
            except CacheRefused as exc:
                self._refuse(CacheRefused(f"{name}: {exc}"))
            except Exception as exc:  # noqa: BLE001 - any damage means: rebuild
                self._problem("search index cache %s is unusable (%s: %s); rebuilding it", self.directory / name,
                              type(exc).__name__, exc)
                self._discard(root, name)
        return None

    def _open(self, root: int, name: str, fingerprint: str, docs: IndexedDocs,
              use: Callable[[Any, IndexedDocs, str], T]) -> T | None:
        try:
            index_fd = open_dir(name, dir_fd=root)
        except FileNotFoundError:
            return None
        with closing(index_fd):
            if (problem := owner_problem(os.fstat(index_fd), "the index directory")) is not None:
                raise problem
            try:
                mac = read_file(index_fd, MAC).decode("ascii").strip()
            except Damaged:
                raise Damaged("it is not signed") from None
            meta_bytes = read_file(index_fd, META)
            meta = json.loads(meta_bytes)
            listed = meta.get("files") if isinstance(meta, dict) else None
            if not isinstance(listed, list) or not all(isinstance(n, str) and n not in (META, MAC) for n in listed):
                raise Damaged("its file list is missing")
            files = {n: read_file(index_fd, n) for n in listed}
            if not hmac.compare_digest(mac, sign(self.key(), {META: meta_bytes, **files})):
                raise Damaged("its signature does not match its files")
            # Only now, with every byte checked, does anything reach Whoosh (which unpickles parts of it).
            if meta.get("fingerprint") != fingerprint:
                raise ValueError("fingerprint does not match")
            stored = IndexedDocs.from_json(meta)
            if stored.names != docs.names or stored.sources != docs.sources:
                raise ValueError("documents do not match the catalog")
            from junior_core._discovery.whoosh_parts import MemoryStorage  # Whoosh loads with the first index

            storage = MemoryStorage()
            storage.files = files
            index = storage.open_index()
            if index.doc_count_all() != len(docs.names):
                raise ValueError("document count does not match")
            opened = use(index, stored, str(self.directory / name))
            with contextlib.suppress(OSError):  # last use, for pruning; a read-only cache still opens
                os.utime(META, dir_fd=index_fd, follow_symlinks=False)
            return opened

    def store(self, fingerprint: str, docs: IndexedDocs, storage: Any) -> str | None:
        """Write the files of an in-memory Whoosh ``storage`` as the index for ``fingerprint``; its path or None."""
        final, tmp = self._name(fingerprint), f"tmp-{uuid.uuid4().hex}"
        failure = "cannot store the search index under %s (%s); searching from memory"
        with self._root(create=True, failure=failure) as root:
            if root is None:
                return None
            try:
                key = self.key()
                files = {name: bytes(storage.files[name]) for name in storage.list()}
                meta = {"fingerprint": fingerprint, "created": time.time(), "files": sorted(files), **docs.to_json()}
                meta_bytes = json.dumps(meta).encode("utf-8")
                mac = sign(key, {META: meta_bytes, **files}).encode("ascii") + b"\n"
                os.mkdir(tmp, 0o700, dir_fd=root)
                with closing(open_dir(tmp, dir_fd=root)) as tmp_fd:
                    # The metadata first: it is how pruning knows a temporary directory is junior's.
                    for name, data in [(META, meta_bytes), *files.items(), (MAC, mac)]:
                        write_file(tmp_fd, name, data)
                try:
                    os.rename(tmp, final, src_dir_fd=root, dst_dir_fd=root)
                except OSError:
                    if not is_junior_dir(root, final):
                        raise
                    self._delete(root, tmp)  # another process stored the same index first: theirs stays
            except (CacheRefused, OSError) as exc:
                self._delete(root, tmp)
                if isinstance(exc, CacheRefused):
                    self._refuse(exc)
                else:
                    self._problem(failure, self.directory, exc)
                return None
            self._prune(root, keep=final)
        return str(self.directory / final)

    # -- deleting: only junior's own directories, never through a symlink -------------------------
    def _delete(self, root: int, name: str) -> bool:
        """Delete junior's directory ``name`` inside ``root``; whether it was junior's to delete."""
        if not is_junior_dir(root, name):
            return False
        # rmtree with dir_fd works through file descriptors: it unlinks symlinks inside, never follows them.
        shutil.rmtree(name, ignore_errors=True, dir_fd=root)
        return True

    def _discard(self, root: int, name: str) -> bool:
        """Move junior's index ``name`` out of the way (atomically, so no reader opens it), then delete it."""
        if not is_junior_dir(root, name):
            return False
        trash = f"tmp-{uuid.uuid4().hex}"
        try:
            os.rename(name, trash, src_dir_fd=root, dst_dir_fd=root)
        except OSError:
            return False
        self._delete(root, trash)
        return True

    def prune(self) -> list[Path]:
        """Delete abandoned temporary directories and all but the ``KEEP`` most recently used indexes."""
        with self._root(quiet=True) as root:
            return [] if root is None else self._prune(root, keep=None)

    def _prune(self, root: int, keep: str | None, everything: bool = False) -> list[Path]:
        """Delete junior's temporary directories older than ``STALE_TMP_S`` and its indexes but ``keep`` and the
        ``KEEP`` most recently used within ``MAX_AGE_S`` (with ``everything``: all of them); what was deleted."""
        removed: list[Path] = []
        indexes: list[tuple[float, str]] = []
        now = time.time()
        with contextlib.suppress(OSError):
            for child in os.listdir(root):
                with contextlib.suppress(OSError, CacheRefused):
                    if child.startswith("tmp-"):
                        age = now - os.stat(child, dir_fd=root, follow_symlinks=False).st_mtime
                        if (everything or age > STALE_TMP_S) and self._delete(root, child):
                            removed.append(self.directory / child)
                    elif child.startswith("index-") and child != keep and is_junior_dir(root, child):
                        with closing(open_dir(child, dir_fd=root)) as child_fd:
                            try:
                                used = os.stat(META, dir_fd=child_fd, follow_symlinks=False).st_mtime
                            except OSError:
                                used = os.fstat(child_fd).st_mtime
                        indexes.append((used, child))
        for rank, (used, child) in enumerate(sorted(indexes, reverse=True)):
            if (everything or rank >= KEEP or now - used > MAX_AGE_S) and self._discard(root, child):
                removed.append(self.directory / child)
        return removed

    def clear(self) -> int:
        """Delete every stored index (and temporary directory) junior made; how many indexes there were."""
        with self._root() as root:
            removed = [] if root is None else self._prune(root, keep=None, everything=True)
        return sum(path.name.startswith("index-") for path in removed)

    def remove(self, fingerprint: str) -> None:
        """Delete the stored index for ``fingerprint``, if any."""
        with self._root() as root:
            if root is not None:
                self._discard(root, self._name(fingerprint))

    def entries(self) -> list[Path]:
        """The stored indexes junior made."""
        with self._root() as root, contextlib.suppress(OSError):
            if root is not None:
                names = os.listdir(root)
                return [self.directory / n for n in names if n.startswith("index-") and is_junior_dir(root, n)]
        return []
