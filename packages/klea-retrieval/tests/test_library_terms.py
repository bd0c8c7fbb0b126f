"""Library counts: how many passages of the whole library hold each question word."""

from __future__ import annotations

import logging
import math
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._retrieval import library_terms
from klea_utils.stores._retrieval.library_terms import (
    TermCounts,
    count_passages,
    library_counts,
)
from klea_utils.stores._retrieval.passage_focus import passage_terms, question_terms
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.pipeline import KleaPipeline
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.documents import Document
from retrieval_backends import add_documents
from retrieval_support import write_corpus_pickle, write_fts5_index

LOG = logging.getLogger("test_library_terms")
TEXTS = [
    "We obtain the kernel and obtain the mean residence time.",
    "To obtain a smooth estimate, the kernel is renormalized first.",
    "The rainfall series has long range memory properties.",
    "Rainfall is not white noise: the cross-correlation implicitly assumes it is.",
    "Five sensors recorded aquifer levels below the reference, 5 of them negative.",
]
QUESTION = "How is the kernel renormalized to obtain the mean residence time?"


def _docs() -> list[Document]:
    return [
        Document(id=f"wrt.pdf:{i}", page_content=t, metadata={"file_name": "wrt.pdf"})
        for i, t in enumerate(TEXTS)
    ]


def test_each_passage_counts_a_word_once_and_a_rarer_word_weighs_more() -> None:
    counts = count_passages(TEXTS)
    assert counts.passages == 5
    assert counts.holders["obtain"] == 2  # twice in the first passage: counted once
    assert counts.holders["renorm"] == 1
    assert counts.holders["5"] == 1  # "Five" and "5" in one passage are one term
    weights = counts.weights(["obtain", "renorm", "unheard"])
    assert weights["renorm"] > weights["obtain"]
    assert weights["unheard"] == max(weights.values())
    assert weights["obtain"] == pytest.approx(math.log(1.0 + 6.0 / 2.5))


@given(st.lists(st.text(max_size=40), max_size=8), st.lists(st.text(max_size=12), max_size=4))
def test_library_weights_are_positive_and_fall_as_more_passages_hold_a_word(
    texts: list[str], words: list[str]
) -> None:
    counts = count_passages(texts)
    assert counts.passages == len(texts)
    for term, holders in counts.holders.items():
        assert 1 <= holders <= len(texts)
        assert holders == sum(term in set(passage_terms(t)) for t in texts)
    terms = [t for w in words for t in passage_terms(w)]
    for term, weight in counts.weights(terms).items():
        assert weight > 0.0
        fewer = TermCounts(counts.passages, {term: max(0, counts.holders.get(term, 0) - 1)})
        assert fewer.weights([term])[term] >= weight


@pytest.mark.parametrize("stemming", [True, False])
def test_an_fts5_index_gives_the_counts_of_its_texts(tmp_path: Path, stemming: bool) -> None:
    write_fts5_index(tmp_path / "c.sqlite", _docs(), stemming=stemming)
    from klea_utils.stores.retrieval._fts5 import Fts5Bm25Index

    index = Fts5Bm25Index(tmp_path / "c.sqlite")
    try:
        counts = library_counts([("bm25", str(index.path), index)])
        assert counts is not None
        # a stemmed index answers from its vocabulary; an unstemmed one has its texts read
        assert isinstance(counts, library_terms._Fts5Vocabulary) is stemming
        terms = question_terms(QUESTION + " rainfall implicitly five")
        got = counts(terms)
    finally:
        index.close()
    expected = count_passages(TEXTS)
    assert got.passages == expected.passages
    assert {t: got.holders.get(t, 0) for t in terms} == {
        t: expected.holders.get(t, 0) for t in terms
    }


def test_an_fts5_vocabulary_is_preferred_to_reading_a_pickled_corpus(
    tmp_path: Path, fake_embeddings: Any
) -> None:
    write_fts5_index(tmp_path / "c.sqlite", _docs(), stemming=True)
    pickled = write_corpus_pickle(tmp_path / "c.pkl", _docs())
    pipe = _pipeline(
        {
            "bm25_stores": [
                {"name": "p", "path": str(pickled)},
                {"name": "f", "path": f"fts5:{tmp_path / 'c.sqlite'}"},
            ]
        },
        fake_embeddings,
    )
    try:
        pipe.retrieve("papers", QUESTION, limit=2)
        assert isinstance(pipe._domain_helpers("papers").library, library_terms._Fts5Vocabulary)
    finally:
        pipe.close()
    elsewhere = [("qdrant", "q", object()), ("pgvector", "postgresql://u:p@h/db", object())]
    assert library_counts(elsewhere) is None


def test_a_store_s_texts_are_read_by_one_thread_only() -> None:
    reads = []

    def texts() -> list[str]:
        reads.append(1)
        return TEXTS

    counts = library_terms._CountedOnce("a test corpus", texts)
    threads = [threading.Thread(target=counts, args=(["obtain"],)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert reads == [1]
    assert counts(["obtain"]).holders["obtain"] == 2


def test_a_chroma_collection_is_read_in_pages(
    tmp_path: Path, fake_embeddings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(library_terms, "_PAGE", 2)  # 5 chunks: three pages
    uri = f"chroma:{tmp_path / 'chroma'}"
    store = instantiate_vector_store(uri, "papers", fake_embeddings, LOG, create=True)
    add_documents(store, _docs(), [f"wrt.pdf:{i}" for i in range(len(TEXTS))])
    counts = library_counts([("chroma", str(tmp_path / "chroma"), store)])
    assert counts is not None
    got = counts(["obtain"])
    assert got.passages == 5
    assert got.holders == count_passages(TEXTS).holders


def _pipeline(domain: dict[str, Any], fake_embeddings: Any) -> KleaPipeline:
    config = RetrieverConfig.model_validate({"domains": {"papers": domain}})
    return KleaPipeline(config, embedding_model=fake_embeddings, k=2, recency=False)


@pytest.mark.parametrize("backend", ["fts5", "bm25", "chroma"])
def test_the_pipeline_weighs_the_question_s_words_by_the_library(
    backend: str, tmp_path: Path, fake_embeddings: Any
) -> None:
    domain: dict[str, Any]
    if backend == "fts5":
        write_fts5_index(tmp_path / "c.sqlite", _docs())
        domain = {"bm25_stores": [{"name": "f", "path": f"fts5:{tmp_path / 'c.sqlite'}"}]}
    elif backend == "bm25":
        pickled = write_corpus_pickle(tmp_path / "c.pkl", _docs())
        domain = {"bm25_stores": [{"name": "p", "path": str(pickled)}]}
    else:
        uri = f"chroma:{tmp_path / 'chroma'}"
        store = instantiate_vector_store(uri, "papers", fake_embeddings, LOG, create=True)
        add_documents(store, _docs(), [f"wrt.pdf:{i}" for i in range(len(TEXTS))])
        domain = {"vector_stores": [{"name": "papers", "path": uri}]}
    pipe = _pipeline(domain, fake_embeddings)
    try:
        pipe.retrieve("papers", QUESTION, limit=2)  # loads the stores
        weights = pipe._library_weights("papers", QUESTION)
        assert weights == count_passages(TEXTS).weights(question_terms(QUESTION))
        assert weights is not None
        assert weights["renorm"] > weights["obtain"]
        pipe.focus = None
        assert pipe._library_weights("papers", QUESTION) is None
    finally:
        pipe.close()


def test_counts_that_cannot_be_read_leave_the_pool_to_decide_and_warn_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from klea_utils.stores.retrieval._fts5 import Fts5Bm25Index

    write_fts5_index(tmp_path / "c.sqlite", _docs(), stemming=True)
    index = Fts5Bm25Index(tmp_path / "c.sqlite")
    try:
        counts = library_counts([("bm25", str(index.path), index)])
        assert counts is not None
        (tmp_path / "c.sqlite").rename(tmp_path / "moved.sqlite")
        with caplog.at_level(logging.WARNING, logger=library_terms.__name__):
            first, second = counts(["obtain"]), counts(["kernel"])
    finally:
        index.close()
    assert first == second == TermCounts(0, {})
    weights = first.weights(["obtain", "renorm"])
    assert weights["obtain"] == weights["renorm"]  # every word alike: the pool decides
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1
    assert "c.sqlite" in warnings[0]
    assert str(tmp_path) not in warnings[0]  # a log line names the file, not the path

    def broken() -> list[str]:
        raise RuntimeError("collection gone")

    unread = library_terms._CountedOnce("a Chroma collection", broken)
    assert unread(["obtain"]) == TermCounts(0, {})


def _fail_to_read() -> list[str]:
    raise AssertionError("the texts were read again")


def test_counts_are_kept_for_the_next_process_while_the_store_is_unchanged(
    tmp_path: Path, term_counts_cache: Path
) -> None:
    from klea_utils.stores._retrieval.counts_cache import CountsCache

    corpus = tmp_path / "c.pkl"
    corpus.write_bytes(b"version one")
    cache = CountsCache(f"bm25\0{corpus}", [corpus])
    first = library_terms._CountedOnce("a corpus", lambda: TEXTS, cache)(["obtain"])
    assert first == count_passages(TEXTS)
    kept = list(term_counts_cache.iterdir())
    assert len(kept) == 1
    assert "c.pkl" not in kept[0].name  # the file is named by a digest of the place
    # another process: the same store is not read again
    again = library_terms._CountedOnce("a corpus", _fail_to_read, cache)(["obtain"])
    assert again == first
    # the store written since: counted again
    corpus.write_bytes(b"version two, longer")
    fresh = library_terms._CountedOnce("a corpus", lambda: TEXTS[:2], cache)(["obtain"])
    assert fresh.passages == 2
    # a kept file that holds anything but counts is ignored
    kept[0].write_text('{"signature": [], "passages": "x", "holders": []}', encoding="utf-8")
    assert library_terms._CountedOnce("a corpus", lambda: TEXTS, cache)(["x"]).passages == 5


def test_a_cache_folder_that_cannot_be_written_costs_nothing_but_the_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from klea_utils.stores._retrieval.counts_cache import CountsCache

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be", encoding="utf-8")
    monkeypatch.setenv("KLEA_TERM_COUNTS_CACHE", str(blocker / "counts"))
    cache = CountsCache("bm25\0somewhere", [])
    counts = library_terms._CountedOnce("a corpus", lambda: TEXTS, cache)(["obtain"])
    assert counts == count_passages(TEXTS)


def test_a_chroma_collection_s_counts_follow_its_chunk_count(
    tmp_path: Path, fake_embeddings: Any
) -> None:
    uri = f"chroma:{tmp_path / 'chroma'}"
    store = instantiate_vector_store(uri, "papers", fake_embeddings, LOG, create=True)
    add_documents(store, _docs()[:3], [f"wrt.pdf:{i}" for i in range(3)])
    assert library_counts([("chroma", str(tmp_path / "chroma"), store)])(["x"]).passages == 3
    add_documents(store, _docs()[3:], [f"wrt.pdf:{i}" for i in range(3, 5)])
    assert library_counts([("chroma", str(tmp_path / "chroma"), store)])(["x"]).passages == 5
