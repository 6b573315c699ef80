"""The plugins layer: the hooks a plugin implements (``hookspecs``), what loading knows of a plugin (the
entry-point group, the environment's switches, ``PluginInfo``: ``loading``), a set of plugins loaded one at a time
with failures isolated and their hooks called on worker threads with deadlines (``plugin_set``), the ``register``
callback that collects one plugin's sources (``registry``) and hook tracing. It may import the catalog, protocol,
schemas and the ground; the runtime it hands to ``startup`` and ``shutdown`` is named by a ``Protocol``
(``hookspecs.Host``), never imported.
"""
