"""sci-etl-search over an FTS5 index (and an optional vector memory) for ``klea-serve``.

:class:`SearchBackend` owns the text index, the hybrid searcher and the discovery-graph
edge source. The vector memory is a domain's own klea vector store read through
:class:`~klea_utils.stores.sci_etl_vectors.KleaVectorMemory` (one record per chunk, the
ids of the ``fts5:`` index ``build`` wrote), or a sci-etl SQLite vector memory. It turns
a query into hits with highlighted snippets, query chips (``describe``), or the parser's
located error; plain questions (several words, no operators) are searched as the OR of
their words so they find something lexically.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from klea_utils.stores._retrieval.query_words import LEXICAL_STOPWORDS
from klea_utils.stores.serve.core.params import SearchFilters, SearchMode, SearchParams
from klea_utils.stores.serve.papers.paper import display_metadata
from sci_etl_core.exceptions import SearchQueryError
from sci_etl_core.search import (
    AsyncHybridSearcher,
    MetadataFilter,
    RangeFilter,
    SearchFilter,
    describe,
    parse_query,
    reads_as_question,
)
from sci_etl_core.search import question_query as search_question_query
from sci_etl_core.search.multiscript import MultiscriptTokenizer
from sci_etl_core.search.questions import question_words
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store, built_facet_keys

__all__ = ["SearchBackend", "any_words_query", "chips", "question_query", "store_filters"]

_MULTISCRIPT = MultiscriptTokenizer()
_QUESTION_WORDS = 3  # as reads_as_question counts them


def question_query(text: str, *, multiscript: bool = False) -> str | None:
    """The OR of a plain question's content words, or ``None`` when ``text`` uses syntax.

    A text of three or more words without quotes, brackets, field scopes, prefixes,
    signs or upper-case operators reads as a question
    (:func:`sci_etl_core.search.reads_as_question`); its query is
    :func:`sci_etl_core.search.question_query` with the stop words of the lexical legs.

    With ``multiscript`` (the index is multiscript) the words are those of
    :class:`~sci_etl_core.search.multiscript.MultiscriptTokenizer`, so a Chinese or
    Japanese question typed without spaces (one ``unicode61`` word) reads as a question
    of its bigrams and is searched as their OR; an English question gives the same
    query as without it.
    """
    if multiscript and reads_as_question(text, min_words=1):
        if reads_as_question(text) or len(_MULTISCRIPT.words(text)) >= _QUESTION_WORDS:
            return any_words_query(text, multiscript=True)
        return None
    if not reads_as_question(text):
        return None
    return search_question_query(text, stop_words=LEXICAL_STOPWORDS) or None


def any_words_query(text: str, *, multiscript: bool = False) -> str | None:
    """The OR of the content words of any ``text`` (``any_words=True``), or ``None``."""
    if multiscript:
        words = _multiscript_words(text)
        return " OR ".join(f'"{w}"' for w in words) or None
    return search_question_query(text, stop_words=LEXICAL_STOPWORDS) or None


def _multiscript_words(text: str) -> list[str]:
    """The distinct multiscript words of the content words of ``text``, in order."""
    words = question_words(text, stop_words=LEXICAL_STOPWORDS)
    return list(dict.fromkeys(w for word in words for w in _MULTISCRIPT.words(word)))


def store_filters(filters: SearchFilters, facet_keys: frozenset[str]) -> list[SearchFilter]:
    """``filters`` as the sci-etl-search filters of an index tagging ``facet_keys``.

    Raises:
        ValueError: When a filter needs a key the index does not tag.
    """
    wanted: list[tuple[str, SearchFilter]] = []
    if filters.year_from is not None or filters.year_to is not None:
        year = RangeFilter("year", low=filters.year_from, high=filters.year_to)
        wanted.append(("year", year))
    for key, values in (
        ("authors", filters.authors),
        ("journal", filters.journals),
        ("collections", filters.collections),
        ("language", filters.languages),
    ):
        if values:
            wanted.append((key, MetadataFilter(key, frozenset(values))))
    if filters.tags:
        tag_key = "keywords" if "keywords" in facet_keys else "tags"
        wanted.append((tag_key, MetadataFilter(tag_key, frozenset(filters.tags))))
    missing = [key for key, _ in wanted if key not in facet_keys]
    if missing:
        raise ValueError(
            f"the search index has no facet {', '.join(map(repr, missing))}; "
            f"it tags: {', '.join(sorted(facet_keys)) or 'nothing'}"
        )
    return [f for _, f in wanted]


def _hit(hit: Any) -> dict[str, Any]:
    shown = display_metadata(hit.metadata)
    snippets = [
        {"field": s.field, "text": s.text, "highlights": [list(h) for h in s.highlights]}
        for s in hit.snippets
    ] or [{"field": "body", "text": hit.snippet, "highlights": [list(h) for h in hit.highlights]}]
    return {
        "record_id": hit.record_id,
        **shown,
        "file": shown["file"] or hit.record_id,
        "title": hit.title or shown["title"] or hit.record_id,
        "score": hit.score,
        "lexical_rank": getattr(hit, "lexical_rank", None),
        "semantic_rank": getattr(hit, "semantic_rank", None),
        "snippets": snippets,
    }


def _error(exc: SearchQueryError, query: str) -> dict[str, Any]:
    return {
        "message": exc.message,
        "position": exc.position,
        "token": exc.token,
        "caret": exc.caret_line(query),
    }


def chips(query: str) -> list[dict[str, Any]]:
    """The query's words and phrases as display chips (empty when it does not parse)."""
    try:
        node = parse_query(query)
    except SearchQueryError:
        return []
    return [
        {
            "text": c.text,
            "fields": list(c.fields),
            "operator": c.operator,
            "negated": c.negated,
            "prefix": c.prefix,
            "phrase": c.phrase,
            "depth": c.depth,
            "near": c.near,
        }
        for c in describe(node)
    ]


class SearchBackend:
    """Boolean / hybrid search over one FTS5 index, used from one event loop."""

    def __init__(
        self,
        index: Path,
        vectors: Path | None,
        embedder: Any | None,
        *,
        memory: Any | None = None,
    ) -> None:
        """Open ``index``; with an ``embedder``, hybrid search over a vector memory too.

        ``memory`` is a vector memory whose record ids are the index's (a domain's klea
        vector stores as :class:`~klea_utils.stores.sci_etl_vectors.KleaVectorMemory`);
        otherwise ``vectors`` is a sci-etl SQLite vector memory file. The graph reads a
        ``KleaVectorMemory``'s stored vectors, and embeds each record's title for any
        other memory.
        """
        from klea_utils.stores.sci_etl_vectors import KleaVectorEdgeSource, KleaVectorMemory
        from sci_etl_core.embeddings.finder_async import AsyncSimilarArticleFinder
        from sci_etl_core.search.edges import EmbeddingEdgeSource

        self.index_path = index
        keys = built_facet_keys(index) or ()
        self.text_store = AsyncSqliteFts5Store(index, facet_keys=keys)
        self._opened = False
        self.vectors: Any | None = None
        self.edges: Any | None = None
        self._owns_vectors = memory is None
        finder = None
        if embedder is not None and (memory is not None or vectors is not None):
            if memory is None:
                assert vectors is not None
                from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore

                memory = AsyncSqliteEmbeddingStore(vectors)
            self.vectors = memory
            finder = AsyncSimilarArticleFinder(embedder, memory)
            if isinstance(memory, KleaVectorMemory):
                self.edges = KleaVectorEdgeSource(memory)
            else:
                self.edges = EmbeddingEdgeSource(embedder, memory, self.text_store)
        self.searcher = AsyncHybridSearcher(self.text_store, finder)

    async def _multiscript(self) -> bool:
        """Whether the index is multiscript, as its file records (opened once to read it)."""
        if not self._opened:
            await self.text_store.count()
            self._opened = True
        return self.text_store.multiscript

    @property
    def facet_keys(self) -> frozenset[str]:
        """The metadata keys the index tags."""
        return self.text_store.facet_keys

    @property
    def default_mode(self) -> SearchMode:
        """``hybrid`` with a vector memory, else ``lexical``."""
        return "hybrid" if self.vectors is not None else "lexical"

    async def search(self, params: SearchParams, passages: int) -> dict[str, Any]:
        """Run the query of ``params``; a malformed query answers ``{"error": {...}}`` with
        its caret.

        ``passages`` is how many passage hits to answer: ``params.limit``, or more when the
        service groups them by paper
        (:func:`~klea_utils.stores.serve.search.grouping.passages_to_fetch`), which is the
        service's to do. ``params.any_words`` ``None`` searches a plain question as the OR
        of its words; ``True`` always does, ``False`` never.

        Raises:
            ValueError: Unknown mode, or a filter on a key the index does not tag.
        """
        query, any_words = params.query, params.any_words
        mode = params.mode or self.default_mode
        filters = store_filters(params.filters, self.facet_keys)
        multiscript = await self._multiscript()
        rewritten = (
            question_query(query, multiscript=multiscript) if any_words is not False else None
        )
        if any_words and rewritten is None:
            rewritten = any_words_query(query, multiscript=multiscript)
        effective = rewritten or query
        out: dict[str, Any] = {
            "query": query,
            "interpreted_as": effective,
            "mode": mode,
            "chips": chips(effective),
            "hits": [],
            "error": None,
            "degraded": [],
            "skipped": [],
        }
        try:
            outcome = await self.searcher.search(
                effective,
                top_k=passages,
                mode=mode,
                filters=filters,
            )
        except SearchQueryError as exc:
            out["error"] = _error(exc, query)
            return out
        out["hits"] = [_hit(h) for h in outcome.hits]
        out["degraded"], out["skipped"] = list(outcome.degraded), list(outcome.skipped)
        return out

    async def matching_files(self, query: str, limit: int = 500) -> list[str]:
        """File names of the records matching ``query`` (for facet counts).

        Raises:
            SearchQueryError: When the query is malformed.
        """
        effective = question_query(query, multiscript=await self._multiscript()) or query
        ids = await self.text_store.filter_ids(parse_query(effective))
        docs = await self.text_store.get_documents(sorted(ids)[: max(limit, 1)])
        return [str(d.metadata.get("file_name") or rid) for rid, d in docs.items()]

    async def graph(
        self,
        record_ids: Sequence[str],
        min_weight: float = 0.15,
        per_node: int = 3,
        *,
        similarity: bool = True,
    ) -> dict[str, Any]:
        """Nodes for ``record_ids`` and the edges between them by meaning (vector memory).

        Each record keeps its ``per_node`` closest fellow results of at least ``min_weight``
        cosine similarity (kind ``"similarity"``); ``similarity=False`` draws none. Each
        node carries its ``file_name`` (citation edges relate files). ``available`` says
        whether a vector memory is served.
        """
        ids = list(dict.fromkeys(record_ids))
        available = self.edges is not None
        if len(ids) < 2:
            return {"nodes": [], "edges": [], "available": available}
        best: dict[tuple[str, str], float] = {}
        if self.edges is not None and similarity:
            lists = await self.edges.neighbours(ids, limit=max(20, 3 * len(ids)))
            wanted = set(ids)
            for source, neighbours in lists.items():
                fellows = [(t, w) for t, w in neighbours if t in wanted and t != source]
                for target, weight in fellows[:per_node]:
                    if weight >= min_weight:
                        pair = (min(source, target), max(source, target))
                        best[pair] = max(best.get(pair, 0.0), float(weight))
        docs = await self.text_store.get_documents(ids)
        nodes = [
            {
                "id": rid,
                "title": docs[rid].title if rid in docs else rid,
                "file_name": str(docs[rid].metadata.get("file_name") or "") if rid in docs else "",
            }
            for rid in ids
        ]
        edges = [
            {"source": a, "target": b, "weight": round(w, 4), "kind": "similarity"}
            for (a, b), w in best.items()
        ]
        return {"nodes": nodes, "edges": edges, "available": available}

    async def count(self) -> int:
        """Records in the index."""
        return await self.text_store.count()

    async def aclose(self) -> None:
        """Close the index and the vector memory it opened (a given ``memory`` is borrowed)."""
        await self.text_store.aclose()
        if self.vectors is not None and self._owns_vectors:
            await self.vectors.aclose()
