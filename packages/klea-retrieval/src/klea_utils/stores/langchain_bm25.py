"""BM25 keyword retriever on rank_bm25, as a LangChain ``BaseRetriever``.

With ``context="neighbours"`` (or ``"section"``) each hit comes back widened with the
chunks around it in the same section, read from the retriever's own documents, as
:class:`~klea_utils.stores.pipeline.KleaPipeline` widens them (documents written by
klea-ingest record ``chunk_index`` and ``section_index``). ``"off"``, the default, returns
the matching documents as they are, as a plain BM25 retriever does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from klea_utils.stores._retrieval.bm25_scoring import (
    build_vectorizer,
    default_preprocessing_func,
    stemmed_preprocessing_func,
    top_documents,
)
from klea_utils.stores._retrieval.context import (
    DEFAULT_CONTEXT_TOKENS,
    neighbour_source,
    widen_hits,
)
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

__all__ = ["BM25Retriever", "default_preprocessing_func", "stemmed_preprocessing_func"]


class BM25Retriever(BaseRetriever):
    """BM25 retriever using rank_bm25 for keyword-based document scoring.

    Attributes:
        vectorizer: The underlying rank_bm25 index (``BM25Okapi``); ``None`` for an
            empty corpus, which retrieves nothing.
        docs: The indexed LangChain documents.
        k: Default number of documents to return per query.
        preprocess_func: Function used to tokenize documents and queries.
        context: ``off`` (default), ``neighbours`` or ``section``: widen each hit with
            the chunks around it in its section, from :attr:`docs`.
        context_tokens: Token budget of a widened passage.
    """

    vectorizer: Any = None
    docs: list[Document]
    k: int = 4
    preprocess_func: Callable[[str], list[str]] = default_preprocessing_func
    context: Literal["off", "neighbours", "section"] = "off"
    context_tokens: int = Field(default=DEFAULT_CONTEXT_TOKENS, ge=1)

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="ignore", protected_namespaces=())

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        metadatas: Iterable[dict[str, Any]] | None = None,
        ids: Iterable[str] | None = None,
        bm25_params: dict[str, Any] | None = None,
        preprocess_func: Callable[[str], list[str]] = default_preprocessing_func,
        **kwargs: Any,
    ) -> BM25Retriever:
        """Create a BM25Retriever from texts, with optional metadatas and ids.

        Raises:
            ValueError: When ``metadatas`` or ``ids`` do not match ``texts`` in length.
        """
        texts = list(texts)
        metas = list(metadatas) if metadatas is not None else [{} for _ in texts]
        id_list: list[str | None] = list(ids) if ids is not None else [None] * len(texts)
        if len(metas) != len(texts):
            raise ValueError(f"got {len(metas)} metadatas for {len(texts)} texts")
        if len(id_list) != len(texts):
            raise ValueError(f"got {len(id_list)} ids for {len(texts)} texts")
        docs = [
            Document(page_content=t, metadata=m, id=i)
            for t, m, i in zip(texts, metas, id_list, strict=True)
        ]
        return cls._build(docs, bm25_params, preprocess_func, **kwargs)

    @classmethod
    def from_documents(
        cls,
        documents: Iterable[Document],
        *,
        bm25_params: dict[str, Any] | None = None,
        preprocess_func: Callable[[str], list[str]] = default_preprocessing_func,
        **kwargs: Any,
    ) -> BM25Retriever:
        """Create a BM25Retriever from documents (kept as given, ids included)."""
        return cls._build(list(documents), bm25_params, preprocess_func, **kwargs)

    @classmethod
    def _build(
        cls,
        docs: list[Document],
        bm25_params: dict[str, Any] | None,
        preprocess_func: Callable[[str], list[str]],
        **kwargs: Any,
    ) -> BM25Retriever:
        vectorizer = build_vectorizer(docs, preprocess_func, bm25_params)
        return cls(vectorizer=vectorizer, docs=docs, preprocess_func=preprocess_func, **kwargs)

    def scored_documents(self, query: str, k: int | None = None) -> list[tuple[Document, float]]:
        """Return the top ``k`` (default :attr:`k`) documents with their BM25 scores.

        Documents are ordered by score descending, equal scores by corpus position.
        Documents sharing no term with the query are not returned.
        """
        limit = self.k if k is None else k
        if self.vectorizer is None or limit < 1:
            return []
        return top_documents(self.vectorizer, self.docs, self.preprocess_func(query), limit)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        hits = self.scored_documents(query)
        if self.context != "off":
            source = neighbour_source("bm25", "BM25Retriever", self)
            sources = [source] if source is not None else []
            hits, notes = widen_hits(hits, sources, self.context, self.context_tokens)
            for note in notes:
                run_manager.on_text(f"degraded: {note}\n")
        return [doc for doc, _ in hits]
