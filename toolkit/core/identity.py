"""Who a row belongs to: the developer identity every event, finding, preference and
calibration row carries, and its salted pseudonym for exports.

The identity is resolved once per process (hooks write many rows per call and must not pay
for it twice): ``$PLANTUNE_DEVELOPER``, else the git ``user.email`` (read straight from the
config files, no subprocess), else ``<login>@<host>``. A command given ``--developer`` sets
it for the whole process, including the worker processes an import forks afterwards.

Only the standard library is imported here: this module is on the hot path.
"""

import os

ENV_VAR = "PLANTUNE_DEVELOPER"
# Longest identity kept; an email is far shorter, anything longer is a mistake.
MAX_LENGTH = 200
# Length of the hex pseudonym: 64 bits make an accidental collision inside one team
# practically impossible while keeping the column short.
PSEUDONYM_HEX = 16

_developer = None


class IdentityError(ValueError):
    """A developer identity that cannot be stored, explained in one sentence."""


def normalise(name) -> str:
    """The stored form of an identity: one spelling per person, whatever way it was typed.

    Compatibility forms are folded (NFKC: a full-width letter is the letter), invisible
    format characters (zero-width spaces, joiners) dropped, then the value is trimmed, a
    ``mailto:`` prefix and trailing dots removed, and lower-cased (emails compare
    case-blind). Raises IdentityError for an empty, over-long or control-character value.
    """
    value = name if isinstance(name, str) else ""
    if not value.isascii():
        import unicodedata

        value = unicodedata.normalize("NFKC", value)
        value = "".join(c for c in value if unicodedata.category(c) != "Cf")
    value = value.strip().lower()
    if value.startswith("mailto:"):
        value = value[len("mailto:") :].strip()
    value = value.rstrip(". ")
    if not value:
        raise IdentityError("developer must be a non-empty name or email")
    if len(value) > MAX_LENGTH:
        raise IdentityError(f"developer must be at most {MAX_LENGTH} characters")
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in value):
        raise IdentityError("developer must not contain control characters")
    return value


def same_script(value) -> bool:
    """True when the letters of an identity come from one script: ``аlice`` with a Cyrillic
    ``а`` is refused as a look-alike of ``alice`` rather than taken as another person."""
    if value.isascii():
        return True
    import unicodedata

    scripts = {unicodedata.name(c, "?").split()[0] for c in value if c.isalpha()}
    return len(scripts) <= 1


def _fallback():
    login = os.environ.get("USER") or os.environ.get("LOGNAME") or ""
    if not login:
        try:
            import pwd

            login = pwd.getpwuid(os.getuid()).pw_name
        except (ImportError, KeyError, OSError):
            login = "unknown"
    return f"{login}@{os.uname().nodename or 'localhost'}"


def resolve(env=None, cwd=None) -> str:
    """The default identity, computed afresh (see the module docstring for the order)."""
    env = os.environ if env is None else env
    try:
        return normalise(env.get(ENV_VAR))
    except IdentityError:
        pass
    from toolkit.store.paths import git_user_email

    try:
        return normalise(git_user_email(cwd, env))
    except IdentityError:
        return normalise(_fallback())


def developer() -> str:
    """This process's identity, resolved on first use and then kept."""
    global _developer
    if _developer is None:
        _developer = resolve()
    return _developer


def set_developer(name) -> str:
    """Make ``name`` this process's identity (``--developer``); returns the stored form."""
    global _developer
    _developer = normalise(name)
    return _developer


def reset():
    """Forget the resolved identity (tests change the environment between calls)."""
    global _developer
    _developer = None


def pseudonym(identity: str, salt: str) -> str:
    """A stable salted hash of ``identity``: the same pair always gives the same value,
    another salt gives an unrelated one, and the identity cannot be read back without the
    salt. HMAC-SHA-256 keyed by the salt, so the salt is never a plain prefix."""
    import hashlib
    import hmac

    if not salt:
        raise IdentityError("the pseudonymisation salt must not be empty")
    mac = hmac.new(salt.encode("utf-8"), (identity or "").encode("utf-8"), hashlib.sha256)
    return "dev-" + mac.hexdigest()[:PSEUDONYM_HEX]
