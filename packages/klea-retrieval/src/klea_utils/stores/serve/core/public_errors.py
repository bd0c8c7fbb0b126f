"""What ``klea-serve`` tells a caller when something fails: the problem, never the secrets.

An exception's text often holds what a caller must not read: the absolute path of an
index (the server's layout, a user name), a store URI with its password
(``postgresql://user:secret@host/db``). :func:`public_text` keeps the words and removes
those: a path becomes its last name (``…/chunks.sqlite`` reads ``chunks.sqlite``), a URI
loses its user, password, query and all but the last part of its path. :func:`log_failure`
writes the whole detail to the server's log under a short request id, which the answer
names, so an operator can find it.
"""

from __future__ import annotations

import logging
import re
import secrets
from urllib.parse import urlsplit

__all__ = ["log_failure", "public_text", "request_id"]

_log = logging.getLogger("klea_utils.stores.serve")

_URI = r"(?P<uri>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]*)"
# An absolute path (POSIX, home-relative or Windows): a separator starts it, not after a
# word character or a dot (so "and/or" and "1/2" stay); at least one folder before the name.
_PATH = r"(?P<path>(?<![\w.~])(?:~|[A-Za-z]:)?(?:[/\\][^\s'\"<>|/\\:,;()]+)+[/\\]?)"
_SECRET_WORDS = re.compile(
    r"(?i)\b(password|passwd|pwd|token|secret|api[_-]?key)\b(\s*[=:]\s*)([^\s;,]+)"
)
_PATTERN = re.compile(f"{_URI}|{_PATH}")


def _last_name(path: str) -> str:
    parts = [p for p in re.split(r"[/\\]", path) if p and p != "~" and not p.endswith(":")]
    return parts[-1] if parts else ""


def _public_uri(uri: str) -> str:
    try:
        parts = urlsplit(uri)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return f"{uri.split(':', 1)[0]}://…"
    if ":" in host:
        host = f"[{host}]"
    user = "…@" if parts.username or parts.password else ""
    name = _last_name(parts.path)
    return f"{parts.scheme}://{user}{host}{port}" + (f"/{name}" if name else "")


def _replace(match: re.Match[str]) -> str:
    if match.group("uri"):
        return _public_uri(match.group("uri"))
    return _last_name(match.group("path"))


def public_text(text: str) -> str:
    """``text`` without absolute paths, URI credentials or ``password=...`` values."""
    text = _PATTERN.sub(_replace, text)
    return _SECRET_WORDS.sub(lambda m: f"{m.group(1)}{m.group(2)}…", text)


def request_id() -> str:
    """A short random id naming one failure in the log and in its answer."""
    return secrets.token_hex(6)


def log_failure(what: str, exc: BaseException, *, level: int = logging.ERROR) -> str:
    """Log ``exc`` whole (with its traceback) under a new request id; return the id."""
    rid = request_id()
    _log.log(level, "request %s: %s: %s: %s", rid, what, type(exc).__name__, exc, exc_info=exc)
    return rid
