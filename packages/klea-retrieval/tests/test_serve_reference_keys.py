"""klea-serve with reference-manager keys: citekey in passages and references, tag and
collection facets, a collection filter on search, through the service and its HTTP API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.serve import (
    KleaService,
    SearchFilters,
    ServeOptions,
    build_app,
    open_service,
)
from klea_utils.stores.serve.papers.paper import FACET_KEYS, display_metadata
from klea_utils.stores.serve.search.backend import store_filters
from retrieval_support import corpus_documents, write_corpus_pickle, write_fts5_index

LIBRARY: dict[str, dict[str, Any]] = {
    "sinha2021.pdf": {"citekey": "sinha2021", "tags": ["to-read"], "keywords": ["cerebellum"]},
    "magee2000.pdf": {"citekey": "magee2000", "tags": ["to-read"], "collections": ["Thesis"]},
    "jones2015.pdf": {"citekey": "jones2015", "collections": ["Thesis", "Imaging"]},
}


def test_display_metadata_carries_citekey_tags_and_collections() -> None:
    shown = display_metadata(
        {"citekey": " smith2020 ", "keywords": ["soil", "genes"], "tags": ["genes", "to-read"]}
        | {"collections": ["Thesis"], "file_name": "a.pdf"}
    )
    assert shown["citekey"] == "smith2020"
    assert shown["tags"] == ["soil", "genes", "to-read"]  # keywords, then the other tags
    assert shown["collections"] == ["Thesis"]
    bare = display_metadata({"file_name": "b.pdf", "citekey": "", "collections": "Thesis"})
    assert (bare["citekey"], bare["tags"], bare["collections"]) == (None, [], ["Thesis"])
    assert "collection" in FACET_KEYS


def test_a_collection_filter_needs_the_key_tagged() -> None:
    filters = SearchFilters(collections=("Thesis",))
    assert [f.key for f in store_filters(filters, frozenset({"collections"}))] == ["collections"]
    with pytest.raises(ValueError, match="no facet 'collections'"):
        store_filters(filters, frozenset({"year"}))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, fake_embeddings: Any) -> KleaService:
    folder: Path = tmp_path_factory.mktemp("serve-reference-keys")
    docs = corpus_documents()
    for doc in docs:
        doc.metadata.update(LIBRARY.get(doc.metadata["file_name"], {}))
    pickle_path = write_corpus_pickle(folder / "bm25.pkl", docs)
    fts5 = folder / "chunks.sqlite"
    write_fts5_index(fts5, docs)
    config = {"domains": {"neuro": {"bm25_stores": [{"name": "p", "path": str(pickle_path)}]}}}
    options = ServeOptions(
        config=RetrieverConfig.model_validate_json(json.dumps(config)),
        embedding_model=fake_embeddings,
        fts5_index=fts5,
        k=3,
    )
    return open_service(options)


async def test_retrieve_cites_the_citekey(service: KleaService) -> None:
    body = await service.retrieve("Golgi cells granule", k=2)
    first = body["passages"][0]
    assert (first["file"], first["citekey"]) == ("sinha2021.pdf", "sinha2021")
    assert body["references"].startswith("### Source document 1/1: [sinha2021.pdf] [@sinha2021]")
    missing = await service.retrieve("basal ganglia dopamine", k=1)
    assert missing["passages"][0]["citekey"] is None  # smith2019.pdf has none


async def test_facets_count_tags_and_collections(service: KleaService) -> None:
    facets = (await service.facets(["tag", "collection"]))["facets"]
    assert {f["value"]: f["count"] for f in facets["collection"]} == {"Thesis": 2, "Imaging": 1}
    assert {f["value"]: f["count"] for f in facets["tag"]} == {"to-read": 2, "cerebellum": 1}


async def test_search_filters_by_collection_over_http(service: KleaService) -> None:
    transport = httpx.ASGITransport(app=build_app(service))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        found = await client.get(
            "/api/search", params={"q": "neurons OR cells", "collection": "Thesis"}
        )
        assert found.status_code == 200, found.text
        files = {hit["file"] for hit in found.json()["hits"]}
        assert files == {"magee2000.pdf", "jones2015.pdf"}
        assert {hit["citekey"] for hit in found.json()["hits"]} == {"magee2000", "jones2015"}
        facets = await client.get("/api/facets", params={"key": "collection"})
        assert facets.status_code == 200, facets.text
        assert facets.json()["facets"]["collection"][0] == {"value": "Thesis", "count": 2}
        retrieved = await client.post("/api/retrieve", json={"query": "Golgi cells", "k": 1})
        assert retrieved.json()["passages"][0]["citekey"] == "sinha2021"
