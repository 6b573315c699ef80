"""The HTTP server for the Events API: Bolt's WSGI adapter on the standard library's WSGI server, one thread
per request (Bolt acknowledges an event at once and runs the turn on its own worker threads)."""

from __future__ import annotations

import logging
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

if TYPE_CHECKING:
    from slack_bolt import App

__all__ = ["EVENTS_PATH", "make_server"]

log = logging.getLogger("junior.slack")

EVENTS_PATH = "/slack/events"


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Handler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)


def make_server(app: App, host: str = "0.0.0.0", port: int = 3000, path: str = EVENTS_PATH) -> WSGIServer:
    """A server answering ``POST <path>`` with ``app`` (port 0: a free one, see ``server.server_port``)."""
    from wsgiref.simple_server import make_server as wsgi_server

    from slack_bolt.adapter.wsgi import SlackRequestHandler

    return wsgi_server(host, port, SlackRequestHandler(app, path), server_class=_ThreadingWSGIServer,
                       handler_class=_Handler)
