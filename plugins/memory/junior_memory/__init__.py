"""junior-memory: long-term memory for junior agents, scoped by the live actor and conversation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from junior_memory.extraction import Candidate, MemoryExtractor
    from junior_memory.plugin import MemoryPlugin
    from junior_memory.store import MemoryConfigError, MemoryRecord, MemoryStore, MemoryUnavailable

__all__ = [
    "Candidate", "MemoryConfigError", "MemoryExtractor", "MemoryPlugin", "MemoryRecord", "MemoryStore",
    "MemoryUnavailable",
]

_WHERE = {
    "Candidate": "junior_memory.extraction",
    "MemoryExtractor": "junior_memory.extraction",
    "MemoryConfigError": "junior_memory.store",
    "MemoryPlugin": "junior_memory.plugin",
    "MemoryRecord": "junior_memory.store",
    "MemoryStore": "junior_memory.store",
    "MemoryUnavailable": "junior_memory.store",
}


def __getattr__(name: str) -> Any:
    # Lazy, so `import junior_memory` costs nothing until a name is used.
    if name == "__version__":  # the installed distribution's, from its metadata
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("junior-memory")
        except PackageNotFoundError:  # a source tree on sys.path, never installed
            return "0+unknown"
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'junior_memory' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
