"""Re-scoring the fused pool by stored vectors: the question embedded once, vectors read by id."""

from __future__ import annotations

import logging
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._retrieval.passage_focus import (
    FocusParams,
    blend_similarities,
    focus_rerank,
)
from klea_utils.stores._retrieval.pool_similarity import chunk_id, pool_similarities
from klea_utils.stores._retrieval.query_memo import QueryVectorMemo
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.pipeline import KleaPipeline
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from retrieval_backends import add_documents
from retrieval_support import corpus_documents, write_corpus_pickle

LOG = logging.getLogger("test_pool_similarity")
COLLECTION = "pool_similarity"


class CountingEmbeddings(Embeddings):
    """Wraps embeddings and counts the questions it embeds."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.queries: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return self.inner.embed_query(text)


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_the_memo_embeds_a_question_once_and_forgets_the_oldest(fake_embeddings) -> None:
    counting = CountingEmbeddings(fake_embeddings)
    memo = QueryVectorMemo(counting, size=2)
    first = memo.embed_query("granule cells")
    first.append(99.0)  # a caller changing its copy changes nothing kept
    assert memo.embed_query("granule cells") == fake_embeddings.embed_query("granule cells")
    assert counting.queries == ["granule cells"]
    memo.embed_query("cortex")
    memo.embed_query("hippocampus")  # the memo holds two: "granule cells" is forgotten
    memo.embed_query("granule cells")
    assert counting.queries == ["granule cells", "cortex", "hippocampus", "granule cells"]
    assert memo.embed_documents(["a"]) == fake_embeddings.embed_documents(["a"])


def test_chunk_ids_come_from_the_id_or_the_file_and_place() -> None:
    assert chunk_id(Document(id="a.pdf:3", page_content="x")) == "a.pdf:3"
    placed = Document(page_content="x", metadata={"file_name": "a.pdf", "chunk_index": 4})
    assert chunk_id(placed) == "a.pdf:4"
    assert chunk_id(Document(id="uuid-like", page_content="x", metadata={})) is None
    flagged = Document(page_content="x", metadata={"file_name": "a.pdf", "chunk_index": True})
    assert chunk_id(flagged) is None


def test_pool_similarities_read_the_stored_vectors_of_a_real_chroma(
    tmp_path, fake_embeddings
) -> None:
    docs = corpus_documents()
    store = instantiate_vector_store(
        f"chroma:{tmp_path}", COLLECTION, fake_embeddings, LOG, create=True
    )
    add_documents(store, docs, [d.id or "" for d in docs])
    query = fake_embeddings.embed_query("inhibitory interneurons")
    stranger = Document(id="absent.pdf:0", page_content="not stored")
    got = pool_similarities(query, [*docs, stranger], [store])
    for doc, similarity in zip(docs, got, strict=False):
        expected = _cosine(query, fake_embeddings.embed_query(doc.page_content))
        assert similarity == pytest.approx(expected, rel=1e-5)
    assert got[-1] is None


def test_an_unreadable_store_leaves_the_focus_lexical(caplog) -> None:
    docs = [Document(id="a.pdf:0", page_content="x")]
    with caplog.at_level(logging.WARNING):
        assert pool_similarities([1.0, 0.0], docs, [object()]) == [None]
    assert "stored vectors could not be read" in caplog.text


@given(
    st.lists(
        st.tuples(st.floats(0, 1), st.one_of(st.none(), st.floats(-1, 1, allow_subnormal=False))),
        min_size=1,
        max_size=12,
    ),
    st.floats(0, 1),
)
def test_blending_stays_in_range_and_keeps_unknown_passages(pairs, share) -> None:
    focus = [f for f, _ in pairs]
    sims = [s for _, s in pairs]
    blended = blend_similarities(focus, sims, share)
    assert all(-1e-9 <= b <= 1 + 1e-9 for b in blended)
    for f, s, b in zip(focus, sims, blended, strict=True):
        if s is None:
            assert b == f
    assert blend_similarities(focus, sims, 0.0) == focus


def test_a_passage_saying_the_answer_in_other_words_rises_with_its_vector() -> None:
    repeating = Document(
        page_content="The aquifer levels in the field data are recorded every hour.",
        metadata={"file_name": "water.pdf"},
    )
    answering = Document(
        page_content="Negative values follow the conventions of the measuring instruments.",
        metadata={"file_name": "water.pdf"},
    )
    merged = [(repeating, 0.033), (answering, 0.032)]
    question = "Why are the recorded aquifer levels in the field data below zero?"
    words_only = focus_rerank(question, merged, FocusParams(vector_share=0.0))
    assert words_only[0][0] is repeating
    blended = focus_rerank(question, merged, FocusParams(vector_share=0.6), [0.31, 0.62])
    assert blended[0][0] is answering
    with pytest.raises(ValueError, match="1 similarities for 2 passages"):
        focus_rerank(question, merged, FocusParams(), [0.5])


@pytest.fixture(scope="module")
def stores(tmp_path_factory, fake_embeddings) -> RetrieverConfig:
    folder = tmp_path_factory.mktemp("pool")
    docs = corpus_documents()
    store = instantiate_vector_store(
        f"chroma:{folder / 'chroma'}", COLLECTION, fake_embeddings, LOG, create=True
    )
    add_documents(store, docs, [d.id or "" for d in docs])
    pickle_path = write_corpus_pickle(folder / "bm25.pkl", docs)
    return RetrieverConfig.model_validate(
        {
            "domains": {
                "neuro": {
                    "vector_stores": [{"name": COLLECTION, "path": f"chroma:{folder / 'chroma'}"}],
                    "bm25_stores": [{"name": "pickled", "path": str(pickle_path)}],
                },
                "keywords": {"bm25_stores": [{"name": "pickled", "path": str(pickle_path)}]},
            }
        }
    )


def test_the_pipeline_embeds_each_question_once(stores, fake_embeddings) -> None:
    counting = CountingEmbeddings(fake_embeddings)
    pipe = KleaPipeline(
        stores.model_copy(deep=True),
        embedding_model=counting,
        k=3,
        focus=FocusParams(vector_share=0.35),
    )
    try:
        seen: list[list[float | None] | None] = []
        original = pipe._pool_similarities

        def spy(domain, query, docs):
            seen.append(original(domain, query, docs))
            return seen[-1]

        pipe._pool_similarities = spy  # type: ignore[method-assign]
        pipe.retrieve("neuro", "Golgi cells inhibit granule cells", context="off")
        assert counting.queries == ["Golgi cells inhibit granule cells"]
        assert len(seen) == 1
        assert seen[0] is not None
        assert all(s is not None for s in seen[0])
        pipe.retrieve("keywords", "Golgi cells", context="off")  # no vector leg: no read
        assert len(seen) == 1
        pipe.focus = FocusParams()  # the default reads words only: no vectors read
        pipe.retrieve("neuro", "Purkinje cells", context="off")
        assert len(seen) == 1
    finally:
        pipe.close()
