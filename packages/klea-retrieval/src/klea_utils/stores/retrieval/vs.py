"""Vector store retriever manager (Chroma, Qdrant, PGVector)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from klea_utils.stores.config import RetrieverConfig, StoreInfo
from klea_utils.stores.exceptions import EmbeddingModelError
from klea_utils.stores.filters import translate_metadata_filter, translation_is_exact
from klea_utils.stores.retrieval.base import BaseKleaRetriever
from klea_utils.stores.retrieval.bm25 import filtered_top_k
from klea_utils.stores.store_uri import StoreURI
from klea_utils.stores.text import normalize_text
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.documents import Document

if TYPE_CHECKING:
    from klea_utils.stores._retrieval.query_memo import QueryVectorMemo
    from langchain_core.embeddings import Embeddings

__all__ = ["VSRetriever"]

_MOST_FETCHED = 4096
"""The most hits one store is asked for while an approximate filter is post-filtered."""


def _cosine_similarity(scheme: str, raw: float) -> float:
    """Map a backend's raw score to cosine similarity.

    Chroma (cosine space) and PGVector (cosine strategy) return cosine distances;
    Qdrant (cosine distance) returns the similarity itself.
    """
    return float(raw) if scheme == "qdrant" else 1.0 - float(raw)


class VSRetriever(BaseKleaRetriever):
    """Manages domain-specific vector stores.

    Loads vector stores on demand per domain and provides similarity search across
    the stores of a domain. Store paths use a URI-style scheme prefix:

    - ``chroma:/path/to/dir``: ChromaDB (persistent, local disk)
    - ``qdrant:http://host:port``: Qdrant server, or ``qdrant:/path`` local mode
    - ``pgvector:postgresql://host/db``: PGVector (PostgreSQL)

    The store's ``name`` is the collection name. Relevance scores are cosine
    similarities in ``[-1, 1]`` on every backend. Metadata filters are translated with
    ``klea_utils.stores.filters.translate_metadata_filter``, which for Qdrant nests the
    field keys under LangChain's ``metadata`` payload key. Where the backend applies a
    filter only approximately (``translation_is_exact`` is False: ``$contains`` on
    PGVector, a substring match; string ``$ne``/``$nin`` on Chroma), the store is asked
    for more hits and they are post-filtered with ``filter_docs_by_metadata``, so
    ``$contains`` on a list key (``tags``, ``collections``, ``authors``) is exact
    membership on every backend.
    """

    source_label: str = "vector store"
    """Human-readable name for this retriever type, used to label scores."""

    def __init__(
        self,
        config: RetrieverConfig,
        logger: logging.Logger,
        embedding_model: str,
        default_k: int = 5,
        k_max: int = 10,
        k_inc: int = 1,
    ) -> None:
        super().__init__(config, logger, default_k=default_k, k_max=k_max, k_inc=k_inc)
        self.embedding_model = embedding_model
        self.embeddings: Embeddings | None = None
        self._memo: QueryVectorMemo | None = None
        self._setup_lock = threading.Lock()

    def setup(self) -> None:
        """Initialise the query embedding model (once; later calls are no-ops).

        The packaged MiniLM runs through onnxruntime when its ONNX export exists (see
        :func:`klea_utils.stores.embedding_models.load_query_embeddings`).
        """
        with self._setup_lock:
            if self.embeddings is None:
                # Imported here: the embedding side (LangChain's Embeddings, onnxruntime)
                # is for vector stores only, and a pipeline builds this manager always.
                from klea_utils.stores.embedding_models import load_query_embeddings

                self.embeddings = load_query_embeddings(self.embedding_model)

    def _query_embeddings(self) -> Embeddings:
        """The query model behind a memo of its last questions (see :meth:`query_vector`)."""
        self.setup()
        with self._setup_lock:
            model = self.embeddings
            assert model is not None  # setup() loaded it
            if self._memo is None or self._memo.model is not model:
                from klea_utils.stores._retrieval.query_memo import QueryVectorMemo

                self._memo = QueryVectorMemo(model)
            return self._memo

    def query_vector(self, query: str) -> list[float]:
        """``query``'s embedding as the stores were searched with it (normalized first).

        The stores embed a question through the same memo, so a question the vector leg
        has just searched with is not embedded again.
        """
        return self._query_embeddings().embed_query(normalize_text(query))

    def _stores_of(self, domain_name: str) -> Sequence[StoreInfo]:
        return self.config.domains[domain_name].vector_stores

    def _instantiate_store(self, store: StoreInfo) -> Any:
        embeddings = self._query_embeddings()
        return instantiate_vector_store(store.path, store.name, embeddings, self.logger)

    def _retrieve_from_store(
        self,
        store: StoreInfo,
        query: str,
        k: int,
        metadata_filter: dict[str, Any] | None,
    ) -> list[tuple[Document, float]]:
        scheme = StoreURI.vector(store.path).scheme
        native: Any = None
        if metadata_filter:
            # For qdrant: paths this already nests the keys under the ``metadata.``
            # payload prefix that LangChain's QdrantVectorStore writes.
            native = translate_metadata_filter(store.path, metadata_filter)
        vector_store: Any = store.loaded_object

        def fetch(n: int) -> list[tuple[Document, float]]:
            try:
                pairs = vector_store.similarity_search_with_score(query, k=n, filter=native)
            except Exception as exc:
                if "dimension" not in str(exc).lower():
                    raise
                raise EmbeddingModelError(
                    f"{exc} (store {store.name!r}): its vectors were made by another "
                    f"embedding model than {self.embedding_model}; ask with the "
                    "--embedding-model it was built with"
                ) from exc
            return [(doc, _cosine_similarity(scheme, raw)) for doc, raw in pairs]

        if metadata_filter and not translation_is_exact(store.path, metadata_filter):
            return filtered_top_k(fetch, k, metadata_filter, _MOST_FETCHED)
        return fetch(k)
