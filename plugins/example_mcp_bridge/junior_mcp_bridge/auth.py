"""Bearer tokens for ``junior mcp serve --http``: the owner's token file, tokens from config, and the check."""

from __future__ import annotations

import hmac
import logging
import os
import secrets
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import attrs

from junior_mcp_bridge.config import OWNER

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken

    from junior_core import ToolContext
    from junior_mcp_bridge.config import ServeToken

__all__ = [
    "OWNER", "TokenError", "TokenTable", "config_dir", "load_tokens", "open_private", "private_dir",
    "read_or_create_token", "rotate_token", "token_path",
]

log = logging.getLogger("junior.mcp")

TOKEN_FILE = "mcp-token"


class TokenError(RuntimeError):
    """The token file cannot be used; the message names the file and what to do."""


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``JUNIOR_CONFIG_DIR``, else platformdirs' user config directory for junior."""
    environ = os.environ if environ is None else environ
    if environ.get("JUNIOR_CONFIG_DIR"):
        return Path(environ["JUNIOR_CONFIG_DIR"]).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("junior", appauthor=False))


def token_path(environ: Mapping[str, str] | None = None) -> Path:
    return config_dir(environ) / TOKEN_FILE


def read_or_create_token(environ: Mapping[str, str] | None = None) -> str:
    """The owner's token, generated (0600, in a 0700 directory) the first time it is needed."""
    path = token_path(environ)
    if not path.exists():
        try:
            _write(path, secrets.token_urlsafe(32), replace=False)
        except FileExistsError:
            pass  # another process made it first: use theirs
    return _read(path)


def rotate_token(environ: Mapping[str, str] | None = None) -> str:
    """Replace the owner's token with a new one; clients holding the old one get 401 from then on."""
    path = token_path(environ)
    _write(path, secrets.token_urlsafe(32), replace=True)
    return _read(path)


def _write(path: Path, token: str, *, replace: bool) -> None:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Written under another name first, so no reader ever sees a half-written or wider-open file.
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(token + "\n")
            if replace:
                os.replace(tmp, path)
            else:
                os.link(tmp, path)  # fails if the file appeared meanwhile
        finally:
            tmp.unlink(missing_ok=True)
    except FileExistsError:
        raise
    except OSError as exc:
        raise TokenError(f"cannot write the MCP token file {path}: {exc.strerror or exc}") from None


def private_dir(path: Path, what: str) -> None:
    """Make ``path`` (0700, parents too), or make it private if other users may enter or change it (logged once:
    after that it is private). ``OSError`` if it cannot be made, or is another user's or a symbolic link."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if os.name != "posix":
        return
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise OSError(f"the {what} {path} is a symbolic link or not yours; junior does not use it")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        os.chmod(path, 0o700)
        # Whoever could write there could swap a file junior trusts for one of their own.
        log.warning("the %s %s could be entered or changed by other users (mode %o); made it private (700)",
                    what, path, mode)


def open_private(path: Path, what: str, fix: str) -> TextIO:
    """``path`` open for reading, if it is no symbolic link and only this user can read it; else a ``TokenError``
    naming the file and ``fix``. A missing file raises ``FileNotFoundError``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        if path.is_symlink():
            raise TokenError(f"the {what} {path} is a symbolic link, which junior does not follow (whoever controls "
                             f"where it points controls what junior reads). {fix}") from None
        raise TokenError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    f = os.fdopen(fd, encoding="utf-8", errors="replace")
    info = os.fstat(f.fileno())
    if os.name == "posix" and (info.st_mode & 0o077 or info.st_uid != os.getuid()):
        f.close()
        raise TokenError(f"the {what} {path} can be read by other users (mode {info.st_mode & 0o777:o}) or is not "
                         f"yours: what it holds may be known to others. {fix}")
    return f


def _read(path: Path) -> str:
    try:
        f = open_private(path, "MCP token file", "Run `junior mcp token --rotate` to replace it.")
    except FileNotFoundError as exc:
        raise TokenError(f"cannot read the MCP token file {path}: {exc.strerror or exc}") from None
    with f:
        token = f.read().strip()
    if len(token) < 32 or not token.isprintable() or " " in token:
        raise TokenError(f"the MCP token file {path} holds no valid token. Run `junior mcp token --rotate`.")
    return token


def load_tokens(owner_context: ToolContext, environ: Mapping[str, str] | None = None) -> TokenTable:
    """The owner's token (made on first use) and those of ``[mcp.serve.tokens]``; ``TokenError``/``ConfigError``."""
    from junior_mcp_bridge.config import load_serve_tokens

    return TokenTable(read_or_create_token(environ), owner_context, load_serve_tokens(environ))


@attrs.frozen
class _Entry:
    name: str
    secret: bytes = attrs.field(repr=False)
    context: ToolContext


class TokenTable:
    """The tokens the HTTP gateway accepts, each with the context its calls run in; an MCP ``TokenVerifier``."""

    def __init__(self, owner_token: str | None, owner_context: ToolContext, tokens: Sequence[ServeToken] = ()) -> None:
        entries = [] if owner_token is None else [_Entry(OWNER, owner_token.encode(), owner_context)]
        entries += [_Entry(t.name, t.token.encode(), t.context()) for t in tokens]
        self._entries = tuple(entries)

    def __len__(self) -> int:
        return len(self._entries)

    def match(self, token: str) -> str | None:
        """The name of the entry ``token`` belongs to; every entry is compared, in constant time each."""
        given = token.encode("utf-8", "surrogatepass")
        found = None
        for entry in self._entries:
            if hmac.compare_digest(given, entry.secret) and found is None:
                found = entry.name
        return found

    async def verify_token(self, token: str) -> AccessToken | None:
        from mcp.server.auth.provider import AccessToken

        name = self.match(token)
        return None if name is None else AccessToken(token=token, client_id=name, scopes=[])

    def context_of(self, name: str) -> ToolContext | None:
        return next((entry.context for entry in self._entries if entry.name == name), None)

    def names(self) -> list[str]:
        return [entry.name for entry in self._entries]

    @staticmethod
    def client_of(request: Any) -> str | None:
        """The client id the authentication middleware put on an HTTP request, if any."""
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

        scope = getattr(request, "scope", None)
        user = scope.get("user") if isinstance(scope, dict) else None
        return user.access_token.client_id if isinstance(user, AuthenticatedUser) else None
