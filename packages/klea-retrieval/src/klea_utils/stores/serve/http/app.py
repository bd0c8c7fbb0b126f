"""The HTTP side of ``klea-serve``: the JSON API, its OpenAPI docs, the page, and MCP.

- ``/api/retrieve``, ``/api/search``, ``/api/documents/{file_name}``,
  ``/api/papers/{file_name}/citations``, ``/api/facets``,
  ``/api/graph`` and ``/api/health``: the service's operations as JSON. Bad input is a
  4xx whose ``detail`` says what was wrong (422 for parameters that fail validation or
  pass a limit of :class:`~klea_utils.stores.serve.core.options.ServeLimits`, 413 for a body
  over its limit, 400 for values the service rejects, 404 for an unknown paper); a store
  that cannot be read answers 503 naming the problem. No answer carries a path, a store
  URI's credentials or a traceback (:mod:`klea_utils.stores.serve.core.public_errors`): a
  failure is logged whole under a request id, which the answer gives.
- ``/api/openapi.json`` and ``/api/docs`` (a self-contained page, no CDN; what the schema
  says beyond the routes is :mod:`klea_utils.stores.serve.http.openapi`'s).
- ``/``: the search page (static HTML, CSS and a small vanilla script).
- ``/mcp``: the MCP streamable HTTP transport, the same tools as ``klea-serve --mcp``
  (:mod:`klea_utils.stores.serve.http.mcp_route`: the SDK loads after the socket opens).

Every route sits behind :func:`klea_utils.stores.serve.http.guard.protect`: Host and Origin
checks, the bearer token when the :class:`~klea_utils.stores.serve.http.access.AccessPolicy`
has one, and the security headers.
"""

# No ``from __future__ import annotations``: FastAPI reads the endpoints' annotations,
# one of which names a model built at run time.

import asyncio
import contextlib
from collections.abc import AsyncIterator
from importlib import resources
from typing import Annotated, Any, Literal

from fastapi import FastAPI, HTTPException, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from klea_utils.stores._retrieval.context import DEFAULT_CONTEXT
from klea_utils.stores.exceptions import KleaStoresError
from klea_utils.stores.serve.core.params import MAX_K
from klea_utils.stores.serve.core.public_errors import log_failure, public_text
from klea_utils.stores.serve.core.retrieve_filter import filter_model
from klea_utils.stores.serve.core.service import DocumentNotFoundError, Service
from klea_utils.stores.serve.http.access import AccessPolicy
from klea_utils.stores.serve.http.guard import protect
from klea_utils.stores.serve.http.mcp_route import MCP_PATH, LazyMcpRoute
from klea_utils.stores.serve.http.openapi import answers, docs_page, with_bearer, with_filter_schema
from klea_utils.stores.serve.http.paper_routes import add_paper_routes
from klea_utils.stores.serve.http.search_query import search_params, search_query_model
from klea_utils.stores.serve.lifecycle.reload import LiveService
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sci_etl_core.exceptions import SearchError
from starlette.routing import Route

__all__ = ["build_app"]

_STATIC_PACKAGE = "klea_utils.stores.serve.http"
"""The package whose ``static/`` folder holds the page."""
_STATIC = {
    "app.js": "text/javascript; charset=utf-8",
    "auth.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}


def _static(name: str) -> str:
    return resources.files(_STATIC_PACKAGE).joinpath("static", name).read_text("utf-8")


def _bad_request(exc: Exception) -> HTTPException:
    return HTTPException(status_code=400, detail=public_text(str(exc)))


def _filter_values(model: type[BaseModel], values: dict[str, Any] | None) -> dict[str, Any] | None:
    """``values`` checked against the filter model of the stores served now (422 if not)."""
    if values is None:
        return None
    try:
        checked = model.model_validate(values)
    except ValidationError as exc:
        errors = [
            {**error, "loc": ("body", "filter", *error["loc"])}
            for error in exc.errors(include_url=False)
        ]
        raise RequestValidationError(errors) from None
    dumped: dict[str, Any] = checked.model_dump(exclude_none=True)
    return dumped


def build_app(
    service: Service,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    access: AccessPolicy | None = None,
) -> FastAPI:
    """The ASGI application serving ``service`` (its lifespan runs the MCP sessions).

    ``access`` says which Host names, origins and token are accepted on every route
    (default: the loopback names, no token); ``port`` is kept for callers and unused.
    A :class:`~klea_utils.stores.serve.lifecycle.reload.LiveService` as ``service`` adds
    ``POST /api/reload`` and watches the stores for as long as the app runs.
    """
    del port
    policy = access or AccessPolicy()
    mcp = LazyMcpRoute(service, host)  # the MCP SDK loads once the socket is open
    live = service if isinstance(service, LiveService) else None

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        mcp_sessions = asyncio.create_task(mcp.run())
        if live is not None:
            live.start_watching()
        try:
            yield
        finally:
            mcp.stop()
            await mcp_sessions
            await service.aclose()

    app = FastAPI(
        title="klea-serve",
        summary="Retrieval, search, papers and facets over the stores, loaded once.",
        version="1",
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
        lifespan=lifespan,
        responses=answers(400, *((401,) if policy.token else ()), 403, 413, 500, 503),
    )

    @app.exception_handler(SearchError)
    @app.exception_handler(KleaStoresError)
    async def store_failed(request: Request, exc: Exception) -> JSONResponse:
        # A store that cannot be read is the server's trouble, not the request's.
        rid = log_failure(f"{request.method} {request.url.path}", exc)
        detail = public_text(f"{type(exc).__name__}: {exc}")
        return JSONResponse({"detail": detail, "request_id": rid}, status_code=503)

    @app.exception_handler(Exception)
    async def failed(request: Request, exc: Exception) -> JSONResponse:
        rid = log_failure(f"{request.method} {request.url.path}", exc)
        detail = f"the server failed on this request; its log names it as request {rid}"
        return JSONResponse({"detail": detail, "request_id": rid}, status_code=500)

    limits = service.options.limits
    Question = Annotated[str, Field(min_length=1, max_length=limits.max_query_chars)]  # noqa: N806
    Item = Annotated[str, Field(min_length=1, max_length=limits.max_item_chars)]  # noqa: N806
    context_default = service.options.context or DEFAULT_CONTEXT
    base_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        # The filter's fields are the served stores' own, which a reload may change.
        schema = with_filter_schema(base_openapi(), filter_model(service.query_schema))
        return with_bearer(schema) if policy.token else schema

    app.openapi = openapi  # type: ignore[method-assign]

    class RetrieveRequest(BaseModel):
        model_config = ConfigDict(extra="forbid")
        query: Question = Field(description="The question.")
        k: int = Field(default=5, ge=1, le=MAX_K, description="Passages per domain.")
        filter: dict[str, Any] | None = Field(
            default=None,
            description="Metadata constraints: the fields of the stores served (RetrieveFilter).",
        )
        domains: list[Item] | None = Field(
            default=None, max_length=limits.max_list_items, description="Default: all."
        )
        context: Literal["off", "neighbours", "section"] | None = Field(
            default=None,
            description="Widen each passage with the chunks around it in its section "
            f"(default: the server's, {context_default}).",
        )
        context_tokens: int | None = Field(
            default=None, ge=1, le=100_000, description="Token budget of a widened passage."
        )

    @app.post("/api/retrieve", summary="Fused klea retrieval")
    async def retrieve(request: RetrieveRequest) -> dict[str, Any]:
        """Passages that answer the question, notes of degraded legs, references."""
        values = _filter_values(filter_model(service.query_schema), request.filter)
        try:
            return await service.retrieve(
                request.query,
                k=request.k,
                filter=values,
                domains=request.domains,
                context=request.context,
                context_tokens=request.context_tokens,
            )
        except ValueError as exc:
            raise _bad_request(exc) from exc

    LimitedSearchQuery = search_query_model(limits)  # noqa: N806 - a class built per app

    @app.get(
        "/api/search",
        summary="Boolean / hybrid search with snippets",
        responses=answers(404),
    )
    async def search(
        parameters: Annotated[LimitedSearchQuery, Query()],  # type: ignore[valid-type]
    ) -> dict[str, Any]:
        """Hits with highlighted snippets and chips; a malformed query answers 200 with
        ``error`` (message, position, token, caret). ``group=paper`` answers ``papers``
        instead of ``hits``: one per paper, ranked by its best passage, with its best
        passages under it."""
        try:
            return await service.search(search_params(parameters))
        except LookupError as exc:
            raise HTTPException(status_code=404, detail=public_text(str(exc))) from exc
        except ValueError as exc:
            raise _bad_request(exc) from exc

    @app.get(
        "/api/documents/{file_name}",
        summary="One paper and its passages",
        responses=answers(404),
    )
    async def get_document(
        file_name: Annotated[str, Path(max_length=limits.max_item_chars)],
    ) -> dict[str, Any]:
        """The paper's metadata and its passages in reading order."""
        try:
            return await service.get_document(file_name)
        except DocumentNotFoundError as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc

    add_paper_routes(app, service, limits)

    @app.get(
        "/api/papers/{file_name}/citations",
        summary="A paper's references and the papers citing it",
        responses=answers(404),
    )
    async def citations(
        file_name: Annotated[str, Path(max_length=limits.max_item_chars)],
    ) -> dict[str, Any]:
        """``references`` (label, text, title, authors, year, doi, arxiv, and ``target``:
        the stored file it links to, or null) and ``cited_by`` (file_name, title and the
        citing sentences of each stored paper citing it); both empty when the stores have
        no citation-links file."""
        try:
            return await service.citations(file_name)
        except DocumentNotFoundError as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc

    @app.get(
        "/api/facets",
        summary="Papers per year, author, journal, tag, collection",
    )
    async def facets(
        key: Annotated[
            list[Literal["year", "author", "journal", "tag", "collection", "language"]] | None,
            Query(max_length=limits.max_list_items),
        ] = None,
        q: Annotated[str | None, Query(max_length=limits.max_query_chars)] = None,
    ) -> dict[str, Any]:
        """Counts over every paper, or over the papers matching ``q``."""
        try:
            return await service.facets(key, q)
        except ValueError as exc:
            raise _bad_request(exc) from exc

    class GraphRequest(BaseModel):
        model_config = ConfigDict(extra="forbid")
        record_ids: list[Item] = Field(min_length=1, max_length=MAX_K)
        edge_kinds: list[Literal["similarity", "citation"]] | None = Field(
            default=None, min_length=1, max_length=2
        )

    @app.post("/api/graph", summary="Edges by meaning and by citation between results")
    async def graph(request: GraphRequest) -> dict[str, Any]:
        """Nodes and weighted edges among the given search results, each edge with its
        ``kind``: ``similarity`` (needs vectors) or ``citation`` (needs the links file);
        ``edge_kinds`` keeps those kinds (default both)."""
        return await service.graph(request.record_ids, request.edge_kinds)

    @app.get("/api/health", summary="What is loaded")
    async def health() -> dict[str, Any]:
        """Status, domains, papers, passages, search index and uptime."""
        return await service.health()

    if live is not None:

        @app.post("/api/reload", summary="Reopen the stores now")
        async def reload() -> dict[str, Any]:
            """Serve the stores as they are on disk now, without a restart (the requests
            running finish on the stores they started on)."""
            try:
                return await live.reload("POST /api/reload")
            except Exception as exc:  # any failure to open: the previous stores stay served
                rid = log_failure("POST /api/reload", exc)
                problem = public_text(f"{type(exc).__name__}: {exc}")
                detail = (
                    f"the stores could not be reopened ({problem}); the previous ones are "
                    f"still served (request {rid} in the server's log)"
                )
                raise HTTPException(503, detail) from exc

    @app.get("/api/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return HTMLResponse(docs_page(app.openapi()))

    @app.get("/", include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(_static("index.html"))

    @app.get("/static/{name}", include_in_schema=False)
    async def static(name: str) -> Response:
        if name not in _STATIC:
            return JSONResponse({"detail": f"no static file {name!r}"}, status_code=404)
        return Response(_static(name), media_type=_STATIC[name])

    app.router.routes.append(Route(MCP_PATH, endpoint=mcp))
    protect(app, policy, limits)
    return app
