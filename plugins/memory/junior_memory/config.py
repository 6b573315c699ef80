"""Where the memory database is (``JUNIOR_MEMORY_URL`` or a SQLite file), how long it may take, and safe display."""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = [
    "DEFAULT_TIMEOUT",
    "ENV_EXTRACTOR",
    "ENV_REVIEWER",
    "ENV_TIMEOUT",
    "ENV_URL",
    "connect_url",
    "default_path",
    "display_url",
    "mask_urls",
    "missing_driver",
    "resolve_timeout",
    "resolve_url",
]

ENV_URL = "JUNIOR_MEMORY_URL"
ENV_EXTRACTOR = "JUNIOR_MEMORY_EXTRACTOR"
ENV_REVIEWER = "JUNIOR_MEMORY_REVIEWER"
ENV_TIMEOUT = "JUNIOR_MEMORY_TIMEOUT"
DEFAULT_TIMEOUT = 5.0

# Query parameters that carry secrets (``?password=``, ``sslpassword``, tokens): their values are never shown.
_SECRET_KEY = re.compile(r"pass|pwd|secret|token|key", re.IGNORECASE)
_URL_IN_TEXT = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>]*[^\s'\"<>.,:;)\]]")
_MASK = "***"
_PLACEHOLDER = "JUNIORMASKEDVALUE"


def default_path() -> Path:
    """The embedded database file: ``<user data dir>/junior/memory.sqlite3``."""
    import platformdirs

    return Path(platformdirs.user_data_dir("junior", appauthor=False)) / "memory.sqlite3"


def resolve_url(url: str | None = None) -> str:
    """An explicit URL, else ``JUNIOR_MEMORY_URL``, else ``url`` of ``[plugins.memory]`` in junior.toml (``${VAR}``
    expanded), else the embedded SQLite file."""
    if url:
        return url
    env = os.environ.get(ENV_URL, "").strip()
    if env:
        return env
    configured = _settings().get("url")
    if configured is not None:
        if not isinstance(configured, str) or not configured.strip():
            from junior_core import ConfigError, config_path

            raise ConfigError(f"{config_path()}: [plugins.memory] url: must be a database URL string")
        return configured.strip()
    return f"sqlite:///{default_path()}"


def _settings() -> dict[str, object]:
    from junior_core import plugin_settings

    return plugin_settings("memory")


def resolve_timeout(timeout: float | None = None) -> float:
    """Seconds any one database wait may take: explicit, else ``JUNIOR_MEMORY_TIMEOUT``, else ``timeout_s`` of
    ``[plugins.memory]``, else 5."""
    if timeout is None:
        raw = os.environ.get(ENV_TIMEOUT, "").strip()
        if not raw:
            configured = _settings().get("timeout_s")
            if configured is None:
                return DEFAULT_TIMEOUT
            raw = str(configured)
        try:
            timeout = float(raw)
        except ValueError:
            raise ValueError(f"{ENV_TIMEOUT}={raw!r} is not a number of seconds") from None
    if not 0 < timeout <= 3600:
        raise ValueError(f"memory database timeout must be between 0 and 3600 seconds, not {timeout}")
    return float(timeout)


def _split_userinfo(rest: str) -> tuple[str, str] | None:
    """``(userinfo, host and the rest)`` of what follows ``://``, splitting at the last ``@`` of the authority.

    A raw ``@`` inside a password makes SQLAlchemy read the tail of the password as the host, so the split is
    done here; when in doubt it hides more, never less.
    """
    before_query = rest.split("?", 1)[0]
    at = before_query.rfind("@")
    if at < 0:
        at = rest.rfind("@")
    if at < 0:
        return None
    return rest[:at], rest[at + 1 :]


def connect_url(url: str) -> str:
    """The URL as SQLAlchemy should read it: a raw ``@`` in the user or password percent-encoded."""
    scheme, sep, rest = url.partition("://")
    split = _split_userinfo(rest) if sep else None
    if split is None or "@" not in split[0]:
        return url
    userinfo, hostpart = split
    return f"{scheme}://{userinfo.replace('@', '%40')}@{hostpart}"


def display_url(url: str) -> str:
    """The URL with its password and any secret query values replaced by ``***``, safe to print and log."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    split = _split_userinfo(rest)
    if split is not None:
        userinfo, hostpart = split
        user, colon, _ = userinfo.partition(":")
        rest = f"{user}{':' + _MASK if colon else ''}@{hostpart}"
    masked = f"{scheme}://{rest}"
    try:
        from sqlalchemy.engine import make_url

        parsed = make_url(masked)
        # A placeholder SQLAlchemy will not percent-encode, swapped for the mask after rendering.
        secrets = {key: _PLACEHOLDER for key in parsed.query if _SECRET_KEY.search(key)}
        rendered: str = parsed.update_query_dict(secrets).render_as_string(hide_password=True)
        return rendered.replace(_PLACEHOLDER, _MASK)
    except Exception:  # noqa: BLE001 - not a URL SQLAlchemy can read: mask secret-looking query values by hand
        return re.sub(r"([?&][^=&#]*(?:pass|pwd|secret|token|key)[^=&#]*=)[^&#]*", rf"\1{_MASK}", masked,
                      flags=re.IGNORECASE)


def mask_urls(text: str) -> str:
    """``text`` with every URL in it passed through ``display_url`` (for error messages that quote one)."""
    return _URL_IN_TEXT.sub(lambda match: display_url(match.group(0)), text)


def missing_driver(url: str, exc: BaseException) -> str | None:
    """One line saying what to install when ``exc`` (a store refusing ``url``) means the Postgres driver is missing."""
    scheme = url.split(":", 1)[0].lower()
    if not isinstance(exc.__context__ or exc.__cause__, ImportError) or not scheme.startswith("postgres"):
        return None
    fix = "install junior-memory[postgres] (from a clone: pip install -e 'plugins/memory[postgres]')"
    if scheme != "postgresql+psycopg":
        fix += " and use a postgresql+psycopg:// URL"
    return f"the memory database {display_url(url)} needs the Postgres driver psycopg, not installed: {fix}"
