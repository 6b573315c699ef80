"""A set of plugins and their hooks called: one plugin at a time, in pluggy's order, each call with a deadline."""

from __future__ import annotations

import contextvars
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from junior_core._base.errors import PluginError, RegistrationError
from junior_core._plugins import hookspecs
from junior_core._plugins.loading import (
    DEFAULT_HOOK_TIMEOUT_S,
    DEFAULT_STARTUP_TIMEOUT_S,
    ENTRY_POINT_GROUP,
    HOOK_TIMEOUT_ENV,
    STARTUP_TIMEOUT_ENV,
    PluginInfo,
    did_you_mean,
    env_list,
    plugin_name,
    seconds,
    strict_from_env,
)
from junior_core.clock import MONOTONIC, Clock

if TYPE_CHECKING:
    import click

    from junior_core._base.workers import DaemonPool
    from junior_core._catalog.catalog import CatalogTool, Tool
    from junior_core._plugins.hookspecs import Host
    from junior_core._plugins.registry import Register
    from junior_core.context import Message, ToolContext

__all__ = [
    "DEFAULT_HOOK_TIMEOUT_S",
    "DEFAULT_STARTUP_TIMEOUT_S",
    "ENTRY_POINT_GROUP",
    "PluginInfo",
    "PluginSet",
    "Veto",
    "load",
    "plugin_name",
    "strict_from_env",
]

log = logging.getLogger("junior.plugins")
# A plugin with this many calls still running past their deadline is not called again until one returns, so
# a hook that never answers holds a few abandoned threads, not one per call.
MAX_OVERDUE_CALLS = 4


@attrs.frozen
class Veto:
    """A refused tool call: the plugin that refused it and the message the model receives."""

    plugin: str
    message: str


@attrs.frozen
class _Outcome:
    value: Any = None
    error: BaseException | None = None
    timed_out: bool = False



class PluginSet:
    """A pluggy manager plus what was loaded, in order, and what failed; hooks are called through its methods.

    Each implementation is called on its own, in pluggy's order, on a worker thread with a deadline: one
    plugin's exception or hang is reported under its name and the others still run. Hook wrappers are
    refused at registration, because what a wrapper is for (seeing and replacing the combined result and
    the exceptions of the implementations inside it) does not exist when each plugin is isolated.
    """

    def __init__(
        self,
        *,
        strict: bool = False,
        hook_timeout_s: float | None = None,
        startup_timeout_s: float | None = None,
    ) -> None:
        self.pm = pluggy.PluginManager("junior")
        self.pm.add_hookspecs(hookspecs)
        self.strict = strict
        self.infos: list[PluginInfo] = []
        self._order: list[str] = []
        self._impl_cache: dict[str, list[tuple[str, pluggy.HookImpl]]] = {}
        self._callers: dict[tuple[str, str], Callable[[dict[str, Any]], Any]] = {}
        self.hook_timeout_s = DEFAULT_HOOK_TIMEOUT_S
        self.startup_timeout_s = DEFAULT_STARTUP_TIMEOUT_S
        self.clock: Clock = MONOTONIC
        self.set_deadlines(hook_timeout_s=hook_timeout_s, startup_timeout_s=startup_timeout_s)
        self._pool: DaemonPool | None = None
        self._lock = threading.Lock()
        self._overdue: dict[str, int] = {}
        if os.environ.get("JUNIOR_TRACE_PLUGINS", "") not in ("", "0"):
            from junior_core._plugins.tracing import HookTrace  # only when tracing is asked for

            trace = HookTrace(self.pm)
            self.pm.add_hookcall_monitoring(trace.before, trace.after)

    def set_deadlines(
        self,
        *,
        hook_timeout_s: float | None = None,
        startup_timeout_s: float | None = None,
        clock: Clock | None = None,
    ) -> None:
        """Set the hook deadlines in seconds, and the clock they are measured on (None: the monotonic clock).

        ``hook_timeout_s`` bounds each turn hook call (``prompt_context``, ``after_turn``,
        ``before_tool_execute``, ``tool_visible``); ``startup_timeout_s`` each ``register_*``, ``startup`` and
        ``shutdown`` call. None takes ``JUNIOR_HOOK_TIMEOUT_S`` / ``JUNIOR_STARTUP_TIMEOUT_S``, else the default.
        """
        self.hook_timeout_s = seconds(hook_timeout_s, HOOK_TIMEOUT_ENV, DEFAULT_HOOK_TIMEOUT_S)
        self.startup_timeout_s = seconds(startup_timeout_s, STARTUP_TIMEOUT_ENV, DEFAULT_STARTUP_TIMEOUT_S)
        self.clock = clock or MONOTONIC

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
                self._check(plugin, name)
            except BaseException:
                self.pm.unregister(name=name)
                raise
        except Exception as exc:  # noqa: BLE001 - a plugin may raise anything; it is reported, not propagated
            message = str(exc) if isinstance(exc, PluginError) else f"{type(exc).__name__}: {exc}"
            self._fail(info, message, exc)
            return info
        self._order.append(name)
        self._impl_cache.clear()
        self._callers.clear()
        info.hooks = sorted(hook for hook in hookspecs.HOOK_NAMES if self._impl(name, hook) is not None)
        self.infos.append(info)
        return info

    def _check(self, plugin: object, name: str) -> None:
        """Refuse unknown hooks (suggesting the right name) and hook wrappers, naming the plugin."""
        callers = self.pm.get_hookcallers(plugin) or []
        unknown = [
            c.name
            for c in callers
            if not c.has_spec() and any(i.plugin is plugin and not i.optionalhook for i in c.get_hookimpls())
        ]
        if unknown:
            raise RegistrationError(name, f"unknown hook {unknown[0]!r}{did_you_mean(unknown[0])}")
        self.pm.check_pending()
        for caller in callers:
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin and (impl.wrapper or impl.hookwrapper):
                    kind = "wrapper=True" if impl.wrapper else "hookwrapper=True"
                    raise RegistrationError(
                        name,
                        f"{caller.name} is a hook wrapper ({kind}), which junior does not support: each plugin's "
                        "implementation is called on its own, with its own deadline, so there is no combined "
                        "result for a wrapper to see. Drop the wrapper option; use tryfirst=True or trylast=True "
                        "to run before or after the other plugins.",
                    )

    def load_entry_points(self) -> None:
        """Load every ``junior`` entry point, sorted by distribution name, one at a time."""
        allow = env_list("JUNIOR_LOAD_PLUGINS")
        deny = env_list("JUNIOR_DISABLE_PLUGINS") or set()
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
        self._callers.clear()
        if self.pm.get_plugin(name) is not None:
            self.pm.unregister(name=name)
        self._fail(info, message, exc)

    def report_error(self, name: str, message: str, exc: BaseException, *, fatal_if_strict: bool = False) -> None:
        """Record an error of a loaded plugin (a failing hook call); ``fatal_if_strict`` re-raises in strict mode."""
        self.note(name, message)
        # An exception built rather than raised has no traceback worth printing.
        log.warning("plugin %r: %s", name, message, exc_info=exc if exc.__traceback__ is not None else None)
        if self.strict and fatal_if_strict:
            raise PluginError(name, message) from exc

    def note(self, plugin: object, message: str) -> None:
        """Add ``message`` to a loaded plugin's ``error`` (the plugin object or its name), once, without logging."""
        name = plugin if isinstance(plugin, str) else self.pm.get_name(plugin)
        info = self.info(name) if name is not None else None
        if info is not None and (info.error is None or message not in info.error.split("; ")):
            info.error = message if info.error is None else f"{info.error}; {message}"

    def info(self, name: str) -> PluginInfo | None:
        for info in self.infos:
            if info.name == name:
                return info
        return None

    @property
    def loaded(self) -> list[str]:
        """Names of loaded plugins in registration order."""
        return list(self._order)

    def close(self) -> None:
        """Let the idle hook threads go; a later hook call starts new ones."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    # -- the hooks, one typed method each -----------------------------------------------------
    def register_sources(self, plugin: str, register: Register) -> None:
        """Call one plugin's ``register_sources``; its exception, or ``TimeoutError`` past the deadline, propagates."""
        outcome = self._call(plugin, "register_sources", {"register": register}, self.startup_timeout_s)
        if outcome.timed_out:
            raise TimeoutError(f"register_sources did not return within {self.startup_timeout_s:g} s")
        if outcome.error is not None:
            raise outcome.error

    def register_commands(self, cli: click.Group) -> None:
        """Let every plugin add its commands to ``cli``; a failing plugin is reported and the others still run."""
        self._each("register_commands", {"cli": cli}, self.startup_timeout_s)

    def config_files(self) -> list[tuple[str, str]]:
        """``(plugin, path)`` for every file a plugin says it reads; a failing plugin is reported and skipped."""
        files: list[tuple[str, str]] = []
        for plugin, result in self._each("config_files", {}, self.startup_timeout_s):
            if result is None:
                continue
            if isinstance(result, str) or not isinstance(result, Sequence):
                log.warning("plugin %r: config_files returned %s, not a list of paths; ignored", plugin,
                            type(result).__name__)
                continue
            files.extend((plugin, str(path)) for path in result if isinstance(path, str | os.PathLike))
        return files

    def startup(self, runtime: Host, plugin: str | None = None) -> None:
        """Run every plugin's ``startup`` (or just ``plugin``'s); a failure or overrun is the plugin's error
        (raised in strict mode)."""
        self._each("startup", {"runtime": runtime}, self.startup_timeout_s, fatal_if_strict=True, only=plugin)

    def shutdown(self, runtime: Host) -> None:
        """Run every plugin's ``shutdown``; a failure or overrun is logged and the others still run."""
        self._each("shutdown", {"runtime": runtime}, self.startup_timeout_s)

    def prompt_context(self, context: ToolContext, user_text: str) -> list[str]:
        """Every plugin's non-blank blocks, in call order; a failing or late plugin contributes nothing."""
        blocks: list[str] = []
        for plugin, result in self._each("prompt_context", {"context": context, "user_text": user_text}):
            if isinstance(result, str):
                result = [result]
            elif result is not None and not isinstance(result, Sequence):
                log.warning("plugin %r: prompt_context returned %s, not text; ignored", plugin, type(result).__name__)
                continue
            blocks.extend(block for block in result or () if isinstance(block, str) and block.strip())
        return blocks

    def after_turn(self, context: ToolContext, transcript: Sequence[Message]) -> None:
        """Show every plugin the finished turn; a failing or late plugin is logged and the others still run."""
        self._each("after_turn", {"context": context, "transcript": transcript})

    def before_tool_execute(self, tool: Tool, arguments: dict[str, Any], context: ToolContext) -> Veto | None:
        """The first veto in call order, or None; a policy that raises or misses its deadline denies (fail closed)."""
        kwargs = {"tool": tool, "arguments": arguments, "context": context}
        for plugin, _ in self._impls("before_tool_execute"):
            # Imported here: protocol (what the model reads) is not needed at `junior --help`, which loads plugins.
            from junior_core import _protocol as protocol

            outcome = self._call(plugin, "before_tool_execute", kwargs, self.hook_timeout_s)
            if outcome.timed_out:
                log.warning(
                    "plugin %r: before_tool_execute did not answer within %g s; denying %s",
                    plugin, self.hook_timeout_s, tool.name,
                )
                return Veto(plugin, protocol.POLICY_LATE)
            if outcome.error is not None:
                log.error(
                    "plugin %r: before_tool_execute failed; denying %s", plugin, tool.name, exc_info=outcome.error
                )
                return Veto(plugin, protocol.POLICY_FAILED)
            veto = outcome.value
            if veto is None or veto is True:
                continue
            reason = veto if isinstance(veto, str) and veto.strip() else protocol.NOT_PERMITTED
            return Veto(plugin, reason[:500])
        return None

    def tool_visible(self, tools: Sequence[CatalogTool], context: ToolContext) -> frozenset[str] | None:
        """The tool_names some plugin hides from ``context``, or None when a plugin failed to answer.

        Each plugin is asked about every tool in one call on its worker thread, under one deadline; a plugin
        that raises, overruns or answers something other than True, False or None leaves None, which the
        caller takes as every tool hidden (fail closed).
        """
        hidden: set[str] = set()
        for plugin, _ in self._impls("tool_visible"):
            asked = [t for t in tools if t.tool_name not in hidden]
            batch = [
                {"tool": t.tool, "tool_name": t.tool_name, "source": t.source_id, "context": context} for t in asked
            ]
            outcome = self._call(plugin, "tool_visible", {}, self.hook_timeout_s, batch=batch)
            if outcome.timed_out:
                log.warning("plugin %r: tool_visible did not answer within %g s; hiding every tool",
                            plugin, self.hook_timeout_s)
                return None
            if outcome.error is not None:
                log.error("plugin %r: tool_visible failed; hiding every tool", plugin, exc_info=outcome.error)
                return None
            for entry, answer in zip(asked, outcome.value, strict=True):
                if answer is False:
                    hidden.add(entry.tool_name)
                elif answer is not None and answer is not True:
                    from junior_core._plugins.tracing import brief  # only for this log line

                    log.error("plugin %r: tool_visible answered %s for %s, not True, False or None; hiding every "
                              "tool", plugin, brief(answer), entry.tool_name)
                    return None
        return frozenset(hidden)

    # -- calling ------------------------------------------------------------------------------
    def _impls(self, hook: str) -> list[tuple[str, pluggy.HookImpl]]:
        """``(plugin, impl)`` of ``hook`` in call order, cached until the plugins change.

        pluggy's tiers decide (``tryfirst``, then plain, then ``trylast``); inside a tier, registration order,
        where pluggy itself would call the newest first, so ``Runtime(plugins=[a, b])`` reads top-down and
        the first plugin's source id wins.
        """
        cached = self._impl_cache.get(hook)
        if cached is None:
            position = {name: index for index, name in enumerate(self._order)}
            found = [
                (impl.plugin_name, impl)
                for impl in getattr(self.pm.hook, hook).get_hookimpls()
                if impl.plugin_name in position
            ]
            found.sort(key=lambda row: (0 if row[1].tryfirst else 2 if row[1].trylast else 1, position[row[0]]))
            cached = self._impl_cache[hook] = found
        return cached

    def _caller(self, plugin: str, hook: str, impl: pluggy.HookImpl) -> Callable[[dict[str, Any]], Any]:
        """``hook`` of ``plugin`` alone, returning its one answer; cached until the plugins change.

        pluggy's ``subset_hook_caller`` calls a hook on some plugins through the same path as every hook call,
        so ``add_hookcall_monitoring`` (``JUNIOR_TRACE_PLUGINS``) still sees each call while junior isolates them.
        """
        key = (plugin, hook)
        found = self._callers.get(key)
        if found is None:
            others = [other for other in self.pm.get_plugins() if other is not impl.plugin]
            caller = self.pm.subset_hook_caller(hook, remove_plugins=others)
            first = bool(caller.spec is not None and caller.spec.opts.get("firstresult"))

            def call_one(kwargs: dict[str, Any]) -> Any:
                result = caller(**kwargs)
                if first:
                    return result
                return result[0] if result else None  # pluggy leaves a None answer out of the list

            found = self._callers[key] = call_one
        return found

    def _impl(self, plugin: str, hook: str) -> pluggy.HookImpl | None:
        for name, impl in self._impls(hook):
            if name == plugin:
                return impl
        return None

    def implements(self, hook: str) -> bool:
        """Whether any loaded plugin implements ``hook`` (cheap: asked on every tool call)."""
        return bool(self._impls(hook))

    def implementers(self, hook: str) -> list[str]:
        """Loaded plugins implementing ``hook``, in call order."""
        return [name for name, _ in self._impls(hook)]

    def _each(
        self,
        hook: str,
        kwargs: Mapping[str, Any],
        timeout: float | None = None,
        *,
        fatal_if_strict: bool = False,
        only: str | None = None,
    ) -> list[tuple[str, Any]]:
        """Call ``hook`` on every plugin in order; a failure or overrun is reported and the rest still run."""
        limit = self.hook_timeout_s if timeout is None else timeout
        results: list[tuple[str, Any]] = []
        for plugin, _ in self._impls(hook):
            if only is not None and plugin != only:
                continue
            outcome = self._call(plugin, hook, kwargs, limit)
            if outcome.timed_out:
                self.report_error(
                    plugin,
                    f"{hook} did not return within {limit:g} s; its part was skipped",
                    TimeoutError(f"{hook} of plugin {plugin!r}"),
                    fatal_if_strict=fatal_if_strict,
                )
            elif outcome.error is not None:
                exc = outcome.error
                self.report_error(
                    plugin, f"{hook} failed: {type(exc).__name__}: {exc}", exc, fatal_if_strict=fatal_if_strict
                )
            else:
                results.append((plugin, outcome.value))
        return results

    def _call(
        self,
        plugin: str,
        hook: str,
        kwargs: Mapping[str, Any],
        timeout: float,
        *,
        batch: Sequence[Mapping[str, Any]] | None = None,
    ) -> _Outcome:
        """One plugin's implementation of ``hook`` on a worker thread, waited for at most ``timeout`` seconds.

        With ``batch``, the implementation is called once per keyword set in it, on the same thread and under
        the same deadline, and the outcome's value is the list of answers.
        A call past its deadline keeps running on its abandoned daemon thread; its result is dropped.
        """
        impl = self._impl(plugin, hook)
        if impl is None:
            return _Outcome()
        one = self._caller(plugin, hook, impl)
        with self._lock:
            if self._overdue.get(plugin, 0) >= MAX_OVERDUE_CALLS:
                log.warning("plugin %r: %d hook calls are still running past their deadline", plugin, MAX_OVERDUE_CALLS)
                return _Outcome(timed_out=True)
            if self._pool is None:
                # Imported here: the worker module brings asyncio, which `junior --help` does not need.
                from junior_core._base.workers import DaemonPool, HungCalls

                self._pool = DaemonPool(HungCalls(MAX_OVERDUE_CALLS), "junior-hook")
            pool = self._pool
        overdue = finished = False
        # The context travels with the call, so a plugin sees the caller's context variables; the arguments are
        # its own dict, so a call still running past its deadline keeps its trace line apart from the next one.
        run = contextvars.copy_context().run

        def call() -> Any:
            nonlocal finished
            try:
                if batch is not None:
                    return run(lambda: [one(dict(each)) for each in batch])
                return run(one, dict(kwargs))
            finally:
                with self._lock:
                    finished = True
                    if overdue:
                        self._overdue[plugin] -= 1
                        log.info("plugin %r: %s returned after its deadline; its result was dropped", plugin, hook)

        clock = self.clock
        until = clock.now() + timeout  # fixed before the call starts, so nothing it does can come first
        try:
            task = pool.call(plugin, call)
        except RuntimeError:  # no new thread can start (interpreter shutdown): call it here, without a deadline
            try:
                return _Outcome(value=call())
            except Exception as exc:  # noqa: BLE001 - charged to the plugin by the caller
                return _Outcome(error=exc)
        try:
            ended = clock.wait(task.wait, until)
        except BaseException:
            if not task.done():
                raise  # the host itself was interrupted while waiting
            ended = True
        if ended or task.done():  # done: it returned just as the wait ran out
            return _Outcome(error=task.error) if task.error is not None else _Outcome(value=task.value)
        with self._lock:
            if not finished:
                overdue = True
                self._overdue[plugin] = self._overdue.get(plugin, 0) + 1
                pool.abandon(task.ticket)  # its thread stops counting towards the pool's live work
                return _Outcome(timed_out=True)
        while not task.done():  # it finished between the wait and the lock; the hand-off is instructions away
            time.sleep(0.0001)
        return _Outcome(error=task.error) if task.error is not None else _Outcome(value=task.value)


def load(plugins: Sequence[object] | None, *, strict: bool) -> PluginSet:
    """A ``PluginSet`` of the given plugins, or of the installed entry points when ``plugins`` is None."""
    plugin_set = PluginSet(strict=strict)
    if plugins is None:
        plugin_set.load_entry_points()
    else:
        for plugin in plugins:
            plugin_set.add(plugin)
    return plugin_set
