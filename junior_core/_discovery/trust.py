"""Who may own a stored index: the checks every file and directory of the cache passes before Whoosh reads a byte,
the HMAC that signs an index's files, and its key.

Whoosh unpickles parts of an index, so opening one runs whatever it holds. Nothing on disk reaches Whoosh
unchecked: the cache directory must be a real directory (not a symlink) owned by the user and writable by
nobody else; each index directory and file must be the user's too; and the files' HMAC must match. The checked
bytes are then read into memory and Whoosh opens those, so a file swapped after the check is never read. A
cache directory that fails these checks is not used (the index lives in memory, one log line says why); an index
that fails them is replaced.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

__all__ = [
    "CacheRefused",
    "Damaged",
    "current_uid",
    "default_cache_dir",
    "default_key_path",
    "is_junior_dir",
    "open_dir",
    "owner_problem",
    "read_file",
    "read_key",
    "sign",
    "write_file",
]

KEY_FILE = "index-key"
META = "junior-index.json"
"""The metadata file junior writes into every index directory it makes: only such directories are deleted."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_MAC_PREFIX = "hmac-sha256:"


def default_cache_dir() -> Path:
    """``$JUNIOR_CACHE_DIR``, else the user cache directory, then ``search-index``."""
    configured = os.environ.get("JUNIOR_CACHE_DIR")
    if configured:
        return Path(configured).expanduser() / "search-index"
    from platformdirs import user_cache_dir  # only without JUNIOR_CACHE_DIR, when an index is first stored

    return Path(user_cache_dir("junior")) / "search-index"


def default_key_path() -> Path:
    """``index-key`` in junior's config dir (``JUNIOR_CONFIG_DIR``, else platformdirs' user config dir)."""
    from junior_core._base.config import user_config_dir

    return user_config_dir() / KEY_FILE


class CacheRefused(Exception):
    """The cache (or its key) is not the user's alone: it is not used; the message says why and what to do."""


class Damaged(Exception):
    """A stored index that is not what junior wrote: it is replaced."""


def current_uid() -> int:
    return os.geteuid()


def owner_problem(info: os.stat_result, what: str) -> str | None:
    if info.st_uid != current_uid():
        return f"{what} belongs to another user (uid {info.st_uid})"
    if info.st_mode & 0o022:
        return f"{what} can be written by other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def open_dir(name: str | Path, dir_fd: int | None = None) -> int:
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


def read_file(dir_fd: int, name: str) -> bytes:
    """A regular file of the user's, read through one fd that is checked first; ``Damaged`` otherwise."""
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        raise Damaged(f"{name} is missing") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Damaged(f"{name} is a symbolic link") from None
        raise
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise Damaged(f"{name} is not a regular file")
        problem = owner_problem(info, name)
        if problem is not None:
            if info.st_uid != current_uid():
                raise CacheRefused(problem)
            raise Damaged(problem)
        return f.read()


def write_file(dir_fd: int, name: str, data: bytes) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=dir_fd)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def read_key(path: Path) -> bytes:
    """The HMAC key in ``path`` (0600, the user's), made on first use; ``CacheRefused`` if unusable."""
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
        if info.st_uid != current_uid() or info.st_mode & 0o077 or not stat.S_ISREG(info.st_mode):
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
    return key


def is_junior_dir(root: int, name: str) -> bool:
    """A real directory of the user's, inside ``root``, holding junior's metadata file (``META``) (or nothing yet)."""
    try:
        info = os.stat(name, dir_fd=root, follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != current_uid():
            return False
        fd = open_dir(name, dir_fd=root)
    except (OSError, CacheRefused):
        return False
    try:
        if not os.listdir(fd):
            return True  # a temporary directory whose writer stopped before its first file
        meta = os.stat(META, dir_fd=fd, follow_symlinks=False)
        return stat.S_ISREG(meta.st_mode) and meta.st_uid == current_uid()
    except OSError:
        return False
    finally:
        os.close(fd)
