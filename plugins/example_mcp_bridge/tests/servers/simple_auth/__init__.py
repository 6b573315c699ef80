"""The MCP Python SDK's example authorization and resource servers (``examples/servers/simple-auth`` of
github.com/modelcontextprotocol/python-sdk at 57394b054, MIT License, Copyright (c) 2024 Anthropic, PBC), as
published but for two changes: its settings are plain pydantic models (pydantic-settings is not installed here),
and its authorization server takes client ID metadata documents (a ``client_id`` that is an https URL is fetched
and must name itself; its ``redirect_uris`` are then the only ones allowed), as its metadata says.
``document_host`` (not the SDK's) serves junior's document over https on localhost, to try that path.

Its authorization server matches redirect URIs exactly, as the SDK's server auth does, and logs a person in on a
form (``demo_user`` / ``demo_password``). ``python -m simple_auth.auth_server --port A`` and ``python -m
simple_auth.server --port R --auth-server http://localhost:A`` run it; the MCP endpoint is
``http://localhost:R/mcp``.
"""
