"""The fts5: BM25 backend: the manager reading an index in klea's layout."""

from __future__ import annotations

import logging

import pytest
from klea_utils.stores.config import BM25StoreInfo, PerDomainConfig, RetrieverConfig
from klea_utils.stores.langchain_bm25 import BM25Retriever
from klea_utils.stores.retrieval._fts5 import Fts5Bm25Index, fts5_query
from klea_utils.stores.retrieval.bm25 import BM25RetrieverManager
from klea_utils.stores.retrieval.fts5_index import delete_fts5_ids, search_document
from retrieval_support import corpus_documents, write_fts5_index

LOG = logging.getLogger("test-fts5")


@pytest.fixture
def index_path(tmp_path):
    path = tmp_path / "idx" / "bm25.sqlite"
    docs = corpus_documents()
    assert write_fts5_index(path, docs) == len(docs)
    return path


def manager(path) -> BM25RetrieverManager:
    config = RetrieverConfig(
        domains={
            "neuro": PerDomainConfig(
                bm25_stores=[BM25StoreInfo(name="papers", path=f"fts5:{path}")]
            )
        }
    )
    return BM25RetrieverManager(config, LOG, default_k=3)


def test_fts5_store_ranks_like_rank_bm25(index_path):
    mgr = manager(index_path)
    hits = mgr.retrieve("neuro", "Golgi cells network")
    reference = BM25Retriever.from_documents(corpus_documents()).scored_documents(
        "Golgi cells network", k=3
    )
    assert [d.id for d, _ in hits] == [d.id for d, _ in reference]
    top = hits[0][0]
    assert top.metadata["authors"] == ["Ankur Sinha", "Padraig Gleeson"]
    assert top.page_content.startswith("Granule cells")
    assert hits[0][1] > 0


def test_fts5_filters_deletion_and_replacement(index_path):
    mgr = manager(index_path)
    hits = mgr.retrieve("neuro", "neurons", metadata_filter={"year": {"$lt": 2016}})
    assert hits
    assert all(d.metadata["year"] < 2016 for d, _ in hits)
    delete_fts5_ids(index_path, ["jones2015.pdf:0", "unknown:9"])
    after = mgr.retrieve("neuro", "calcium imaging")
    assert "jones2015.pdf:0" not in [d.id for d, _ in after]
    index = config_index(mgr)
    assert index.count() == len(corpus_documents()) - 1


def config_index(mgr: BM25RetrieverManager) -> Fts5Bm25Index:
    store = mgr.config.domains["neuro"].bm25_stores[0]
    assert isinstance(store.loaded_object, Fts5Bm25Index)
    return store.loaded_object


def test_empty_queries_and_double_close(tmp_path):
    docs = corpus_documents()[:2]
    path = tmp_path / "a.sqlite"
    assert write_fts5_index(path, docs) == 2
    index = Fts5Bm25Index(path)
    try:
        assert index.count() == 2
        assert index.search("", 5) == []
        assert index.search("neuron", 0) == []
    finally:
        index.close()
        index.close()


def test_missing_index_warns_and_bad_ids_are_rejected(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        assert manager(tmp_path / "none.sqlite").retrieve("neuro", "neurons") == []
    assert "none.sqlite" in caplog.text
    with pytest.raises(ValueError, match="chunk id"):
        search_document("", corpus_documents()[0])


def test_query_builder_splits_like_fts5():
    assert fts5_query("  ,, ") is None
    node = fts5_query("snake_case Snake")
    assert sorted(t.text for t in node.operands) == ["case", "snake"]
    assert fts5_query("the cerebellum of it").text == "cerebellum"
    assert sorted(t.text for t in fts5_query("to be or not").operands) == ["be", "not", "or", "to"]


def test_query_words_are_unicode61_tokens():
    # FTS5 folds case one to one and drops diacritics: "Müller" is "muller", "Straße"
    # stays "straße" (str.casefold would give "strasse", a word the index never holds).
    node = fts5_query("Müller STRASSE Straße ﬁbre")
    assert [t.text for t in node.operands] == ["muller", "strasse", "straße", "fibre"]
    assert all(t.fields == ("body",) for t in node.operands)


def test_stopwords_do_not_change_which_chunk_wins(index_path):
    mgr = manager(index_path)
    plain = mgr.retrieve("neuro", "Golgi cells network")
    wordy = mgr.retrieve("neuro", "the Golgi cells in a network")
    assert [d.id for d, _ in wordy] == [d.id for d, _ in plain]
