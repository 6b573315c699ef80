"""A plugin registering a source id another plugin already took."""

from junior_core import Source, Tool, hookimpl


@hookimpl
def register_sources(register):
    register(Source("good", "A second claim on the same id."), tools=[
        Tool("ping", "Answer ping.", {"type": "object"}, lambda arguments, context: "ping")])
