"""A ``BROWSER`` for tests: fetch the URL and follow every redirect, as a browser whose user approves at once.

``BROWSER="python follow_redirects.py %s"``; each URL it was given is appended to ``$JUNIOR_TEST_BROWSER_LOG``.
"""

import os
import sys
import urllib.error
import urllib.request

url = sys.argv[1]
if os.environ.get("JUNIOR_TEST_BROWSER_LOG"):
    with open(os.environ["JUNIOR_TEST_BROWSER_LOG"], "a", encoding="utf-8") as log:
        log.write(url + "\n")
try:
    with urllib.request.urlopen(url, timeout=30) as answer:
        answer.read()
except urllib.error.HTTPError:
    pass  # an error page, which a person would read; junior reports what the redirect said
