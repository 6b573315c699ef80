"""Credentials found by their structure: key material, one-time-password seeds, cards, seed phrases, and a value
said to be a password in any of the languages ``secret_labels`` lists.

``reading`` turns a text into what it says once disguises are taken off (foreign labels read as English words,
look-alike letters from other scripts read as Latin by Unicode's confusables table, ``p4ssw0rd`` and
``p a s s w o r d`` read as ``password``); ``decoded`` yields what base64, hex and URL-encoded pieces of it
decode to. ``structural_kind`` names the first detector that fires. Every pattern here is a run of bounded
character classes (no nested repetition), so each costs time linear in the text.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote

from junior_memory.secret_labels import CODE_PLACES, LABELS, OTP_WORDS, PASSWORD_WORDS, SEED_WORDS

__all__ = ["decoded", "encoded_login", "looks_secret", "reading", "structural_kind"]

_SYMBOLS = frozenset("!@#$%^&*+=~?|<>()[]{}")


def _words(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


def _unspaced(word: str) -> bool:
    return any(ord(c) >= 0x2E80 for c in word)


@functools.cache
def _label_pattern() -> tuple[re.Pattern[str], dict[str, str]]:
    meaning = {word.casefold(): english for english, words in LABELS for word in words}
    spaced = [w for w in meaning if not _unspaced(w)]
    unspaced = [w for w in meaning if _unspaced(w)]
    pattern = rf"(?<![^\W_])(?:{_words(tuple(spaced))})(?![^\W_])|{_words(tuple(unspaced))}"
    return re.compile(pattern, re.IGNORECASE), meaning


# Letters a disguised secret word is spelt with: p4ssw0rd, pa$$word, s3cr3t.
_LEET = {"a": "a4@", "e": "e3", "i": "i1!", "o": "o0", "s": "s5$", "t": "t7+", "l": "l1", "c": "c(", "n": "n"}
_DISGUISED_WORDS = ("password", "passwd", "passphrase", "passcode", "secret", "token", "credentials")
_SEPARATORS = ("", " ", ".", "-", "_", "*")


@functools.cache
def _disguise_pattern() -> re.Pattern[str]:
    branches = []
    for word in _DISGUISED_WORDS:
        classes = ["[" + re.escape(_LEET.get(c, c)) + "]" for c in word]
        for sep in _SEPARATORS:
            branches.append(re.escape(sep).join(classes) if sep else "".join(classes))
    return re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(branches) + r")(?![A-Za-z0-9])", re.IGNORECASE)


def _re2(pattern: str) -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = False
    return re2.compile(pattern.encode("utf-8"), options)


@functools.cache
def _label_gate() -> Any:
    """Whether any label occurs at all, on RE2: most texts hold none."""
    return _re2(_words(tuple(word for _, words in LABELS for word in words)))


@functools.cache
def _disguise_gate() -> Any:
    """The disguise pattern on RE2 without its word boundaries: most texts hold none, and RE2 says so in one pass."""
    body = _disguise_pattern().pattern.removeprefix("(?<![A-Za-z0-9])").removesuffix("(?![A-Za-z0-9])")
    return _re2(body)


@functools.cache
def _confusables() -> dict[str, str]:
    """Non-ASCII characters Unicode lists as confusable with one ASCII letter or digit (Cyrillic а, Greek ο)."""
    from confusable_homoglyphs import utils  # type: ignore[import-untyped]

    table: dict[str, str] = {}
    for char, glyphs in utils.load("confusables.json").items():
        if len(char) != 1 or char.isascii():
            continue
        for glyph in glyphs:
            if len(glyph["c"]) == 1 and glyph["c"].isascii() and glyph["c"].isalnum():
                table[char] = glyph["c"]
                break
    return table


def _plain_word(match: re.Match[str]) -> str:
    if match.group().isalpha():
        return match.group()  # not disguised: "SECRET_KEY" stays as written
    letters = [c for c in match.group() if c not in " .-_*"]
    for word in _DISGUISED_WORDS:
        if len(word) == len(letters):
            if all(c.lower() in _LEET.get(w, w) for c, w in zip(letters, word, strict=True)):
                return word
    return match.group()


_SCRIPT_EDGE = re.compile(r"(?<=[\u2e80-\u9fff\uac00-\ud7ff\uff66-\uff9f])(?=[A-Za-z0-9])"
                          r"|(?<=[A-Za-z0-9])(?=[\u2e80-\u9fff\uac00-\ud7ff\uff66-\uff9f])")


def reading(text: str) -> str:
    """``text`` with its disguises taken off: foreign secret labels as English, look-alikes and leetspeak as
    the Latin letters they imitate, spaced-out letters joined."""
    labels, meaning = _label_pattern()

    def english(match: re.Match[str]) -> str:
        word = meaning.get(re.sub(r"\s+", " ", match.group().casefold()), "password")
        return f" {word} " if _unspaced(match.group()) else word

    out = labels.sub(english, text) if _label_gate().search(text.encode("utf-8", "replace")) else text
    if out != text:
        # Words of unspaced scripts set apart from Latin ones: "は1Passwordに" reads as "は 1Password に".
        out = _SCRIPT_EDGE.sub(" ", out)
    if not out.isascii():
        table = _confusables()
        out = "".join(table.get(c, c) for c in out)
    if not _disguise_gate().search(out.encode("utf-8", "replace")):
        return out
    return _disguise_pattern().sub(_plain_word, out)


_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{12,400}={0,2}(?![A-Za-z0-9+/_\-=])")
_HEX = re.compile(r"(?<![0-9A-Za-z])(?:0x)?([0-9a-fA-F]{16,400})(?![0-9A-Za-z])")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_MAX_DECODED = 16


def _printable(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text or sum(c.isprintable() or c in "\n\t" for c in text) < len(text):
        return None
    return text if any(c.isalpha() for c in text) else None


def decoded(text: str) -> Iterator[str]:
    """What URL-encoded text, and base64 or hex pieces of ``text``, decode to when that is printable text."""
    if _PERCENT.search(text):
        yield unquote(text)
    count = 0
    for match in _HEX.finditer(text):
        value = match.group(1)
        if len(value) % 2 == 0 and count < _MAX_DECODED:
            count += 1
            found = _printable(bytes.fromhex(value))
            if found is not None:
                yield found
    for match in _BASE64.finditer(text):
        value = match.group().rstrip("=")
        if count >= _MAX_DECODED or len(value) % 4 == 1 or value.isalpha() or value.isdigit():
            continue
        count += 1
        padded = value + "=" * (-len(value) % 4)
        try:
            raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        except (binascii.Error, ValueError):
            continue
        found = _printable(raw)
        if found is not None:
            yield found


def _entropy(token: str) -> float:
    counts = Counter(token)
    return -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())


def looks_secret(value: str) -> bool:
    """A value a person would not write as an ordinary word: digits and letters, a symbol, or inner capitals."""
    if len(value) < 6:
        return False
    if any(c.isdigit() for c in value) and any(c.isascii() and c.isalpha() for c in value):
        return True
    if any(c in _SYMBOLS for c in value):
        return True
    return any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)


def _strong(value: str) -> bool:
    """A password by its shape alone: letters, a digit, and a symbol or both cases (Sonne2024, Blu3Sky#42)."""
    if len(value) < 6 or "://" in value or _VERSION.fullmatch(value):
        return False
    letters = [c for c in value if c.isalpha()]
    if not letters or not any(c.isdigit() for c in value):
        return False
    cased = any(c.isupper() for c in letters) and any(c.islower() for c in letters)
    return cased or any(c in _SYMBOLS for c in value)


_VERSION = re.compile(r"v?\d+(?:\.\d+)+[a-z0-9\-]*", re.IGNORECASE)
_PLACEHOLDER_WORDS = frozenset(
    "redacted hidden masked none null empty unset secret password token value example".split()
)


def _placeholder(value: str) -> bool:
    return (not value or value[0] in "$<{%[(" or value.endswith((">", "}")) or len(set(value.casefold())) == 1
            or "${" in value or "{{" in value or value.strip(".").casefold() in _PLACEHOLDER_WORDS)


# The end of a clause: a sentence stop, a line, a semicolon.
_CLAUSE_END = re.compile(r"[.!?](?:\s|$)|[\n;。！？]")
_ASCII_TOKEN = re.compile(r"[!-~]{1,80}")
_LINKS = frozenset(
    "is was are to ist lautet est es é è is: = : - —".split()
)
# A word after which what follows is where the secret is kept, not the secret: "is in 1Password".
_PLACE_WORDS = frozenset("in at on from via under by inside into with using".split())
_EMAIL = re.compile(r"[^@\s]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+")


def _clause(text: str, start: int, limit: int) -> str:
    window = text[start:start + limit]
    end = _CLAUSE_END.search(window)
    return window[: end.start()] if end else window


# Where secrets are kept, named as such: "パスワードは1Passwordに保存されています" says where, not what.
_KEEPERS = frozenset(("1password", "bitwarden", "lastpass", "keepass", "keepassxc", "dashlane"))


def _keeper(value: str) -> bool:
    return any(run.casefold() in _KEEPERS for run in re.findall(r"[A-Za-z0-9]+", value))


def _value(token: str) -> str:
    return token.strip(".,;:)(\"'`[]").rstrip("。、")


@functools.cache
def _password_label() -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9])(?:{_words(PASSWORD_WORDS)})(?![A-Za-z0-9])", re.IGNORECASE)


# Words that may stand between a password word and its value: "password for the router is", "Passwort für".
_JOINS = frozenset("for of on to from für fur du de del des der den zum zur van do da della di от для".split())


def _value_after_label(text: str) -> str | None:
    """A password-shaped value in the clause after a password word: "Passwort für den Router ist Sonne2024".

    The word must be the clause's subject, not a modifier: "password manager is 1Password" is about a tool.
    """
    for match in _password_label().finditer(text):
        if text[match.end():match.end() + 1] not in ("", " ", "\t", ":", "=", "：", "\n") or (
            match.start() and text[match.start() - 1] in ":/@"
        ):
            continue  # a word inside a URL or an identifier: postgresql://user:password@host
        tokens = [t for t in _clause(text, match.end(), 60).split() if "://" not in t][:6]
        first = _value(tokens[0]).casefold() if tokens else ""
        if first.isascii() and first.isalpha() and first not in _JOINS and first not in _LINKS:
            continue
        linked = False
        for index, raw in enumerate(tokens):
            value = _value(raw)
            if (index and tokens[index - 1].casefold() in _PLACE_WORDS) or _EMAIL.fullmatch(value):
                continue
            if raw.rstrip(":=：") != raw or raw.casefold() in _LINKS:
                linked = True
                if value.casefold() in _LINKS or not value:
                    continue
            if _placeholder(value) or _keeper(value):
                continue
            if _strong(value) or (linked and looks_secret(value)):
                return "a password or secret in a sentence"
            if match.group().casefold() == "pin code" and re.search(r"(?<!\d)\d{4,8}(?!\d)", value) and index < 2:
                return "a PIN or door code"
    return None


_BEFORE_LABEL = re.compile(
    r"(?<!\S)(\S{6,64})\s+(?:is|was)\s+(?:my|the|our|your|his|her|their|its)\s+(?:[\w'\-]+\s+){0,3}?"
    r"(?:password|passphrase|passcode|pin|pwd|secret)(?![A-Za-z0-9])",
    re.IGNORECASE,
)
# "wifi ... key Blu3Sky#42": a bare "key" takes a value only when the value is password-shaped and right after it.
_KEY_THEN_VALUE = re.compile(r"(?<![A-Za-z0-9])key(?:\s*[:=]\s*|\s+is\s+|\s+)(\S{6,80})", re.IGNORECASE)


def _value_before_label(text: str) -> str | None:
    for match in _BEFORE_LABEL.finditer(text):
        value = _value(match.group(1))
        if not _placeholder(value) and looks_secret(value):
            return "a password or secret in a sentence"
    for match in _KEY_THEN_VALUE.finditer(text):
        if not re.search(r"(?i)public\s*$", text[max(0, match.start() - 8):match.start()]):
            value = _value(match.group(1))
            if not _placeholder(value) and _strong(value) and any(c in _SYMBOLS for c in value):
                return "a password or secret in a sentence"
    return None


_MARKUP = re.compile(r"<([A-Za-z_][\w:.\-]{0,40})(?:\s[^<>]{0,200})?>\s*([^<>]{1,200}?)\s*</([A-Za-z_][\w:.\-]{0,40})>")
_SECRET_TAG = re.compile(r"(?i)(?:password|passwd|passphrase|pass|pwd|secret|token|api[_\-]?key|key|credentials?|pin)$")


def _markup(text: str) -> str | None:
    for match in _MARKUP.finditer(text):
        tag, value, closing = match.groups()
        if tag == closing and _SECRET_TAG.search(tag) and not _placeholder(value) and len(value) >= 4:
            return "a secret in markup"
    return None


_KEY_WORD = re.compile(r"(?i)(?<![A-Za-z0-9])(?:key|keys|token|secret|password|auth|private|seed|apikey)(?![A-Za-z])")
_NOT_KEY_WORD = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:id|ids|hash|digest|commit|sha\d*|md5|checksum|fingerprint|address|transaction|tx|txid"
    r"|issue|trace|request|public|uuid|build|ticket|order|block)(?![A-Za-z0-9])"
)
_HEX_KEY = re.compile(
    r"(?<![0-9A-Za-z\-])(?:0x)?([0-9a-fA-F]{24,128}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}"
    r"-[0-9a-fA-F]{12})(?![0-9A-Za-z\-])"
)


def _hex_key(text: str) -> str | None:
    """Hex key material (a 32-hex API key, a 64-hex private key, a UUID-shaped key) with a key word before it
    in its clause, and no word saying it is an id or a digest."""
    for match in _HEX_KEY.finditer(text):
        value = match.group(1).replace("-", "")
        if _entropy(value.lower()) < 3.0 or value.isdigit() or value.isalpha():
            continue
        before = text[max(0, match.start() - 48):match.start()]
        stop = max((m.end() for m in _CLAUSE_END.finditer(before)), default=0)
        before = before[stop:]
        words = list(_KEY_WORD.finditer(before))
        if words and not _NOT_KEY_WORD.search(before[words[-1].start():]) and not re.search(
            r"(?i)public\s+$", before[:words[-1].start()]
        ):
            return "key material (hex) next to a key word"
    return None


_CARD = re.compile(r"(?<![\d\-])(?:\d[ \-]?){12,18}\d(?![\d\-])")
_CARD_PROOF = re.compile(
    r"(?i)(?<![A-Za-z])(?:cvv2?|cvc2?|cid|csc|security\s+code|card\s+verification)(?![A-Za-z])\W{0,4}(?:is\s+)?\d{3,4}"
    r"(?!\d)|(?<![A-Za-z])(?:exp|exp\.|expires|expiry|expiration|valid\s+thru|valid\s+through|good\s+thru"
    r"|gültig\s+bis)\W{0,4}(?:0[1-9]|1[0-2])\s*/\s*(?:\d{2}|20\d{2})(?!\d)"
)


_CARD_PROOF_WORDS = ("cv", "cid", "csc", "security code", "verification", "exp", "valid", "good thru", "gültig")


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _card(text: str) -> str | None:
    """A card number (13-19 digits passing Luhn's check) with its CVV or expiry: enough to pay with."""
    lowered = text.casefold()
    if not any(word in lowered for word in _CARD_PROOF_WORDS) or not _CARD_PROOF.search(text):
        return None
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and _luhn(digits):
            return "a card number with its CVV or expiry"
    return None


@functools.cache
def _bip39() -> frozenset[str]:
    from mnemonic import Mnemonic

    return frozenset(Mnemonic("english").wordlist)


_SEED_RUN = 12  # the shortest BIP39 phrase
_LETTER_RUN = re.compile(r"[^\W\d_]+")


def _seed_phrase(text: str) -> str | None:
    """Twelve or more BIP39 words in a row (numbering between them allowed): a wallet's seed phrase."""
    words = _bip39()
    run = 0
    for token in _LETTER_RUN.findall(text.casefold()):  # numbering ("1. abandon 2. zoo") is not a word
        run = run + 1 if token in words else 0
        if run >= _SEED_RUN:
            return "a wallet seed phrase"
    return None


_OTP_LABEL = re.compile(rf"(?i)(?<![A-Za-z0-9])(?:{_words(OTP_WORDS + SEED_WORDS)}|secret)(?![A-Za-z0-9])")
_BASE32 = re.compile(r"(?<![A-Za-z0-9])[A-Z2-7]{16,128}={0,6}(?![A-Za-z0-9])")
_CODES_LABEL = re.compile(
    r"(?i)(?<![A-Za-z])(?:backup|recovery|one-time|2fa|mfa|emergency|scratch)\s+codes?(?![A-Za-z])"
)
_CODE = re.compile(r"(?<![\w\-])(?:(?=[A-Za-z]*\d)[A-Za-z0-9]{4,5}-[A-Za-z0-9]{4,5}|\d{6,10})(?![\w\-])")


def _otp(text: str) -> str | None:
    """A base32 TOTP seed next to an OTP word, or a list of backup codes."""
    for match in _BASE32.finditer(text):
        value = match.group().rstrip("=")
        if any(c.isdigit() for c in value) and _entropy(value) >= 3.0:
            before = text[max(0, match.start() - 60):match.start()]
            if _OTP_LABEL.search(before):
                return "a one-time-password seed"
    for match in _CODES_LABEL.finditer(text):
        if len(_CODE.findall(text[match.end():match.end() + 300])) >= 3:
            return "backup codes"
    return None


_CODE_VALUE = re.compile(
    r"(?i)(?<![A-Za-z])codes?(?![A-Za-z])[^\n]{0,40}?(?:[:=]|\bis\b|\bwas\b)\s*\d{3,8}#?(?![\w\-/.:])"
)


def _place_code(text: str) -> str | None:
    """"The code for the server room: 7731": a code given a number ("is", ":") in a clause naming a place it
    opens ("the door code reader in room 204" gives none)."""
    places = "|".join(CODE_PLACES)
    for clause in _CLAUSE_END.split(text):
        if _CODE_VALUE.search(clause) and re.search(rf"(?i)(?<![A-Za-z])(?:{places})s?(?![A-Za-z])", clause):
            return "a PIN or door code"
    return None


_DETECTORS: tuple[Callable[[str], str | None], ...] = (
    _markup, _card, _hex_key, _otp, _seed_phrase, _place_code, _value_after_label, _value_before_label,
)


def structural_kind(text: str) -> str | None:
    """The first structural detector that finds a credential in ``text`` (already read with ``reading``)."""
    for detector in _DETECTORS:
        found = detector(text)
        if found is not None:
            return found
    return None


def encoded_login(text: str) -> bool:
    """``user:password`` and nothing else, as basic auth encodes it."""
    user, colon, password = text.strip().partition(":")
    return bool(colon) and 0 < len(user) <= 64 and " " not in user and " " not in password and looks_secret(password)
