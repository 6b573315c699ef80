"""A plugin whose hook asks for an argument the hook does not have."""

from junior_core import hookimpl


@hookimpl
def register_sources(register, catalog):
    raise AssertionError("never called")
