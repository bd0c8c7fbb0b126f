"""How much one caller may ask of ``klea-serve``: body size, query length, list lengths, load.

:class:`ServeLimits` holds the settings (``klea-serve --max-body-bytes``,
``--max-query-chars``, ``--max-list-items``, ``--max-concurrent``). The HTTP routes and
the MCP tools declare the field limits in their schemas, so an over-long field answers
**422** (HTTP) or a tool error (MCP) naming the field and its limit; the service checks
the query length again for callers that reach it directly. Two pure ASGI middlewares
guard the whole application:

- :class:`BodyLimit`: a request body over ``max_body_bytes`` answers **413**, whether it
  announces its length or streams it in chunks; the body is never read whole first.
- :class:`ConcurrencyLimit`: past ``max_concurrent`` requests in progress, a new one
  answers **503** with ``Retry-After`` at once instead of queueing without bound (MCP's
  long-lived ``GET /mcp`` event streams are not counted).

Standard library and Starlette only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimit", "ConcurrencyLimit", "ServeLimits", "refuse"]


@dataclass(frozen=True)
class ServeLimits:
    """The limits one ``klea-serve`` puts on each request, with their defaults."""

    max_body_bytes: int = 1 << 20
    """Largest request body (1 MiB): larger answers 413."""
    max_query_chars: int = 4096
    """Longest query or question, in characters: longer answers 422."""
    max_list_items: int = 64
    """Most items in a list parameter (domains, authors, facet keys, ...)."""
    max_item_chars: int = 512
    """Longest item of such a list (a domain, an author, a record id)."""
    max_concurrent: int = 64
    """Most requests in progress at once: past it a request answers 503."""

    def __post_init__(self) -> None:
        for name in (
            "max_body_bytes",
            "max_query_chars",
            "max_list_items",
            "max_item_chars",
            "max_concurrent",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, got {value!r}")

    def check_query(self, query: str, field: str = "query") -> None:
        """Raise ``ValueError`` naming ``field`` when ``query`` is over the length limit."""
        if len(query) > self.max_query_chars:
            raise ValueError(
                f"{field} has {len(query)} characters; at most {self.max_query_chars} are accepted"
            )


async def refuse(
    send: Send, status: int, detail: str, headers: dict[str, str] | None = None
) -> None:
    """Answer ``status`` with ``{"detail": detail}`` as JSON (before any app response)."""
    body = json.dumps({"detail": detail}).encode("utf-8")
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class _BodyTooLarge(HTTPException):
    """Raised from ``receive`` once the body read so far passes the limit.

    An ``HTTPException``, so FastAPI's body parsing passes it on (any other exception
    there becomes a 400) and its handler answers the 413 as JSON.
    """

    def __init__(self, detail: str) -> None:
        super().__init__(status_code=413, detail=detail)


class BodyLimit:
    """Answers 413 to a request whose body is over ``limit`` bytes."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    def _detail(self) -> str:
        return f"the request body is over {self.limit} bytes, the limit of this server"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await refuse(send, 413, self._detail())
            return
        seen = 0
        started = False

        async def counted_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _BodyTooLarge(self._detail())
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, watched_send)
        except _BodyTooLarge:
            if not started:
                await refuse(send, 413, self._detail())


class ConcurrencyLimit:
    """Answers 503 to a request arriving while ``limit`` requests are in progress."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit
        self.in_progress = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (scope["method"] == "GET" and scope["path"] == "/mcp"):
            await self.app(scope, receive, send)
            return
        if self.in_progress >= self.limit:
            detail = (
                f"the server is busy ({self.limit} requests in progress, its limit); "
                "retry in a moment"
            )
            await refuse(send, 503, detail, {"retry-after": "1"})
            return
        self.in_progress += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_progress -= 1
