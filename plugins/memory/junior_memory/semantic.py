"""Semantic recall (the ``junior-memory[semantic]`` extra): embeddings of memories, fused with full-text search.

An ``Embedder`` turns texts into vectors; the default runs a fastembed (ONNX, no torch) model. Vectors live in
``junior_memory_vectors``, written in the transaction that writes their memory and deleted with it when it is
archived or purged. Similarity is computed in this process over an in-memory copy of the vectors, grouped by
scope, so a query only ever compares against the scopes the caller may read; every candidate is then read back
through the same visibility filter as keyword search. Anything wrong with the model (extra not installed,
download impossible, broken files, too slow) means keyword recall and one log line, never a failed call.

Importing this module is cheap; numpy and fastembed load when a model is first used.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from queue import SimpleQueue
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from junior_memory.scope import Scope

__all__ = [
    "DEFAULT_MODEL", "ENV_MODEL", "ENV_PATH", "Embedder", "FastEmbedEmbedder", "Semantic", "VectorIndex",
    "default_semantic", "embedder_from_env", "rrf",
]

log = logging.getLogger("junior.memory")

T = TypeVar("T")

ENV_MODEL = "JUNIOR_MEMORY_EMBEDDING_MODEL"
ENV_PATH = "JUNIOR_MEMORY_EMBEDDING_PATH"
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# Reciprocal-rank fusion constant: the usual 60, so neither list's top rank dominates the other's.
RRF_K = 60
# How long a caller waits for an embedding before answering without it (the model may still be loading).
WAIT_S = 2.0
# Cosine similarity below which a memory is not "similar" at all. Nearest neighbours always exist; without a floor
# every query would pull in unrelated memories. 0.3 sits between paraphrases (0.35-0.7 with MiniLM-class models)
# and unrelated sentences (below 0.15); another model may want another floor (``Semantic(min_similarity=...)``).
MIN_SIMILARITY = 0.3
# After a model failed to load, try again only this much later: a missing file does not fix itself per call.
RETRY_S = 600.0


@runtime_checkable
class Embedder(Protocol):
    """Texts to unit-length vectors of one model; ``name`` tells vectors of different models apart."""

    name: str

    def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]: ...


class FastEmbedEmbedder:
    """A fastembed ``TextEmbedding``: a model name from fastembed's list, optionally loaded from a local folder.

    Without ``path`` the model is downloaded on first use into the user cache directory (and the log says so);
    with ``path`` (a folder holding ``model.onnx``, ``tokenizer.json`` and its config files) nothing is fetched.
    """

    def __init__(self, model: str = DEFAULT_MODEL, *, path: str | Path | None = None,
                 cache_dir: str | Path | None = None) -> None:
        self.name = model
        self.path = Path(path) if path else None
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self._model: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<FastEmbedEmbedder {self.name}{' from ' + str(self.path) if self.path else ''}>"

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from fastembed import TextEmbedding

                _quiet_fastembed()
                if self.path is not None:
                    self._model = TextEmbedding(model_name=self.name, specific_model_path=str(self.path))
                else:
                    cache = self.cache_dir or _cache_dir()
                    log.info("memory: loading embedding model %s (downloaded into %s on first use)", self.name, cache)
                    self._model = TextEmbedding(model_name=self.name, cache_dir=str(cache))
            return self._model

    def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        return list(self._load().embed(list(texts)))


def _quiet_fastembed() -> None:
    """fastembed logs each download retry through loguru; the plugin says it once, through logging, instead."""
    try:
        from loguru import logger

        logger.disable("fastembed")
    except ImportError:
        pass


def _cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("junior", appauthor=False)) / "fastembed"


_shared: dict[tuple[str, str], Semantic] = {}
_shared_lock = threading.Lock()


def default_semantic() -> Semantic | None:
    """The process's default semantic recall (one model load and one breaker per process), or None without it."""
    embedder = embedder_from_env()
    if embedder is None:
        return None
    key = (embedder.name, str(getattr(embedder, "path", "") or ""))
    with _shared_lock:
        if key not in _shared:
            _shared[key] = Semantic(embedder)
        return _shared[key]


def embedder_from_env() -> Embedder | None:
    """The default embedder: fastembed when the extra is installed, unless ``JUNIOR_MEMORY_EMBEDDING_MODEL=off``."""
    import importlib.util

    model = os.environ.get(ENV_MODEL, "").strip()
    if model.lower() in ("off", "none", "0", "false"):
        return None
    if importlib.util.find_spec("fastembed") is None:
        return None  # the extra is not installed: keyword search, as before
    return FastEmbedEmbedder(model or DEFAULT_MODEL, path=os.environ.get(ENV_PATH, "").strip() or None)


def rrf(*rankings: Sequence[str]) -> list[str]:
    """Ids ordered by reciprocal-rank fusion of ``rankings`` (best first); ties keep the first ranking's order."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking):
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank + 1)
    order = {key: i for i, key in enumerate(k for ranking in rankings for k in ranking)}
    return sorted(scores, key=lambda key: (-scores[key], order[key]))


class _Worker:
    """One daemon thread that runs embeddings, so a caller waits at most its deadline (a download may not end)."""

    def __init__(self) -> None:
        self._queue: SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="junior-memory-embed", daemon=True)
                self._thread.start()
        self._queue.put((fn, future))
        return future

    def _loop(self) -> None:
        while True:
            fn, future = self._queue.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
                future.set_exception(exc)


class Semantic:
    """An embedder behind a deadline and a circuit breaker: vectors when the model answers, else None and one log."""

    def __init__(self, embedder: Embedder, *, wait: float = WAIT_S, min_similarity: float = MIN_SIMILARITY) -> None:
        self.embedder = embedder
        self.wait = wait
        self.min_similarity = min_similarity
        self._worker = _Worker()
        self._broken_until = 0.0
        self._pending: Future[list[bytes]] | None = None
        self._warned = False
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return str(self.embedder.name)

    def _fall_back(self, why: str) -> None:
        with self._lock:
            if not self._warned:
                self._warned = True
                log.warning("memory: semantic recall is off for now (%s); recall and search use keywords only", why)

    def vectors(self, texts: Sequence[str], *, wait: float | None = None) -> list[bytes] | None:
        """``texts`` as stored vectors (float32 bytes, unit length), or None when the model cannot answer in time."""
        if time.monotonic() < self._broken_until:
            return None
        pending = self._pending
        if pending is not None and not pending.done():
            return None  # a slow first load (a download) is still going: do not queue behind it
        future = self._pending = self._worker.submit(lambda: self._embed(list(texts)))
        try:
            return future.result(timeout=self.wait if wait is None else wait)
        except FutureTimeout:
            self._fall_back(f"embedding model {self.model} did not answer within {self.wait:g} s")
            return None
        except Exception:  # noqa: BLE001 - _embed logged it; any model failure means keyword recall
            return None

    def _embed(self, texts: list[str]) -> list[bytes]:
        """On the worker thread: a failure here opens the breaker even when no caller is waiting any more."""
        try:
            packed = [_pack(vector) for vector in self.embedder.embed(texts)]
            if len(packed) != len(texts):
                raise ValueError(f"{len(packed)} vectors for {len(texts)} texts")
        except Exception as exc:
            self._broken_until = time.monotonic() + RETRY_S
            self._fall_back(f"embedding model {self.model} failed: {type(exc).__name__}: {exc}")
            raise
        if self._warned:
            with self._lock:
                self._warned = False
            log.info("memory: embedding model %s answers again; semantic recall is back on", self.model)
        return packed

    def vector(self, text: str, *, wait: float | None = None) -> bytes | None:
        packed = self.vectors([text], wait=wait)
        return packed[0] if packed else None


def _pack(vector: Sequence[float]) -> bytes:
    import numpy as np

    array = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(array))
    if array.size == 0 or not np.isfinite(norm) or norm == 0.0:
        raise ValueError("empty, zero or non-finite vector")
    return (array / norm).astype(np.float32).tobytes()


class _Block:
    """The vectors of one scope: a matrix built lazily from appended rows."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.rows: list[bytes] = []
        self.matrix: NDArray[np.float32] | None = None

    def add(self, memory_id: str, vector: bytes) -> None:
        self.ids.append(memory_id)
        self.rows.append(vector)
        self.matrix = None

    def scores(self, query: NDArray[np.float32]) -> NDArray[np.float32]:
        import numpy as np

        if self.matrix is None:
            self.matrix = np.frombuffer(b"".join(self.rows), dtype=np.float32).reshape(len(self.rows), -1)
        result: NDArray[np.float32] = self.matrix @ query
        return result


class VectorIndex:
    """This process's copy of one model's vectors, grouped by scope and caught up from the table before a query.

    Rows arrive in ``seq`` order, so catching up reads only what other writers added since. A memory archived or
    purged elsewhere may linger here; the store reads every candidate back through the visibility filter.
    """

    def __init__(self, model: str) -> None:
        self.model = model
        self.seq = 0
        self.blocks: dict[tuple[str, str], _Block] = {}
        self.gone: set[str] = set()
        self.lock = threading.Lock()

    def add(self, rows: Sequence[Any]) -> None:
        """``(seq, memory_id, vector, scope, scope_key)`` rows, in ``seq`` order."""
        for seq, memory_id, vector, scope, scope_key in rows:
            self.blocks.setdefault((scope, scope_key), _Block()).add(memory_id, bytes(vector))
            self.gone.discard(memory_id)
            self.seq = max(self.seq, int(seq))

    def forget(self, memory_ids: Sequence[str]) -> None:
        with self.lock:
            self.gone.update(memory_ids)

    def nearest(self, query: bytes, scopes: Sequence[Scope], limit: int, *, floor: float = -1.0) -> list[str]:
        """The ``limit`` ids most similar to ``query`` (at least ``floor``) in ``scopes`` only, best first."""
        import numpy as np

        with self.lock:
            return self._nearest(np.frombuffer(query, dtype=np.float32), len(query), scopes, limit, floor)

    def _nearest(self, q: Any, size: int, scopes: Sequence[Scope], limit: int, floor: float) -> list[str]:
        import numpy as np

        ids: list[str] = []
        parts = []
        for scope in scopes:
            block = self.blocks.get((scope.scope, scope.scope_key))
            if block is None or not block.ids:
                continue
            # A vector of another size is another model's: never compared.
            scores = block.scores(q) if len(block.rows[0]) == size else None
            if scores is None:
                continue
            ids += block.ids
            parts.append(scores)
        if not parts:
            return []
        scores = np.concatenate(parts)
        want = min(len(ids), limit + len(self.gone))
        top = np.argpartition(-scores, want - 1)[:want] if want < len(ids) else np.arange(len(ids))
        ranked = sorted(top.tolist(), key=lambda i: (-float(scores[i]), ids[i]))
        return [ids[i] for i in ranked if ids[i] not in self.gone and scores[i] >= floor][:limit]
