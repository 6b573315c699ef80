"""The calls layer: a model's or host's call prepared (the input read, the tool found through ``Reach``, arguments
validated, ``before_tool_execute`` asked: ``dispatch``) and run under its time limit and its source's hung-call
limit (``execution``). It may import discovery, plugins, catalog, protocol, schemas and the ground; the runtime
facade above it is the only layer that imports it.
"""
