"""A plugin with a misspelled hook name."""

from junior_core import hookimpl


@hookimpl
def register_source(register):
    raise AssertionError("never called")
