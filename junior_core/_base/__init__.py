"""The ground every layer stands on, with the public ``text``, ``tables``, ``context`` and ``clock``: every public
exception (``errors``), ``junior.toml`` (``config``) and the daemon worker threads and per-source event loops that
handlers and hooks run under (``workers``). It imports nothing of junior but the other ground modules.
"""
