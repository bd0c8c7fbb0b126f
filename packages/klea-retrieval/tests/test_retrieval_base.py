"""BaseKleaRetriever behaviour through the real BM25 manager: k bookkeeping, lazy loading."""

from __future__ import annotations

import copy
import logging
import threading

import pytest
from klea_utils.stores.config import BM25StoreInfo, PerDomainConfig, RetrieverConfig
from klea_utils.stores.retrieval.bm25 import BM25RetrieverManager
from retrieval_support import corpus_documents, write_corpus_pickle

LOG = logging.getLogger("test-base")


@pytest.fixture
def config(tmp_path) -> RetrieverConfig:
    path = str(write_corpus_pickle(tmp_path / "c.pkl", corpus_documents()))
    return RetrieverConfig(
        domains={
            "neuro": PerDomainConfig(
                bm25_stores=[
                    BM25StoreInfo(name="a", path=path),
                    BM25StoreInfo(name="b", path=path, default_k=1, k_max=2, k_inc=5),
                ]
            ),
            "other": PerDomainConfig(bm25_stores=[BM25StoreInfo(name="c", path=path)]),
        }
    )


def test_constructor_validates_k(config):
    with pytest.raises(ValueError, match="default_k"):
        BM25RetrieverManager(config, LOG, default_k=0)
    with pytest.raises(ValueError, match="must not exceed k_max"):
        BM25RetrieverManager(config, LOG, default_k=11)


def test_domains_and_unknown_domain(config):
    mgr = BM25RetrieverManager(config, LOG)
    assert mgr.domains == ["neuro", "other"]
    with pytest.raises(ValueError, match=r"unknown domain 'nope'.*neuro, other"):
        mgr.retrieve("nope", "q")


def test_loading_is_lazy_per_domain(config):
    mgr = BM25RetrieverManager(config, LOG)
    mgr.load("neuro")
    assert all(s.loaded_object is not None for s in config.domains["neuro"].bm25_stores)
    assert config.domains["other"].bm25_stores[0].loaded_object is None
    mgr.load_all_stores()
    assert config.domains["other"].bm25_stores[0].loaded_object is not None


def test_inc_k_caps_per_store_and_never_mutates(config):
    mgr = BM25RetrieverManager(config, LOG, default_k=2, k_max=3, k_inc=1)
    assert mgr.inc_k({}) == ({}, False)  # nothing loaded yet
    mgr.load("neuro")
    k_values = {"neuro": {"a": 2}}
    frozen = copy.deepcopy(k_values)
    assert mgr.can_inc_k(k_values) is True
    new, grew = mgr.inc_k(k_values)
    assert k_values == frozen
    assert (new, grew) == ({"neuro": {"a": 3, "b": 2}}, True)
    new2, grew2 = mgr.inc_k(new)
    assert (new2, grew2) == ({"neuro": {"a": 3, "b": 2}}, False)
    assert mgr.can_inc_k(new2) is False


def test_k_values_select_per_store_depth(config):
    mgr = BM25RetrieverManager(config, LOG, default_k=3)
    hits = mgr.retrieve("neuro", "neurons cells", k_values={"neuro": {"a": 1}})
    assert len(hits) == 2  # a: 1 (from k_values), b: 1 (its configured default_k)


def test_concurrent_first_loads_instantiate_each_store_once(config):
    calls: list[str] = []

    class Counting(BM25RetrieverManager):
        def _instantiate_store(self, store):
            calls.append(store.name)
            return super()._instantiate_store(store)

    mgr = Counting(config, LOG)
    barrier = threading.Barrier(6)

    def worker():
        barrier.wait()
        mgr.retrieve("neuro", "neurons")

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(calls) == ["a", "b"]
