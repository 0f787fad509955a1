"""Secrets out of anything shown: URL credentials and password parameters masked as ``***``.

One function, ``redact``, for every place a location, URL or error text is printed or logged.
It is plain text work, never URL parsing, so a malformed URL (a port that is not a number,
an unclosed ``[::1``) is masked like any other and never raises.
"""

from __future__ import annotations

import re

MASK = "***"
_URL = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)(\S*)")
# a secret-bearing key=value pair, in a URL's query string or a libpq "key=value" conninfo
_SECRET_PARAM = re.compile(
    r"(?i)(\b(?:password|passwd|pwd|pass|sslpassword|secret|token|api[_-]?key|access[_-]?token)\s*=\s*)"
    r"('(?:[^'\\]|\\.)*'|[^\s&;#'\"]+)")


def _mask_url(match: re.Match[str]) -> str:
    """Mask a URL's user information: everything before the last '@' that precedes the path.
    A raw '@', '/', '?' or '<' inside a password is covered; when in doubt more is masked."""
    scheme, rest = match.group(1), match.group(2)
    first = rest.find("@")
    if first < 0:
        return scheme + rest
    path = rest.find("/", first)
    at = rest.rfind("@", 0, path if path >= 0 else len(rest))
    return scheme + MASK + rest[at:]


def redact(text: str) -> str:
    """``text`` with the user and password of every URL in it, and the value of every
    password-like parameter (``?password=``, ``password=`` in a conninfo string), masked."""
    return _SECRET_PARAM.sub(lambda m: m.group(1) + MASK, _URL.sub(_mask_url, str(text)))
