"""What memory refuses to keep because it looks like a credential, found in time linear in the text.

Four kinds of evidence, each named in the refusal without echoing the secret:

- a known token format or key block (a prefix or a header no prose has: ``ghp_``, ``-----BEGIN ... PRIVATE KEY``);
- a value given to a secret-named setting (``DB_PASSWORD=...``, ``"client_secret": "..."``, ``--password ...``),
  an ``Authorization`` header, a URL with a password, or "the ... password is ..." in prose, unless the value is
  a placeholder (``${DB_PASSWORD}``, ``<password>``, ``****``);
- a random-looking string (mixed case and digits, high Shannon entropy) right after a secret word;
- a long random-looking string standing alone (an AWS secret key has no prefix), outside any URL;
- everyday forms of a password (``curl -u user:pass``, ``mysql -pPASS``, ``.netrc`` lines, session cookies, PINs)
  and a token in a URL's query or after a capability segment of its path (a webhook, a share link).

Every pattern runs on RE2, which has no backtracking (URLs are split with single character classes), and the
entropy pass reads each token once, so a
4,000-character memory costs the same whatever it holds. Text is NFKC-normalised and stripped of format
characters first, so full-width letters or a zero-width space inside a token do not hide it.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter
from typing import Any
from urllib.parse import unquote

from junior_memory.key_material import looks_secret as _looks_secret

__all__ = ["credential_kind"]

# (what it is, RE2 pattern): formats that prose never contains.
_FORMATS: tuple[tuple[str, str], ...] = (
    ("a private key block", r"(?i)-{2,}\s*BEGIN\s+(?:[A-Z0-9]+\s+)*PRIVATE\s+KEY(?:\s+BLOCK)?\s*-{2,}"),
    ("a PuTTY private key", r"PuTTY-User-Key-File-\d+:|(?m:^)Private-(?:Lines|MAC):\s*\S"),
    ("an OpenSSH private key", r"\bb3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=]{20,}"),
    ("an age secret key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}"),
    ("an AWS access key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),
    ("a Google API key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    ("a Google OAuth token", r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    ("an Azure account key", r"(?i)\bAccountKey=[A-Za-z0-9+/=]{40,}"),
    ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})\b"),
    ("a GitLab token", r"\bgl(?:pat|dt|rt|ptt|cbt|oas|soat)-[A-Za-z0-9_\-]{20,}"),
    ("a Slack token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}"),
    ("a Slack webhook URL", r"hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Za-z0-9_]+/[A-Za-z0-9_/]+"),
    ("a Discord webhook URL", r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{20,}"),
    ("an OpenAI or Anthropic API key", r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("a Stripe key", r"\b(?:[rs]k|whsec)_(?:live|test)_[A-Za-z0-9]{16,}\b|\bwhsec_[A-Za-z0-9]{24,}\b"),
    ("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("a SendGrid key", r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{32,64}\b"),
    ("a DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    ("a Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("a PyPI token", r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"),
    ("a Vault token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    ("a Mailgun key", r"\bkey-[0-9a-f]{32}\b"),
    ("a Mailchimp key", r"\b[0-9a-f]{32}-us[0-9]{1,2}\b"),
    ("a Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    ("a Databricks token", r"\bdapi[a-f0-9]{32}\b"),
    ("a Twilio API key", r"\bSK[0-9a-f]{32}\b"),
    ("a Square token", r"\bsq0(?:atp|csp)-[0-9A-Za-z_\-]{22,}"),
    ("a Telegram bot token", r"(?:\b|bot)[0-9]{8,10}:AA[0-9A-Za-z_\-]{33}\b"),
    ("a Zapier webhook URL", r"hooks\.zapier\.com/hooks/catch/\d+/[A-Za-z0-9]+"),
    ("a Docker access token", r"\bdckr_pat_[A-Za-z0-9_\-]{20,}"),
    ("a Wi-Fi QR code", r"\bWIFI:(?:[^;\n]*;)*?P:[^;\n]+"),
    ("a password hash", r"\$(?:2[abxy]?|apr1|[156]|y|argon2(?:id|i|d))\$[^\s$]*\$?[./A-Za-z0-9]{16,}"),
    ("an Atlassian API token", r"\bATATT3[A-Za-z0-9_\-=]{50,}"),
    ("a Linear API key", r"\blin_api_[A-Za-z0-9]{40}\b"),
    ("a Doppler token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    ("a Postman API key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    ("a Grafana token", r"\bgl(?:sa|c)_[A-Za-z0-9_\-+/=]{32,}"),
    ("a JSON Web Token", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    # A bot's user id in base64 (it starts M, N or O), a timestamp, an HMAC: the shape detect-secrets checks.
    ("a Discord bot token", r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}\b"),
    ("a one-time-password seed", r"(?i)\botpauth://[a-z]+/[^\s?]*\?(?:[^\s]*&)?secret=[A-Za-z2-7]{8,}"),
)

# Names whose value is a secret. The name must end in the secret word ("password_min_length" is a setting
# about passwords, not one), and short words (pass, pwd, pw) only count as a whole word or after a separator.
_SECRET_NAME = (
    r"(?:[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|passcode|secret|token|credentials?|api[_\-]?key|apikey"
    r"|access[_\-]?key|secret[_\-]?key|private[_\-]?key|signing[_\-]?key|encryption[_\-]?key|master[_\-]?key|auth|signature"
    r"|session|sessionid|sessid|passphrase)"
    r"|(?:^|[^A-Za-z0-9])(?:[A-Za-z0-9]+[_.\-])*(?:pass|pwd|pw|sig|sid|sess|psk))"
)

# Words that name a secret in prose: "the SMTP password is X", "the wifi key is X".
_SECRET_NOUN = (
    r"(?:password|passwd|passphrase|passcode|pwd|pw|secret|token|api[ _\-]?key"
    r"|(?:wifi|wi-fi|wlan|network|wpa2?|wep|license|licence|product|unseal|recovery|secret|access|master|signing"
    r"|encryption)[ _\-]?key)"
)

# (what it is, RE2 pattern whose last two groups are (quote, value)). How a value counts is in _counts.
_ASSIGNMENTS: tuple[tuple[str, str], ...] = (
    # NAME=value, name: value, "name": "value", name = 'value'
    ("a secret-named setting", r"(?i)" + _SECRET_NAME + r"[\"']?[ \t]*(?::=|=|:)[ \t]*([\"'`]?)([^\s\"'`,;]+)"),
    # --password value, --token=value
    ("a secret passed on a command line",
     r"(?i)(?:^|\s)--?(?:[a-z0-9]+-)*(?:password|passwd|pass|token|secret|api-?key|auth-token)(?:=|\s+)"
     r"([\"']?)([^\s\"']+)"),
    # the SMTP password is X, the password for the wifi is: X, password for jenkins: X
    ("a password or secret in a sentence",
     r"(?i)\b" + _SECRET_NOUN + r"(?:\s+(?:for|of|on|to)\s+[^.\n]{1,40}?)?"
     r"(?:\s+(?:is|was|are|to)(?:\s*:)?\s+|\s*[:=]\s*)([\"'`]?)([^\s\"'`,;]+)"),
    # username bob, password Tr0ub4dor (the value must look like one)
    ("a password or secret in a sentence", r"(?i)\b(?:password|passwd|passphrase|pwd|pw)\s+([\"'`]?)([^\s\"'`,;]+)"),
    # the test account's credentials: qa@example.com / Welcome1!, the login is admin:Xk9...
    ("a login and password",
     r"(?i)\b(?:login|logins|creds|credentials|account)\b[^\n]{0,40}?(?:\s+(?:is|are)\s+|\s*:\s*)"
     r"[^\s:/]+\s*[:/]\s*([\"']?)([^\s\"',;]+)"),
    # .netrc: machine host login user password secret
    ("a .netrc entry", r"(?i)\b(?:machine\s+\S+|default)\s+login\s+\S+\s+password\s+([\"']?)([^\s\"']+)"),
    # .pgpass: host:port:database:user:password
    ("a .pgpass entry", r"\b[A-Za-z0-9.\-*]+:(?:\d+|\*):[^\s:]+:[^\s:]+:([\"']?)([^\s\"']+)"),
    # Cookie: sessionid=..., PHPSESSID=..., connect.sid=...
    ("a session cookie",
     r"(?i)(?:^|[^A-Za-z0-9])[A-Za-z0-9_.\-]*(?:session|sessionid|sessid|[_.\-]sess|[_.\-]sid)[\"']?[ \t]*[=:][ \t]*"
     r"([\"']?)([^\s\"';,]+)"),
    # curl -u user:password, smbclient -U user%password
    ("a password passed to a command",
     r"(?:^|\s)(?:-u|--user)(?:=|\s*)[\"']?[^\s:\"']+:([\"']?)([^\s\"'@]+)"),
    ("a password passed to a command", r"(?:^|\s)(?:-U|--user)(?:=|\s*)[\"']?[^\s%\"']+%([\"']?)([^\s\"']+)"),
    # mysql -pSECRET (a space after -p means "ask me")
    ("a password passed to a command",
     r"\b(?i:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?\s-p([\"']?)([^\s\"']+)"),
    # tools whose short flag takes the password: sshpass -p, docker login -p, mongosh -p, redis-cli -a
    ("a password passed to a command",
     r"\b(?:sshpass|mongo|mongosh|mongodump|mongorestore|(?:docker|podman|buildah|helm(?:\s+registry)?)\s+login)\b"
     r"[^\n]*?\s-p\s+([\"']?)([^\s\"']+)"),
    ("a password passed to a command", r"\bredis-cli\b[^\n]*?\s-a\s+([\"']?)([^\s\"']+)"),
    # htpasswd -b file user password, openssl -passin pass:secret, net use ... /user:name password
    ("a password passed to a command",
     r"\bhtpasswd\s+(?:-\w+\s+)*-\w*b\w*\s+(?:-\w+\s+)*\S+\s+\S+\s+([\"']?)([^\s\"']+)"),
    ("a password passed to a command", r"\bpass:([\"']?)([^\s\"']+)"),
    ("a password passed to a command", r"(?i)\bnet\s+use\b[^\n]*?/user:\S+\s+([\"']?)([^\s\"'/]+)"),
    # my PIN is 4821, the door code is 7734#, the safe combination is 12-34-56
    ("a PIN or door code",
     r"(?i)\b(?:pin|pin code|passcode|(?:door|alarm|access|entry|gate|lock|unlock|keypad|security|safe) code"
     r"|combination)(?:\s+(?:number|is|was)|\s*[:=])*\s*()(\d(?:[\d\- ]{2,10})\d#?)"),
)
# Forms whose value counts whatever it is, unless it is a placeholder.
_ANY_VALUE = frozenset({"a .netrc entry", "a .pgpass entry", "a PIN or door code", "a password passed to a command"})

_AUTH_HEADER = (
    r"(?i)\b(?:proxy-)?authorization\s*[:=]\s*[\"']?(?:bearer|basic|token|digest|apikey|api-key|sso-key|key)\s+"
    r"([A-Za-z0-9._~+/=\-]{8,})"
    r"|\bx-[a-z\-]*(?:api-?key|token|auth|secret|password)[a-z\-]*\s*:\s*[\"']?([A-Za-z0-9._~+/=\-]{12,})"
    r"|\bbearer\s+([A-Za-z0-9._~+/\-]{20,}=*)"
)

# scheme://user:password@host; the user may be empty (redis://:pw@host).
_URL_PASSWORD = r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]*:([^\s@/]+)@[^\s/@]+"

_URL = r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s<>\"'`]+"
_TOKEN = r"[A-Za-z0-9+/_\-]{16,}={0,2}"
# The word must stand alone on its right ("keys" is not "key"); that is checked on the match, so that two
# secret words in a row are both found.
_SECRET_WORD = (
    r"(?i)(?:^|[^A-Za-z0-9])(public\s+)?(secrets|secret|passwords|password|passwd|passphrase|tokens|token|keys|key"
    r"|credentials|credential|apikey|auth)"
)
# What ends the "next to a secret word" window: a token this close after the word is taken as its value.
_NEAR = 40
# A label saying the string is a public key or a digest, not a secret.
_NOT_SECRET_LABEL = (
    r"(?i)(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256"
    r"@openssh\.com|sha(?:1|224|256|384|512)[:\-=]|md5[:\-])\s*$"
)

_PLACEHOLDER_WORDS = frozenset(
    "redacted hidden masked none null nil empty true false yes no required optional unset undefined secret "
    "password token value example placeholder".split()
)
_SYMBOLS = frozenset("!@#$%^&*+=~?|<>()[]{}")


def _compile(pattern: str) -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False
    return re2.compile(pattern.encode("ascii"), options)


def _scoped(pattern: str) -> str:
    """``pattern`` with a leading ``(?i)`` turned into a group, so it can be one branch of an alternation."""
    return f"(?i:{pattern[4:]})" if pattern.startswith("(?i)") else f"(?:{pattern})"


@functools.cache
def _compiled() -> dict[str, Any]:
    # Compiled on first use: the plugin module is imported by every `junior` command. Patterns run on the
    # UTF-8 bytes of the text: the Python binding's str interface converts offsets on every match.
    return {
        "any_format": _compile("|".join(_scoped(p) for _, p in _FORMATS)),
        "formats": tuple((what, _compile(p)) for what, p in _FORMATS),
        "assignments": tuple((what, _compile(p)) for what, p in _ASSIGNMENTS),
        "auth": _compile(_AUTH_HEADER),
        "url_password": _compile(_URL_PASSWORD),
        "url": _compile(_URL),
        "token": _compile(_TOKEN),
        "secret_word": _compile(_SECRET_WORD),
        "label": _compile(_NOT_SECRET_LABEL),
    }


def _placeholder(value: str) -> bool:
    """``${X}``, ``$X``, ``<password>``, ``{{ secrets.x }}``, ``%(pw)s``, ``****``, ``xxxx``, ``redacted``..."""
    if not value or value[0] in "$<{%[(" or value.endswith((">", "}")):
        return True
    if len(set(value.casefold())) == 1 or set(value) <= set("*•.x-X_"):
        return True
    return value.strip(".").casefold() in _PLACEHOLDER_WORDS


def _shouted_placeholder(value: str) -> bool:
    """``PASSWORD``, ``YOUR_TOKEN``, ``PASS``: a capitalised name standing for the value, as docs write it."""
    core = value.rstrip(".,;:)`")
    return (core.isupper() and core.replace("_", "").isalpha()
            and any(word in core.casefold() for word in ("pass", "pw", "secret", "token", "key", "your")))


def _entropy(token: str) -> float:
    counts = Counter(token)
    size = len(token)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def _wordy(token: str) -> float:
    """The share of the token spelled as words of four letters or more (``CyberneticItem``, ``Radiant``)."""
    letters = 0
    run = 0
    for index, char in enumerate(token + " "):
        if char.islower():
            run += 1
            continue
        if run >= 3:
            capital = index - run - 1 >= 0 and token[index - run - 1].isupper()
            letters += run + capital
        run = 0
    return letters / len(token)


def _random_looking(token: str) -> bool:
    """Mixed case and digits, nearly as many bits per character as a random string of that length, and not
    made of words the way identifiers are (in random strings of 24+ characters, 1 in 100 is this wordy)."""
    core = token.rstrip("=")
    if not (any(c.isupper() for c in core) and any(c.islower() for c in core) and any(c.isdigit() for c in core)):
        return False
    return _entropy(core) >= min(0.85 * math.log2(len(core)), 4.5) and _wordy(core) < 0.6


def _clause_ends(after: str) -> bool:
    """Nothing but the end of the text, a line or a clause follows: "password: pineapple" and no more."""
    return not after.strip() or after[0] in ",;\n" or (after[0] == "." and (len(after) == 1 or after[1].isspace()))


def _assignment_counts(what: str, quote: str, value: str, match_text: str, after: str) -> bool:
    if what == "a password or secret in a sentence" and quote and after[:1] == " ":
        end = after.find(quote, 0, 100)
        if end > 0 and "\n" not in after[:end]:
            value += after[:end]  # 'oak tree river 42': a quoted passphrase of several words
            after = after[end + 1:]
    if _placeholder(value) or _shouted_placeholder(value):
        return False
    if what in _ANY_VALUE:
        return not (what == "a password passed to a command" and value.isdigit())  # docker -u 1000:1000
    if what == "a session cookie":
        return len(value) >= 12 and _looks_secret(value)
    if quote and len(value) >= 4:
        return True
    if _looks_secret(value):
        return True
    if what == "a password or secret in a sentence" and ":" in match_text and len(value.rstrip(".")) >= 4:
        # "the wifi password is: sunflower" - a colon and a word that ends the clause give the value itself.
        return value.rstrip(".").isalpha() and _clause_ends(after if not value.endswith(".") else ".")
    # NAME=value with nothing around '=' is a setting, not prose: any real value counts.
    return what == "a secret-named setting" and len(value) >= 6 and "=" in match_text and " " not in match_text


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


# A path segment that says what follows it is a capability: a webhook, a share link, an invitation, a bot.
_CAPABILITY_SEGMENTS = frozenset(
    "hook hooks webhook webhooks webhookb incomingwebhook trigger triggers s share shared sharing invite invites "
    "invitation token tokens key keys secret secrets private bot callback".split()
)
# A path segment after which a hex string is a commit or a digest, said as such.
_DIGEST_SEGMENTS = frozenset("commit commits blob tree compare sha sha1 sha256 digest blobs manifests".split())
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")
_LETTERS = re.compile(r"[A-Za-z]+")


def _random_piece(piece: str) -> bool:
    """A run of 16+ letters and digits, both well represented, with nearly random-string entropy: a token."""
    if len(piece) < 16:
        return False
    digits = sum(c.isdigit() for c in piece)
    if digits < 2 or len(piece) - digits < 2:
        return False
    return _entropy(piece) >= min(0.8 * math.log2(len(piece)), 3.4) and _wordy(piece) < 0.6


def _url_secret(url: str) -> bool:
    """A token in a URL's query or fragment (named or not), or in its path after a capability segment."""
    rest = url.split("://", 1)[-1]
    path, _, query = rest.partition("?")
    path, _, fragment = path.partition("#")
    for part in re.split(r"[&;#]", unquote(query + "#" + fragment)):
        if any(_random_piece(run) for run in _ALNUM_RUN.findall(part.rpartition("=")[2])):
            return True
    capability = False
    previous = ""
    for segment in unquote(path).split("/")[1:]:
        pieces = _ALNUM_RUN.findall(segment)
        if capability and previous not in _DIGEST_SEGMENTS and any(_random_piece(r) for r in pieces):
            return True
        head = _LETTERS.match(segment)
        if head is not None and head.group().lower() in _CAPABILITY_SEGMENTS:
            capability = True
            if any(_random_piece(r) for r in _ALNUM_RUN.findall(segment[head.end():])):
                return True  # private-7c9e..., bot123:AAH...
        previous = segment.lower()
    return False


def _high_entropy(data: bytes, compiled: dict[str, Any]) -> str | None:
    urls = [m.span() for m in compiled["url"].finditer(data)]
    words = [
        m.end(2) for m in compiled["secret_word"].finditer(data)
        if not m.group(1) and not data[m.end(2):m.end(2) + 1].isalnum()
    ]
    label = compiled["label"]
    # Tokens, URLs and words all come in text order, so each list is walked once.
    url = 0
    following = 0  # words[following - 1] is the last secret word ending before the current token
    for match in compiled["token"].finditer(data):
        start, end = match.span()
        while url < len(urls) and urls[url][1] < end:
            url += 1
        if url < len(urls) and urls[url][0] <= start:
            continue  # part of a URL: a path or an id, and a secret in a query is a secret-named setting
        if label.search(data[max(0, start - 40):start]):
            continue
        token = _text(match.group(0))
        if not _random_looking(token):
            continue
        while following < len(words) and words[following] <= start:
            following += 1
        if following and start - words[following - 1] <= _NEAR and b"\n" not in data[words[following - 1]:start]:
            return "a random-looking string next to a secret word"
        if len(token.rstrip("=")) >= 32:
            return "a long random-looking string (an API key or secret key)"
    return None


def _normalised(text: str) -> str:
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", text)
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def credential_kind(text: str) -> str | None:
    """What kind of credential ``text`` appears to contain, or None.

    The text is read three ways, each scanned by every detector: as written (NFKC), with its disguises taken
    off (look-alike letters, leetspeak, spaced letters, secret labels in other languages), and as what its
    base64, hex and URL-encoded pieces decode to (one level down, then once more).
    """
    return _kind(_normalised(text), depth=0)


_MAX_DEPTH = 2


def _kind(text: str, depth: int) -> str | None:
    from junior_memory import key_material

    found = _pattern_kind(text) or key_material.structural_kind(text)
    if found is not None:
        return found
    read = key_material.reading(text)
    if read != text:
        found = _pattern_kind(read) or key_material.structural_kind(read)
        if found is not None:
            return f"{found} (disguised)"
    if depth < _MAX_DEPTH:
        for plain in key_material.decoded(text):
            if plain == text:
                continue
            if key_material.encoded_login(plain):
                return "an encoded login and password"
            found = _kind(_normalised(plain), depth + 1)
            if found is not None:
                return found if found.endswith("(encoded)") else f"{found} (encoded)"
    return None


def _pattern_kind(text: str) -> str | None:
    data = text.encode("utf-8", "replace")
    compiled = _compiled()
    if compiled["any_format"].search(data):
        return next(str(what) for what, pattern in compiled["formats"] if pattern.search(data))
    for match in compiled["url_password"].finditer(data):
        if not _placeholder(_text(match.group(1))):
            return "a URL with a password"
    for match in compiled["url"].finditer(data):
        if _url_secret(_text(match.group(0))):
            return "a URL with a token in it"
    for match in compiled["auth"].finditer(data):
        value = _text(next(g for g in match.groups() if g))
        if not _placeholder(value) and (_looks_secret(value) or len(value) >= 20):
            return "an authorization header"
    for what, pattern in compiled["assignments"]:
        for match in pattern.finditer(data):
            quote, value = (_text(g or b"") for g in match.groups()[-2:])
            after = _text(data[match.end():match.end() + 200])
            if _assignment_counts(what, quote, value, _text(match.group(0)), after):
                return str(what)
    return _high_entropy(data, compiled)
