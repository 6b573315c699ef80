"""The client command for the MCP conformance suite: ``junior mcp check --url URL`` with the scenario's credentials.

The suite runs ``<command> <server url>`` and hands a scenario's pre-registered client in the JSON of
``MCP_CONFORMANCE_CONTEXT``; junior takes those as ``--client-id`` and ``--client-secret-env``, as a person would.
"""

import json
import os
import sys
from pathlib import Path

url = sys.argv[-1]
context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
args = [str(Path(sys.executable).parent / "junior"), "mcp", "check", "--url", url]
env = dict(os.environ)
if context.get("client_id"):
    args += ["--client-id", context["client_id"]]
else:  # the document the suite's authorization server expects (it advertises support in one scenario)
    args += ["--client-metadata-url", "https://conformance-test.local/client-metadata.json"]
if context.get("client_secret"):
    env["CONFORMANCE_CLIENT_SECRET"] = context["client_secret"]
    args += ["--client-secret-env", "CONFORMANCE_CLIENT_SECRET"]
os.execve(args[0], args, env)
