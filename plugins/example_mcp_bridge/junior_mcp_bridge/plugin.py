"""The junior plugin: each configured MCP server is a run-time source ``mcp:<name>``."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from junior_core import Source, hookimpl

if TYPE_CHECKING:
    import click

    from junior_core import Register, Runtime
    from junior_mcp_bridge.bridge import Bridge
    from junior_mcp_bridge.cache import ToolCache
    from junior_mcp_bridge.config import ServerConfig

__all__ = ["MCPBridge"]

log = logging.getLogger("junior.mcp")


class MCPBridge:
    """One instance per runtime (the entry point names the class), holding that runtime's sessions."""

    junior_plugin_name = "mcp"

    def __init__(self, configs: list[ServerConfig] | None = None, retry_interval_s: float | None = None,
                 tool_cache: bool | None = None) -> None:
        """``retry_interval_s``: default ``RETRY_INTERVAL_S`` of config.py. ``tool_cache``: keep tool lists
        across processes; default, ``tool_cache`` of ``[plugins.mcp]`` (on) when the configuration is read from
        junior.toml, off for ``configs`` given here (tests, embedding)."""
        self._configs = configs
        self._tool_cache = tool_cache
        self._retry_interval_s = retry_interval_s
        self._runtime: Runtime | None = None
        self.bridge: Bridge | None = None
        self._start_lock = threading.Lock()
        self._closed = False

    @property
    def configs(self) -> list[ServerConfig]:
        if self._configs is None:
            from junior_mcp_bridge.config import load_config  # its attrs classes are not needed at --help

            self._configs = load_config()
            self._configs_from_file = True
        return self._configs

    _configs_from_file = False

    @hookimpl
    def register_sources(self, register: Register) -> None:
        # Described from config and the tool cache: listing sources (`junior sources`) neither imports the SDK
        # nor starts a server, and shows what the model will read once the server's source is listed.
        cache = self._cache() if any(c.enabled for c in self.configs) else None
        for config in self.configs:
            if config.enabled:
                register(Source(config.source_id, _first_description(config, cache)),
                         provider=self._provider(config.name))

    def _provider(self, name: str) -> Any:
        def list_tools() -> list[Any]:
            if self._runtime is None:
                return []
            if self.bridge is None or not self.bridge.started(name):
                self._start([name])  # a lazy runtime asks for this source's tools for the first time
            return self.bridge.tools(name) if self.bridge is not None else []

        return list_tools

    @hookimpl
    def startup(self, runtime: Runtime) -> None:
        self._runtime = runtime
        if runtime.options.lazy_sources or not any(c.enabled for c in self.configs):
            return  # lazy (the CLI): each server starts when its source's tools are first asked for
        self._start(None)

    def _start(self, names: list[str] | None) -> None:
        runtime = self._runtime
        if runtime is None or self._closed:
            return
        with self._start_lock:
            if self.bridge is None:
                from junior_mcp_bridge.bridge import Bridge
                from junior_mcp_bridge.config import RETRY_INTERVAL_S

                retry = RETRY_INTERVAL_S if self._retry_interval_s is None else self._retry_interval_s
                self.bridge = Bridge(self.configs, on_change=self._changed, retry_interval_s=retry,
                                     cache=self._cache(), clock=runtime.options.clock)
            bridge = self.bridge
            bridge.start(runtime.loop, names)
        self._mark_unavailable(runtime, bridge, names)
        for row in bridge.status():
            if row["state"] == "failed" and (names is None or row["name"] in names):
                # Recorded for `junior plugins`, not logged again: the connection has logged it once already.
                runtime.note_plugin_problem(self, f"MCP server {row['name']!r} is unavailable: {row['error']}")

    def _cache(self) -> Any:
        from junior_mcp_bridge.config import bridge_settings

        wanted, max_age = self._tool_cache, None
        if wanted is None or wanted:
            settings = bridge_settings()
            max_age = settings.tool_cache_max_age_s
            if wanted is None:
                wanted = settings.tool_cache and self._configs_from_file
        if not wanted:
            return None
        from junior_mcp_bridge.cache import ToolCache

        return ToolCache(max_age_s=max_age) if max_age is not None else ToolCache()

    @hookimpl
    def shutdown(self, runtime: Runtime) -> None:
        with self._start_lock:
            self._closed = True
            if self.bridge is not None:
                self.bridge.close()

    @hookimpl
    def config_files(self) -> list[str]:
        from junior_mcp_bridge.config import config_paths

        _, json_path = config_paths()
        return [str(json_path)] if json_path is not None else []

    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        from junior_mcp_bridge.cli import mcp

        cli.add_command(mcp)

    def _changed(self, name: str) -> None:
        runtime, bridge = self._runtime, self.bridge
        if runtime is None or bridge is None or runtime.closed:
            return
        source_id = f"mcp:{name}"
        runtime.describe_source(source_id, bridge.description(name))
        runtime.refresh_source(source_id)
        self._mark_unavailable(runtime, bridge, [name])

    @staticmethod
    def _mark_unavailable(runtime: Runtime, bridge: Bridge, names: list[str] | None) -> None:
        """Tell the runtime which servers are down, so a call to one of their tools says so (no details: logged)."""
        for row in bridge.status():
            if row["enabled"] and (names is None or row["name"] in names):
                runtime.set_source_unavailable(row["source"], bridge.unavailable_reason(row["name"]))


def _first_description(config: ServerConfig, cache: ToolCache | None) -> str:
    """The description the bridge gives the source when it is first listed: from a fresh cached listing, else
    the configuration, with the reason of a failed start whose back-off has not ended."""
    from junior_mcp_bridge.describe import described, unavailable_reason

    listing = cache.load(config) if cache is not None else None
    if listing is not None:
        return described(config, listing.instructions, listing.server_title, listing.server_name)
    text = described(config, None, None, None)
    failed = cache.load_failure(config) if cache is not None else None
    if failed is not None and cache is not None and failed.until > cache.clock():
        reason = unavailable_reason(failed.problem, failed.retryable, failed.advice, failed.stderr_tail)
        text += f" Unavailable: {reason}."
    return text
