"""A runtime's parts made and wired from its options: the catalog, the host's exposure rules, the plugins, who may
reach what, discovery, and the two halves of a call; the facade holds them and calls the ``startup`` hooks."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from junior_core._base.errors import RegistrationError
from junior_core._calls.dispatch import Dispatch
from junior_core._calls.execution import Execution
from junior_core._catalog.catalog import Catalog
from junior_core._catalog.exposure import ExposurePolicy, Reach, host_rules
from junior_core._discovery import Discovery
from junior_core._plugins.plugin_set import PluginSet, load, strict_from_env
from junior_core._plugins.registry import Register
from junior_core._runtime.options import RuntimeOptions

Plugins = Sequence[object] | PluginSet | None
"""What a runtime loads: these plugins (``()``, the default, is none), or None for the installed entry points."""


@attrs.frozen
class Parts:
    catalog: Catalog
    policy: ExposurePolicy
    plugins: PluginSet
    reach: Reach
    discovery: Discovery
    dispatch: Dispatch
    execution: Execution


def assemble(given: Plugins, options: RuntimeOptions) -> Parts:
    """Every part of a runtime, plugins loaded (strictly when given explicitly, unless ``options.strict`` says)."""
    catalog = Catalog()
    policy = ExposurePolicy(host_rules(options.config, options.exposure))
    if isinstance(given, PluginSet):
        plugins = given
    else:
        strict = options.strict
        if strict is None:
            strict = strict_from_env() if given is None else True
        plugins = load(None if given is None else list(given), strict=strict)
    plugins.set_deadlines(hook_timeout_s=options.hook_timeout_s, startup_timeout_s=options.startup_timeout_s,
                          clock=options.clock)
    reach = Reach(catalog, policy, plugins)
    index = options.index_factory() if options.index_factory is not None else None
    discovery = Discovery(catalog, reach, index_cache=options.index_cache, index=index,
                          max_answer_chars=options.max_search_chars)
    dispatch = Dispatch(catalog, reach, discovery, plugins, options.default_timeout_s)
    execution = Execution(options.max_hung_per_source, options.max_result_chars, options.clock)
    return Parts(catalog, policy, plugins, reach, discovery, dispatch, execution)


def register_sources(plugins: PluginSet, catalog: Catalog) -> None:
    """Each plugin's ``register_sources``, its registrations added together or, when one is refused, none of them
    (the plugin reported failed and skipped)."""
    for name in plugins.implementers("register_sources"):
        register = Register(name)
        try:
            plugins.register_sources(name, register)
            for reg in register.registrations:
                catalog.add_source(name, reg.source, reg.tools, reg.provider)
        except Exception as exc:  # noqa: BLE001 - a broken plugin is reported and skipped
            catalog.remove_plugin(name)
            if isinstance(exc, RegistrationError):
                refused = exc
            else:
                refused = RegistrationError(name, f"register_sources failed: {type(exc).__name__}: {exc}")
                refused.__cause__ = exc
            plugins.fail_loaded(name, str(refused), refused)
