"""Loading plugins: entry points one at a time, failures isolated and reported."""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Sequence
from importlib import metadata
from types import ModuleType
from typing import Any

import attrs
import pluggy

from junior_core import hookspecs
from junior_core.errors import PluginError

__all__ = ["ENTRY_POINT_GROUP", "PluginInfo", "PluginSet", "plugin_name"]

log = logging.getLogger("junior.plugins")
ENTRY_POINT_GROUP = "junior"


@attrs.define
class PluginInfo:
    """What ``junior plugins`` reports about one plugin."""

    name: str
    distribution: str | None = None
    version: str | None = None
    status: str = "loaded"
    error: str | None = None
    hooks: list[str] = attrs.Factory(list)

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def plugin_name(plugin: object) -> str:
    """A readable name for an in-process plugin: its module name, or its class's."""
    if isinstance(plugin, ModuleType):
        return plugin.__name__
    explicit = getattr(plugin, "junior_plugin_name", None)
    if isinstance(explicit, str):
        return explicit
    cls = plugin if isinstance(plugin, type) else type(plugin)
    return f"{cls.__module__}.{cls.__qualname__}"


def _env_list(name: str) -> set[str] | None:
    raw = os.environ.get(name)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def strict_from_env() -> bool:
    return os.environ.get("JUNIOR_STRICT_PLUGINS", "") not in ("", "0", "false", "no")


class PluginSet:
    """A pluggy manager plus what was loaded, in order, and what failed."""

    def __init__(self, *, strict: bool = False) -> None:
        self.pm = pluggy.PluginManager("junior")
        self.pm.add_hookspecs(hookspecs)
        self.strict = strict
        self.infos: list[PluginInfo] = []
        self._order: list[str] = []
        self._impl_cache: dict[str, dict[str, Any]] = {}
        self._trace = os.environ.get("JUNIOR_TRACE_PLUGINS", "") not in ("", "0")

    # -- loading ------------------------------------------------------------------------------
    def add(
        self, plugin: object, name: str | None = None, *, distribution: str | None = None, version: str | None = None
    ) -> PluginInfo:
        """Register one plugin object or module; a class is instantiated so its state is per runtime."""
        if name is None:
            name = base = plugin_name(plugin)
            count = 1
            while self.pm.has_plugin(name) or self.info(name) is not None:  # two instances of one class
                count += 1
                name = f"{base}#{count}"
        info = PluginInfo(name=name, distribution=distribution, version=version)
        try:
            if isinstance(plugin, type):
                plugin = plugin()
            self.pm.register(plugin, name=name)
            try:
                self.pm.check_pending()
            except pluggy.PluginValidationError:
                self.pm.unregister(name=name)
                raise
        except Exception as exc:  # noqa: BLE001 - a plugin may raise anything; it is reported, not propagated
            self._fail(info, f"{type(exc).__name__}: {exc}", exc)
            return info
        self._order.append(name)
        self._impl_cache.clear()
        info.hooks = sorted(impl_name for impl_name in hookspecs.HOOK_NAMES if self._impl(name, impl_name))
        self.infos.append(info)
        return info

    def load_entry_points(self) -> None:
        """Load every ``junior`` entry point, sorted by distribution name, one at a time."""
        allow = _env_list("JUNIOR_LOAD_PLUGINS")
        deny = _env_list("JUNIOR_DISABLE_PLUGINS") or set()
        found: list[tuple[str, str, metadata.EntryPoint, metadata.Distribution | None]] = []
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            dist = getattr(ep, "dist", None)
            dist_name = dist.metadata["Name"] if dist is not None else ""
            found.append((dist_name.lower(), ep.name, ep, dist))
        for dist_name, ep_name, ep, dist in sorted(found, key=lambda row: (row[0], row[1])):
            names = {ep_name, dist_name}
            if allow is not None and not names & allow:
                continue
            if names & deny:
                continue
            version = dist.version if dist is not None else None
            display = dist.metadata["Name"] if dist is not None else None
            start = time.perf_counter()
            try:
                obj = ep.load()
            except Exception as exc:  # noqa: BLE001 - isolation is the point
                info = PluginInfo(name=ep_name, distribution=display, version=version)
                self._fail(info, f"import failed: {type(exc).__name__}: {exc}", exc)
                continue
            self.add(obj, ep_name, distribution=display, version=version)
            log.debug("loaded plugin %s in %.1f ms", ep_name, (time.perf_counter() - start) * 1000)

    def _fail(self, info: PluginInfo, message: str, exc: BaseException) -> None:
        info.status = "failed"
        info.error = message
        self.infos.append(info)
        where = f" ({info.distribution} {info.version})" if info.distribution else ""
        log.warning("plugin %r%s skipped: %s", info.name, where, message)
        if self.strict:
            if isinstance(exc, PluginError):
                raise exc
            raise PluginError(info.name, message) from exc

    def fail_loaded(self, name: str, message: str, exc: BaseException) -> None:
        """Mark an already registered plugin failed and unregister it (strict mode re-raises)."""
        info = self.info(name)
        if info is None:
            raise KeyError(name)
        self.infos.remove(info)
        if name in self._order:
            self._order.remove(name)
        self._impl_cache.clear()
        if self.pm.get_plugin(name) is not None:
            self.pm.unregister(name=name)
        self._fail(info, message, exc)

    def report_error(self, name: str, message: str, exc: BaseException, *, fatal_if_strict: bool = False) -> None:
        """Record an error of a loaded plugin (a failing hook call); ``fatal_if_strict`` re-raises in strict mode."""
        info = self.info(name)
        if info is not None:
            info.error = message if info.error is None else f"{info.error}; {message}"
        # An exception built rather than raised has no traceback worth printing.
        log.warning("plugin %r: %s", name, message, exc_info=exc if exc.__traceback__ is not None else None)
        if self.strict and fatal_if_strict:
            raise PluginError(name, message) from exc

    def info(self, name: str) -> PluginInfo | None:
        for info in self.infos:
            if info.name == name:
                return info
        return None

    @property
    def loaded(self) -> list[str]:
        """Names of loaded plugins in registration order."""
        return list(self._order)

    # -- calling ------------------------------------------------------------------------------
    def _impls(self, hook: str) -> dict[str, Any]:
        """``{plugin: hookimpl}`` of ``hook`` in registration order, cached until the plugins change."""
        cached = self._impl_cache.get(hook)
        if cached is None:
            by_name = {impl.plugin_name: impl for impl in getattr(self.pm.hook, hook).get_hookimpls()}
            cached = {name: by_name[name] for name in self._order if name in by_name}
            self._impl_cache[hook] = cached
        return cached

    def _impl(self, plugin: str, hook: str) -> Any:
        return self._impls(hook).get(plugin)

    def implementers(self, hook: str) -> list[str]:
        """Loaded plugins implementing ``hook``, in registration order."""
        return list(self._impls(hook))

    def call_one(self, plugin: str, hook: str, **kwargs: Any) -> Any:
        """Call one plugin's implementation of ``hook``; exceptions propagate."""
        impl = self._impl(plugin, hook)
        if impl is None:
            return None
        args = {key: kwargs[key] for key in impl.argnames}
        if self._trace:
            print(f"[junior] {hook} -> {plugin}({', '.join(sorted(args))})", file=sys.stderr)
        return impl.function(**args)

    def call_each(self, hook: str, *, fatal_if_strict: bool = False, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call ``hook`` on every plugin; one plugin's failure is reported and the rest still run."""
        results: list[tuple[str, Any]] = []
        for name in self.implementers(hook):
            try:
                results.append((name, self.call_one(name, hook, **kwargs)))
            except Exception as exc:  # noqa: BLE001 - reported with the plugin's name
                self.report_error(
                    name, f"{hook} failed: {type(exc).__name__}: {exc}", exc, fatal_if_strict=fatal_if_strict
                )
        return results


def load(plugins: Sequence[object] | None, *, strict: bool) -> PluginSet:
    """A ``PluginSet`` of the given plugins, or of the installed entry points when ``plugins`` is None."""
    plugin_set = PluginSet(strict=strict)
    if plugins is None:
        plugin_set.load_entry_points()
    else:
        for plugin in plugins:
            plugin_set.add(plugin)
    return plugin_set
