"""klea-retrieve's cold start: a keyword-only query imports no retriever or vector machinery.

A cold ``klea-retrieve`` is mostly imports. LangChain's ``BaseRetriever`` brings in the
tracing stack (langsmith), ``Embeddings`` the runnables and callbacks, and the vector
backends and models far more; a query over BM25 or FTS5 stores needs none of them
(issue 39). Each query runs in a fresh interpreter, which then reports what it loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from klea_utils.stores.config import BM25StoreInfo, PerDomainConfig, RetrieverConfig
from klea_utils.stores.langchain_bm25 import BM25Retriever, stemmed_preprocessing_func
from klea_utils.stores.pipeline import KleaPipeline
from retrieval_support import corpus_documents, write_corpus_pickle, write_fts5_index

NEVER_FOR_KEYWORDS = (
    "langsmith",
    "langchain_core.retrievers",
    "langchain_core.embeddings",
    "langchain_core.callbacks",
    "langchain_core.runnables",
    "langchain_chroma",
    "chromadb",
    "qdrant_client",
    "sqlalchemy",
    "onnxruntime",
    "tokenizers",
    "torch",
    "transformers",
    "sentence_transformers",
)
"""Modules a query over keyword stores alone must not import."""

_QUERY = """
import json, sys
from klea_utils.stores.retrieve_cli import main
status = main(sys.argv[2:])
loaded = sorted(m for m in json.loads(sys.argv[1]) if m in sys.modules)
print(json.dumps({"status": status, "loaded": loaded}))
"""


def _cold_query(args: list[str], watched: tuple[str, ...]) -> tuple[str, dict[str, object]]:
    """Run ``klea-retrieve ARGS`` in a fresh interpreter: its output and what it imported."""
    out = subprocess.run(
        [sys.executable, "-c", _QUERY, json.dumps(watched), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    text, _, report = out.rstrip("\n").rpartition("\n")
    return text, json.loads(report)


@pytest.fixture
def keyword_stores(tmp_path):
    docs = corpus_documents()
    pickled = write_corpus_pickle(tmp_path / "bm25.pkl", docs)
    index = tmp_path / "bm25.sqlite"
    write_fts5_index(index, docs)
    return pickled, index


@pytest.mark.parametrize("stores", ["pickled corpus and fts5", "fts5 only"])
def test_a_keyword_query_imports_no_retriever_embedding_or_vector_library(keyword_stores, stores):
    pickled, index = keyword_stores
    args = ["--bm25-store", f"fts5:{index}", "-k", "2", "Golgi cells"]
    watched = NEVER_FOR_KEYWORDS
    if stores == "fts5 only":
        watched += ("rank_bm25", "numpy")  # rank_bm25 (and its numpy) serve pickled corpora
    else:
        args = ["--bm25-store", str(pickled), *args]
    text, report = _cold_query(args, watched)
    assert "Granule cells and Golgi cells" in text  # the query ran and found its chunk
    assert report == {"status": 0, "loaded": []}


def test_the_check_sees_a_heavy_import(keyword_stores):
    """The subprocess report does see a module the query imported (no vacuous pass)."""
    _, index = keyword_stores
    args = ["--bm25-store", f"fts5:{index}", "Golgi cells"]
    _, report = _cold_query(args, ("klea_utils.stores.retrieval._fts5", "langsmith"))
    assert report["loaded"] == ["klea_utils.stores.retrieval._fts5"]


def test_a_pickled_corpus_ranks_as_the_public_bm25_retriever(keyword_stores):
    """The pipeline's light index gives BM25Retriever's documents and scores."""
    pickled, _ = keyword_stores
    store = BM25StoreInfo(name="papers", path=str(pickled))
    config = RetrieverConfig(domains={"neuro": PerDomainConfig(bm25_stores=[store])})
    pipeline = KleaPipeline(config, focus=None, context="off")
    try:
        pipeline.load()
        index = store.loaded_object
        reference = BM25Retriever.from_documents(
            corpus_documents(), preprocess_func=stemmed_preprocessing_func
        )
        for query in ("Golgi cells", "neurons of the cerebellum", "dendrites", "nothing here"):
            expected = [(d.id, s) for d, s in reference.scored_documents(query, k=5)]
            assert [(d.id, s) for d, s in index.scored_documents(query, k=5)] == expected
    finally:
        pipeline.close()
