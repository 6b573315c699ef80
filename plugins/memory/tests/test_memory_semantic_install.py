"""Semantic recall with a model to download and no network: the failure names the offline extra, and once the
offline model is installed the very next process uses it (the download's failure is not held against it)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from junior_memory.semantic import DEFAULT_MODEL, FastEmbedEmbedder, Semantic, describe_recall

NOW = 1_800_000_000.0
EXTRA = "pip install 'junior-memory[semantic-offline]'"


class Unreachable(FastEmbedEmbedder):
    """The default model, to be downloaded, with no network to download it from."""

    def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        raise ConnectionError("cannot reach huggingface.co")


class Installed(FastEmbedEmbedder):
    """The same model from the offline wheel's file."""

    calls = 0

    def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        Installed.calls += 1
        return [[1.0, float(len(text))] for text in texts]


def test_a_download_that_fails_offline_names_the_offline_extra(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    marker = tmp_path / "semantic-unavailable.json"
    semantic = Semantic(Unreachable(DEFAULT_MODEL, cache_dir=tmp_path / "fastembed"), marker=marker,
                        clock=lambda: NOW)
    with caplog.at_level(logging.WARNING, logger="junior_memory"):
        assert semantic.vectors(["tea"]) is None
    assert EXTRA in caplog.text and "cannot reach huggingface.co" in caplog.text
    assert EXTRA in json.loads(marker.read_text())["reason"]
    assert EXTRA in describe_recall(semantic)["why"]  # what `junior memory info` prints


def test_a_download_that_never_ends_names_the_offline_extra_too(tmp_path: Path) -> None:
    release = threading.Event()

    class Hanging(FastEmbedEmbedder):
        def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
            release.wait(30)
            return [[1.0] for _ in texts]

    marker = tmp_path / "semantic-unavailable.json"
    try:
        semantic = Semantic(Hanging(DEFAULT_MODEL, cache_dir=tmp_path / "empty"), marker=marker,
                            clock=lambda: NOW, wait=0.01)
        assert semantic.vectors(["tea"]) is None
        assert EXTRA in json.loads(marker.read_text())["reason"]
    finally:
        release.set()


def test_the_offline_model_installed_after_a_failed_download_is_used_by_the_next_process(tmp_path: Path) -> None:
    marker = tmp_path / "semantic-unavailable.json"
    Semantic(Unreachable(DEFAULT_MODEL, cache_dir=tmp_path / "fastembed"), marker=marker,
             clock=lambda: NOW).vectors(["tea"])
    assert marker.is_file()
    # `pip install 'junior-memory[semantic-offline]'`: the next process loads the same model from the wheel's file.
    offline = Installed(DEFAULT_MODEL, onnx=tmp_path / "wheel" / "model.onnx")
    after = Semantic(offline, marker=marker, clock=lambda: NOW + 60)
    info = describe_recall(after)
    assert info["recall"].startswith("semantic") and "could not be used" not in info["why"], info
    # Control: the download itself is still held back for a while.
    again = Semantic(Unreachable(DEFAULT_MODEL, cache_dir=tmp_path / "fastembed"), marker=marker,
                     clock=lambda: NOW + 60)
    assert describe_recall(again)["recall"] == "keyword"
    assert after.vectors(["tea"]) is not None and Installed.calls == 1
