"""A local Slack Web API, signed Events API requests, and a scripted model for the junior-slack tests.

``FakeSlack`` is an ``http.server`` on 127.0.0.1 answering the four Web API methods the app calls
(``auth.test``, ``conversations.info``, ``conversations.replies``, ``chat.postMessage``) and recording every
request; slack-sdk's ``WebClient`` reaches it through ``SLACK_API_URL``. Events are signed with slack-sdk's own
``SignatureVerifier`` and sent over HTTP, so Bolt checks them exactly as it checks Slack's. The fake grants the
scopes of ``manifest.yml`` and nothing more, answering ``missing_scope`` as Slack does, and records each scope a
call used: the app must run on exactly what the manifest asks for. ``fail_next`` makes a method's next calls fail
as Slack's do (a 429 with ``Retry-After``, a 500, an ``ok: false``).
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Generator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from junior_core.llm.types import ModelReply, call, say
from junior_core.testing import ChatCompletionsServer, ScriptView

TEAM = "T0TEAM001"
BOT_USER = "U0JUNIOR1"
BOT_ID = "B0JUNIOR1"
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
CLIENT_ID, CLIENT_SECRET = "1111111111.2222222222", "c1e2n3t4s5e6c7r8e9t0"
POSTGRES_URL = os.environ.get("JUNIOR_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
MANIFEST = Path(__file__).parents[1] / "manifest.yml"
# Each kind of conversation's scope prefix: conversations.info needs <prefix>:read, conversations.replies
# <prefix>:history (Slack's method pages).
_PREFIX = {"public": "channels", "private": "groups", "im": "im", "mpim": "mpim"}


def manifest() -> dict[str, Any]:
    import yaml

    loaded: dict[str, Any] = yaml.safe_load(MANIFEST.read_text())
    return loaded


def manifest_scopes() -> set[str]:
    return set(manifest()["oauth_config"]["scopes"]["bot"])


class FakeSlack:
    """The Web API methods junior-slack calls, answered from ``channels`` and ``threads``; requests recorded."""

    def __init__(self, scopes: set[str] | None = None) -> None:
        self.scopes = manifest_scopes() if scopes is None else scopes
        self.used_scopes: set[str] = set()
        self.refused: list[tuple[str, str]] = []  # (method, the scope it lacked)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.failed: list[tuple[str, dict[str, Any]]] = []  # calls answered with a scripted failure
        self._failures: dict[str, list[tuple[int, dict[str, str], dict[str, Any] | str]]] = {}
        self.channels: dict[str, dict[str, Any]] = {}
        self.threads: dict[tuple[str, str], list[dict[str, Any]]] = {}
        # Every message the bot made, by (channel, ts): posted, streamed (``streaming`` until stopped), or deleted.
        self.messages: dict[tuple[str, str], dict[str, Any]] = {}
        # The bot tokens Slack honours, and the team each is for; OAuth codes not yet exchanged (code -> token).
        self.tokens: dict[str, str] = {"xoxb-test-token": TEAM}
        self.codes: dict[str, tuple[str, str]] = {}
        self._lock = threading.Condition()
        self._ts = 1700009000
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                parts = urlsplit(self.path)
                params: dict[str, Any] = dict(parse_qsl(parts.query))
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                if raw:
                    if "json" in (self.headers.get("content-type") or ""):
                        params.update(json.loads(raw))
                    else:
                        params.update(parse_qsl(raw.decode()))
                authorization = self.headers.get("authorization") or ""
                params["_token"] = authorization.removeprefix("Bearer ")
                if authorization.startswith("Basic "):  # oauth.v2.access: the app's client id and secret
                    import base64

                    params["_token"] = ""
                    params["_basic"] = base64.b64decode(authorization[6:]).decode()
                if parts.path.startswith("/response/"):  # a slash command's response_url, not a Web API method
                    status, headers, payload = fake.respond("response_url", params)
                else:
                    status, headers, payload = fake.respond(parts.path.rsplit("/", 1)[-1], params)
                data = json.dumps(payload).encode() if isinstance(payload, dict) else payload.encode()
                self.send_response(status)
                kind = "application/json" if isinstance(payload, dict) else "text/plain"
                self.send_header("content-type", f"{kind}; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _handle

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/api/"
        threading.Thread(target=self._httpd.serve_forever, args=(0.01,), daemon=True).start()  # close() waits a poll

    def fail_next(self, method: str, *failures: tuple[int, dict[str, str], dict[str, Any] | str]) -> None:
        """Answer the next calls of ``method`` with these (status, headers, body) failures, in order."""
        with self._lock:
            self._failures.setdefault(method, []).extend(failures)

    def respond(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any] | str]:
        with self._lock:
            queue = self._failures.get(method)
            if queue:
                self.failed.append((method, params))
                return queue.pop(0)
        return 200, {}, self.answer(method, params)

    def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.calls.append((method, params))
            self._lock.notify_all()
            if method == "response_url":  # answered as hooks.slack.com does: no token, plain "ok"
                return {"ok": True}
            if method == "oauth.v2.access":
                return self._exchange(params)
            team = self.tokens.get(params["_token"])
            if team is None:
                return {"ok": False, "error": "invalid_auth"}
            needed = self.scope_for(method, params.get("channel", ""))
            if needed is not None:
                if needed not in self.scopes:
                    self.refused.append((method, needed))
                    return {"ok": False, "error": "missing_scope", "needed": needed,
                            "provided": ",".join(sorted(self.scopes))}
                self.used_scopes.add(needed)
            if method == "auth.test":
                return {"ok": True, "url": "https://junior-test.slack.com/", "team": "Test", "user": "junior",
                        "team_id": team, "user_id": BOT_USER, "bot_id": BOT_ID, "is_enterprise_install": False}
            if method == "conversations.info":
                channel = self.channels.get(params.get("channel", ""))
                return {"ok": True, "channel": channel} if channel else {"ok": False, "error": "channel_not_found"}
            if method == "conversations.replies":
                key = (params.get("channel", ""), params.get("ts", ""))
                return {"ok": True, "messages": list(self.threads.get(key, [])), "has_more": False}
            if method == "chat.postMessage":
                message = self._new_message(params, params.get("text", ""))
                return {"ok": True, "channel": params.get("channel"), "ts": message["ts"], "message": message}
            if method.startswith("assistant.threads."):
                return self._assistant(method, params)
            if method == "conversations.open":
                users = str(params.get("users") or "")
                if not users or "," in users:
                    return {"ok": False, "error": "users_list_not_supplied" if not users else "not_allowed"}
                return {"ok": True, "channel": {"id": "D" + users[1:], "is_im": True}}
            if method in ("chat.startStream", "chat.appendStream", "chat.stopStream", "chat.delete"):
                return self._stream(method, params)
            return {"ok": False, "error": "unknown_method"}

    def grant(self, code: str, team: str, token: str) -> None:
        """An install of the app in ``team`` approved: ``code`` is what Slack sends to the redirect URL."""
        with self._lock:
            self.codes[code] = (team, token)

    def revoke(self, team: str) -> None:
        """The app uninstalled from ``team``: Slack stops honouring its tokens."""
        with self._lock:
            self.tokens = {token: t for token, t in self.tokens.items() if t != team}

    def _exchange(self, params: dict[str, Any]) -> dict[str, Any]:
        """oauth.v2.access: the app's credentials (HTTP Basic) and a code, each used once, for the bot token."""
        if params.get("_basic") != f"{CLIENT_ID}:{CLIENT_SECRET}":
            return {"ok": False, "error": "invalid_client_id" if CLIENT_ID not in str(params.get("_basic"))
                    else "bad_client_secret"}
        granted = self.codes.pop(str(params.get("code") or ""), None)
        if granted is None:
            return {"ok": False, "error": "invalid_code"}
        team, token = granted
        self.tokens[token] = team
        return {"ok": True, "access_token": token, "token_type": "bot", "scope": ",".join(sorted(self.scopes)),
                "bot_user_id": BOT_USER, "app_id": "A0JUNIOR1", "team": {"id": team, "name": f"Team {team}"},
                "enterprise": None, "is_enterprise_install": False,
                "authed_user": {"id": "U0ADMIN01", "scope": "", "token_type": None}}

    def _new_message(self, params: dict[str, Any], text: str, **extra: Any) -> dict[str, Any]:
        self._ts += 1
        ts = f"{self._ts}.000100"
        message = {"type": "message", "user": BOT_USER, "bot_id": BOT_ID, "text": text, "ts": ts, **extra}
        if params.get("blocks"):
            message["blocks"] = params["blocks"] if isinstance(params["blocks"], list) else json.loads(params["blocks"])
        if params.get("thread_ts"):
            message["thread_ts"] = params["thread_ts"]
            self.threads.setdefault((params["channel"], params["thread_ts"]), []).append(message)
        self.messages[(str(params.get("channel")), ts)] = {**message, "channel": params.get("channel")}
        return message

    def _assistant(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """assistant.threads.setStatus / setTitle / setSuggestedPrompts, checked as Slack's method pages say."""
        if not params.get("channel_id"):
            return {"ok": False, "error": "channel_not_found"}
        if method == "assistant.threads.setStatus":
            if "status" not in params or not params.get("thread_ts"):
                return {"ok": False, "error": "invalid_arguments"}
            return {"ok": True}
        if method == "assistant.threads.setTitle":
            if not params.get("title") or not params.get("thread_ts"):
                return {"ok": False, "error": "invalid_arguments"}
            return {"ok": True}
        if method == "assistant.threads.setSuggestedPrompts":
            prompts = params.get("prompts")
            if isinstance(prompts, str):
                prompts = json.loads(prompts)
            if not isinstance(prompts, list) or not 1 <= len(prompts) <= 4 or not all(
                    isinstance(p, dict) and p.get("title") and p.get("message") for p in prompts):
                return {"ok": False, "error": "invalid_arguments"}
            return {"ok": True}
        return {"ok": False, "error": "unknown_method"}

    def _stream(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """chat.startStream / appendStream / stopStream and chat.delete on the bot's own messages."""
        channel = str(params.get("channel") or "")
        if method == "chat.startStream":
            if not params.get("thread_ts"):
                return {"ok": False, "error": "invalid_arguments"}
            if self.kind(channel) != "im" and not (params.get("recipient_user_id")
                                                   and params.get("recipient_team_id")):
                return {"ok": False, "error": "missing_recipient_user_id"}
            text = str(params.get("markdown_text") or "") + _chunk_text(params.get("chunks"))
            message = self._new_message(params, text, streaming=True)
            return {"ok": True, "channel": channel, "ts": message["ts"]}
        held = self.messages.get((channel, str(params.get("ts") or "")))
        if held is None or held.get("deleted"):
            return {"ok": False, "error": "message_not_found"}
        if method == "chat.delete":
            held["deleted"] = True
            return {"ok": True, "channel": channel, "ts": held["ts"]}
        if not held.get("streaming"):
            return {"ok": False, "error": "message_not_in_streaming_state"}
        held["text"] += str(params.get("markdown_text") or "") + _chunk_text(params.get("chunks"))
        if method == "chat.stopStream":
            held["streaming"] = False
            if params.get("blocks"):
                blocks = params["blocks"]
                held["blocks"] = blocks if isinstance(blocks, list) else json.loads(blocks)
        return {"ok": True, "channel": channel, "ts": held["ts"]}

    def replies(self, channel: str) -> list[dict[str, Any]]:
        """What a person sees the bot say in ``channel``: posted and finished streamed messages, not deleted ones,
        in order (a stream still open shows as such)."""
        with self._lock:
            return [dict(m) for (c, _), m in sorted(self.messages.items(), key=lambda kv: kv[0][1])
                    if c == channel and not m.get("deleted")]

    def of(self, method: str) -> list[dict[str, Any]]:
        with self._lock:
            return [params for m, params in self.calls if m == method]

    def wait_for(self, predicate: Callable[[list[tuple[str, dict[str, Any]]]], bool],
                 timeout: float = 60.0) -> None:
        """Until ``predicate(calls)`` holds."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not predicate(self.calls):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"not seen within {timeout} s; calls: {[m for m, _ in self.calls]}")
                self._lock.wait(left)

    def kind(self, channel: str) -> str:
        info = self.channels.get(channel)
        if info is None:
            return "im" if channel.startswith("D") else "public"
        if info.get("is_im"):
            return "im"
        if info.get("is_mpim"):
            return "mpim"
        return "private" if info.get("is_private") else "public"

    def scope_for(self, method: str, channel: str) -> str | None:
        """The scope Slack checks for ``method`` on ``channel``; None for a method that needs none."""
        if method in ("chat.postMessage", "chat.startStream", "chat.appendStream", "chat.stopStream", "chat.delete"):
            return "chat:write"
        if method.startswith("assistant.threads."):
            return "assistant:write"
        if method == "conversations.open":
            return "im:write"
        if method == "conversations.info":
            return f"{_PREFIX[self.kind(channel)]}:read"
        if method == "conversations.replies":
            return f"{_PREFIX[self.kind(channel)]}:history"
        return None

    def posts(self) -> list[dict[str, Any]]:
        with self._lock:
            return [params for method, params in self.calls if method == "chat.postMessage"]

    def count(self, method: str) -> int:
        with self._lock:
            return sum(1 for m, _ in self.calls if m == method)

    def wait_for_post(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 60.0, skip: int = 0
    ) -> dict[str, Any]:
        """The first posted message ``predicate`` accepts (after ``skip`` such messages), waiting for it."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                matches = [p for m, p in self.calls if m == "chat.postMessage" and predicate(p)]
                if len(matches) > skip:
                    return matches[skip]
                left = deadline - time.monotonic()
                if left <= 0:
                    posted = [p.get("text") for m, p in self.calls if m == "chat.postMessage"]
                    raise AssertionError(f"no such message was posted within {timeout} s; posted: {posted}")
                self._lock.wait(left)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _chunk_text(chunks: Any) -> str:
    if isinstance(chunks, str):
        chunks = json.loads(chunks)
    return "".join(str(c.get("text") or "") for c in chunks or () if isinstance(c, dict)
                   and c.get("type") == "markdown_text")


def event_body(event: dict[str, Any], event_id: str, team: str = TEAM) -> dict[str, Any]:
    """An Events API ``event_callback`` envelope, as Slack sends it."""
    return {
        "token": "legacy-verification-token", "team_id": team, "api_app_id": "A0JUNIOR1", "event": event,
        "type": "event_callback", "event_id": event_id, "event_time": int(float(event.get("ts", "1700000000"))),
        "authorizations": [{"enterprise_id": None, "team_id": team, "user_id": BOT_USER, "is_bot": True,
                            "is_enterprise_install": False}],
        "is_ext_shared_channel": False,
    }


def dm(user: str, channel: str, text: str, ts: str, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "channel_type": "im", "channel": channel, "user": user, "text": text, "ts": ts,
            "team": TEAM, **extra}


def mention(user: str, channel: str, text: str, ts: str, **extra: Any) -> dict[str, Any]:
    return {"type": "app_mention", "channel": channel, "user": user, "text": f"<@{BOT_USER}> {text}", "ts": ts,
            "team": TEAM, **extra}


def press(url: str, reply: dict[str, Any], value: str, user: str, *, channel: str, team: str = TEAM,
          secret: str = SECRET) -> int:
    """Press the feedback button of ``value`` (``good``/``bad``) under ``reply`` (a posted message's params), as
    Slack sends the ``block_actions`` interaction: form-encoded ``payload``, signed."""
    from urllib.parse import urlencode

    from slack_sdk.signature import SignatureVerifier

    (element,) = [e for b in reply["blocks"] if b["type"] == "context_actions" for e in b["elements"]]
    button = element["positive_button" if value == "good" else "negative_button"]
    payload = {
        "type": "block_actions", "api_app_id": "A0JUNIOR1", "token": "legacy-verification-token",
        "user": {"id": user, "username": user.lower(), "team_id": team}, "team": {"id": team, "domain": "test"},
        "container": {"type": "message", "message_ts": reply.get("ts", ""), "channel_id": channel,
                      "is_ephemeral": False},
        "channel": {"id": channel, "name": "general"}, "trigger_id": "1.2.3",
        "actions": [{"type": "feedback_buttons", "action_id": element["action_id"], "block_id": "fb",
                     "value": button["value"], "action_ts": "1700009999.000100"}],
    }
    raw = urlencode({"payload": json.dumps(payload)})
    timestamp = str(int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=raw)
    request = urllib.request.Request(url, data=raw.encode(), method="POST", headers={
        "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": timestamp,
        "x-slack-signature": signature or ""})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def command(url: str, slack: FakeSlack, text: str, user: str, channel: str, *, trigger: str = "1.2.3",
            channel_name: str = "general", team: str = TEAM, secret: str = SECRET) -> int:
    """``/junior text`` typed by ``user`` in ``channel``, sent as Slack sends a slash command (form-encoded,
    signed), its ``response_url`` on ``slack``."""
    from urllib.parse import urlencode

    fields = {"token": "legacy-verification-token", "team_id": team, "team_domain": "test", "channel_id": channel,
              "channel_name": channel_name, "user_id": user, "user_name": user.lower(), "command": "/junior",
              "text": text, "api_app_id": "A0JUNIOR1", "is_enterprise_install": "false",
              "response_url": slack.url.replace("/api/", f"/response/{trigger}"), "trigger_id": trigger}
    return _signed(url, urlencode(fields), "application/x-www-form-urlencoded", secret)


def _signed(url: str, raw: str, content_type: str, secret: str) -> int:
    from slack_sdk.signature import SignatureVerifier

    timestamp = str(int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=raw)
    request = urllib.request.Request(url, data=raw.encode(), method="POST", headers={
        "content-type": content_type, "x-slack-request-timestamp": timestamp, "x-slack-signature": signature or ""})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def send(url: str, body: dict[str, Any], *, secret: str = SECRET, retry: int | None = None) -> int:
    """POST ``body`` to the Events API endpoint, signed with ``secret`` as Slack signs it; the HTTP status."""
    from slack_sdk.signature import SignatureVerifier

    raw = json.dumps(body)
    timestamp = str(int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=raw)
    headers = {"content-type": "application/json", "x-slack-request-timestamp": timestamp,
               "x-slack-signature": signature or ""}
    if retry is not None:
        headers.update({"x-slack-retry-num": str(retry), "x-slack-retry-reason": "http_timeout"})
    request = urllib.request.Request(url, data=raw.encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


# An answer long enough to be streamed in several appends (the app gathers 256 characters per append).
LONG_ANSWER = "".join(f"Step {n}: check the release channel, run the checks, and ask a reviewer before shipping. "
                      for n in range(1, 9)).strip()


class Brain:
    """The scripted model: remembers on request, answers from recalled memory, and can go down mid-turn."""

    def __init__(self) -> None:
        self.server: ChatCompletionsServer | None = None

    def script(self, view: ScriptView) -> Generator[ModelReply, Any, None] | ModelReply:
        text = view.user_text.split(": ", 1)[-1]
        if text.lower().startswith(("remember that ", "break after remembering that ")):
            return self._remember(text.split(" that ", 1)[1], breaks=text.lower().startswith("break"))
        if text.lower().startswith("how do we"):
            recalled = [line for line in view.system.splitlines() if line.startswith("- procedure")]
            return say(f"From memory: {recalled[0].split(': ', 1)[1]}" if recalled else "I don't know that yet.")
        if text.lower().startswith("write at length"):
            return say(LONG_ANSWER)
        earlier = [m.text for m in view.request.messages[:-1] if m.role == "user"]
        return say(f"echo: {text} (after {len(earlier)} earlier)")

    def _remember(self, content: str, *, breaks: bool) -> Generator[ModelReply, Any, None]:
        yield call("searchTools", {"query": "remember a team procedure", "source": "memory"})
        saved = yield call("executeTool", {"tool_name": "memory__remember",
                                           "arguments": {"content": content, "kind": "procedure"}})
        if breaks:
            assert self.server is not None
            self.server.fail(503)
        yield say(f"Saved ({saved['result']['visible_to']}).")
