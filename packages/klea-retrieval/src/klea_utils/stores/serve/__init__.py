"""``klea-serve``: one resident process serving the stores to agents (MCP) and people (a page).

Installed with the ``serve`` extra (``pip install 'klea-retrieval[serve]'``: the MCP
Python SDK, FastAPI and uvicorn); nothing here is imported by the rest of
``klea_utils.stores``. Modules: ``cli`` (the console script), ``service`` (the four
operations over what is loaded once), ``library`` (a paper's display fields, and papers
grouped in memory), ``paper_sources``, ``paper_vectors`` and ``papers`` (papers and facet
counts read from the stores on each call),
``search`` (sci-etl-search over an FTS5 index), ``mcp_tools`` (the MCP server) and
``http_app`` (the JSON API, the page and MCP over HTTP).
"""
