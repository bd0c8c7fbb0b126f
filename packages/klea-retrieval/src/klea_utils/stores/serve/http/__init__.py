"""``klea-serve`` over HTTP: the JSON API, its OpenAPI schema, the page, and ``/mcp``.

Modules: ``app`` (:func:`~klea_utils.stores.serve.http.app.build_app`, the routes),
``access`` (who may reach the server), ``guard`` (the middleware enforcing it),
``limits`` (body size and requests in progress), ``mcp_route`` (MCP's streamable HTTP
transport at ``/mcp``) and ``static/`` (the page).
"""
