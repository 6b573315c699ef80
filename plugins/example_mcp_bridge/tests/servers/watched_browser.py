"""A ``BROWSER`` for tests on a machine where another local user reads every command line (``ps``).

Before the person's browser gets there, the other user (uid 65534, so the test runs as root) opens the URL from
the command line, following redirects, and a forged answer with another ``state`` is sent to the login's
``/callback``. The person's browser then opens the URL; the other user, handed the authorization URL it redirects
to, follows that; then the person's browser does, and opens the first URL a second time. The HTTP status of each
is written as JSON to ``$JUNIOR_TEST_BROWSER_LOG``.
"""

import encodings.idna  # noqa: F401  # loaded before becoming the other user, who may not read this Python's files
import json
import os
import sys
import urllib.error
import urllib.request
from urllib.parse import urlsplit


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object) -> None:
        return None


def fetch(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            answer.read()
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def as_other_user(url: str) -> int:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.setgid(65534)
        os.setuid(65534)
        try:
            status = fetch(url)
        except Exception as exc:  # noqa: BLE001  # no HTTP answer at all
            print(f"the other user's request failed: {exc!r}", file=sys.stderr)
            status = 0
        os.write(write, str(status).encode())
        os._exit(0)
    os.close(write)
    status = os.read(read, 16)
    os.waitpid(pid, 0)
    return int(status)


url = sys.argv[1]
parts = urlsplit(url)
seen: dict[str, object] = {
    "command line": url, "other user": as_other_user(url),
    "forged state": fetch(f"{parts.scheme}://{parts.netloc}/callback?code=forged&state=forged")}
try:
    urllib.request.build_opener(NoRedirects).open(url, timeout=30).close()
    authorization_url = url  # no redirect: the command line held the authorization URL itself
except urllib.error.HTTPError as exc:
    authorization_url = exc.headers.get("Location") or url
seen["other user, authorization URL"] = as_other_user(authorization_url)
seen["browser"] = fetch(authorization_url)
seen["browser again"] = fetch(url)
with open(os.environ["JUNIOR_TEST_BROWSER_LOG"], "w", encoding="utf-8") as log:
    json.dump(seen, log)
