"""``$contains`` on the list keys ``tags`` and ``collections`` is membership on every backend.

A reference manager fills ``tags`` and ``collections`` with lists of strings; the store
metadata policy passes them through as they are, so each backend holds a list: Chroma an
array (``KleaChroma`` encodes only an empty list, as a string that matches nothing),
Qdrant and PGVector a JSON array, the pickled corpus and the ``fts5:`` index the Python
list / its JSON. The same corpus goes into a real store of each kind through the
retrievers klea uses (``VSRetriever``, ``BM25RetrieverManager``); hypothesis draws filter
trees of ``$contains`` clauses on both keys (elements that are substrings of one another,
so a substring match would show) mixed with a year range, and each retriever must return
exactly the documents :func:`filter_docs_by_metadata` selects. PGVector's ``$contains`` is
a substring match (the documented approximation): ``VSRetriever`` post-filters it.

The embeddings are FAKE (``HashEmbeddings``): filtering does not depend on the vectors,
and every search asks for more results than the corpus holds.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from klea_utils.stores._retrieval.qdrant import close_local_qdrant_client
from klea_utils.stores.config import (
    BM25StoreInfo,
    PerDomainConfig,
    RetrieverConfig,
    VectorStoreInfo,
)
from klea_utils.stores.filters import filter_docs_by_metadata
from klea_utils.stores.retrieval.bm25 import BM25RetrieverManager
from klea_utils.stores.retrieval.vs import VSRetriever
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.documents import Document
from retrieval_backends import HashEmbeddings
from retrieval_support import filter_trees, write_corpus_pickle, write_fts5_index

pytestmark = pytest.mark.slow

LOG = logging.getLogger("test-list-keys")
TAGS = ["to-read", "to-read-later", "read", "methods"]
COLLECTIONS = ["Thesis", "Thesis chapter 2", "Imaging"]
N_DOCS = 24
K = N_DOCS + 6
VECTOR_BACKENDS = ("chroma", "qdrant", "pgvector")
BM25_BACKENDS = ("pickle", "fts5")


def make_corpus() -> list[Document]:
    """Deterministic papers; each list key is missing, empty or 1-3 elements long."""
    rng = random.Random(29)
    docs = []
    for n in range(N_DOCS):
        metadata: dict[str, Any] = {"file_name": f"p{n}.pdf", "year": 2000 + n % 7}
        for key, pool in (("tags", TAGS), ("collections", COLLECTIONS)):
            roll = rng.random()
            if roll < 0.15:
                metadata[key] = []
            elif roll < 0.85:
                metadata[key] = rng.sample(pool, rng.randint(1, min(3, len(pool))))
        text = f"paper number {n} about soil genes and imaging"
        docs.append(Document(id=f"p{n}.pdf:0", page_content=text, metadata=metadata))
    return docs


CORPUS = make_corpus()

leaves = st.one_of(
    st.sampled_from([*TAGS, "to"]).map(lambda v: {"tags": {"$contains": v}}),
    st.sampled_from([*COLLECTIONS, "Thes"]).map(lambda v: {"collections": {"$contains": v}}),
    st.integers(2000, 2007).map(lambda y: {"year": {"$gte": y}}),
)
filters = filter_trees(leaves, max_leaves=4)


@pytest.fixture(scope="module")
def retrievers(tmp_path_factory: pytest.TempPathFactory, pg_url: str) -> Iterator[dict[str, Any]]:
    """A VSRetriever over Chroma, Qdrant and PGVector and a BM25 manager over both indexes."""
    embeddings = HashEmbeddings()
    root = tmp_path_factory.mktemp("list-keys")
    qdrant_folder = root / "qdrant"
    paths = {
        "chroma": f"chroma:{root / 'chroma'}",
        "qdrant": f"qdrant:{qdrant_folder}",
        "pgvector": "pgvector:" + pg_url.replace("postgresql+psycopg://", "postgresql://", 1),
    }
    opened = []
    for path in paths.values():
        store = instantiate_vector_store(path, "list_keys", embeddings, LOG, create=True)
        store.add_documents(CORPUS, ids=[d.id for d in CORPUS])
        opened.append(store)
    pickle_path = write_corpus_pickle(root / "bm25.pkl", CORPUS)
    write_fts5_index(root / "bm25.sqlite", CORPUS)
    config = RetrieverConfig(
        domains={
            **{
                name: PerDomainConfig(vector_stores=[VectorStoreInfo(name="list_keys", path=p)])
                for name, p in paths.items()
            },
            "pickle": PerDomainConfig(bm25_stores=[BM25StoreInfo(name="p", path=str(pickle_path))]),
            "fts5": PerDomainConfig(
                bm25_stores=[BM25StoreInfo(name="f", path=f"fts5:{root / 'bm25.sqlite'}")]
            ),
        }
    )
    vs = VSRetriever(config, LOG, "unused", default_k=K, k_max=K)
    vs.embeddings = embeddings
    bm25 = BM25RetrieverManager(config, LOG, default_k=K, k_max=K)
    yield {"vs": vs, "bm25": bm25, "opened": opened}
    for store in opened:
        engine = getattr(store, "_engine", None)
        if engine is not None:
            engine.dispose()
    for domain in VECTOR_BACKENDS:
        loaded = config.domains[domain].vector_stores[0].loaded_object
        engine = getattr(loaded, "_engine", None)
        if engine is not None:
            engine.dispose()
    close_local_qdrant_client(qdrant_folder)


def _files(hits: list[tuple[Document, float]]) -> set[str]:
    return {doc.metadata["file_name"] for doc, _ in hits}


def _expected(f: dict[str, Any]) -> set[str]:
    return {d.metadata["file_name"] for d in filter_docs_by_metadata(CORPUS, f)}


def test_every_backend_holds_the_lists(retrievers: dict[str, Any]) -> None:
    for domain in VECTOR_BACKENDS:
        hits = retrievers["vs"].retrieve(domain, "paper")
        assert len(hits) == N_DOCS, domain
        by_file = {d.metadata["file_name"]: d.metadata for d, _ in hits}
        for doc in CORPUS:
            for key in ("tags", "collections"):
                assert by_file[doc.metadata["file_name"]].get(key) == doc.metadata.get(key)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(f=filters)
def test_contains_on_list_keys_selects_alike_everywhere(
    retrievers: dict[str, Any], f: dict[str, Any]
) -> None:
    expected = _expected(f)
    for domain in VECTOR_BACKENDS:
        assert _files(retrievers["vs"].retrieve(domain, "paper", f)) == expected, domain
    for domain in BM25_BACKENDS:
        assert _files(retrievers["bm25"].retrieve(domain, "paper", f)) == expected, domain


def test_a_substring_of_a_tag_is_no_member(retrievers: dict[str, Any]) -> None:
    later_only = {
        d.metadata["file_name"]
        for d in CORPUS
        if "to-read-later" in d.metadata.get("tags", []) and "to-read" not in d.metadata["tags"]
    }
    assert later_only  # papers a substring match of "to-read" would wrongly select
    f = {"tags": {"$contains": "to-read"}}
    for domain in VECTOR_BACKENDS:
        found = _files(retrievers["vs"].retrieve(domain, "paper", f))
        assert found == _expected(f), domain
        assert not found & later_only, domain
