"""Context around a hit: widening on its own, then through the pipeline on real stores.

A paper's chunks record ``chunk_index`` and ``section_index`` as klea-ingest writes them;
an answer straddles chunks 1 and 2 of the method section. The pipeline over a BM25
corpus, Chroma alone and Qdrant local mode alone must return the hit with its
neighbours, the page range of the passage, and leave stores without order metadata as
they were, with a note.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from klea_utils.stores._retrieval.context import (
    NeighbourSource,
    check_context,
    estimate_tokens,
    widen,
    widen_hits,
)
from klea_utils.stores._retrieval.qdrant import close_local_qdrant_client
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.pipeline import KleaPipeline
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.documents import Document
from retrieval_backends import add_documents
from retrieval_support import write_corpus_pickle, write_fts5_index

LOG = logging.getLogger("test_context")
HASH = "a" * 64
METHOD = ["Water Residence Time", "2 Method"]

TEXTS = [
    (["Water Residence Time", "1 Introduction"], "Aquifers are filled by rain.", 1),
    (METHOD, "The recorded aquifer levels are shifted by the base level.", 2),
    (METHOD, "Since the sensor sits above the pool, the recorded levels are", 2),
    (METHOD, "negative values in dry months, which the deconvolution handles.", 3),
    (METHOD, "The kernel is estimated by a sparse solver over ten years.", 3),
    (["Water Residence Time", "3 Results"], "Residence times range from two to nine days.", 4),
]


def _chunks(with_order: bool = True) -> list[Document]:
    docs = []
    sections = {tuple(h): i for i, h in enumerate(dict.fromkeys(tuple(h) for h, _, _ in TEXTS))}
    for index, (headings, text, page) in enumerate(TEXTS):
        metadata = {
            "file_name": "wrt.pdf",
            "file_hash": HASH,
            "headings": headings,
            "page_start": page,
            "page_end": page,
        }
        if with_order:
            metadata |= {"chunk_index": index, "section_index": sections[tuple(headings)]}
        content = "\n".join([*headings, text])
        docs.append(Document(id=f"wrt.pdf:{index}", page_content=content, metadata=metadata))
    return docs


def test_neighbours_join_the_chunk_after_and_before_within_the_budget() -> None:
    docs = _chunks()
    section = [d for d in docs if d.metadata["section_index"] == 1]
    wide = widen(docs[2], section, "neighbours", 200)
    assert wide.page_content == (
        "Water Residence Time\n2 Method\n"
        "The recorded aquifer levels are shifted by the base level.\n"
        "Since the sensor sits above the pool, the recorded levels are\n"
        "negative values in dry months, which the deconvolution handles."
    )
    assert (wide.metadata["page_start"], wide.metadata["page_end"]) == (2, 3)
    assert wide.metadata["_context_chunks"] == [1, 2, 3]
    assert docs[2].metadata["page_end"] == 2  # the input is not changed
    tight = widen(docs[2], section, "neighbours", estimate_tokens(docs[2].page_content) + 14)
    assert tight.metadata["_context_chunks"] == [2, 3]  # the one after first
    whole = widen(docs[1], section, "section", 500)
    assert whole.metadata["_context_chunks"] == [1, 2, 3, 4]
    assert "Results" not in whole.page_content
    assert widen(docs[1], section, "neighbours", 500).metadata["_context_chunks"] == [1, 2]
    assert widen(docs[2], section, "off", 500) is docs[2]


def test_text_a_chunk_repeats_from_the_one_before_is_read_once() -> None:
    docs = _chunks()
    overlap = "Since the sensor sits above the pool, the recorded levels are "
    repeated = docs[3].model_copy(
        update={"page_content": "\n".join([*METHOD, overlap + "negative values."])}
    )
    wide = widen(docs[2], [docs[2], repeated], "neighbours", 500)
    assert wide.page_content.count("Since the sensor") == 1
    assert wide.page_content.endswith("the recorded levels are negative values.")


def test_a_hit_a_better_passage_holds_is_dropped_and_old_stores_get_a_note() -> None:
    docs = _chunks()
    from klea_utils.stores._retrieval.context import NeighbourSource

    source = NeighbourSource(
        "memory",
        lambda h, s: [
            d for d in docs if (d.metadata["file_hash"], d.metadata["section_index"]) == (h, s)
        ],
    )
    hits = [(docs[2], 0.9), (docs[3], 0.8), (docs[5], 0.7)]
    out, notes = widen_hits(hits, [source], "neighbours", 500)
    assert [d.metadata["chunk_index"] for d, _ in out] == [2, 5]
    assert notes == []
    old = [(d, 0.5) for d in _chunks(with_order=False)]
    same, notes = widen_hits(old, [source], "neighbours", 500, limit=2)
    assert [d for d, _ in same] == [d for d, _ in old[:2]]
    assert "record no order" in notes[0]
    none, notes = widen_hits(hits, [], "section", 500)
    assert [d for d, _ in none] == [d for d, _ in hits]
    assert "no store of this domain" in notes[0]


def test_bad_context_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="context must be one of off, neighbours, section"):
        check_context("paragraph", 100)
    with pytest.raises(ValueError, match="context_tokens must be an integer >= 1"):
        check_context("section", 0)


QUESTION = "why are the recorded levels negative values in dry months"


def _pipeline(domain: dict[str, Any], fake_embeddings: Any) -> KleaPipeline:
    config = RetrieverConfig.model_validate({"domains": {"papers": domain}})
    return KleaPipeline(config, embedding_model=fake_embeddings, k=2, recency=False)


@pytest.mark.parametrize("backend", ["bm25", "fts5", "chroma", "qdrant", "pgvector"])
def test_the_pipeline_widens_hits_from_each_store_kind(
    backend: str, tmp_path: Path, fake_embeddings, request: pytest.FixtureRequest
) -> None:
    docs = _chunks()
    if backend == "fts5":
        write_fts5_index(tmp_path / "c.sqlite", docs)
        domain = {"bm25_stores": [{"name": "f", "path": f"fts5:{tmp_path / 'c.sqlite'}"}]}
    elif backend == "pgvector":
        url = request.getfixturevalue("pg_url")
        uri = "pgvector:" + url.replace("postgresql+psycopg://", "postgresql://", 1)
        store = instantiate_vector_store(uri, "context_papers", fake_embeddings, LOG)
        add_documents(store, docs, [d.id or "" for d in docs])
        store._engine.dispose()
        domain = {"vector_stores": [{"name": "context_papers", "path": uri}]}
    elif backend == "bm25":
        domain = {
            "bm25_stores": [
                {"name": "b", "path": str(write_corpus_pickle(tmp_path / "c.pkl", docs))}
            ]
        }
    else:
        uri = f"{backend}:{tmp_path / backend}"
        store = instantiate_vector_store(uri, "papers", fake_embeddings, LOG, create=True)
        add_documents(store, docs, [d.id or "" for d in docs])
        domain = {"vector_stores": [{"name": "papers", "path": uri}]}
    pipe = _pipeline(domain, fake_embeddings)
    try:
        plain = pipe.retrieve("papers", QUESTION, limit=2)
        wide = pipe.retrieve("papers", QUESTION, limit=2, context="neighbours", context_tokens=400)
    finally:
        pipe.close()
        if backend == "qdrant":
            close_local_qdrant_client(tmp_path / backend)
        if backend == "pgvector":
            pipe.config.domains["papers"].vector_stores[0].loaded_object._engine.dispose()
    assert wide.notes == ()
    assert 1 <= len(wide.hits) <= len(plain.hits)  # a hit another passage holds is dropped
    for doc, _ in wide.hits:
        if doc.metadata["section_index"] == 1:  # the method: it has neighbours
            assert doc.metadata["chunk_index"] in doc.metadata["_context_chunks"]
            assert len(doc.metadata["_context_chunks"]) > 1
    texts = [d.page_content for d, _ in wide.hits]
    assert any("the recorded levels are\nnegative values" in t for t in texts)


def test_stores_built_before_chunks_recorded_their_order_are_not_widened(
    tmp_path: Path, fake_embeddings, caplog: pytest.LogCaptureFixture
) -> None:
    docs = _chunks(with_order=False)
    path = write_corpus_pickle(tmp_path / "old.pkl", docs)
    pipe = _pipeline({"bm25_stores": [{"name": "old", "path": str(path)}]}, fake_embeddings)
    try:
        plain = pipe.retrieve("papers", QUESTION, limit=3)
        wide = pipe.retrieve("papers", QUESTION, limit=3, context="section")
    finally:
        pipe.close()
    assert [d.page_content for d, _ in wide.hits] == [d.page_content for d, _ in plain.hits]
    assert any("record no order" in note for note in wide.notes)
    # by default (nothing asked) the same is a warning once, not a note in every result
    caplog.clear()
    config = RetrieverConfig.model_validate(
        {"domains": {"papers": {"bm25_stores": [{"name": "old", "path": str(path)}]}}}
    )
    default = KleaPipeline(config, embedding_model=fake_embeddings, k=2, recency=False)
    with caplog.at_level(logging.WARNING, logger="test_context"):
        default.logger = LOG
        results = [default.retrieve("papers", QUESTION) for _ in range(3)]
    default.close()
    assert all(r.notes == () for r in results)
    assert caplog.text.count("record no order") == 1


def test_a_failing_lookup_by_default_is_a_warning_and_a_note_each_time(
    tmp_path: Path, fake_embeddings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(file_hash: str, section: int) -> list[Document]:
        raise OSError("the store went away")

    path = write_corpus_pickle(tmp_path / "c.pkl", _chunks())
    config = RetrieverConfig.model_validate(
        {"domains": {"papers": {"bm25_stores": [{"name": "c", "path": str(path)}]}}}
    )
    default = KleaPipeline(config, embedding_model=fake_embeddings, k=2, recency=False)
    default.logger = LOG
    default.load()
    default._neighbour_sources = lambda domain: [NeighbourSource("failing", lookup=broken)]  # type: ignore[method-assign]
    try:
        with caplog.at_level(logging.WARNING, logger="test_context"):
            results = [default.retrieve("papers", QUESTION) for _ in range(2)]
    finally:
        default.close()
    for result in results:
        assert any("failing: OSError: the store went away" in note for note in result.notes)
    assert caplog.text.count("the store went away") >= 2


def test_klea_retrieve_prints_the_widened_passage_with_its_page_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from klea_utils.stores.retrieve_cli import main

    monkeypatch.delenv("KLEA_STORES_CONFIG_FILE", raising=False)
    path = write_corpus_pickle(tmp_path / "c.pkl", _chunks())
    argv = ["--bm25-store", str(path), "-k", "1", "-q", QUESTION]
    assert main(["--context", "off", *argv]) == 0
    plain = capsys.readouterr().out
    assert main(argv) == 0  # neighbours by default
    wide = capsys.readouterr().out
    assert "[p. 3]" in plain
    assert "[pp. 2-3]" in wide
    assert "the recorded levels are\nnegative values in dry months" in wide
    assert main(["--context", "page", *argv]) == 2
    assert "must be off, neighbours or section" in capsys.readouterr().err


def test_the_langchain_bm25_retriever_widens_hits_when_asked() -> None:
    from klea_utils.stores.langchain_bm25 import BM25Retriever

    docs = _chunks()
    plain = BM25Retriever.from_documents(docs, k=1)
    hit = plain.invoke("why are the recorded levels below zero in the sensor pool")
    assert [d.id for d in hit] == ["wrt.pdf:2"]
    assert "negative values" not in hit[0].page_content  # off by default: the chunk alone

    wide = BM25Retriever.from_documents(docs, k=1, context="neighbours", context_tokens=60)
    (passage,) = wide.invoke("why are the recorded levels below zero in the sensor pool")
    assert "sensor sits above the pool" in passage.page_content
    assert "negative values in dry months" in passage.page_content
    assert "Aquifers are filled" not in passage.page_content  # another section
    assert (passage.metadata["page_start"], passage.metadata["page_end"]) == (2, 3)

    old = BM25Retriever.from_documents(_chunks(with_order=False), k=1, context="section")
    (same,) = old.invoke("why are the recorded levels below zero in the sensor pool")
    assert same.page_content == hit[0].page_content

    with pytest.raises(ValueError, match="context"):
        BM25Retriever.from_documents(docs, context="paragraph")
