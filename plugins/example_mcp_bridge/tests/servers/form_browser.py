"""A ``BROWSER`` for tests whose user signs in on a login form: follow redirects; on a page with a POST form,
submit it with the values it is filled in with (the SDK's example server fills in its demo user), and follow on.

``BROWSER="python form_browser.py %s"``; the URLs it visited are appended to ``$JUNIOR_TEST_BROWSER_LOG``.
"""

import html.parser
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

visited = [sys.argv[1]]


class Redirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        visited.append(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class Form(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        found = dict(attrs)
        if tag == "form" and (found.get("method") or "").lower() == "post":
            self.action = found.get("action")
        elif tag == "input" and self.action is not None and found.get("name"):
            self.fields[found["name"]] = found.get("value") or ""


opener = urllib.request.build_opener(Redirects)
try:
    with opener.open(sys.argv[1], timeout=30) as page:
        form = Form()
        form.feed(page.read().decode("utf-8", "replace"))
        here = page.url
    if form.action is not None:  # the sign-in page: the user signs in as filled in
        action = urllib.parse.urljoin(here, form.action)
        visited.append(action)
        with opener.open(action, urllib.parse.urlencode(form.fields).encode(), timeout=30) as answer:
            answer.read()
except urllib.error.HTTPError:
    pass  # an error page, which a person would read; junior reports what the redirect said
if os.environ.get("JUNIOR_TEST_BROWSER_LOG"):
    with open(os.environ["JUNIOR_TEST_BROWSER_LOG"], "a", encoding="utf-8") as log:
        log.write("\t".join(visited) + "\n")
