"""Where the memory database is: ``JUNIOR_MEMORY_URL``, or a SQLite file in the user data dir."""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["ENV_EXTRACTOR", "ENV_REVIEWER", "ENV_URL", "default_path", "display_url", "resolve_url"]

ENV_URL = "JUNIOR_MEMORY_URL"
ENV_EXTRACTOR = "JUNIOR_MEMORY_EXTRACTOR"
ENV_REVIEWER = "JUNIOR_MEMORY_REVIEWER"


def default_path() -> Path:
    """The embedded database file: ``<user data dir>/junior/memory.sqlite3``."""
    import platformdirs

    return Path(platformdirs.user_data_dir("junior", appauthor=False)) / "memory.sqlite3"


def resolve_url(url: str | None = None) -> str:
    """An explicit URL, else ``JUNIOR_MEMORY_URL``, else the embedded SQLite file."""
    if url:
        return url
    env = os.environ.get(ENV_URL, "").strip()
    if env:
        return env
    return f"sqlite:///{default_path()}"


def display_url(url: str) -> str:
    """The URL with any password replaced by ``***``, safe to print and log."""
    return re.sub(r"(://[^:/@\s]+:)[^@\s]*@", r"\1***@", url)
