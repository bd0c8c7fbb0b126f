"""Who may reach ``klea-serve``: the Host names, browser origins and bearer token it accepts.

:func:`access_policy` turns the command line's flags into an :class:`AccessPolicy` and
refuses unsafe or contradictory settings (a non-loopback address without a token or
``--no-auth``, an empty token file) before anything loads; :mod:`.guard` enforces the
policy on every request. Standard library only, so ``klea-serve --help`` stays light.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from klea_utils.stores.exceptions import ServeAccessError

__all__ = [
    "ANY_HOST",
    "LOOPBACK_NAMES",
    "MIN_TOKEN_CHARS",
    "TOKEN_ENV",
    "AccessPolicy",
    "access_policy",
    "is_loopback",
]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
"""Host names always accepted (as Starlette's ``TrustedHostMiddleware`` spells them)."""

TOKEN_ENV = "KLEA_SERVE_TOKEN"
"""Environment variable holding the bearer token when neither flag gives one."""

MIN_TOKEN_CHARS = 16
"""Shortest token accepted: ``secrets.token_urlsafe(32)`` gives 43 characters."""

ANY_HOST = "*"
"""``--allowed-host '*'``: any Host name; accepted only together with a token."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")
_WILDCARD_BINDS = ("0.0.0.0", "::", "")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind address or name) only reaches this machine."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_pattern(name: str, flag: str = "--allowed-host") -> str:
    """``name`` as ``TrustedHostMiddleware`` compares it: lower case, IPv6 in brackets.

    ``*`` (any host) and ``*.example.org`` (its subdomains) pass through.

    Raises:
        ServeAccessError: Not a host name or IP address (a port, a scheme, a path).
    """
    text = name.strip().lower().rstrip(".")
    if text == "*" or (text.startswith("*.") and _HOST_NAME.fullmatch(text[2:])):
        return text
    try:
        address = ipaddress.ip_address(text[1:-1] if text.startswith("[") else text)
    except ValueError:
        address = None
    if address is not None:
        return f"[{address.compressed}]" if address.version == 6 else str(address)
    if not _HOST_NAME.fullmatch(text):
        raise ServeAccessError(
            f"{flag} {name!r}: expected a host name or IP address without scheme, port or "
            "path (e.g. papers.lab.example, 192.168.1.20, *.lab.example)"
        )
    return text


def origin_pattern(origin: str) -> str:
    """A ``--cors-origin`` as browsers send it: ``scheme://host[:port]``, lower case.

    A browser leaves the scheme's default port out of ``Origin``, so ``:443`` on https
    and ``:80`` on http are dropped here too.

    Raises:
        ServeAccessError: Not an http(s) origin, or ``*``.
    """
    text = origin.strip().rstrip("/").lower()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.path
        or parts.query
        or parts.username
    ):
        raise ServeAccessError(
            f"--cors-origin {origin!r}: expected one origin, scheme://host[:port] "
            "(e.g. https://notebook.lab.example:8888); '*' is not accepted"
        )
    host = host_pattern(parts.hostname, "--cors-origin")
    if port is None or port == _DEFAULT_PORTS[parts.scheme]:
        return f"{parts.scheme}://{host}"
    return f"{parts.scheme}://{host}:{port}"


@dataclass(frozen=True)
class AccessPolicy:
    """The Host names, CORS origins and token one server accepts (loopback, no token)."""

    allowed_hosts: tuple[str, ...] = LOOPBACK_NAMES
    token: str | None = field(default=None, repr=False)
    cors_origins: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.token is not None and len(self.token) < MIN_TOKEN_CHARS:
            raise ServeAccessError(
                f"the token has {len(self.token)} characters; use at least "
                f"{MIN_TOKEN_CHARS}, e.g. python -c 'import secrets; "
                "print(secrets.token_urlsafe(32))'"
            )
        if not self.allowed_hosts:
            raise ServeAccessError("no host name is allowed: give at least one")
        if ANY_HOST in self.allowed_hosts and self.token is None:
            raise ServeAccessError(
                "--allowed-host '*' answers any Host name, which lets a page of any web "
                "site reach this server through DNS rebinding: name the hosts instead, or "
                "give a token with it (--token, --token-file or $" + TOKEN_ENV + ")"
            )

    def authorized(self, authorization: str | None) -> bool:
        """Whether an ``Authorization`` header carries the token (constant-time compare)."""
        if self.token is None:
            return True
        scheme, _, value = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(value.strip().encode("utf-8"), self.token.encode("utf-8"))


def _read_token_file(path: Path) -> str:
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ServeAccessError(f"--token-file {path}: cannot be read ({exc})") from exc
    if not token:
        raise ServeAccessError(f"--token-file {path}: the file is empty")
    return token


def _token(
    token: str | None, token_file: Path | None, environ: Mapping[str, str]
) -> tuple[str | None, str]:
    """The token and where it came from: ``--token``, then ``--token-file``, then the env."""
    if token is not None and token_file is not None:
        raise ServeAccessError("give the token once: --token or --token-file, not both")
    if token is not None:
        if not token.strip():
            raise ServeAccessError("--token needs a value, got an empty one")
        return token.strip(), "--token"
    if token_file is not None:
        return _read_token_file(token_file), "--token-file"
    from_env = environ.get(TOKEN_ENV, "").strip()
    return (from_env or None), f"${TOKEN_ENV}"


def access_policy(
    host: str,
    *,
    token: str | None = None,
    token_file: Path | None = None,
    no_auth: bool = False,
    allowed_hosts: Sequence[str] = (),
    cors_origins: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> AccessPolicy:
    """The policy for a server bound to ``host``, from the command line's flags.

    The loopback names are always allowed, and so is ``host`` itself unless it is a
    wildcard bind (``0.0.0.0``, ``::``), whose names ``--allowed-host`` must give.

    Raises:
        ServeAccessError: Off loopback without a token or ``no_auth``; a token together
            with ``no_auth``; an empty or unreadable token file; a short token; a
            malformed host name or origin.
    """
    value, source = _token(token, token_file, os.environ if environ is None else environ)
    if no_auth and value is not None:
        raise ServeAccessError(f"--no-auth contradicts the token given by {source}: drop one")
    if value is None and not no_auth and not is_loopback(host):
        raise ServeAccessError(
            f"--host {host} is reachable from other machines, and nothing protects the "
            f"library: give a token (--token, --token-file or ${TOKEN_ENV}), or --no-auth "
            "to serve without one on purpose"
        )
    names = list(LOOPBACK_NAMES)
    if host.strip() not in _WILDCARD_BINDS and not is_loopback(host):
        names.append(host_pattern(host, "--host"))
    names += [host_pattern(name) for name in allowed_hosts]
    return AccessPolicy(
        allowed_hosts=tuple(dict.fromkeys(names)),
        token=value,
        cors_origins=tuple(dict.fromkeys(origin_pattern(o) for o in cors_origins)),
    )
