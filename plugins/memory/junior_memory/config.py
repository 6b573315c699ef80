"""Where the memory database is: ``JUNIOR_MEMORY_URL``, or a SQLite file in the user data dir."""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["ENV_EXTRACTOR", "ENV_REVIEWER", "ENV_URL", "default_path", "display_url", "missing_driver", "resolve_url"]

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


def missing_driver(url: str, exc: BaseException) -> str | None:
    """One line saying what to install when ``exc`` (a store refusing ``url``) means the Postgres driver is missing."""
    scheme = url.split(":", 1)[0].lower()
    if not isinstance(exc.__context__ or exc.__cause__, ImportError) or not scheme.startswith("postgres"):
        return None
    fix = "install junior-memory[postgres] (from a clone: pip install -e 'plugins/memory[postgres]')"
    if scheme != "postgresql+psycopg":
        fix += " and use a postgresql+psycopg:// URL"
    return f"the memory database {display_url(url)} needs the Postgres driver psycopg, not installed: {fix}"
