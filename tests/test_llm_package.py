"""The LLM code lives outside the framework core: importing junior_core (or the llm modules) loads no SDK."""

from __future__ import annotations

import subprocess
import sys

import pytest

from junior_core.llm import ModelConfigError, model_from_spec


@pytest.mark.slow
def test_core_and_llm_modules_import_no_sdk() -> None:
    code = (
        "import sys\n"
        "import junior_core, junior_core._runtime.runtime, junior_core.cli\n"
        "import junior_core.llm, junior_core.llm.types, junior_core.llm.openai, junior_core.llm.anthropic\n"
        "import junior_core.llm.agent, junior_core.testing\n"
        "loaded = sorted(m for m in ('openai', 'anthropic', 'httpx') if m in sys.modules)\n"
        "print(','.join(loaded))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == ""


@pytest.mark.slow
def test_memory_model_helpers_depend_on_the_types_only() -> None:
    code = (
        "import sys\n"
        "import junior_memory.model_helpers, junior_memory.extraction, junior_memory.review\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('junior_core.llm'))))\n"
    )
    pytest.importorskip("junior_memory")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == "junior_core.llm,junior_core.llm.types"


def test_a_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # import of a None entry raises ImportError
    with pytest.raises(ModelConfigError, match=r"pip install 'junior-core\[anthropic\]'"):
        model_from_spec("anthropic:claude-x", {"ANTHROPIC_API_KEY": "k"})
