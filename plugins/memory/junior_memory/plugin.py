"""The junior plugin: source ``memory``, recall before a turn, extraction after it, ``junior memory`` commands.

The entry point names the class, so the core makes one instance per Runtime and each runtime owns its engine;
tests and embedders pass ``MemoryPlugin(url=..., extractor=...)`` explicitly. Importing this module must stay
cheap (``junior --help``): SQLAlchemy and Alembic load on the first database use.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from junior_core import Message, ToolContext, ToolError, hookimpl
from junior_memory.config import ENV_EXTRACTOR, ENV_REVIEWER, ENV_URL, resolve_url
from junior_memory.tools import SOURCE, MemoryTools

if TYPE_CHECKING:
    import click

    from junior_core import Register, Runtime
    from junior_core.clock import Clock
    from junior_memory.extraction import MemoryExtractor
    from junior_memory.review import MemoryReviewer
    from junior_memory.scope import Scope
    from junior_memory.semantic import Embedder, Semantic
    from junior_memory.store import MemoryStore

__all__ = ["MemoryPlugin"]

log = logging.getLogger("junior.memory")


def _from_env(env: str, method: str, what: str) -> Any:
    """The object ``env`` names as ``module:attr``, or what calling it returns when it lacks ``method``."""
    spec = os.environ.get(env, "").strip()
    if not spec:
        return None
    module_name, _, attr = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split(".") if attr else ():
            obj = getattr(obj, part)
        if isinstance(obj, type) or not hasattr(obj, method):
            obj = obj()  # a class or a factory such as junior_memory.model_helpers:extractor_from_env
        return obj
    except Exception:
        log.exception("%s=%r could not be loaded; %s is off", env, spec, what)
        return None


class MemoryPlugin:
    """Long-term memory for one runtime.

    :param url: SQLAlchemy URL of the database; default ``JUNIOR_MEMORY_URL``, else a SQLite file in the
        user data dir.
    :param extractor: a ``MemoryExtractor`` for passive extraction after each turn; default
        ``JUNIOR_MEMORY_EXTRACTOR=module:attr``, else none (extraction off).
    :param reviewer: a ``MemoryReviewer`` asked before each explicit ``memory__remember`` is stored; default
        ``JUNIOR_MEMORY_REVIEWER=module:attr``, else none (writes are stored as the model gave them).
    :param timeout: seconds any one database wait may take before memory answers ``unavailable``; default
        ``JUNIOR_MEMORY_TIMEOUT``, else 5.
    :param embedder: an ``Embedder`` for semantic recall; default the fastembed model of
        ``JUNIOR_MEMORY_EMBEDDING_MODEL`` when the ``semantic`` extra is installed, else none; ``False`` turns
        semantic recall off.
    """

    junior_plugin_name = "memory"

    def __init__(
        self,
        url: str | None = None,
        *,
        extractor: MemoryExtractor | None = None,
        reviewer: MemoryReviewer | None = None,
        timeout: float | None = None,
        embedder: Embedder | Literal[False] | None = None,
    ) -> None:
        self.url = resolve_url(url)
        self.embedder = embedder
        self.timeout = timeout
        self._explicit_url = url is not None
        if extractor is None:
            extractor = _from_env(ENV_EXTRACTOR, "extract", "passive extraction")
        if reviewer is None:
            reviewer = _from_env(ENV_REVIEWER, "review", "write review")
        self.extractor = extractor
        self.reviewer = reviewer
        self._store: MemoryStore | None = None
        self._clock: Clock | None = None
        self._lock = threading.Lock()
        self.tools = MemoryTools(self._tool_store, reviewer=self.reviewer)

    def __repr__(self) -> str:
        from junior_memory.config import display_url

        return f"<MemoryPlugin {display_url(self.url)}>"

    def store(self, *, log_errors: bool = True) -> MemoryStore:
        """This runtime's store, created on first use; ``log_errors=False`` when the caller shows the error itself."""
        if self._store is None:
            with self._lock:
                if self._store is None:
                    from junior_memory.store import MemoryConfigError, MemoryStore

                    try:
                        self._store = MemoryStore(self.url, timeout=self.timeout,
                                                  semantic=self._semantic(), clock=self._clock)
                    except MemoryConfigError as exc:
                        # A setup mistake, not an outage: the tool fails (tool_failed) and the log says what to fix.
                        from junior_memory.config import missing_driver

                        origin = "MemoryPlugin(url=...)" if self._explicit_url else ENV_URL
                        if log_errors:
                            log.error("%s", missing_driver(self.url, exc)
                                      or f"{exc}; fix {origin} (default: a SQLite file in the user data dir)")
                        raise
        return self._store

    def _semantic(self) -> Semantic | None:
        from junior_memory.semantic import Semantic, default_semantic

        if self.embedder is False:
            return None
        if self.embedder is None:
            return default_semantic()
        return Semantic(self.embedder)

    def _tool_store(self) -> MemoryStore:
        """The store for a tool call: a setup mistake is ``tool_failed``, logged once above, without a traceback."""
        from junior_memory.store import MemoryConfigError

        try:
            return self.store()
        except MemoryConfigError:
            raise ToolError(
                "tool_failed",
                "Memory is not set up on this host (its database cannot be used; the operator's log says why). "
                "Tell the user memory is unavailable; do not retry.",
            ) from None

    # -- hooks -----------------------------------------------------------------------------------
    @hookimpl
    def startup(self, runtime: Runtime) -> None:
        # The database deadlines are measured on the runtime's clock, as its hook and tool deadlines are.
        self._clock = runtime.options.clock

    @hookimpl
    def register_sources(self, register: Register) -> None:
        register(SOURCE, tools=self.tools.tools())

    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        from junior_memory.cli import memory_group

        cli.add_command(memory_group(lambda: self.store(log_errors=False)))

    @hookimpl
    def prompt_context(self, context: ToolContext, user_text: str) -> str | None:
        from junior_memory.recall import MAX_RECALLED, recall_block
        from junior_memory.scope import read_scopes
        from junior_memory.store import MemoryConfigError, MemoryUnavailable

        try:
            scopes = read_scopes(context)
        except ToolError:
            return None
        try:
            found = self.store().find(scopes, user_text, limit=MAX_RECALLED, semantic=True, message=True)
        except MemoryUnavailable as exc:
            log.warning("memory recall skipped: %s", exc)
            return None
        except MemoryConfigError:
            return None  # store() logged what to fix
        return recall_block([hit.record for hit in found.hits], context.actor.key if context.actor else None)

    @hookimpl
    def after_turn(self, context: ToolContext, transcript: Sequence[Message]) -> None:
        if self.extractor is None:
            return
        from junior_memory.content import content_hash
        from junior_memory.extraction import accept, skip_reason, turn_key
        from junior_memory.store import IdempotencyConflict, MemoryConfigError, MemoryUnavailable, ReplaceTargetGone

        reason = skip_reason(transcript, context)
        if reason is not None:
            log.debug("memory extraction skipped: %s", reason)
            return
        try:
            candidates = list(self.extractor.extract(transcript, context))
        except Exception:
            log.exception("memory extractor %r failed", self.extractor)
            return
        source_key = context.conversation.source_key if context.conversation else None
        turn = turn_key(transcript)
        try:
            for candidate, content, scope in accept(candidates, transcript, context):
                actor_key = scope.scope_key if scope.scope == "personal" else (
                    context.actor.key if context.actor else None
                )
                replaces = None
                if candidate.replaces is not None:
                    replaces = self._extraction_target(scope, candidate.replaces)
                    if replaces is None:
                        continue
                try:
                    self.store().remember(
                        content=content,
                        kind=candidate.kind,
                        scope=scope,
                        actor_key=actor_key,
                        source_key=source_key,
                        origin="extraction",
                        idempotency_key=f"extraction:{source_key}:{turn}:{content_hash(content)[:16]}",
                        replaces=replaces,
                    )
                except IdempotencyConflict:
                    log.warning("memory extraction not saved: its turn key already holds a different memory")
                except ReplaceTargetGone:
                    log.info("memory extraction dropped a candidate: the memory it replaces changed meanwhile")
        except MemoryUnavailable as exc:
            log.warning("memory extraction not saved: %s", exc)
        except MemoryConfigError:
            pass  # store() logged what to fix

    def _extraction_target(self, scope: Scope, replaces: str) -> str | None:
        """The id of the speaker's one preference an extracted ``replaces`` names, or None (and why, logged).

        The same lookup as ``memory__remember``'s, in the speaker's personal scope only; anything but exactly one
        match drops the candidate, so a turn never leaves two contradicting preferences nor replaces a guess.
        """
        try:
            return MemoryTools.replaced(self.store(), scope, replaces).id
        except ToolError as exc:
            log.info("memory extraction dropped a candidate: replaces matched %s",
                     "several memories" if exc.code == "ambiguous" else "nothing")
            return None

    @hookimpl
    def shutdown(self) -> None:
        if self._store is not None:
            self._store.close()
