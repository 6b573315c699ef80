"""A plugin that fails to import."""

import junior_dependency_that_does_not_exist  # noqa: F401
