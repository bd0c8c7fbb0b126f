"""The public pipeline and its LangChain retriever on real Chroma, BM25 and fts5: stores."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time

import pytest
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.exceptions import MetadataFilterError
from klea_utils.stores.langchain_retriever import KleaRetriever
from klea_utils.stores.pipeline import SCORE_KEY, KleaPipeline, retrieve_documents
from klea_utils.stores.utils import SOURCE_SCORES_KEY, instantiate_vector_store
from langchain_core.embeddings import Embeddings
from retrieval_backends import add_documents
from retrieval_support import (
    build_tiny_cross_encoder,
    corpus_documents,
    write_corpus_pickle,
    write_fts5_index,
)

COLLECTION = "pipeline_tests"
LOG = logging.getLogger("test_pipeline")


class FailingEmbeddings(Embeddings):
    """Embeddings whose queries fail (the documents were embedded by another model)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise RuntimeError("embedding server unreachable")

    def embed_query(self, text: str) -> list[float]:
        raise RuntimeError("embedding server unreachable")


class SlowEmbeddings(Embeddings):
    """Embeddings that answer after ``delay`` seconds."""

    def __init__(self, inner: Embeddings, delay: float) -> None:
        self.inner, self.delay = inner, delay

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        time.sleep(self.delay)
        return self.inner.embed_query(text)


@pytest.fixture(scope="module")
def config(tmp_path_factory, fake_embeddings) -> RetrieverConfig:
    folder = tmp_path_factory.mktemp("pipeline")
    chroma_dir = folder / "chroma"
    docs = corpus_documents()
    store = instantiate_vector_store(
        f"chroma:{chroma_dir}", COLLECTION, fake_embeddings, LOG, create=True
    )
    add_documents(store, docs, [d.id or "" for d in docs])
    pickle_path = write_corpus_pickle(folder / "bm25.pkl", docs)
    write_fts5_index(folder / "chunks.sqlite", docs)
    return RetrieverConfig.model_validate(
        {
            "domains": {
                "neuro": {
                    "vector_stores": [{"name": COLLECTION, "path": f"chroma:{chroma_dir}"}],
                    "bm25_stores": [
                        {"name": "pickled", "path": str(pickle_path)},
                        {"name": "fts", "path": f"fts5:{folder / 'chunks.sqlite'}"},
                    ],
                },
                "keywords": {"bm25_stores": [{"name": "pickled", "path": str(pickle_path)}]},
            }
        }
    )


@pytest.fixture
def pipeline(config, fake_embeddings):
    pipe = KleaPipeline(config.model_copy(deep=True), embedding_model=fake_embeddings, k=3)
    yield pipe
    pipe.close()


def test_fuses_every_store_of_the_domain(pipeline):
    result = pipeline.retrieve("neuro", "Golgi cells granule inhibitory network", limit=3)
    assert result.notes == ()
    assert len(result.hits) == 3
    best, _ = result.hits[0]
    assert best.metadata["file_name"] == "sinha2021.pdf"
    assert set(best.metadata[SOURCE_SCORES_KEY]) >= {"BM25: pickled", "BM25: fts"}
    labels = {label for doc, _ in result.hits for label in doc.metadata[SOURCE_SCORES_KEY]}
    assert "vector store" in labels
    scores = [score for _, score in result.hits]
    assert scores == sorted(scores, reverse=True)


def test_filter_applies_to_every_leg(pipeline):
    result = pipeline.retrieve(
        "neuro", "neurons", metadata_filter={"year": {"$gte": 2015}}, k=6, limit=10
    )
    years = [doc.metadata["year"] for doc, _ in result.hits]
    assert years
    assert all(year >= 2015 for year in years)


def test_limit_and_k(pipeline):
    assert len(pipeline.retrieve("neuro", "neurons").hits) > 3  # all fused: 3 per store
    assert len(pipeline.retrieve("neuro", "neurons", k=1, limit=1).hits) == 1
    assert len(pipeline.retrieve("neuro", "neurons", k=6, limit=6).hits) == 6


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"metadata_filter": {"year": {"$bogus": 1}}}, MetadataFilterError, "$bogus"),
        ({"k": 0}, ValueError, "k must be an integer >= 1"),
    ],
)
def test_bad_input_raises(pipeline, kwargs, error, message):
    with pytest.raises(error, match=message.replace("$", r"\$")):
        pipeline.retrieve("neuro", "neurons", **kwargs)


def test_unknown_domain_names_the_known_ones(pipeline):
    with pytest.raises(ValueError, match="unknown domain 'nope'; configured domains: keywords"):
        pipeline.retrieve("nope", "neurons")


def test_a_failing_leg_degrades_with_a_note(config):
    pipe = KleaPipeline(config.model_copy(deep=True), embedding_model=FailingEmbeddings())
    try:
        result = pipe.retrieve("neuro", "Golgi cells")
    finally:
        pipe.close()
    assert result.notes == ("vector store: RuntimeError: embedding server unreachable",)
    assert result.hits[0][0].metadata["file_name"] == "sinha2021.pdf"


def test_a_slow_leg_is_left_out_after_the_timeout(config, fake_embeddings):
    slow = SlowEmbeddings(fake_embeddings, delay=3.0)
    pipe = KleaPipeline(config.model_copy(deep=True), embedding_model=slow, leg_timeout=0.3)
    try:
        pipe.load()
        started = time.perf_counter()
        result = pipe.retrieve("neuro", "Golgi cells")
        elapsed = time.perf_counter() - started
    finally:
        pipe.close()
    assert elapsed < 2.0  # the BM25 leg and the 0.3 s wait, not the 3 s embedding
    assert result.notes == ("vector store: no answer within 0.3 s; left out",)
    assert result.hits


def test_cross_encoder_rerank_replaces_scores(config, tmp_path, fake_embeddings):
    model = build_tiny_cross_encoder(tmp_path / "ce")
    pipe = KleaPipeline(
        config.model_copy(deep=True),
        embedding_model=fake_embeddings,
        rerank=str(model),
        recency=False,
    )
    try:
        pipe.load()
        plain = KleaPipeline(config.model_copy(deep=True), recency=False)
        fused = plain.retrieve("keywords", "neurons", k=6)
        plain.close()
        reranked = pipe.retrieve("keywords", "neurons", k=6)
    finally:
        pipe.close()
    assert {d.page_content for d, _ in reranked.hits} == {d.page_content for d, _ in fused.hits}
    assert [s for _, s in reranked.hits] != [s for _, s in fused.hits]


def test_threads_share_one_pipeline(pipeline):
    pipeline.load()
    expected = pipeline.retrieve("neuro", "dopamine reinforcement").hits
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(
            pool.map(lambda _: pipeline.retrieve("neuro", "dopamine reinforcement"), range(16))
        )
    assert all(a.hits == expected for a in answers)


def test_retrieve_all_by_domain(pipeline):
    results = pipeline.retrieve_all("Golgi cells")
    assert list(results) == ["neuro", "keywords"]
    assert results["keywords"].hits[0][0].metadata["file_name"] == "sinha2021.pdf"


def test_retrieve_documents_one_shot(config):
    one = RetrieverConfig(domains={"keywords": config.domains["keywords"].model_copy(deep=True)})
    docs = retrieve_documents(one, "dopamine", k=2)
    assert docs[0].metadata["file_name"] == "smith2019.pdf"
    assert isinstance(docs[0].metadata[SCORE_KEY], float)
    with pytest.raises(ValueError, match="name a domain: the configuration has 2"):
        retrieve_documents(config, "dopamine")


def test_langchain_retriever_sync_and_async(pipeline):
    retriever = KleaRetriever(pipeline=pipeline, domain="neuro", k=2)
    docs = retriever.invoke("Golgi cells")
    assert len(docs) == 2
    assert docs[0].metadata["file_name"] == "sinha2021.pdf"
    assert docs[0].metadata[SCORE_KEY] >= docs[1].metadata[SCORE_KEY]
    async_docs = asyncio.run(retriever.ainvoke("Golgi cells"))
    assert async_docs == docs


def test_langchain_retriever_filter_and_from_config(config, fake_embeddings):
    retriever = KleaRetriever.from_config(
        config.model_copy(deep=True),
        domain="neuro",
        k=4,
        metadata_filter={"year": 2021},
        embedding_model=fake_embeddings,
    )
    try:
        docs = retriever.invoke("neurons")
    finally:
        retriever.pipeline.close()
    assert docs
    assert {d.metadata["year"] for d in docs} == {2021}


def test_langchain_retriever_checks_the_domain(pipeline):
    with pytest.raises(ValueError, match="name a domain: the configuration has 2"):
        KleaRetriever(pipeline=pipeline)
    with pytest.raises(ValueError, match="unknown domain 'x'"):
        KleaRetriever(pipeline=pipeline, domain="x")


def test_focus_keeps_as_many_hits_as_the_stores_top_k_give(config, fake_embeddings):
    plain = KleaPipeline(
        config.model_copy(deep=True), embedding_model=fake_embeddings, k=3, focus=None
    )
    focused = KleaPipeline(config.model_copy(deep=True), embedding_model=fake_embeddings, k=3)
    try:
        for query in ("neurons", "Golgi cells granule inhibitory network", "cortex layers"):
            before = plain.retrieve("neuro", query, context="off").hits
            after = focused.retrieve("neuro", query, context="off").hits
            assert len(after) == len(before)
            scores = [score for _, score in after]
            assert scores == sorted(scores, reverse=True)
    finally:
        plain.close()
        focused.close()


def test_focus_asks_each_store_for_the_deeper_pool(config, fake_embeddings, monkeypatch):
    pipe = KleaPipeline(config.model_copy(deep=True), embedding_model=fake_embeddings, k=2)
    asked: list[int] = []
    original = pipe.bm25._retrieve_from_store

    def spy(store, query, k, metadata_filter):
        asked.append(k)
        return original(store, query, k, metadata_filter)

    monkeypatch.setattr(pipe.bm25, "_retrieve_from_store", spy)
    try:
        pipe.retrieve("neuro", "neurons")
        assert asked
        assert all(k == pipe.focus.pool for k in asked)
        asked.clear()
        pipe.focus = None
        pipe.retrieve("neuro", "neurons")
        assert asked
        assert all(k == 2 for k in asked)
    finally:
        pipe.close()


def test_neighbour_sources_and_library_counts_are_built_once_per_loaded_store(
    pipeline, monkeypatch
):
    built: list[str] = []
    original = pipeline._build_domain_helpers

    def counting(domain):
        built.append(domain)
        return original(domain)

    monkeypatch.setattr(pipeline, "_build_domain_helpers", counting)
    pipeline.retrieve("neuro", "neurons")
    pipeline.retrieve("neuro", "Golgi cells")
    assert built == ["neuro"]
    store = pipeline.config.domains["neuro"].bm25_stores[0]
    store.loaded_object = pipeline.bm25._instantiate_store(store)  # a reload's new store
    pipeline.retrieve("neuro", "neurons")
    assert built == ["neuro", "neuro"]


class CountingEmbeddings(Embeddings):
    """The session's embeddings, keeping the documents they are asked to embed."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.documents: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def test_best_sentence_option_embeds_a_files_top_passages_once_and_keeps_file_places(
    config, fake_embeddings
):
    from klea_utils.stores._retrieval.passage_focus import FocusParams

    counting = CountingEmbeddings(fake_embeddings)
    plain = KleaPipeline(config.model_copy(deep=True), embedding_model=fake_embeddings, k=3)
    by_sentence = KleaPipeline(
        config.model_copy(deep=True),
        embedding_model=counting,
        k=3,
        focus=FocusParams(sentence_share=1.0),
    )
    query = "Golgi cells granule inhibitory network of spiking neuron models"
    try:
        before = plain.retrieve("neuro", query, context="off").hits
        after = by_sentence.retrieve("neuro", query, context="off").hits
        files = [d.metadata["file_name"] for d, _ in after]
        assert files == [d.metadata["file_name"] for d, _ in before]
        assert files.count("sinha2021.pdf") == 2
        # the two passages of the file holding two of the top places, sentence by sentence
        assert sorted(counting.documents) == sorted(
            d.page_content for d, _ in after if d.metadata["file_name"] == "sinha2021.pdf"
        )
        by_sentence.retrieve("neuro", query, context="off")
        assert len(counting.documents) == 2  # embedded once
        by_sentence.retrieve("keywords", query, context="off")
        assert len(counting.documents) == 2  # BM25 alone reads words only
    finally:
        plain.close()
        by_sentence.close()
