"""BM25RetrieverManager on real pickled corpora: batches, missing corpora, filters."""

from __future__ import annotations

import logging
import pickle

import pytest
from klea_utils.stores.config import BM25StoreInfo, PerDomainConfig, RetrieverConfig
from klea_utils.stores.exceptions import StoreBackendError
from klea_utils.stores.retrieval.bm25 import BM25RetrieverManager, read_corpus
from retrieval_support import corpus_documents, write_corpus_pickle

LOG = logging.getLogger("test-bm25")


def manager(path, **kw) -> BM25RetrieverManager:
    config = RetrieverConfig(
        domains={
            "neuro": PerDomainConfig(bm25_stores=[BM25StoreInfo(name="papers", path=str(path))])
        }
    )
    return BM25RetrieverManager(config, LOG, **kw)


def test_corpus_is_read_batch_by_batch_until_eof(tmp_path):
    docs = corpus_documents()
    path = write_corpus_pickle(tmp_path / "bm25.pkl", docs, batch_size=4)
    assert [d.id for d in read_corpus(path)] == [d.id for d in docs]


def test_corrupt_corpus_names_the_file(tmp_path):
    path = tmp_path / "bad.pkl"
    with path.open("wb") as fh:
        pickle.dump(corpus_documents()[:1], fh)
        pickle.dump({"not": "documents"}, fh)
    with pytest.raises(StoreBackendError, match=r"bad\.pkl.*batch 1"):
        read_corpus(path)


def test_retrieves_by_keyword_with_scores(tmp_path):
    mgr = manager(write_corpus_pickle(tmp_path / "c.pkl", corpus_documents()))
    hits = mgr.retrieve("neuro", "cerebellum NEURON", k_values={"neuro": {"papers": 2}})
    assert hits[0][0].id == "sinha2021.pdf:0"
    assert len(hits) <= 2
    assert hits[0][1] > 0


def test_filters_are_post_applied_with_overfetch(tmp_path):
    mgr = manager(write_corpus_pickle(tmp_path / "c.pkl", corpus_documents()), default_k=2)
    hits = mgr.retrieve("neuro", "neurons", metadata_filter={"year": {"$gte": 2015}})
    assert [d.metadata["year"] for d, _ in hits]
    assert all(d.metadata["year"] >= 2015 for d, _ in hits)
    assert len(hits) == 2
    only = mgr.retrieve(
        "neuro", "neurons", metadata_filter={"authors": {"$contains": "Jeffrey Magee"}}
    )
    assert [d.id for d, _ in only] == ["magee2000.pdf:0"]
    with pytest.raises(ValueError, match=r"\$bogus"):
        mgr.retrieve("neuro", "neurons", metadata_filter={"year": {"$bogus": 1}})


def test_missing_corpus_warns_and_domain_degrades(tmp_path, caplog):
    mgr = manager(tmp_path / "nowhere.pkl")
    with caplog.at_level(logging.WARNING):
        assert mgr.retrieve("neuro", "neurons") == []
    assert "nowhere.pkl" in caplog.text
    assert mgr.can_inc_k({}) is False


def stemmed_manager(path: str, stemming: bool | None = True) -> BM25RetrieverManager:
    store = BM25StoreInfo(name="papers", path=path, stemming=stemming)
    config = RetrieverConfig(domains={"neuro": PerDomainConfig(bm25_stores=[store])})
    return BM25RetrieverManager(config, LOG, default_k=3)


def test_a_stemming_store_matches_other_forms_of_a_word(tmp_path):
    path = write_corpus_pickle(tmp_path / "c.pkl", corpus_documents())
    assert stemmed_manager(str(path), False).retrieve("neuro", "predicting imaged") == []
    # A pickled corpus stems unless its store says stemming=False.
    for mgr in (stemmed_manager(str(path)), manager(path)):
        hits = mgr.retrieve("neuro", "predicting imaged")
        assert sorted(d.id for d, _ in hits) == ["jones2015.pdf:0", "jones2015.pdf:1"]


def test_stemmed_pickle_and_stemmed_fts5_find_the_same_chunks(tmp_path):
    from retrieval_support import write_fts5_index

    docs = corpus_documents()
    pickle_path = write_corpus_pickle(tmp_path / "c.pkl", docs)
    fts5_path = tmp_path / "c.sqlite"
    write_fts5_index(fts5_path, docs, stemming=True)
    expected = {
        "predicting imaged": {"jones2015.pdf:0", "jones2015.pdf:1"},
        "inhibiting networks": {"sinha2021.pdf:1"},
        "learned": {"jones2015.pdf:1", "smith2019.pdf:0"},
    }
    for query, chunks in expected.items():
        # The two score differently (BM25Okapi and FTS5's bm25), but match the same stems.
        from_pickle = stemmed_manager(str(pickle_path)).retrieve("neuro", query)
        from_fts5 = stemmed_manager(f"fts5:{fts5_path}").retrieve("neuro", query)
        assert {d.id for d, _ in from_pickle} == chunks, query
        assert {d.id for d, _ in from_fts5} == chunks, query


def test_a_stemming_setting_the_fts5_index_disagrees_with_names_the_fix(tmp_path):
    from retrieval_support import write_fts5_index

    path = tmp_path / "plain.sqlite"
    write_fts5_index(path, corpus_documents())
    mgr = stemmed_manager(f"fts5:{path}")
    with pytest.raises(StoreBackendError, match=r"fts5:.*plain\.sqlite.*without stemming.*"):
        mgr.retrieve("neuro", "predicting")
    with pytest.raises(StoreBackendError, match="maintain rebuild-index --db"):
        mgr.retrieve("neuro", "predicting")
