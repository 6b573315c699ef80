"""Every public exception shares one base, and the built-ins callers catch stay bases."""

from __future__ import annotations

import pytest

import junior_core
from junior_core._base import errors


@pytest.mark.parametrize("name", [n for n in errors.__all__ if n != "JuniorError"])
def test_every_public_exception_is_a_junior_error_exported_by_junior_core(name: str) -> None:
    cls = getattr(errors, name)
    assert issubclass(cls, errors.JuniorError)
    assert getattr(junior_core, name) is cls


def test_built_in_bases_stay_and_old_import_paths_name_the_same_classes() -> None:
    from junior_core._base.config import ConfigError
    from junior_core._schemas.functions import ToolDefinitionError
    from junior_core.llm import ModelConfigError

    assert ConfigError is errors.ConfigError and issubclass(ConfigError, ValueError)
    assert ToolDefinitionError is errors.ToolDefinitionError and issubclass(ToolDefinitionError, TypeError)
    assert ModelConfigError is errors.ModelConfigError
    with pytest.raises(junior_core.JuniorError, match="plugin 'p': broken"):
        raise junior_core.RegistrationError("p", "broken")
