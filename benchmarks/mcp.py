"""MCP bridge: executeTool round trip vs a raw ``mcp`` ClientSession, and start-up of three servers vs one.

Round trip: ``mcp__time__get_current_time`` through ``Runtime.execute_tool`` (sync host) and
``Runtime.aexecute_tool`` (async host), against ``ClientSession.call_tool`` of the same tool on the same
server binary, in the same process. Target: bridge p50 / raw p50 <= 1.2.

Start-up: the bridge connecting to three stdio servers (mcp-server-time, mcp-server-git on a temporary
repository, and the SDK-based test server) at once, against each of them alone. Target: all three <= the
slowest single one + 20%.

`junior search`: the whole command, a new process each time, with four bridged stdio servers (time, git, and
two SDK test servers), answered from the tool cache against the same command with ``tool_cache = false`` (every
process starts every server, as before the cache). Target: cached / uncached median <= 0.2.

    python benchmarks/mcp.py                 # 500 calls per variant, 5 start-up rounds, 5 searches each
    python benchmarks/mcp.py --calls 100 --rounds 2
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# Run as a script, this file's directory comes first on sys.path and its name would shadow the `mcp` SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
BIN = Path(sys.executable).parent
TEST_SERVER = REPO / "plugins" / "example_mcp_bridge" / "tests" / "servers" / "misbehaving.py"
ARGS = {"timezone": "UTC"}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def fmt(values: list[float]) -> str:
    return f"p50 {pct(values, .5) * 1e3:6.2f} ms   p90 {pct(values, .9) * 1e3:6.2f} ms"


def time_config(name: str = "time") -> Any:
    from junior_mcp_bridge.config import ServerConfig

    return ServerConfig(name=name, origin="benchmark", command=str(BIN / "mcp-server-time"),
                        args=("--local-timezone", "UTC"))


async def round_trips(n: int) -> dict[str, list[float]]:
    """Raw session, sync bridge and async bridge calls interleaved, so machine load hits all three alike."""
    from junior_mcp_bridge import MCPBridge
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from junior_core import Runtime

    params = StdioServerParameters(command=str(BIN / "mcp-server-time"), args=["--local-timezone", "UTC"])
    samples: dict[str, list[float]] = {"raw": [], "sync": [], "async": []}
    with open(os.devnull, "w") as devnull, Runtime(plugins=[MCPBridge([time_config()])]) as rt:
        async with stdio_client(params, errlog=devnull) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            for i in range(n + 20):
                start = time.perf_counter()
                result = await session.call_tool("get_current_time", ARGS)
                raw = time.perf_counter() - start
                assert not result.is_error
                start = time.perf_counter()
                answer = rt.execute_tool("mcp__time__get_current_time", ARGS)
                sync = time.perf_counter() - start
                assert answer["ok"], answer
                start = time.perf_counter()
                answer = await rt.aexecute_tool("mcp__time__get_current_time", ARGS)
                async_ = time.perf_counter() - start
                assert answer["ok"], answer
                if i >= 20:  # warm-up
                    samples["raw"].append(raw)
                    samples["sync"].append(sync)
                    samples["async"].append(async_)
    return samples


def startup(configs: list[Any]) -> float:
    from junior_mcp_bridge.bridge import Bridge

    bridge = Bridge(configs)
    start = time.perf_counter()
    bridge.start()
    elapsed = time.perf_counter() - start
    assert all(row["state"] == "ready" for row in bridge.status()), bridge.status()
    bridge.close()
    return elapsed


def cli_searches(repo: Path, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds per ``junior search`` process with four bridged servers: from the tool cache, and without it."""
    servers = {
        "time": (str(BIN / "mcp-server-time"), ["--local-timezone", "UTC"]),
        "git": (str(BIN / "mcp-server-git"), ["--repository", str(repo)]),
        "errs": (sys.executable, [str(TEST_SERVER), "error"]),
        "paged": (sys.executable, [str(TEST_SERVER), "paged"]),
    }
    lines = []
    for name, (command, args) in servers.items():
        lines += [f"[mcp.servers.{name}]", f"command = {command!r}".replace("'", '"'),
                  "args = [" + ", ".join(f'"{a}"' for a in args) + "]", ""]
    figures: dict[bool, list[float]] = {True: [], False: []}
    for cached in (True, False):
        config = repo / f"junior-{cached}.toml"
        config.write_text("\n".join(lines) + f"\n[plugins.mcp]\ntool_cache = {str(cached).lower()}\n")
        env = {**os.environ, "JUNIOR_CONFIG": str(config), "JUNIOR_LOAD_PLUGINS": "mcp",
               "JUNIOR_CACHE_DIR": str(repo / f"cache-{cached}")}
        for i in range(rounds + 1):
            start = time.perf_counter()
            done = subprocess.run([str(BIN / "junior"), "search", "current time"], env=env, capture_output=True,
                                  text=True, timeout=120)
            elapsed = time.perf_counter() - start
            assert "mcp__time__get_current_time" in done.stdout, done.stdout + done.stderr
            if i:  # the first run fills the cache (and the search index) for both variants
                figures[cached].append(elapsed)
    return figures[True], figures[False]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    from junior_mcp_bridge.config import ServerConfig

    print(f"== executeTool round trip, mcp__time__get_current_time, {opts.calls} calls each ==")
    samples = asyncio.run(round_trips(opts.calls))
    raw, sync, async_ = samples["raw"], samples["sync"], samples["async"]
    base = pct(raw, .5)
    print(f"raw ClientSession.call_tool      {fmt(raw)}")
    print(f"Runtime.execute_tool (sync)      {fmt(sync)}   ratio at p50 {pct(sync, .5) / base:.2f}")
    print(f"Runtime.aexecute_tool (async)    {fmt(async_)}   ratio at p50 {pct(async_, .5) / base:.2f}")

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        servers = [
            time_config(),
            ServerConfig(name="git", origin="benchmark", command=str(BIN / "mcp-server-git"),
                         args=("--repository", str(repo))),
            ServerConfig(name="sdk", origin="benchmark", command=sys.executable, args=(str(TEST_SERVER), "error")),
        ]
        print(f"\n== start-up (connect + list), median of {opts.rounds} rounds ==")
        singles = {}
        for config in servers:
            singles[config.name] = statistics.median(startup([config]) for _ in range(opts.rounds))
            print(f"{config.name:<6} alone                     {singles[config.name]:6.2f} s")
        together = statistics.median(startup(servers) for _ in range(opts.rounds))
        slowest = max(singles.values())
        print(f"all three at once                {together:6.2f} s   vs slowest single {together / slowest:.2f}x, "
              f"vs one after another {sum(singles.values()):.2f} s")
        print(f"\n== junior search, four bridged servers, median of {opts.rounds} processes ==")
        cached, uncached = cli_searches(repo, opts.rounds)
        print(f"tool_cache = false (every server started)  {statistics.median(uncached):6.2f} s")
        print(f"from the tool cache (no server started)    {statistics.median(cached):6.2f} s   ratio "
              f"{statistics.median(cached) / statistics.median(uncached):.2f}")
        print(f"(machine load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
