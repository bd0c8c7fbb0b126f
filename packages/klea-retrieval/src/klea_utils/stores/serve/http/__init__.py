"""``klea-serve`` over HTTP: the JSON API, its OpenAPI schema, the page, and ``/mcp``.

Modules: ``app`` (:func:`~klea_utils.stores.serve.http.app.build_app`, the routes),
``openapi`` (the schema's answers and the docs page), ``search_query`` (the query string of
``/api/search``), ``access`` (who may reach the server), ``guard`` (the middleware
enforcing it), ``limits`` (body size and requests in progress), ``mcp_route`` (MCP's
streamable HTTP transport at ``/mcp``) and ``static/`` (the page).
"""
