"""How much one caller may ask of the HTTP app as a whole: body size, requests in progress.

The settings are :class:`~klea_utils.stores.serve.core.options.ServeLimits`. The HTTP
routes and the MCP tools declare the field limits in their schemas, so an
over-long field answers **422** (HTTP) or a tool error (MCP) naming the field and its
limit; the service checks the query length again for callers that reach it directly.
Two pure ASGI middlewares guard the whole application:

- :class:`BodyLimit`: a request body over ``max_body_bytes`` answers **413**, whether it
  announces its length or streams it in chunks; the body is never read whole first.
- :class:`ConcurrencyLimit`: past ``max_concurrent`` requests in progress, a new one
  answers **503** with ``Retry-After`` at once instead of queueing without bound (MCP's
  long-lived ``GET /mcp`` event streams are not counted).

Standard library and Starlette only.
"""

from __future__ import annotations

import json

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimit", "ConcurrencyLimit", "refuse"]


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
