"""Model clients and the agent loop, kept outside the framework core.

``types`` is the model-neutral conversation; ``openai`` and ``anthropic`` map it
to their APIs (the SDKs come with ``pip install 'junior-core[openai]'`` or
``[anthropic]`` and are imported only when a client is built); ``agent`` runs a
user turn through a model and a runtime's tools. The mapping functions are public
and pure so that the scripted model (``junior_core.testing.ScriptedModel``) and test
servers run every request and reply through exactly the code a live client uses.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from junior_core._base.errors import ModelError
from junior_core.llm.types import ModelClient, ModelConfigError

__all__ = ["ModelClient", "ModelConfigError", "ModelError", "model_from_env", "model_from_spec"]


SPECS = "echo, script:<file>, openai:<model>, anthropic:<model> or openai-compatible:<base_url>#<model>"


def model_from_spec(spec: str, env: Mapping[str, str] | None = None) -> ModelClient:
    """A client for ``openai:<model>``, ``anthropic:<model>`` or ``openai-compatible:<base_url>#<model>``, or an
    offline model that needs no key, network or SDK: ``echo`` or ``script:<file>`` (``junior_core.llm.offline``).

    Credentials come from the environment: ``OPENAI_API_KEY`` (and the SDK's own
    ``OPENAI_BASE_URL``), ``ANTHROPIC_API_KEY``; a compatible server takes
    ``JUNIOR_MODEL_API_KEY`` when it needs one. Raises ``ModelConfigError`` saying
    what is missing.
    """
    from junior_core.llm.offline import offline_model

    env = os.environ if env is None else env
    offline = offline_model(spec)
    if offline is not None:
        return offline
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ModelConfigError(f"invalid model {spec!r}: use {SPECS}")
    if kind == "openai":
        if not env.get("OPENAI_API_KEY"):
            raise ModelConfigError(f"{spec}: OPENAI_API_KEY is not set")
        from junior_core.llm.openai import OpenAIChatModel  # each client module loads when its model is asked for

        return OpenAIChatModel(
            rest, api_key=env["OPENAI_API_KEY"], base_url=env.get("OPENAI_BASE_URL") or None, name=spec
        )
    if kind == "anthropic":
        if not env.get("ANTHROPIC_API_KEY"):
            raise ModelConfigError(f"{spec}: ANTHROPIC_API_KEY is not set")
        from junior_core.llm.anthropic import AnthropicModel

        return AnthropicModel(
            rest, api_key=env["ANTHROPIC_API_KEY"], base_url=env.get("ANTHROPIC_BASE_URL") or None, name=spec
        )
    if kind == "openai-compatible":
        base_url, hash_, model = rest.rpartition("#")
        if not hash_ or not base_url or not model:
            raise ModelConfigError(f"invalid model {spec!r}: use openai-compatible:<base_url>#<model>")
        # Local servers (vLLM, llama.cpp, Ollama) ignore the key, but the SDK insists on one.
        api_key = env.get("JUNIOR_MODEL_API_KEY") or "not-needed"
        from junior_core.llm.openai import OpenAIChatModel

        return OpenAIChatModel(model, base_url=base_url, api_key=api_key, name=spec)
    raise ModelConfigError(
        f"unknown model provider {kind!r} in {spec!r}: use echo, script, openai, anthropic or openai-compatible"
    )


def model_from_env(variable: str = "JUNIOR_MODEL", env: Mapping[str, str] | None = None) -> ModelClient | None:
    """The client ``$JUNIOR_MODEL`` names, or None when it is unset."""
    env = os.environ if env is None else env
    spec = (env.get(variable) or "").strip()
    return model_from_spec(spec, env) if spec else None
