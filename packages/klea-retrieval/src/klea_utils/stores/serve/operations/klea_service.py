"""The operations of ``klea-serve`` over what was loaded once: :class:`KleaService`.

:class:`KleaService` holds what :func:`~klea_utils.stores.serve.operations.opening.open_service`
loaded at start-up: the retrieval pipeline (every store and model opened), the
catalogue of the library's papers, and the optional sci-etl-search index with its
vector memory. Its coroutines run blocking work in worker threads, so concurrent
requests never block the event loop, and they answer plain JSON-ready dictionaries.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from klea_utils.stores._retrieval.citations_file import LibraryCitations
from klea_utils.stores.exceptions import CitationsFileError
from klea_utils.stores.pipeline import KleaPipeline
from klea_utils.stores.serve.core.options import ServeOptions
from klea_utils.stores.serve.core.params import MAX_K, SearchParams
from klea_utils.stores.serve.core.public_errors import public_text
from klea_utils.stores.serve.core.retrieve_filter import metadata_filter, query_schema
from klea_utils.stores.serve.core.service import DocumentNotFoundError
from klea_utils.stores.serve.operations.paper_pages import PaperPages
from klea_utils.stores.serve.papers.catalogue import PaperCatalogue
from klea_utils.stores.serve.papers.citation_edges import (
    CITATION,
    EDGE_KINDS,
    SIMILARITY,
    citation_edges,
)
from klea_utils.stores.serve.papers.citations import CitationFiles, citation_paths
from klea_utils.stores.serve.papers.paper import FACET_KEYS, check_facet_keys, display_metadata
from klea_utils.stores.serve.search.backend import SearchBackend
from klea_utils.stores.serve.search.grouping import group_by_paper, passages_to_fetch
from klea_utils.stores.utils import serialize_reference_material, truncate_reference_material
from langchain_core.documents import Document
from pydantic import BaseModel

__all__ = ["KleaService"]

_log = logging.getLogger(__name__)


def _passage(domain: str, doc: Document, score: float) -> dict[str, Any]:
    return {
        "id": doc.id,
        "domain": domain,
        **display_metadata(doc.metadata),
        "score": score,
        "text": doc.page_content,
    }


class KleaService:
    """The :class:`~klea_utils.stores.serve.core.service.Service` over what was loaded once."""

    def __init__(
        self,
        options: ServeOptions,
        pipeline: KleaPipeline,
        catalogue: PaperCatalogue,
        search: SearchBackend | None,
        citations: CitationFiles | None = None,
    ) -> None:
        self.options = options
        self.pipeline = pipeline
        self.catalogue = catalogue
        self.search_backend = search
        self.citation_files = citations or CitationFiles(citation_paths(options.config))
        self.started = time.time()
        self.query_schema: type[BaseModel] = query_schema(options.config)
        self.pages = PaperPages(catalogue, options.papers)

    # -- retrieve ----------------------------------------------------------------------

    def to_metadata_filter(self, values: dict[str, Any] | None) -> dict[str, Any] | None:
        """The DSL filter for typed filter ``values`` (the strict query schema's fields).

        Raises:
            ValueError: When a value does not fit its field (pydantic's message).
        """
        return metadata_filter(self.query_schema, values)

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

        ``context`` (``off``, ``neighbours``, ``section``; default: the pipeline's) widens
        each passage with the chunks around it in its section, up to ``context_tokens``.

        Raises:
            ValueError: Blank query, ``k`` out of range, unknown domain, bad filter, bad
                context settings.
        """
        if not query.strip():
            raise ValueError("query must not be blank")
        self.options.limits.check_query(query)
        if not 1 <= k <= MAX_K:
            raise ValueError(f"k must be between 1 and {MAX_K}, got {k}")
        metadata_filter = self.to_metadata_filter(filter)
        results = await asyncio.to_thread(
            self.pipeline.retrieve_all,
            query,
            domains=list(domains) if domains else None,
            metadata_filter=metadata_filter,
            k=k,
            limit=k,
            context=context,
            context_tokens=context_tokens,
        )
        passages = [
            _passage(domain, doc, score)
            for domain, result in results.items()
            for doc, score in result.hits
        ]
        notes = [f"{d}: {n}" for d, r in results.items() for n in r.notes]
        for note in notes:  # the whole text for the operator; the caller's is redacted
            _log.warning("retrieve: %s", note)
        material = {d: r.hits for d, r in results.items()}
        material = truncate_reference_material(material, self.options.max_chars)
        return {
            "query": query,
            "filter": metadata_filter,
            "passages": passages,
            "notes": [public_text(note) for note in notes],
            "references": serialize_reference_material(material),
        }

    # -- search ------------------------------------------------------------------------

    async def search(self, params: SearchParams) -> dict[str, Any]:
        """sci-etl-search Boolean / hybrid search with snippets, or the located error.

        ``group="passage"`` answers ``limit`` passage ``hits``; ``group="paper"`` answers
        ``limit`` ``papers`` (:func:`~klea_utils.stores.serve.search.grouping.group_by_paper`),
        each with its best passages, ranked by its best passage, and ``hits`` empty.

        Raises:
            LookupError: When no FTS5 index is served.
            ValueError: A query over the length limit, a bad mode, or a filter the index
                cannot apply.
        """
        if self.search_backend is None:
            raise LookupError("no FTS5 index is served: start klea-serve with --fts5-index")
        self.options.limits.check_query(params.query)
        by_paper = params.group == "paper"
        passages = passages_to_fetch(params.limit) if by_paper else params.limit
        result = await self.search_backend.search(params, passages)
        result["group"] = params.group
        if by_paper:
            result["papers"] = group_by_paper(result["hits"], params.limit)
            result["hits"] = []
        return result

    async def graph(
        self, record_ids: Sequence[str], edge_kinds: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """Edges between search results: by meaning (``"similarity"``, needs a vector
        memory) and by citation (``"citation"``, from the library's links files);
        ``edge_kinds`` keeps those kinds (default both). ``citations`` says whether a
        links file holds any paper; a malformed one draws no citation edge (``GET
        /api/papers/{file}/citations`` names its fault) rather than failing the graph.
        """
        kinds = set(edge_kinds or EDGE_KINDS)
        if self.search_backend is None:
            return {"nodes": [], "edges": [], "available": False, "citations": False}
        result = await self.search_backend.graph(record_ids[:MAX_K], similarity=SIMILARITY in kinds)
        try:
            library = await asyncio.to_thread(self.citation_files.library)
        except CitationsFileError:
            library = LibraryCitations()
        result["citations"] = len(library) > 0
        if CITATION in kinds and result["nodes"] and len(library):
            files = {n["id"]: n["file_name"] for n in result["nodes"] if n["file_name"]}
            result["edges"].extend(citation_edges(library, files))
        return result

    # -- documents and facets ----------------------------------------------------------

    async def get_document(self, file_name: str) -> dict[str, Any]:
        """A paper's metadata and its passages in order, read from the stores.

        Raises:
            DocumentNotFoundError: When the library has no such file.
        """
        paper = await asyncio.to_thread(self.catalogue.paper, file_name)
        if paper is None:
            raise DocumentNotFoundError(
                f"no paper {file_name!r} in the library (GET /api/facets counts its papers)"
            )
        return {
            **paper.summary(),
            "passages": [
                {
                    "id": d.id,
                    **{k: shown[k] for k in ("headings", "pages", "page_label", "regions")},
                    "text": d.page_content,
                }
                for d in paper.passages
                for shown in (display_metadata(d.metadata),)
            ],
        }

    async def page_image(
        self, file_name: str, page: int, *, chunk: str | None = None, dpi: int = 150
    ) -> bytes:
        """Page ``page`` of a paper's PDF as PNG, the passage ``chunk``'s regions framed
        (:class:`~klea_utils.stores.serve.operations.paper_pages.PaperPages`)."""
        return await self.pages.image(file_name, page, chunk=chunk, dpi=dpi)

    async def paper_file(self, file_name: str) -> Path:
        """The paper's original file in the papers folder, checked against its hash."""
        return await self.pages.file(file_name)

    async def citations(self, file_name: str) -> dict[str, Any]:
        """A paper's references and the stored papers citing it, from the links files.

        Raises:
            DocumentNotFoundError: When the library has no such file.
            CitationsFileError: A configured links file is malformed.
        """
        counts = await asyncio.to_thread(self.catalogue.passage_counts)
        if file_name not in counts:
            raise DocumentNotFoundError(
                f"no paper {file_name!r} in the library (GET /api/facets counts its papers)"
            )
        return await asyncio.to_thread(self.citation_files.of, file_name)

    async def facets(
        self, keys: Sequence[str] | None = None, query: str | None = None
    ) -> dict[str, Any]:
        """Papers per year, author, journal and tag; with ``query``, over its matches.

        The matches come from the FTS5 index when one is served, else from retrieval.
        The counts are read from the stores on each call.

        Raises:
            ValueError: Unknown key or a malformed query (the message locates it).
        """
        keys = list(keys) if keys else list(FACET_KEYS)
        check_facet_keys(keys)  # before any search
        if query:
            self.options.limits.check_query(query)
        files: list[str] | None = None
        if query and query.strip():
            if self.search_backend is not None:
                files = await self.search_backend.matching_files(query)
            else:
                found = await self.retrieve(query, k=MAX_K)
                files = [p["file"] for p in found["passages"] if p["file"]]
        papers, counts = await asyncio.to_thread(self.catalogue.count_facets, keys, files)
        return {
            "query": query,
            "papers": papers,
            "facets": {
                k: [{"value": v, "count": c} for v, c in pairs] for k, pairs in counts.items()
            },
        }

    async def health(self) -> dict[str, Any]:
        """What is loaded, for ``/api/health``."""
        records = await self.search_backend.count() if self.search_backend else None
        counts = await asyncio.to_thread(self.catalogue.passage_counts)
        return {
            "status": "ok",
            "ready": True,
            "error": None,
            "domains": self.pipeline.domains,
            "papers": len(counts),
            "passages": sum(counts.values()),
            "search_index": self.options.fts5_index.name
            if self.options.fts5_index is not None and self.search_backend
            else None,
            "search_records": records,
            "vectors": self.search_backend is not None and self.search_backend.vectors is not None,
            "uptime_s": round(time.time() - self.started, 1),
        }

    def warm(self) -> None:
        """Do now (blocking) what the first requests would pay for: one retrieval through
        every leg (a vector store's first query reads its index) and every paper's facet
        row; :class:`~klea_utils.stores.serve.lifecycle.startup.StartingService` calls it in its
        thread once the service is serving."""
        self.pipeline.retrieve_all("warm up", k=1, limit=1)
        self.warm_facets()

    def warm_facets(self) -> None:
        """Read every paper's facet row now (blocking), so the first ``facets`` over the
        whole library need not."""
        self.catalogue.count_facets(list(FACET_KEYS))

    async def aclose(self) -> None:
        """Close the search index and stop the pipeline's threads."""
        if self.search_backend is not None:
            await self.search_backend.aclose()
        self.catalogue.close()
        self.pipeline.close()
