"""junior-slack: junior as a Slack app, on Slack's Bolt framework.

``create_app(runtime, model)`` gives a ``slack_bolt.App`` for a host with its own server; ``junior slack serve``
and ``junior slack socket`` run one. Importing this package costs nothing until a name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from junior_slack.app import SlackBot, create_app
    from junior_slack.events import EventLog
    from junior_slack.server import make_server

__all__ = ["EventLog", "SlackBot", "create_app", "make_server"]

_WHERE = {
    "EventLog": "junior_slack.events",
    "SlackBot": "junior_slack.app",
    "create_app": "junior_slack.app",
    "make_server": "junior_slack.server",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":  # the installed distribution's, from its metadata
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("junior-slack")
        except PackageNotFoundError:  # a source tree on sys.path, never installed
            return "0+unknown"
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'junior_slack' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
