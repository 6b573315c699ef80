"""A local stand-in of Slack, to try junior-slack and to test it without a workspace.

``FakeSlack`` is an ``http.server`` on 127.0.0.1 (a free port) answering the Web API methods the app calls
(``auth.test``, ``conversations.info``, ``conversations.replies``, ``conversations.open``, ``chat.postMessage``,
``chat.startStream``/``appendStream``/``stopStream``, ``chat.delete``, ``assistant.threads.setStatus``/``setTitle``/
``setSuggestedPrompts``, ``oauth.v2.access``) and recording every request; slack-sdk's ``WebClient`` reaches it
through ``SLACK_API_URL`` (``FakeSlack.url``). It grants the scopes of the app's manifest (``MANIFEST_SCOPES``) and
no more, answering ``missing_scope`` as Slack does, and records each scope a call used. ``fail_next`` makes a
method's next calls fail as Slack's do (a 429 with ``Retry-After``, a 500, an ``ok: false``).

``event_body``, ``dm`` and ``mention`` build Events API deliveries as Slack sends them; ``send``, ``command`` and
``press`` sign them with slack-sdk's own ``SignatureVerifier`` and POST them, so Bolt checks them exactly as it
checks Slack's. ``LocalServe`` runs the real ``junior slack serve`` in its own process against a ``FakeSlack``, as
``junior slack try`` does::

    from junior_slack.testing import LocalServe

    with LocalServe(model="echo") as local:
        exchange = local.say("remember that deploys go through the release channel")
        print(exchange.replies)       # what the app posted in reply
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

__all__ = [
    "BOT_ID",
    "BOT_USER",
    "CHANNEL",
    "CLIENT_ID",
    "CLIENT_SECRET",
    "DM_CHANNEL",
    "MANIFEST_SCOPES",
    "SECRET",
    "TEAM",
    "TOKEN",
    "USER",
    "Exchange",
    "FakeSlack",
    "LocalServe",
    "LocalServeError",
    "command",
    "dm",
    "event_body",
    "mention",
    "press",
    "send",
]

TEAM = "T0TEAM001"
BOT_USER = "U0JUNIOR1"
BOT_ID = "B0JUNIOR1"
USER = "U0YOU0001"  # the person LocalServe speaks as
TOKEN = "xoxb-test-token"  # the bot token FakeSlack honours (for TEAM)
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"  # the tests' signing secret
CLIENT_ID, CLIENT_SECRET = "1111111111.2222222222", "c1e2n3t4s5e6c7r8e9t0"
# The bot scopes of plugins/slack/manifest.yml (a test checks they are the same).
MANIFEST_SCOPES = frozenset({
    "app_mentions:read", "assistant:write", "channels:history", "channels:read", "chat:write", "commands",
    "groups:history", "groups:read", "im:history", "im:write", "mpim:history", "mpim:read",
})
# Each kind of conversation's scope prefix: conversations.info needs <prefix>:read, conversations.replies
# <prefix>:history (Slack's method pages).
_PREFIX = {"public": "channels", "private": "groups", "im": "im", "mpim": "mpim"}


class FakeSlack:
    """The Web API methods junior-slack calls, answered from ``channels`` and ``threads``; requests recorded."""

    def __init__(self, scopes: set[str] | None = None) -> None:
        self.scopes = set(MANIFEST_SCOPES) if scopes is None else scopes
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
        self.tokens: dict[str, str] = {TOKEN: TEAM}
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


DM_CHANNEL = "D0YOU0001"  # the DM between USER and the app, where LocalServe speaks by default
CHANNEL = "C0GENERAL"  # a public channel, #general, where LocalServe mentions the app
WHERE = ("dm", "assistant", "channel")
_LISTENING = "junior-slack: listening on "


class LocalServeError(RuntimeError):
    """``junior slack serve`` did not start, or stopped, under ``LocalServe``; the message has its last log lines."""


@dataclass(frozen=True)
class Exchange:
    """One message sent to the app and what it did about it."""

    text: str
    event_id: str
    status: int  # what the events endpoint answered (200: acknowledged)
    outcome: str  # from the event's log line: answered, failed, ignored... ("refused" when status is not 200)
    line: str  # the server's log line for the event
    statuses: tuple[str, ...] = ()  # each assistant.threads.setStatus, in order ("" clears it)
    replies: tuple[str, ...] = ()  # each message the app posted meanwhile, as it reads in the end
    calls: tuple[tuple[str, dict[str, Any]], ...] = field(default=(), repr=False)  # every Web API call meanwhile


class LocalServe:
    """The real ``junior slack serve`` in its own process, on a free port, against a ``FakeSlack``.

    It runs with a fresh signing secret, the stand-in's bot token, ``JUNIOR_MODEL=model`` and a new SQLite database
    in a temporary folder (the caller's memory is not touched); ``env`` adds to or overrides its environment. The
    plugins and ``junior.toml`` are the caller's, as ``junior slack serve`` would load them. ``say`` sends one
    message as a signed event from ``USER`` (``where``: ``dm``, a message in the app's DM; ``assistant``, in an
    assistant thread, after ``assistant_thread_started``; ``channel``, a mention in public #general) and waits
    for the event's log line. Stopped with SIGINT, as Ctrl-C stops it, on leaving.
    """

    def __init__(self, model: str = "echo", *, where: str = "dm", env: Mapping[str, str] | None = None,
                 serve_args: Sequence[str] = (), timeout: float = 60.0) -> None:
        if where not in WHERE:
            raise ValueError(f"where must be one of {', '.join(WHERE)}, not {where!r}")
        self.model, self.where, self.timeout = model, where, timeout
        self._env, self._serve_args = dict(env or {}), list(serve_args)
        self.secret = secrets.token_hex(16)
        self.slack: FakeSlack | None = None
        self.process: subprocess.Popen[str] | None = None
        self.url = ""  # the events endpoint, once started
        self.log: list[str] = []  # the server's standard error, line by line
        self.folder = ""
        self._seen = threading.Condition()
        self._reader: threading.Thread | None = None
        self._sent = 0
        self.thread_ts: str | None = None  # the assistant thread, with where="assistant"

    def __enter__(self) -> LocalServe:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        self.slack = FakeSlack()
        self.slack.channels[CHANNEL] = {"id": CHANNEL, "name": "general", "is_channel": True, "is_private": False}
        self.folder = tempfile.mkdtemp(prefix="junior-slack-try-")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("SLACK_") and k not in ("JUNIOR_MODEL", "JUNIOR_MEMORY_URL", "JUNIOR_SLACK_URL",
                                                              "JUNIOR_LOG_LEVEL")}
        env.update(SLACK_BOT_TOKEN=TOKEN, SLACK_SIGNING_SECRET=self.secret, SLACK_API_URL=self.slack.url,
                   JUNIOR_MODEL=self.model, JUNIOR_MEMORY_URL=f"sqlite:///{self.folder}/junior.sqlite3",
                   **self._env)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "junior_core", "slack", "serve", "--port", "0", *self._serve_args], env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        line = self._wait_for(lambda line: line.startswith(_LISTENING), "did not start")
        self.url = line.removeprefix(_LISTENING).strip()
        if self.where == "assistant":
            self.thread_ts = self._next_ts()
            started = {"type": "assistant_thread_started", "event_ts": self._next_ts(),
                       "assistant_thread": {"user_id": USER, "channel_id": DM_CHANNEL, "thread_ts": self.thread_ts,
                                            "context": {"channel_id": CHANNEL, "team_id": TEAM,
                                                        "enterprise_id": None}}}
            event_id = self._next_event_id()
            if send(self.url, event_body(started, event_id), secret=self.secret) != 200:
                raise LocalServeError("the assistant thread's start was refused" + self._tail())
            self._wait_for(lambda line: f": event {event_id} team=" in line, "did not open the assistant thread")

    @property
    def channel(self) -> str:
        return CHANNEL if self.where == "channel" else DM_CHANNEL

    def say(self, text: str) -> Exchange:
        """Send ``text`` as a signed event and wait until the app is done with it."""
        slack = self.slack
        assert slack is not None and self.url, "LocalServe is not started"
        ts, event_id = self._next_ts(), self._next_event_id()
        if self.where == "channel":
            event = mention(USER, CHANNEL, text, ts)
        elif self.where == "assistant":
            event = dm(USER, DM_CHANNEL, text, ts, thread_ts=self.thread_ts)
        else:
            event = dm(USER, DM_CHANNEL, text, ts)
        with slack._lock:
            mark, before = len(slack.calls), set(slack.messages)
            if self.thread_ts is not None:  # conversations.replies gives the thread's earlier messages, as Slack's
                slack.threads.setdefault((DM_CHANNEL, self.thread_ts), []).append(dict(event))
        status = send(self.url, event_body(event, event_id), secret=self.secret)
        if status != 200:
            return Exchange(text, event_id, status, "refused", f"HTTP {status}")
        line = self._wait_for(lambda line: f": event {event_id} team=" in line, f"did not finish event {event_id}")
        outcome = line.split(" outcome=", 1)[1].split()[0] if " outcome=" in line else "unknown"
        with slack._lock:
            calls = tuple((m, {k: v for k, v in p.items() if k != "_token"}) for m, p in slack.calls[mark:])
            new = sorted((key for key in slack.messages if key not in before), key=lambda key: key[1])
            replies = tuple(str(slack.messages[key]["text"]) for key in new if not slack.messages[key].get("deleted"))
        statuses = tuple(str(p.get("status", "")) for m, p in calls if m == "assistant.threads.setStatus")
        return Exchange(text, event_id, status, outcome, line, statuses, replies, calls)

    def close(self) -> int | None:
        """Stop the server (SIGINT; killed if it has not stopped within the timeout) and the stand-in; the
        server's exit status."""
        code = None
        if self.process is not None:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGINT)
                try:
                    self.process.wait(timeout=self.timeout)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            code = self.process.returncode
            if self._reader is not None:
                self._reader.join(5)
        if self.slack is not None:
            self.slack.close()
            self.slack = None
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = ""
        return code

    def _read(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        for line in self.process.stderr:
            with self._seen:
                self.log.append(line.rstrip("\n"))
                self._seen.notify_all()
        with self._seen:
            self._seen.notify_all()

    def _wait_for(self, predicate: Callable[[str], bool], what: str) -> str:
        """The first log line ``predicate`` accepts (from the start), waiting up to the timeout for it."""
        assert self.process is not None
        deadline = time.monotonic() + self.timeout
        with self._seen:
            while True:
                for line in self.log:
                    if predicate(line):
                        return line
                left = deadline - time.monotonic()
                ended = self.process.poll() is not None and not (self._reader and self._reader.is_alive())
                if ended or left <= 0:
                    why = "exited" if ended else f"within {self.timeout:g} s"
                    raise LocalServeError(f"junior slack serve {what} ({why})" + self._tail())
                self._seen.wait(min(left, 0.5))

    def _tail(self) -> str:
        return "".join(f"\n  {line}" for line in self.log[-20:])

    def _next_ts(self) -> str:
        """A message timestamp after every one the stand-in gave the app's messages, so threads read in order."""
        assert self.slack is not None
        self._sent += 1
        with self.slack._lock:
            self.slack._ts += 1
            return f"{self.slack._ts}.000050"

    def _next_event_id(self) -> str:
        return f"Ev0LOCAL{self._sent:04d}{secrets.token_hex(2).upper()}"
