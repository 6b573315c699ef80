"""The ``register`` callback handed to ``register_sources``."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from junior_core.catalog import Provider, Source, Tool
from junior_core.errors import RegistrationError

__all__ = ["Register", "Registration"]


@attrs.frozen
class Registration:
    source: Source
    tools: tuple[Tool, ...]
    provider: Provider | None = attrs.field(eq=False)


class Register:
    """Collects one plugin's registrations so the core can apply them together or not at all."""

    def __init__(self, plugin: str) -> None:
        self.plugin = plugin
        self.registrations: list[Registration] = []

    def __call__(self, source: Source, tools: Iterable[Tool] = (), *, provider: Provider | None = None) -> None:
        """Register ``source`` with a fixed list of ``tools``, or with a ``provider`` listing them at run time."""
        if not isinstance(source, Source):
            raise RegistrationError(self.plugin, f"register() takes a junior_core.Source, got {type(source).__name__}")
        if isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
            raise RegistrationError(self.plugin, f"source {source.id!r}: tools must be a list of junior_core.Tool")
        tools = tuple(tools)
        if provider is not None and tools:
            raise RegistrationError(self.plugin, f"source {source.id!r}: pass either tools or a provider, not both")
        if provider is not None and not callable(provider):
            raise RegistrationError(self.plugin, f"source {source.id!r}: provider must be callable")
        self.registrations.append(Registration(source, tools, provider))
