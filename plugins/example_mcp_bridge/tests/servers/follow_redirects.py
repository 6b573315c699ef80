"""A ``BROWSER`` for tests: fetch the URL and follow every redirect, as a browser whose user approves at once.

``BROWSER="python follow_redirects.py %s"``; each URL it was given is appended to ``$JUNIOR_TEST_BROWSER_LOG``,
followed on the same line (tab-separated) by each URL it was redirected to.
"""

import os
import sys
import urllib.error
import urllib.request

url = sys.argv[1]
visited = [url]


class Redirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        visited.append(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


try:
    with urllib.request.build_opener(Redirects).open(url, timeout=30) as answer:
        answer.read()
except urllib.error.HTTPError:
    pass  # an error page, which a person would read; junior reports what the redirect said
if os.environ.get("JUNIOR_TEST_BROWSER_LOG"):
    with open(os.environ["JUNIOR_TEST_BROWSER_LOG"], "a", encoding="utf-8") as log:
        log.write("\t".join(visited) + "\n")
