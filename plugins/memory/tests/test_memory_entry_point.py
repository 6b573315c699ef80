"""The really installed distribution: entry point, Runtime.from_entry_points, process restarts, cheap import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from typing import Any

import pytest

pytestmark = pytest.mark.slow

SCRIPT = r"""
import json, sys
from junior_core import Actor, Conversation, Runtime, ToolContext
alice = Actor("slack", "T1", "UALICE")
bob = Actor("slack", "T1", "UBOB")
public = Conversation("slack", "T1", "CPUBLIC", thread_ts="1700000000.000100", visibility="public")
private = Conversation("slack", "T1", "GPRIVATE", thread_ts="1700000100.000300", visibility="private")
calls = json.loads(sys.argv[1])
out = {}
with Runtime.from_entry_points() as rt:
    out["plugins"] = [(p.name, p.distribution, p.status) for p in rt.plugins]
    out["results"] = []
    for tool, args, who, where, call in calls:
        context = ToolContext({"alice": alice, "bob": bob}[who], {"public": public, "private": private}[where], call)
        out["results"].append(rt.execute_tool(tool, args, context))
print(json.dumps(out))
"""


def run(db_url: str, calls: list[list[Any]], **env: str) -> dict[str, Any]:
    environment = {**os.environ, "JUNIOR_LOAD_PLUGINS": "memory", "JUNIOR_MEMORY_URL": db_url, **env}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(calls)], capture_output=True, text=True, env=environment,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def test_entry_point_names_the_plugin_class_in_the_installed_distribution() -> None:
    (entry,) = [ep for ep in metadata.entry_points(group="junior") if ep.name == "memory"]
    assert entry.value == "junior_memory.plugin:MemoryPlugin"
    assert entry.dist is not None and entry.dist.metadata["Name"] == "junior-memory"
    requires = " ".join(entry.dist.requires or [])
    assert "SQLAlchemy" in requires and "alembic" in requires and 'extra == "postgres"' in requires


def test_installed_plugin_remembers_and_the_memory_survives_a_restart(db_url: str, rows: Any) -> None:
    first = run(db_url, [
        ["memory__remember", {"content": "I prefer terse PR summaries", "kind": "preference"}, "alice", "public", "c1"],
        ["memory__remember", {"content": "I prefer terse PR summaries", "kind": "preference"}, "alice", "public", "c1"],
        ["memory__remember", {"content": "Deploys need a ticket", "kind": "procedure"}, "alice", "public", "c2"],
        ["memory__remember", {"content": "The VPN config is in the wiki", "kind": "knowledge"}, "bob", "private", "c3"],
    ])
    assert first["plugins"] == [["memory", "junior-memory", "loaded"]]
    assert [r["ok"] for r in first["results"]] == [True] * 4
    assert [r["result"]["created"] for r in first["results"]] == [True, False, True, True]

    second = run(db_url, [
        ["memory__list", {}, "alice", "public", "c4"],
        ["memory__list", {}, "bob", "public", "c5"],
        ["memory__search", {"query": "VPN"}, "bob", "private", "c6"],
    ])
    alice_sees, bob_sees, bob_private = (r["result"]["memories"] for r in second["results"])
    assert sorted(m["content"] for m in alice_sees) == ["Deploys need a ticket", "I prefer terse PR summaries"]
    assert [m["content"] for m in bob_sees] == ["Deploys need a ticket"]
    assert [m["content"] for m in bob_private] == ["The VPN config is in the wiki"]
    scopes = rows("SELECT scope, scope_key, kind FROM junior_memory_memories ORDER BY kind")
    assert scopes == [
        {"scope": "conversation", "scope_key": "slack:T1:GPRIVATE", "kind": "knowledge"},
        {"scope": "personal", "scope_key": "slack:T1:UALICE", "kind": "preference"},
        {"scope": "conversation", "scope_key": "slack:T1", "kind": "procedure"},
    ]


def test_importing_the_entry_point_does_not_load_sqlalchemy() -> None:
    code = (
        "import sys, junior_memory.plugin as p; p.MemoryPlugin(); "
        "print(sorted(m for m in ('sqlalchemy', 'alembic', 'psycopg') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == "[]"
