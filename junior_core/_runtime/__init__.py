"""The runtime layer: ``Runtime``, the facade a bot embeds (lifecycle, the sources' changes, ``model_tools``, the
entry methods and their async twins, the turn hooks), ``RuntimeOptions``, every setting of one, and the host's
context told to the model before a turn. It may import every layer below it: calls, discovery, plugins, catalog,
protocol, schemas and the ground (``_base``, ``text``, ``tables``, ``context``, ``clock``); only ``llm``,
``testing`` and ``cli`` import it.
"""
