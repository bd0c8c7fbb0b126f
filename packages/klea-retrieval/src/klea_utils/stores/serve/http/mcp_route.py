"""MCP's streamable HTTP transport at ``/mcp``, its SDK imported after the socket opens.

Importing the MCP SDK is a large share of what ``klea-serve`` does before it can answer.
:class:`LazyMcpRoute` is the ``/mcp`` endpoint of the app: :meth:`LazyMcpRoute.run`, a
task of the app's lifespan, builds the MCP server in a worker thread
(:func:`~klea_utils.stores.serve.mcp_tools.build_mcp_server`) and runs its session
manager until :meth:`LazyMcpRoute.stop`; a request that arrives before that waits for
it, then goes to the SDK's own route. When the build fails, ``/mcp`` answers 503 naming
the error. The app's guard (Host, Origin, token) runs before this endpoint as before.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from klea_utils.stores.serve.core.public_errors import public_text
from klea_utils.stores.serve.lifecycle.reload import LiveService
from starlette.responses import JSONResponse
from starlette.routing import Route

if TYPE_CHECKING:
    from klea_utils.stores.serve.core.service import Service
    from starlette.types import Receive, Scope, Send

__all__ = ["MCP_PATH", "LazyMcpRoute"]

MCP_PATH = "/mcp"

_log = logging.getLogger(__name__)


class LazyMcpRoute:
    """The ASGI endpoint of ``/mcp`` for ``service``, ready once :meth:`run` has built it."""

    def __init__(self, service: Service, host: str) -> None:
        self._service = service
        self._host = host
        self._route: Route | None = None
        self._server: Any = None
        self._live = service if isinstance(service, LiveService) else None
        self._generation = self._live.generation if self._live is not None else 1
        self._error: BaseException | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()

    def _build(self) -> tuple[Route, Any]:
        from klea_utils.stores.serve.mcp_tools import build_mcp_server
        from mcp.server.transport_security import TransportSecuritySettings

        mcp = build_mcp_server(self._service)
        self._server = mcp
        # The app-wide guard checks Host and Origin on every route, /mcp included, with
        # one answer (400, 403); the transport's own check would only repeat it.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        app = mcp.streamable_http_app(transport_security=security, host=self._host)
        routes = [r for r in app.routes if isinstance(r, Route) and r.path == MCP_PATH]
        if not routes:
            raise RuntimeError(f"the MCP SDK's app has no {MCP_PATH} route")
        return routes[0], mcp.session_manager

    async def run(self) -> None:
        """Build the MCP server and serve its sessions until :meth:`stop` (a lifespan task)."""
        try:
            route, manager = await asyncio.to_thread(self._build)
        except Exception as exc:  # /mcp answers 503 naming it; the rest of the app serves
            _log.warning("MCP over HTTP is unavailable: %s", exc)
            self._error = exc
            self._ready.set()
            return
        async with manager.run():
            self._route = route
            self._ready.set()
            await self._stop.wait()

    def stop(self) -> None:
        """End :meth:`run` (the session manager closes its sessions)."""
        self._stop.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._ready.wait()
        if self._route is None:
            error = public_text(f"{type(self._error).__name__}: {self._error}")
            detail = f"MCP over HTTP is unavailable: {error}"
            await JSONResponse({"detail": detail}, status_code=503)(scope, receive, send)
            return
        self._follow_reloads()
        await self._route.handle(scope, receive, send)

    def _follow_reloads(self) -> None:
        """Declare ``retrieve`` anew once a reload has opened other stores (new domains,
        new filter fields); the other tools' parameters do not depend on the stores."""
        if self._live is None or self._server is None:
            return
        generation = self._live.generation
        if generation == self._generation:
            return
        from klea_utils.stores.serve.mcp_tools import refresh_retrieve_tool

        refresh_retrieve_tool(self._server, self._service)
        self._generation = generation
