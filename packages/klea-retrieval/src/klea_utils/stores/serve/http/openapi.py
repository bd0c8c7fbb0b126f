"""What ``klea-serve``'s OpenAPI schema says beyond the routes, and the page that lists them.

:func:`answers` documents the refusals and failures an operation may answer, each a
:class:`Problem`; :func:`with_filter_schema` describes ``retrieve``'s filter with the
fields of the stores served now (a reload may change them); :func:`with_bearer` says that
the API needs the token; :func:`docs_page` is ``/api/docs``, rendered from the schema
(the Swagger UI loads from a CDN, which these machines cannot reach).
"""

from __future__ import annotations

import html
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["Problem", "answers", "docs_page", "with_bearer", "with_filter_schema"]


def with_filter_schema(schema: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """``schema`` (the app's OpenAPI) with ``RetrieveRequest.filter`` described by ``model``."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    described = model.model_json_schema(ref_template="#/components/schemas/{model}")
    components.update(described.pop("$defs", {}))
    components[model.__name__] = described
    request = components.get("RetrieveRequest", {}).get("properties", {})
    if "filter" in request:
        ref = {"$ref": f"#/components/schemas/{model.__name__}"}
        request["filter"] = {"anyOf": [ref, {"type": "null"}], "default": None}
    return schema


class Problem(BaseModel):
    """What a refused or failed request answers (a 422's ``detail`` is pydantic's list)."""

    detail: str = Field(description="What was wrong, without paths or credentials.")
    request_id: str | None = Field(
        default=None, description="Names the failure in the server's log (failures only)."
    )


def answers(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for ``statuses``, each answering a :class:`Problem`."""
    return {status: {"model": Problem, "description": _MEANINGS[status]} for status in statuses}


_MEANINGS = {
    400: "A value the service rejects (an unknown domain, a query it cannot read), or a "
    "body that is not UTF-8.",
    401: "The server needs its token: Authorization: Bearer <token>.",
    403: "The request's Origin is another site's, which --cors-origin does not name.",
    404: "No such paper, passage or page, no search index served, or the paper's file is "
    "not in the papers folder (or none was given).",
    409: "The paper's file changed since the stores were built.",
    413: "The request body is over the server's limit.",
    500: "The server failed; the request id names it in the log.",
    503: "A store cannot be read, the stores failed to load, or the server is busy.",
}


def with_bearer(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` saying that every ``/api`` operation needs the bearer token."""
    schemes = schema.setdefault("components", {}).setdefault("securitySchemes", {})
    schemes["bearer"] = {"type": "http", "scheme": "bearer"}
    schema["security"] = [{"bearer": []}]
    return schema


def docs_page(schema: dict[str, Any]) -> str:
    rows = []
    for path, methods in schema.get("paths", {}).items():
        for method, op in methods.items():
            params = ", ".join(
                f"{p['name']} ({p['in']}{', required' if p.get('required') else ''})"
                for p in op.get("parameters", [])
            )
            if "requestBody" in op:
                params = (params + ", " if params else "") + "JSON body"
            rows.append(
                f"<tr><td><code>{method.upper()}</code></td><td><code>{html.escape(path)}"
                f"</code></td><td>{html.escape(op.get('summary', ''))}<br><small>"
                f"{html.escape(op.get('description', ''))}</small></td>"
                f"<td>{html.escape(params)}</td></tr>"
            )
    return (
        "<!doctype html><html lang=en><meta charset=utf-8><title>klea-serve API</title>"
        "<meta name=viewport content='width=device-width,initial-scale=1'>"
        "<link rel=stylesheet href='/static/style.css'><main class=docs>"
        "<h1>klea-serve HTTP API</h1><p>The machine-readable schema is "
        "<a href='/api/openapi.json'>/api/openapi.json</a>. MCP clients connect to "
        "<code>/mcp</code> (streamable HTTP).</p><table><thead><tr><th>method</th>"
        "<th>path</th><th>what</th><th>parameters</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></main></html>"
    )
