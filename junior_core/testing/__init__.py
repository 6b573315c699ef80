"""A testing kit for plugin authors and bots: a scripted model speaking a real wire format."""

from __future__ import annotations

from junior_core.llm.types import call, say
from junior_core.testing.scripted import Script, ScriptedModel, ScriptView

__all__ = ["Script", "ScriptView", "ScriptedModel", "call", "say"]
