"""The plugins layer: the hooks a plugin implements (``hookspecs``), loading plugins from entry points one at a
time with failures isolated (``loading``), calling their hooks on worker threads with deadlines (``plugin_set``),
the ``register`` callback that collects one plugin's sources (``registry``) and hook tracing. It may import the
catalog, protocol, schemas and the ground; the runtime it hands to ``startup`` and ``shutdown`` is named by a
``Protocol`` (``hookspecs.Host``), never imported.
"""
