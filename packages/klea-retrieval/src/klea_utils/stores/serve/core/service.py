"""The operations every ``klea-serve`` service answers: the :class:`Service` protocol.

Three classes stand behind it, each a whole service to its callers:
:class:`~klea_utils.stores.serve.operations.klea_service.KleaService` (the operations over
stores loaded once), :class:`~klea_utils.stores.serve.lifecycle.startup.StartingService`
(the same while the stores still load) and
:class:`~klea_utils.stores.serve.lifecycle.reload.LiveService` (the current service,
swapped for a new one on reload). The transports, the HTTP app and the MCP tools, take a
:class:`Service` and never ask which one it is. Each operation answers a JSON-ready
dictionary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from klea_utils.stores.serve.core.options import ServeOptions
    from klea_utils.stores.serve.core.params import SearchParams
    from pydantic import BaseModel

__all__ = ["DocumentNotFoundError", "PaperFileChangedError", "Service"]


class DocumentNotFoundError(LookupError):
    """No paper with the requested file name is in the library."""


class PaperFileChangedError(ValueError):
    """The paper's file in the papers folder differs from the one the stores were built
    from (answered 409)."""


class Service(Protocol):
    """retrieve, search, graph, get_document, citations, facets and health over the served
    stores."""

    @property
    def options(self) -> ServeOptions:
        """What is served, and the limits on each request."""

    @property
    def query_schema(self) -> type[BaseModel]:
        """The strict query schema of the stores served now (their filter fields)."""

    def to_metadata_filter(self, values: dict[str, Any] | None) -> dict[str, Any] | None:
        """The DSL filter for typed filter ``values`` (the query schema's fields).

        Raises:
            ValueError: When a value does not fit its field (pydantic's message).
        """

    async def retrieve(
        self,
        query: str,
        *,
        k: int = 5,
        filter: dict[str, Any] | None = None,
        domains: Sequence[str] | None = None,
        context: str | None = None,
        context_tokens: int | None = None,
    ) -> dict[str, Any]:
        """The fused klea pipeline: passages, notes of degraded legs, and references.

        Raises:
            ValueError: Blank query, ``k`` out of range, unknown domain, bad filter, bad
                context settings.
        """

    async def search(self, params: SearchParams) -> dict[str, Any]:
        """sci-etl-search Boolean / hybrid search with snippets, or the located error.

        Raises:
            LookupError: When no FTS5 index is served.
            ValueError: A query over the length limit, or a filter the index cannot apply.
        """

    async def graph(
        self, record_ids: Sequence[str], edge_kinds: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """Edges between search results, each with its ``kind``: ``"similarity"`` (by
        meaning, needs a vector memory) and ``"citation"`` (from the links files);
        ``edge_kinds`` keeps those kinds (default both)."""

    async def page_image(
        self, file_name: str, page: int, *, chunk: str | None = None, dpi: int = 150
    ) -> bytes:
        """Page ``page`` of a paper's PDF as PNG, the passage ``chunk``'s regions framed.

        Raises:
            LookupError: No such paper, passage or page, or its file is not in the papers
                folder (or none was given).
            PaperFileChangedError: The file changed since the stores were built.
            ValueError: ``dpi`` out of range.
        """

    async def paper_file(self, file_name: str) -> Path:
        """The paper's original file in the papers folder, checked against its stored hash.

        Raises:
            LookupError: No such paper, or its file is not in the papers folder.
            PaperFileChangedError: The file changed since the stores were built.
        """

    async def get_document(self, file_name: str) -> dict[str, Any]:
        """A paper's metadata and its passages in order.

        Raises:
            DocumentNotFoundError: When the library has no such file.
        """

    async def citations(self, file_name: str) -> dict[str, Any]:
        """A paper's ``references`` (each with ``target``, the stored file it links to, or
        ``None``) and ``cited_by`` (the stored papers citing it, with their sentences);
        both empty when the stores have no citation-links file.

        Raises:
            DocumentNotFoundError: When the library has no such file.
        """

    async def facets(
        self, keys: Sequence[str] | None = None, query: str | None = None
    ) -> dict[str, Any]:
        """Papers per year, author, journal, tag and collection; with ``query``, over its
        matches.

        Raises:
            ValueError: Unknown key or a malformed query (the message locates it).
        """

    async def health(self) -> dict[str, Any]:
        """What is loaded, for ``/api/health``."""

    async def aclose(self) -> None:
        """Close what the service holds open."""
