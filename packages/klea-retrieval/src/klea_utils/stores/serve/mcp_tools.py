"""The MCP server of ``klea-serve``: four tools over a service.

The service is a :class:`~klea_utils.stores.serve.core.service.Service`. Built on the
official MCP Python SDK's ``MCPServer`` (the successor of FastMCP in ``mcp`` 2). The tools'
parameters are typed, so a model sees a JSON schema for each; ``retrieve``'s ``filter`` is
the strict query schema of ``klea_utils.stores.query_schema`` built from the served domains'
filter fields, and its description names the domains: :func:`refresh_retrieve_tool` declares
it anew for the stores a reload opened. Bad input (an over-long query or list included:
:class:`~klea_utils.stores.serve.core.options.ServeLimits`) answers a tool error whose text
says what was wrong; a malformed search query answers the parser's located error. No tool
error carries a path or a store URI's credentials.
"""

# No ``from __future__ import annotations``: the tools' annotations name a model built at
# run time, which the SDK reads from the function when it registers the tool.

from collections.abc import Awaitable
from typing import Annotated, Any, Literal

from klea_utils.stores._retrieval.context import DEFAULT_CONTEXT
from klea_utils.stores.serve.core.params import (
    MAX_K,
    Grouping,
    SearchFilters,
    SearchMode,
    SearchParams,
)
from klea_utils.stores.serve.core.public_errors import log_failure, public_text
from klea_utils.stores.serve.core.retrieve_filter import filter_model
from klea_utils.stores.serve.core.service import Service
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

__all__ = ["INSTRUCTIONS", "build_mcp_server", "refresh_retrieve_tool"]

INSTRUCTIONS = (
    "Search a researcher's library of ingested papers. Use `retrieve` for passages that "
    "answer a question (fused vector + keyword retrieval; quote its `references`), `search` "
    'for Boolean or hybrid search with highlighted snippets (AND, OR, NOT, "phrases", '
    "field:term, prefix*), `get_document` to read one paper's passages in order, "
    "`citations` for the papers it cites and the library's papers that cite it, and "
    "`facets` for counts of papers per year, author, journal and tag."
)


async def _answer(
    tool: str, call: Awaitable[dict[str, Any]], expected: tuple[type[Exception], ...]
) -> dict[str, Any]:
    """``call``'s answer; its ``expected`` errors (bad input) and any other failure as a
    tool error saying what was wrong, without paths or credentials (a failure is logged
    whole under a request id, which the error names)."""
    try:
        return await call
    except expected as exc:
        raise ToolError(public_text(str(exc))) from exc
    except Exception as exc:
        rid = log_failure(f"MCP tool {tool}", exc)
        problem = public_text(f"{type(exc).__name__}: {exc}")
        raise ToolError(f"{tool} failed: {problem} (request {rid} in the server's log)") from exc


def _described(name: str, **constraints: Any) -> Any:
    """A tool argument's ``Field``: the description of :class:`SearchParams`'s field
    ``name``, with ``constraints``."""
    return Field(description=SearchParams.model_fields[name].description, **constraints)


def refresh_retrieve_tool(server: MCPServer, service: Service) -> None:
    """Declare ``retrieve`` anew: its filter fields and domains are the stores' served now."""
    server.remove_tool("retrieve")
    _add_retrieve(server, service)


def _add_retrieve(server: MCPServer, service: Service) -> None:
    limits = service.options.limits
    RetrieveFilter = filter_model(service.query_schema)  # noqa: N806 - a class built at run time
    domains_known = list(service.options.config.domains)  # nothing loaded needed
    context_default = service.options.context or DEFAULT_CONTEXT

    @server.tool()
    async def retrieve(
        query: Annotated[
            str,
            Field(max_length=limits.max_query_chars, description="The question, in plain words."),
        ],
        k: Annotated[int, Field(ge=1, le=MAX_K, description="Passages per domain.")] = 5,
        filter: RetrieveFilter | None = None,  # type: ignore[valid-type]
        domains: Annotated[
            list[Annotated[str, Field(max_length=limits.max_item_chars)]] | None,
            Field(
                max_length=limits.max_list_items,
                description=f"Domains to search (default all: {domains_known}).",
            ),
        ] = None,
        context: Annotated[
            Literal["off", "neighbours", "section"] | None,
            Field(
                description="Widen each passage with the chunks around it in its section: "
                "the next and previous one (neighbours) or as many as fit (section); "
                f"default: {context_default}."
            ),
        ] = None,
        context_tokens: Annotated[
            int | None,
            Field(ge=1, le=100_000, description="Token budget of a widened passage."),
        ] = None,
    ) -> dict[str, Any]:
        """Answer a question from the stores: fused vector + BM25 retrieval, re-ranked.

        Returns `passages` (each with file, title, authors, year, journal, headings, pages,
        `page_label` (the number printed on the page, or null), `regions` (the passage's
        boxes on its pages: page and [left, bottom, right, top] in PDF points), score and
        text, best first), `notes` naming any store that failed or was too slow
        and was left out, and `references`: the passages serialized for quoting.
        """
        values = filter.model_dump(exclude_none=True) if filter is not None else None
        return await _answer(
            "retrieve",
            service.retrieve(
                query,
                k=k,
                filter=values,
                domains=domains,
                context=context,
                context_tokens=context_tokens,
            ),
            (ValueError,),
        )


def build_mcp_server(service: Service) -> MCPServer:
    """The MCP server whose tools call ``service``."""
    server = MCPServer("klea-serve", instructions=INSTRUCTIONS, log_level="WARNING")
    limits = service.options.limits
    _add_retrieve(server, service)

    @server.tool()
    async def search(
        query: Annotated[str, _described("query", max_length=limits.max_query_chars)],
        mode: Annotated[SearchMode | None, _described("mode")] = None,
        limit: Annotated[int, _described("limit", ge=1, le=MAX_K)] = 10,
        filters: SearchFilters | None = None,
        group: Annotated[Grouping, _described("group")] = "passage",
    ) -> dict[str, Any]:
        """Boolean or hybrid search over the FTS5 index, with highlighted snippets.

        Returns `hits` (record_id, file, title, authors, year, journal, pages, page_label,
        regions, score, and
        `snippets` with [start, end) highlight offsets), the query's `chips`, and `error`:
        null, or for a malformed query its `message`, `position`, `token` and `caret`
        line (the query with ^ under the fault); a malformed query is not an exception.
        With `group="paper"`, `papers` instead of `hits`: each with file, title, the
        first three authors and `authors_total`, year, journal, the pages of its hits,
        and `passages`, its best hits.
        """
        params = SearchParams(
            query=query, mode=mode, limit=limit, filters=filters or SearchFilters(), group=group
        )
        return await _answer("search", service.search(params), (ValueError, LookupError))

    @server.tool()
    async def get_document(
        file_name: Annotated[
            str,
            Field(
                max_length=limits.max_item_chars,
                description="The paper's file name, e.g. 'x.pdf'.",
            ),
        ],
    ) -> dict[str, Any]:
        """One paper: its metadata (title, authors, year, journal, doi, tags) and its
        `passages` in reading order, each with headings, pages, page_label, regions and
        text."""
        return await _answer("get_document", service.get_document(file_name), (LookupError,))

    @server.tool()
    async def citations(
        file_name: Annotated[
            str,
            Field(
                max_length=limits.max_item_chars,
                description="The paper's file name, e.g. 'x.pdf'.",
            ),
        ],
    ) -> dict[str, Any]:
        """The paper's place in the library: `references`, its reference list (each with
        label, text, title, authors, year, doi, arxiv, and `target`: the file name of the
        cited paper when it is in the library, else null), and `cited_by`, the papers of
        the library that cite it (file_name, title, and `contexts`: the citing
        sentences)."""
        return await _answer("citations", service.citations(file_name), (LookupError,))

    @server.tool()
    async def facets(
        keys: Annotated[
            list[Literal["year", "author", "journal", "tag", "collection", "language"]] | None,
            Field(description="Facets to count (default all five)."),
        ] = None,
        query: Annotated[
            str | None,
            Field(
                max_length=limits.max_query_chars,
                description="Count only the papers matching this query.",
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Counts of papers per year, author, journal, tag and collection, most frequent first.

        Returns `papers` (how many were counted) and `facets`: for each key a list of
        {value, count}.
        """
        call = service.facets(list(keys) if keys else None, query)
        return await _answer("facets", call, (ValueError,))

    return server
