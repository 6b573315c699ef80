"""The words that label a secret, in the languages a workspace speaks: the one list the credential filter reads.

Each foreign label is read as the English word the filter knows (``Passwort`` as ``password``, ``暗証番号`` as
``pin code``), so every English rule (a value after the label, "the label is X") applies to it. To support a
language, add its words here and a case to ``tests/data/credential_structure.json``; nothing else changes.
Labels are matched case-insensitively after NFKC, as whole words in spaced scripts and anywhere in unspaced ones.
"""

from __future__ import annotations

__all__ = ["CODE_PLACES", "LABELS", "OTP_WORDS", "PASSWORD_WORDS", "SEED_WORDS"]

# (English reading, words that mean it), by language. Keep each language's words together.
LABELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # German
    ("password", ("passwort", "kennwort", "zugangswort")),
    ("pin code", ("geheimzahl", "pin-code", "pin-nummer")),
    ("secret", ("geheimnis",)),
    # French
    ("password", ("mot de passe", "mdp")),
    ("pin code", ("code pin", "code secret", "code confidentiel")),
    # Spanish, Portuguese, Italian
    ("password", ("contraseña", "contrasena", "clave de acceso", "senha", "palavra-passe", "parola d'ordine")),
    ("pin code", ("código pin", "codigo pin", "código secreto")),
    # Dutch, Scandinavian, Polish, Turkish
    ("password", ("wachtwoord", "lösenord", "losenord", "passord", "adgangskode", "hasło", "haslo", "şifre", "sifre")),
    # Japanese
    ("password", ("パスワード", "合言葉")),
    ("pin code", ("暗証番号",)),
    ("secret", ("秘密鍵",)),
    # Russian, Ukrainian
    ("password", ("пароль", "пароля", "паролем", "паролі")),
    ("pin code", ("пин-код", "пин код", "пинкод")),
    ("secret", ("секретный ключ",)),
    # Chinese (simplified and traditional), Korean
    ("password", ("密码", "密碼", "口令", "비밀번호", "암호")),
    ("pin code", ("pin码", "验证码")),
    ("secret", ("私钥", "密钥", "秘钥", "私鑰", "金鑰")),
)

# English words after which a value is taken as a password (the words above are read as one of these).
PASSWORD_WORDS = (
    "password", "passwd", "passphrase", "passcode", "pwd", "pw", "psk", "pin code", "pin number", "secret",
)

# Words a seed phrase or a one-time-password seed is introduced by.
SEED_WORDS = ("seed", "mnemonic", "recovery phrase", "seed phrase", "secret phrase", "wallet", "passphrase")
OTP_WORDS = ("2fa", "mfa", "totp", "otp", "hotp", "authenticator", "two-factor", "two factor", "one-time")

# Places a numeric code opens: "the code for the server room: 7731".
CODE_PLACES = (
    "door", "room", "gate", "closet", "safe", "alarm", "locker", "garage", "entry", "entrance", "building",
    "lock", "keypad", "cabinet", "vault", "lobby", "office", "cage", "padlock", "storeroom", "basement",
)
