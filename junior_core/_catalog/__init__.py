"""The catalog layer: what is registered (``Source``, ``Tool``, ``CatalogTool``, tool_name derivation, first-wins
refusal of duplicates, providers: ``catalog``) and who may reach it (exposure words, the host's rules, ``Reach``:
``exposure``). It may import protocol, schemas and the ground, never plugins, discovery, calls or the runtime.
"""
