"""instantiate_vector_store, VSRetriever and drop_collection on real Chroma, Qdrant, PGVector."""

from __future__ import annotations

import logging
import warnings

import pytest
from klea_utils.stores._retrieval.qdrant import close_local_qdrant_client, qdrant_point_id
from klea_utils.stores.config import PerDomainConfig, RetrieverConfig, VectorStoreInfo
from klea_utils.stores.embedding_models import DEFAULT_EMBEDDING_MODEL, load_embeddings
from klea_utils.stores.retrieval.vs import VSRetriever
from klea_utils.stores.utils import CHROMA_HNSW_SPACE, drop_collection, instantiate_vector_store
from retrieval_support import corpus_documents

LOG = logging.getLogger("test-vs")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm():
    return load_embeddings(DEFAULT_EMBEDDING_MODEL, device="cpu")


@pytest.fixture(scope="module", params=["chroma", "qdrant", "pgvector"])
def store_path(request, tmp_path_factory):
    if request.param == "chroma":
        yield f"chroma:{tmp_path_factory.mktemp('chroma')}"
    elif request.param == "qdrant":
        folder = tmp_path_factory.mktemp("qdrant-local")
        yield f"qdrant:{folder}"
        close_local_qdrant_client(folder)
    else:
        url = request.getfixturevalue("pg_url")
        yield "pgvector:" + url.replace("postgresql+psycopg://", "postgresql://", 1)


def ids_of(docs):
    return [d.id for d in docs]


def dispose(*stores):
    """Close PGVector engines so no PostgreSQL connection outlives the test."""
    for store in stores:
        engine = getattr(store, "_engine", None)
        if engine is not None:
            engine.dispose()


def test_store_roundtrip_filters_delete_readd_and_drop(store_path, minilm):
    opened = []
    try:
        roundtrip(store_path, minilm, opened)
    finally:
        dispose(*opened)


def roundtrip(store_path, minilm, opened):
    docs = corpus_documents()
    store = instantiate_vector_store(store_path, "papers", minilm, LOG, create=True)
    opened.append(store)
    store.add_documents(docs, ids=ids_of(docs))

    config = RetrieverConfig(
        domains={
            "neuro": PerDomainConfig(
                vector_stores=[VectorStoreInfo(name="papers", path=store_path)]
            )
        }
    )
    retriever = VSRetriever(config, LOG, DEFAULT_EMBEDDING_MODEL, default_k=3)
    retriever.embeddings = minilm  # share the loaded model; setup() keeps it
    assert config.domains["neuro"].vector_stores[0].loaded_object is None
    hits = retriever.retrieve("neuro", "cerebellar granule and Golgi cells")
    assert config.domains["neuro"].vector_stores[0].loaded_object is not None
    opened.append(config.domains["neuro"].vector_stores[0].loaded_object)
    assert hits[0][0].page_content.startswith("Granule cells")
    assert all(-1.0 <= s <= 1.0 for _, s in hits)
    query_vec = minilm.embed_query("cerebellar granule and Golgi cells")
    doc_vec = minilm.embed_query(hits[0][0].page_content)
    cosine = sum(a * b for a, b in zip(query_vec, doc_vec, strict=True))
    assert hits[0][1] == pytest.approx(cosine, abs=1e-3)

    filtered = retriever.retrieve("neuro", "neurons", {"year": {"$gte": 2015}})
    assert filtered
    assert all(d.metadata["year"] >= 2015 for d, _ in filtered)
    by_author = retriever.retrieve("neuro", "neurons", {"authors": {"$contains": "Sarah Jones"}})
    assert {d.metadata["file_name"] for d, _ in by_author} == {"jones2015.pdf"}

    store.delete(ids=["jones2015.pdf:0", "jones2015.pdf:1"])
    gone = retriever.retrieve("neuro", "calcium imaging of cortical neurons")
    assert "jones2015.pdf" not in {d.metadata["file_name"] for d, _ in gone}
    store.add_documents(docs[3:5], ids=ids_of(docs[3:5]))
    back = retriever.retrieve("neuro", "calcium imaging of cortical neurons")
    assert back[0][0].page_content.startswith("Calcium imaging")

    drop_collection(store, store_path, "papers")
    if store_path.startswith("chroma:"):
        with pytest.raises(FileNotFoundError, match="papers"):
            instantiate_vector_store(store_path, "papers", minilm, LOG)
    else:
        fresh = instantiate_vector_store(store_path, "papers", minilm, LOG)
        opened.append(fresh)
        assert fresh.similarity_search("neurons", k=3) == []


def test_chroma_rules(tmp_path, minilm):
    with pytest.raises(FileNotFoundError, match=r"chroma\.sqlite3"):
        instantiate_vector_store(f"chroma:{tmp_path / 'none'}", "col", minilm, LOG)
    store = instantiate_vector_store(f"chroma:{tmp_path / 's'}", "col", minilm, LOG, create=True)
    with warnings.catch_warnings():  # chromadb warns about its own legacy config format
        warnings.simplefilter("ignore", DeprecationWarning)
        assert store._collection.configuration["hnsw"]["space"] == CHROMA_HNSW_SPACE
    db = tmp_path / "s" / "chroma.sqlite3"
    with pytest.raises(ValueError, match="is a file"):
        instantiate_vector_store(f"chroma:{db}", "col", minilm, LOG)
    other = instantiate_vector_store(f"chroma:{tmp_path / 's'}", "second", minilm, LOG, create=True)
    assert other._collection.name == "second"
    for bad in ("c", "-papers", "papers-", "a..b", "pa pers", "x" * 513):
        with pytest.raises(ValueError, match=r"collection name .* must be 3-512 characters"):
            instantiate_vector_store(f"chroma:{tmp_path / 's'}", bad, minilm, LOG, create=True)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("no-scheme", "has no scheme"),
        ("faiss:/x", "unknown scheme 'faiss'"),
        ("chroma:", "empty location"),
    ],
)
def test_bad_store_paths(path, message):
    with pytest.raises(ValueError, match=message):
        instantiate_vector_store(path, "col", None, LOG)
    with pytest.raises(ValueError, match=message):
        drop_collection(None, path, "col")


def test_qdrant_point_ids_are_deterministic_uuid5():
    assert qdrant_point_id("a.pdf:0") == qdrant_point_id("a.pdf:0") != qdrant_point_id("a.pdf:1")
    assert len(str(qdrant_point_id("a.pdf:0"))) == 36
    assert qdrant_point_id(7) == 7
