"""A working plugin: source `good`."""

from junior_core import Source, Tool, hookimpl


@hookimpl
def register_sources(register):
    register(Source("good", "A plugin that works."), tools=[
        Tool("ping", "Answer pong.", {"type": "object"}, lambda arguments, context: "pong")])
