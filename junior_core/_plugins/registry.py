"""The ``register`` callback handed to ``register_sources``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from junior_core._base.errors import RegistrationError, ToolDefinitionError
from junior_core._catalog.catalog import Provider, Source, Tool

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

    def __call__(
        self, source: Source, tools: Iterable[Tool | Callable[..., Any]] = (), *, provider: Provider | None = None
    ) -> None:
        """Register ``source`` with a fixed list of ``tools``, or with a ``provider`` listing them at run time.

        A tool may be a typed function (``@tool``-marked or plain): it becomes ``Tool.from_function(fn)``.
        """
        if not isinstance(source, Source):
            raise RegistrationError(self.plugin, f"register() takes a junior_core.Source, got {type(source).__name__}")
        if isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
            raise RegistrationError(self.plugin, f"source {source.id!r}: tools must be a list of junior_core.Tool")
        built = tuple(self._as_tool(source, item) for item in tools)
        if provider is not None and built:
            raise RegistrationError(self.plugin, f"source {source.id!r}: pass either tools or a provider, not both")
        if provider is not None and not callable(provider):
            raise RegistrationError(self.plugin, f"source {source.id!r}: provider must be callable")
        self.registrations.append(Registration(source, built, provider))

    def _as_tool(self, source: Source, item: Any) -> Tool:
        if isinstance(item, Tool) or not callable(item):
            return item  # type: ignore[no-any-return]  # the catalog refuses what is not a Tool, naming the plugin
        try:
            return Tool.from_function(item)
        except ToolDefinitionError as exc:
            raise RegistrationError(self.plugin, f"source {source.id!r}: {exc}") from None
