"""KleaVectorMemory: klea's Chroma, Qdrant and PGVector stores as sci-etl's vector memory.

Each backend holds the same 120 random unit vectors under readable chunk ids; hypothesis
draws query vectors and checks the adapter's neighbours against a brute-force scan. On the
small corpus with the real MiniLM, hybrid hits through the adapter equal those through
sci-etl's own in-memory vector memory holding the same vectors.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from klea_utils.stores._retrieval.qdrant import close_local_qdrant_client
from klea_utils.stores.sci_etl_vectors import (
    KleaVectorEdgeSource,
    KleaVectorMemory,
    LangChainEmbedder,
)
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.embeddings import Embeddings
from retrieval_support import corpus_documents, write_fts5_index
from sci_etl_core.embeddings.finder_async import AsyncSimilarArticleFinder
from sci_etl_core.embeddings.store_base import EmbeddingChunk
from sci_etl_core.embeddings.store_memory import InMemoryEmbeddingStore
from sci_etl_core.exceptions import EmbeddingDimensionError, EmbeddingStoreError
from sci_etl_core.search import AsyncHybridSearcher
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

pytestmark = pytest.mark.slow
LOG = logging.getLogger("test-sci-etl-vectors")
DIM = 8
SIZE = 120
TIE = 1e-5
"""Scores closer than this may come back in either order (float32 storage)."""


def _unit(values: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in values))
    return [x / norm for x in values]


_RNG = random.Random(26)
TABLE = {f"passage {i}": _unit([_RNG.gauss(0, 1) for _ in range(DIM)]) for i in range(SIZE)}
IDS = {text: f"paper{i % 7}.pdf:{i}" for i, text in enumerate(TABLE)}


class TableEmbeddings(Embeddings):
    """Looks each text's vector up in TABLE (the stores embed on the way in)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [TABLE.get(t, [1.0] * DIM) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return TABLE.get(text, [1.0] * DIM)


def _uri(backend: str, request, tmp_path_factory) -> str:
    if backend == "chroma":
        return f"chroma:{tmp_path_factory.mktemp('chroma')}"
    if backend == "qdrant":
        folder = tmp_path_factory.mktemp("qdrant")
        request.addfinalizer(lambda: close_local_qdrant_client(folder))
        return f"qdrant:{folder}"
    url = request.getfixturevalue("pg_url")
    return "pgvector:" + url.replace("postgresql+psycopg://", "postgresql://", 1)


def _dispose(store) -> None:
    if hasattr(store, "EmbeddingStore"):  # PGVector: chunk ids are unique across the whole
        store.delete_collection()  # database, so a later test's same ids must not meet these
    engine = getattr(store, "_engine", None)
    if engine is not None:
        engine.dispose()


@pytest.fixture(scope="module", params=["chroma", "qdrant", "pgvector"])
def backend(request, tmp_path_factory):
    uri = _uri(request.param, request, tmp_path_factory)
    store = instantiate_vector_store(uri, "random_units", TableEmbeddings(), LOG, create=True)
    texts = list(TABLE)
    metadatas = [{"file_name": IDS[t].split(":")[0], "title": f"T {IDS[t]}"} for t in texts]
    store.add_texts(texts, metadatas=metadatas, ids=[IDS[t] for t in texts])
    yield request.param, KleaVectorMemory([store], label=f"{request.param} test store")
    _dispose(store)


def _brute(query: list[float], exclude: str | None) -> list[tuple[str, float]]:
    unit = _unit(query)
    scored = [
        (IDS[t], sum(a * b for a, b in zip(unit, v, strict=True)))
        for t, v in TABLE.items()
        if IDS[t] != exclude
    ]
    return sorted(scored, key=lambda p: (-p[1], p[0]))


def _assert_same_neighbours(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    assert len(got) == len(want)
    for (got_id, got_score), (want_id, want_score) in zip(got, want, strict=True):
        assert got_score == pytest.approx(want_score, abs=TIE)
        if got_id != want_id:  # only a near tie may swap
            assert abs(dict(want).get(got_id, -9) - want_score) < TIE


vectors = st.lists(st.floats(-1, 1, allow_nan=False), min_size=DIM, max_size=DIM).filter(
    lambda v: sum(x * x for x in v) > 1e-3
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=vectors,
    top_k=st.integers(1, 40),
    exclude=st.one_of(st.none(), st.sampled_from(sorted(IDS.values()))),
)
def test_neighbours_equal_brute_force(backend, query, top_k, exclude):
    _, memory = backend
    hits = asyncio.run(memory.query(query, top_k=top_k, exclude_record_id=exclude))
    assert all(h.chunk_index == 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    _assert_same_neighbours([(h.record_id, h.score) for h in hits], _brute(query, exclude)[:top_k])


def test_count_dimension_vectors_and_metadata(backend):
    _, memory = backend
    assert asyncio.run(memory.count()) == SIZE
    assert asyncio.run(memory.dimension()) == DIM
    text = "passage 5"
    stored = asyncio.run(memory.vectors([IDS[text], "nope.pdf:0"]))
    assert list(stored) == [IDS[text]]
    assert stored[IDS[text]] == pytest.approx(TABLE[text], abs=1e-6)
    (hit,) = asyncio.run(memory.query(TABLE[text], top_k=1))
    assert (hit.record_id, hit.text) == (IDS[text], text)
    assert hit.metadata == {"file_name": IDS[text].split(":")[0], "title": f"T {IDS[text]}"}
    assert hit.score == pytest.approx(1.0, abs=TIE)


def test_min_score_and_edges_from_stored_vectors(backend):
    _, memory = backend
    hits = asyncio.run(memory.query(TABLE["passage 3"], top_k=SIZE, min_score=0.5))
    assert hits
    assert all(h.score >= 0.5 for h in hits)
    seed = IDS["passage 3"]
    edges = asyncio.run(KleaVectorEdgeSource(memory).neighbours([seed, "gone.pdf:9"], 4))
    assert edges["gone.pdf:9"] == []
    want = [(rid, s) for rid, s in _brute(TABLE["passage 3"], seed) if s >= 0][:4]
    _assert_same_neighbours(edges[seed], want)


def test_bad_queries_and_writes_are_refused(backend):
    name, memory = backend
    with pytest.raises(EmbeddingDimensionError, match="dimension 3"):
        asyncio.run(memory.query([1.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match="all zeros"):
        asyncio.run(memory.query([0.0] * DIM))
    with pytest.raises(ValueError, match="not finite"):
        asyncio.run(memory.query([math.nan] * DIM))
    chunk = EmbeddingChunk("x.pdf:0", 0, "x", [1.0] * DIM)
    with pytest.raises(EmbeddingStoreError, match=f"{name} test store is read-only"):
        asyncio.run(memory.add([chunk]))
    with pytest.raises(EmbeddingStoreError, match="read-only"):
        asyncio.run(memory.delete_record("x.pdf:0"))
    assert asyncio.run(memory.query(TABLE["passage 1"], top_k=0)) == []


@pytest.fixture(scope="module", params=["chroma", "qdrant", "pgvector"])
def minilm_store(request, tmp_path_factory, minilm_embeddings):
    uri = _uri(request.param, request, tmp_path_factory)
    store = instantiate_vector_store(uri, "corpus", minilm_embeddings, LOG, create=True)
    docs = corpus_documents()
    store.add_documents(docs, ids=[d.id for d in docs])
    yield store
    _dispose(store)


async def _hybrid_ids(memory, embedder, index, queries):
    text_store = AsyncSqliteFts5Store(index)
    try:
        searcher = AsyncHybridSearcher(text_store, AsyncSimilarArticleFinder(embedder, memory))
        out = []
        for query in queries:
            for mode in ("hybrid", "semantic"):
                outcome = await searcher.search(query, top_k=10, mode=mode)
                out.append([(h.record_id, h.lexical_rank, h.semantic_rank) for h in outcome.hits])
        return out
    finally:
        await text_store.aclose()


def test_hybrid_hits_equal_a_sci_etl_memory_of_the_same_vectors(
    minilm_store, minilm_embeddings, tmp_path
):
    docs = corpus_documents()
    index = tmp_path / "chunks.sqlite"
    write_fts5_index(index, docs)
    klea = KleaVectorMemory([minilm_store])
    stored = asyncio.run(klea.vectors([d.id for d in docs]))
    assert set(stored) == {d.id for d in docs}
    reference = InMemoryEmbeddingStore()
    chunks = [EmbeddingChunk(d.id, 0, d.page_content, stored[d.id]) for d in docs]
    asyncio.run(reference.add(chunks))
    embedder = LangChainEmbedder(minilm_embeddings)
    queries = ["golgi OR dopamine", '"granule" OR "protein" OR "learning"', "neurons"]
    through_klea = asyncio.run(_hybrid_ids(klea, embedder, index, queries))
    through_memory = asyncio.run(_hybrid_ids(reference, embedder, index, queries))
    assert through_klea == through_memory
    assert any(semantic is not None for hits in through_klea for _, _, semantic in hits)
