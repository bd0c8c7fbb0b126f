"""The request checks of ``klea-serve``'s HTTP side, as plain ASGI middleware.

:func:`protect` wraps the whole application (the API, the page, static files and ``/mcp``),
outermost first:

1. :class:`SecurityHeaders`: ``X-Content-Type-Options: nosniff``, a restrictive
   ``Content-Security-Policy`` (``default-src 'self'``, no inline script or style) and
   ``Referrer-Policy: no-referrer`` on every response, refusals included.
2. :class:`~klea_utils.stores.serve.http.limits.ConcurrencyLimit`: past the limit of requests
   in progress, **503** with ``Retry-After`` (a flood costs a counter, not memory).
3. Starlette's ``TrustedHostMiddleware``: a ``Host`` header naming anything but the
   loopback names and ``--allowed-host`` answers **400** (DNS rebinding).
4. :class:`OriginCheck`: a request whose ``Origin`` is neither its own host nor a
   ``--cors-origin`` answers **403** (a page of another site calling the API).
5. Starlette's ``CORSMiddleware``, only with ``--cors-origin`` and only for those origins.
6. :class:`BearerToken`, only with a token: ``/api/...`` and ``/mcp`` without
   ``Authorization: Bearer <token>`` answer **401** (``/api/docs`` and
   ``/api/openapi.json`` describe the API, hold no papers, and stay open).
7. :class:`~klea_utils.stores.serve.http.limits.BodyLimit`: a body over the limit answers
   **413** (checked after the token, so nobody unauthorised gets a body read).

Every middleware is pure ASGI (no ``BaseHTTPMiddleware``), so MCP's streamed answers pass
through unbuffered.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from klea_utils.stores.exceptions import ServeAccessError
from klea_utils.stores.serve.core.options import ServeLimits
from klea_utils.stores.serve.http.access import AccessPolicy, origin_pattern
from klea_utils.stores.serve.http.limits import BodyLimit, ConcurrencyLimit, refuse
from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CONTENT_SECURITY_POLICY", "BearerToken", "OriginCheck", "SecurityHeaders", "protect"]

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
"""The page's policy: its own script, style and API only; nothing inline, no frames."""

_CORS_HEADERS = ["authorization", "content-type", "mcp-session-id", "mcp-protocol-version"]
_OPEN_PATHS = frozenset({"/api/docs", "/api/openapi.json"})


def _is_protected(path: str) -> bool:
    if path in _OPEN_PATHS:
        return False
    return path in ("/api", "/mcp") or path.startswith(("/api/", "/mcp/"))


class SecurityHeaders:
    """Adds the security headers to every HTTP response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("x-content-type-options", "nosniff")
                headers.setdefault("content-security-policy", CONTENT_SECURITY_POLICY)
                headers.setdefault("referrer-policy", "no-referrer")
            await send(message)

        await self.app(scope, receive, send_with_headers)


def same_origin(origin: str, host: str) -> bool:
    """Whether a browser's ``Origin`` names the host and port the request went to."""
    try:
        parts = urlsplit(origin)
        origin_port = parts.port or (443 if parts.scheme == "https" else 80)
        target = urlsplit(f"//{host}")
        target_port = target.port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname or not target.hostname:
        return False
    if parts.hostname.lower() != target.hostname.lower():
        return False
    # Without a port in Host, the request came on a default port (a proxy's 80 or 443).
    return origin_port == target_port if target_port else origin_port in (80, 443)


def _listed(origin: str, cors_origins: frozenset[str]) -> bool:
    """Whether ``origin``, written as ``--cors-origin`` values are, is one of them."""
    try:
        return origin_pattern(origin) in cors_origins
    except ServeAccessError:  # "null", a path, another scheme: not an origin we list
        return False


class OriginCheck:
    """Refuses (403) a request whose ``Origin`` is another site; none at all is fine."""

    def __init__(self, app: ASGIApp, cors_origins: tuple[str, ...] = ()) -> None:
        self.app = app
        self.cors_origins = frozenset(cors_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if (
            origin is None
            or _listed(origin, self.cors_origins)
            or same_origin(origin, headers.get("host", ""))
        ):
            await self.app(scope, receive, send)
            return
        detail = (
            f"requests from the origin {origin!r} are not accepted; "
            "klea-serve --cors-origin names the origins that may call it"
        )
        await refuse(send, 403, detail)


class BearerToken:
    """Refuses (401) ``/api`` and ``/mcp`` requests without the policy's bearer token."""

    def __init__(self, app: ASGIApp, policy: AccessPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or not _is_protected(scope["path"])
            or self.policy.authorized(Headers(scope=scope).get("authorization"))
        ):
            await self.app(scope, receive, send)
            return
        await refuse(
            send,
            401,
            "this klea-serve needs its token: send the header Authorization: Bearer <token>",
            {"www-authenticate": 'Bearer realm="klea-serve"'},
        )


def protect(app: Starlette, policy: AccessPolicy, limits: ServeLimits | None = None) -> None:
    """Put ``app`` behind every check of ``policy`` and ``limits`` (the order: the module's
    docstring)."""
    limits = limits or ServeLimits()
    # add_middleware wraps what is there: the last one added is the outermost.
    app.add_middleware(BodyLimit, limit=limits.max_body_bytes)
    if policy.token is not None:
        app.add_middleware(BearerToken, policy=policy)
    if policy.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(policy.cors_origins),
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=_CORS_HEADERS,
            expose_headers=["mcp-session-id"],
        )
    app.add_middleware(OriginCheck, cors_origins=policy.cors_origins)
    app.add_middleware(
        TrustedHostMiddleware, allowed_hosts=list(policy.allowed_hosts), www_redirect=False
    )
    app.add_middleware(ConcurrencyLimit, limit=limits.max_concurrent)
    app.add_middleware(SecurityHeaders)
