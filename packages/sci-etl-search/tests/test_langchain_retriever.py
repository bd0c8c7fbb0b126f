"""The LangChain retriever over AsyncHybridSearcher, on both text stores, without a model.

The semantic leg runs on a keyword-concept embedder: each text becomes a vector of how
often it names each topic's words, so a paraphrase with no word in common with a record's
text still lands on it, as a real model would.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from langchain_core.documents import Document
from pydantic import ValidationError
from sci_etl_core.embeddings.async_base import AsyncEmbedder
from sci_etl_core.embeddings.finder_async import AsyncSimilarArticleFinder
from sci_etl_core.embeddings.ingest_async import AsyncChunkIngestor
from sci_etl_core.embeddings.store_memory import InMemoryEmbeddingStore
from sci_etl_core.exceptions import SearchQueryError
from sci_etl_core.langchain_retriever import HybridSearchRetriever, hit_document
from sci_etl_core.search.filters import MetadataFilter
from sci_etl_core.search.fusion import FusedHit
from sci_etl_core.search.hybrid_async import AsyncHybridSearcher
from sci_etl_core.search.store_base import AsyncTextSearchStore, SearchDocument
from sci_etl_core.search.store_memory import InMemoryTextSearchStore
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

TOPICS = (
    {"galaxies", "galaxy", "halos", "dark", "quasars", "quasar", "redshift", "stars"},
    {"proteins", "protein", "fold", "folding", "chaperones", "cells", "polypeptides"},
    {"transformer", "transformers", "language", "words", "text", "attention"},
)


class TopicEmbedder(AsyncEmbedder):
    """Counts each topic's words; a text naming no topic gets a small constant vector."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = []
        for text in texts:
            words = [w.strip(".,?").lower() for w in text.split()]
            vectors.append([0.01 + sum(w in topic for w in words) for topic in TOPICS])
        return vectors


RECORDS = (
    SearchDocument(
        "astro1",
        title="Cored dark matter halos in dwarf galaxies",
        abstract="Rotation curves of dwarf galaxies favour cored density profiles.",
        metadata={"field": "astro", "year": 2019},
    ),
    SearchDocument(
        "bio1",
        title="Chaperones and protein folding",
        abstract="Molecular chaperones help polypeptides reach their native shape.",
        metadata={"field": "bio", "year": 2020},
    ),
    SearchDocument(
        "cs1",
        title="Attention is what transformers use",
        abstract="Transformer language models learn representations of words.",
        metadata={"field": "cs", "year": 2021},
    ),
)


@pytest_asyncio.fixture(params=["memory", "sqlite"])
async def searcher(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    text_store: AsyncTextSearchStore
    if request.param == "memory":
        text_store = InMemoryTextSearchStore(facet_keys=("field", "year"))
    else:
        text_store = AsyncSqliteFts5Store(tmp_path / "text.sqlite", facet_keys=("field", "year"))
    memory = InMemoryEmbeddingStore()
    await text_store.index(list(RECORDS))
    ingestor = AsyncChunkIngestor(TopicEmbedder(), memory)
    for record in RECORDS:
        await ingestor.ingest(record, f"{record.title}. {record.abstract}")
    yield AsyncHybridSearcher(text_store, AsyncSimilarArticleFinder(TopicEmbedder(), memory))
    await text_store.aclose()


def ids(documents: list[Document]) -> list[str]:
    return [document.metadata["record_id"] for document in documents]


async def test_hybrid_documents_carry_passage_and_metadata(searcher: AsyncHybridSearcher) -> None:
    retriever = HybridSearchRetriever(searcher=searcher, k=2)
    documents = await retriever.ainvoke("how do cells help proteins fold")
    assert ids(documents)[0] == "bio1"
    assert len(documents) == 2
    top = documents[0]
    assert "chaperones" in top.page_content.lower()
    assert top.metadata["title"] == "Chaperones and protein folding"
    assert (top.metadata["field"], top.metadata["year"]) == ("bio", 2020)
    assert top.metadata["lexical_rank"] is None
    assert top.metadata["semantic_rank"] == 1
    assert top.metadata["score"] > documents[1].metadata["score"]
    marked = [top.page_content[a:b].lower() for a, b in top.metadata["highlights"]]
    assert marked == ["help"]


async def test_lexical_mode_highlights_the_query_words(searcher: AsyncHybridSearcher) -> None:
    retriever = HybridSearchRetriever(searcher=searcher, mode="lexical")
    (document,) = await retriever.ainvoke("dwarf galaxies")
    assert document.metadata["record_id"] == "astro1"
    assert document.metadata["lexical_rank"] == 1
    marked = {document.page_content[a:b].lower() for a, b in document.metadata["highlights"]}
    assert marked == {"dwarf", "galaxies"}


async def test_semantic_mode_applies_filters(searcher: AsyncHybridSearcher) -> None:
    query = "how do cells help proteins fold"
    unfiltered = HybridSearchRetriever(searcher=searcher, mode="semantic", k=3)
    assert ids(await unfiltered.ainvoke(query))[0] == "bio1"
    filtered = HybridSearchRetriever(
        searcher=searcher, mode="semantic", k=3, filters=[MetadataFilter("field", {"astro"})]
    )
    assert ids(await filtered.ainvoke(query)) == ["astro1"]


async def test_invoke_runs_on_its_own_loop_inside_a_running_one(
    searcher: AsyncHybridSearcher,
) -> None:
    retriever = HybridSearchRetriever(searcher=searcher, k=3)
    query = "attention in language models"
    expected = await retriever.ainvoke(query)
    assert ids(expected)[0] == "cs1"
    assert retriever.invoke(query) == expected


def test_invoke_without_a_running_loop(tmp_path: Path) -> None:
    async def build() -> AsyncSqliteFts5Store:
        store = AsyncSqliteFts5Store(tmp_path / "text.sqlite", facet_keys=("field",))
        await store.index(list(RECORDS))
        return store

    store = asyncio.run(build())
    try:
        retriever = HybridSearchRetriever(searcher=AsyncHybridSearcher(store), k=5)
        assert ids(retriever.invoke("galaxies OR transformers")) == ["astro1", "cs1"]
    finally:
        asyncio.run(store.aclose())


async def test_search_errors_and_bad_settings(searcher: AsyncHybridSearcher) -> None:
    lexical_only = AsyncHybridSearcher(searcher.text_store)
    with pytest.raises(SearchQueryError, match="vector memory"):
        await HybridSearchRetriever(searcher=lexical_only, mode="semantic").ainvoke("proteins")
    with pytest.raises(ValueError, match="colour"):
        await HybridSearchRetriever(
            searcher=searcher, filters=[MetadataFilter("colour", {"red"})]
        ).ainvoke("proteins")
    with pytest.raises(ValidationError, match="mode"):
        HybridSearchRetriever(searcher=searcher, mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="k"):
        HybridSearchRetriever(searcher=searcher, k=0)


def test_search_keys_win_over_record_metadata() -> None:
    hit = FusedHit(
        "r1", 0.5, 1, None, snippet="", metadata={"score": "x", "doi": "10.1/a"}, title="T"
    )
    document = hit_document(hit)
    assert document.page_content == "T"
    assert document.metadata["score"] == 0.5
    assert document.metadata["doi"] == "10.1/a"
    assert document.metadata["highlights"] == []


def test_missing_extra_names_it() -> None:
    probe = (
        "import sys; sys.modules['langchain_core'] = None\n"
        "try:\n    import sci_etl_core.langchain_retriever\n"
        "except ImportError as error:\n    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert "pip install 'sci-etl-search[langchain]'" in result.stdout
