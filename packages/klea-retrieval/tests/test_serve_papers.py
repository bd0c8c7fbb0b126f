"""klea-serve's papers read from the stores: every paper source answers alike, and a
configuration with vector stores only serves ``get_document`` and ``facets``."""

from __future__ import annotations

import json
import logging

import pytest
from klea_utils.stores._retrieval.qdrant import close_local_qdrant_client
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.serve import DocumentNotFoundError, ServeOptions, open_service
from klea_utils.stores.serve.papers.catalogue import PaperCatalogue
from klea_utils.stores.serve.papers.sources import Fts5PaperSource, MemoryPaperSource
from klea_utils.stores.serve.papers.vector_sources import vector_paper_source
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.documents import Document
from retrieval_support import corpus_documents, write_fts5_index
from serve_support import counting_source

LOG = logging.getLogger("serve-papers-tests")
KEYS = ["year", "author", "journal", "tag"]
ALL_FACETS = {
    "papers": 4,
    "facets": {
        "year": [("2000", 1), ("2015", 1), ("2019", 1), ("2021", 1)],
        "author": [
            ("Ankur Sinha", 1),
            ("Ann Smith", 1),
            ("Jeffrey Magee", 1),
            ("Padraig Gleeson", 1),
            ("Sarah Jones", 1),
        ],
        "journal": [("Neuron", 1)],
        "tag": [],
    },
}
"""What every source's catalogue counts over the whole corpus (each value held by one paper)."""


def _vector_store(path: str, embeddings):
    docs = corpus_documents()
    store = instantiate_vector_store(path, "papers", embeddings, LOG, create=True)
    store.add_documents(docs, ids=[d.id or "" for d in docs])  # readable ids, as ingestion
    return store


@pytest.fixture(scope="module", params=["memory", "fts5", "chroma", "qdrant", "pgvector"])
def source(request, tmp_path_factory, fake_embeddings):
    folder = tmp_path_factory.mktemp(f"papers-{request.param}")
    if request.param == "memory":
        yield MemoryPaperSource(corpus_documents())
    elif request.param == "fts5":
        write_fts5_index(folder / "chunks.sqlite", corpus_documents())
        yield Fts5PaperSource(folder / "chunks.sqlite")
    elif request.param == "chroma":
        path = f"chroma:{folder}"
        yield vector_paper_source(path, _vector_store(path, fake_embeddings))
    elif request.param == "qdrant":
        path = f"qdrant:{folder}"
        yield vector_paper_source(path, _vector_store(path, fake_embeddings))
        close_local_qdrant_client(folder)
    else:
        url = request.getfixturevalue("pg_url")
        path = "pgvector:" + url.replace("postgresql+psycopg://", "postgresql://", 1)
        store = _vector_store(path, fake_embeddings)
        yield vector_paper_source(path, store)
        store.delete_collection()
        store._engine.dispose()


def test_every_source_counts_the_same_papers_and_passages(source):
    assert source.passage_counts() == {
        "jones2015.pdf": 2,
        "magee2000.pdf": 1,
        "sinha2021.pdf": 2,
        "smith2019.pdf": 1,
    }
    metadata = source.paper_metadata(["sinha2021.pdf", "nope.pdf"])
    assert list(metadata) == ["sinha2021.pdf"]
    assert metadata["sinha2021.pdf"]["title"] == "Cerebellar models"
    assert metadata["sinha2021.pdf"]["authors"] == ["Ankur Sinha", "Padraig Gleeson"]
    assert source.passages("nope.pdf") == []


def test_every_source_gives_a_paper_in_order_and_the_same_facets(source):
    catalogue = PaperCatalogue([source])
    paper = catalogue.paper("sinha2021.pdf")
    assert paper is not None
    assert [d.id for d in paper.passages] == ["sinha2021.pdf:0", "sinha2021.pdf:1"]
    assert paper.summary()["authors"] == ["Ankur Sinha", "Padraig Gleeson"]
    assert catalogue.paper("nope.pdf") is None
    assert catalogue.count_facets(KEYS) == (ALL_FACETS["papers"], ALL_FACETS["facets"])
    total, narrowed = catalogue.count_facets(["year"], ["jones2015.pdf", "sinha2021.pdf", "x"])
    assert (total, narrowed) == (2, {"year": [("2015", 1), ("2021", 1)]})
    assert catalogue.count_facets(["year"], []) == (0, {"year": []})
    with pytest.raises(ValueError, match=r"unknown facet key.*'colour'"):
        catalogue.count_facets(["colour"])


def _with_year(docs: list[Document], file_name: str, year: int) -> list[Document]:
    return [
        Document(id=d.id, page_content=d.page_content, metadata={**d.metadata, "year": year})
        if d.metadata["file_name"] == file_name
        else d
        for d in docs
    ]


def test_facet_counts_are_kept_until_the_fts5_index_changes(tmp_path):
    index = tmp_path / "chunks.sqlite"
    docs = corpus_documents()
    write_fts5_index(index, docs[:2])  # sinha2021.pdf only
    source = counting_source(index)
    catalogue = PaperCatalogue([source])
    one_paper = (1, {"year": [("2021", 1)], "author": [("Ankur Sinha", 1), ("Padraig Gleeson", 1)]})
    assert catalogue.count_facets(["year", "author"]) == one_paper
    assert catalogue.count_facets(["year", "author"]) == one_paper
    assert source.metadata_reads == 1  # the second count was answered from the rows kept
    assert sum(catalogue.passage_counts().values()) == 2

    write_fts5_index(index, _with_year(docs, "sinha2021.pdf", 2022))  # more papers, a new year
    assert sum(catalogue.passage_counts().values()) == len(docs)
    years = [("2000", 1), ("2015", 1), ("2019", 1), ("2022", 1)]
    assert catalogue.count_facets(["year"]) == (4, {"year": years})  # not the 2021 kept
    assert source.metadata_reads == 2


@pytest.mark.parametrize("scheme", ["chroma", "qdrant"])
async def test_vector_stores_only_serve_documents_and_facets(scheme, tmp_path, fake_embeddings):
    folder = tmp_path / scheme
    path = f"{scheme}:{folder}"
    store = _vector_store(path, fake_embeddings)
    if scheme == "qdrant":
        close_local_qdrant_client(folder)  # the service opens its own client
    del store
    config = {"domains": {"neuro": {"vector_stores": [{"name": "papers", "path": path}]}}}
    progress: list[str] = []
    service = open_service(
        ServeOptions(RetrieverConfig.model_validate_json(json.dumps(config)), fake_embeddings),
        progress=progress.append,
    )
    try:
        assert "library: 4 papers, 6 passages" in progress
        paper = await service.get_document("jones2015.pdf")
        assert [p["id"] for p in paper["passages"]] == ["jones2015.pdf:0", "jones2015.pdf:1"]
        with pytest.raises(DocumentNotFoundError, match=r"no paper 'nope\.pdf'"):
            await service.get_document("nope.pdf")
        facets = await service.facets(["year"])
        assert facets["papers"] == 4
        assert {f["value"] for f in facets["facets"]["year"]} == {"2000", "2015", "2019", "2021"}
        health = await service.health()
        assert (health["papers"], health["passages"]) == (4, 6)
    finally:
        await service.aclose()
        if scheme == "qdrant":
            close_local_qdrant_client(folder)
