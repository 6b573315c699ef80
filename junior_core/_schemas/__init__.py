"""The schemas layer: a typed function read as a tool (``functions``: ``@tool``, ``Param``; ``signatures``: its
JSON Schema, description and argument mapping; ``docstrings``), schema checks (``fastcheck``, RE2 ``patterns``)
and schemas read for the model (``outline``: a schema cut down to its outline; ``failures``: jsonschema's errors
read for an answer). It may import only the ground (``_base``, ``text``, ``context``, ``clock``).
"""
