"""The MCP Python SDK's example authorization and resource servers (``examples/servers/simple-auth`` of
github.com/modelcontextprotocol/python-sdk at 57394b054, MIT License, Copyright (c) 2024 Anthropic, PBC), as
published but for one change: its settings are plain pydantic models (pydantic-settings is not installed here).

Its authorization server matches redirect URIs exactly, as the SDK's server auth does, and logs a person in on a
form (``demo_user`` / ``demo_password``). ``python -m simple_auth.auth_server --port A`` and ``python -m
simple_auth.server --port R --auth-server http://localhost:A`` run it; the MCP endpoint is
``http://localhost:R/mcp``.
"""
