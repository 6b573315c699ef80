"""A scripted model behind the real Chat Completions wire format, served over HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from junior_core.llm.openai import openai_response, openai_stream_chunks, parse_openai_request
from junior_core.testing.scripted import Script, ScriptedModel

__all__ = ["ChatCompletionsServer"]


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that stopped waiting (a timeout under test) is no error of the server's: nothing is printed."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class ChatCompletionsServer:
    """An OpenAI-compatible server answering ``POST /v1/chat/completions`` with a ``ScriptedModel``.

    A bot under test gets a real client for ``server.spec`` (``openai-compatible:http://127.0.0.1:<port>/v1#<model>``)
    and goes through the SDK, HTTP and both wire mappings, as it would against llama.cpp or vLLM. Every request body
    is kept in ``requests``. ``fail(status)`` (also from inside the script) makes this and every later request
    answer that HTTP status with an
    OpenAI-style error body (a model that is down); a script that raises answers 500 for that request; any other
    path answers 404, as a real server does for a base URL without ``/v1``. A request with ``"stream": true`` is
    answered as server-sent ``chat.completion.chunk`` events, the text in pieces.
    """

    def __init__(self, script: Script, *, model: str = "scripted") -> None:
        self.scripted = ScriptedModel(script, wire="openai", name=model)
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.failing: int | None = None
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                status, payload = server._answer(self.path, body)
                if isinstance(payload, list):  # a streamed answer: server-sent events, as the API sends them
                    self.send_response(status)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    for chunk in payload:
                        self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                        self.wfile.flush()
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.close_connection = True
                    return
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                # The SDK retries 5xx answers; this keeps its wait between retries short.
                self.send_header("retry-after-ms", "1")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        # Polled every 10 ms, not 0.5 s: close() (shutdown) waits for the next poll.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.01,), name="chat-completions",
                                        daemon=True)
        self._thread.start()

    @property
    def spec(self) -> str:
        """The model spec a bot is configured with (``JUNIOR_MODEL``)."""
        return f"openai-compatible:{self.url}#{self.model}"

    def fail(self, status: int = 503) -> None:
        """Answer every later request with HTTP ``status``, as a model that is down does."""
        self.failing = status

    def _answer(self, path: str, raw: bytes) -> tuple[int, dict[str, Any] | list[dict[str, Any]]]:
        with self._lock:
            self.paths.append(path)
            if path.rstrip("/") != "/v1/chat/completions":
                return 404, _error(f"unknown path {path}", "invalid_request_error")
            body = json.loads(raw)
            self.requests.append(body)
            if self.failing is not None:
                return self.failing, _error("the model is unavailable", "server_error")
            try:
                reply = self.scripted.complete(parse_openai_request(body))
            except Exception as exc:  # noqa: BLE001 - a failing script is a failing server, not a crashed test
                return 500, _error(f"{type(exc).__name__}: {exc}", "server_error")
            if self.failing is not None:  # the script called fail(): this request already goes unanswered
                return self.failing, _error("the model is unavailable", "server_error")
            if body.get("stream") is True:  # answered in chunks of the reply's text, as a streaming server does
                return 200, openai_stream_chunks(reply, self.model)
            return 200, openai_response(reply, self.model)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ChatCompletionsServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
