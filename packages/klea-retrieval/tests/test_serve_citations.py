"""klea-serve answers a paper's citations (issue 38): HTTP route, MCP tool, reload.

Real stores (serve_support's library: BM25, FTS5, Chroma over FAKE hash vectors) and a
citation-links file in the build's format, named by the stores configuration.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from klea_utils.stores.config import RetrieverConfig, read_retriever_config
from klea_utils.stores.layout import CITATIONS_FILE_VERSION
from klea_utils.stores.serve import ServeOptions, open_service
from klea_utils.stores.serve.lifecycle.reload import store_files
from serve_support import build_stores, serving

REFERENCE = {
    "label": "3",
    "text": "J. C. Magee, Dendritic integration of excitatory synaptic input, 2000.",
    "title": "Dendritic integration of excitatory synaptic input",
    "authors": ["J. C. Magee"],
    "year": 2000,
    "venue": "Nat. Rev. Neurosci.",
    "doi": "10.1038/35044552",
    "arxiv": None,
    "target": "magee2000.pdf",
}
OUTSIDE = {**REFERENCE, "label": "4", "doi": None, "target": None, "title": "Elsewhere"}
SENTENCE = "Dendrites integrate their input nonlinearly [3]."


def _links(cited_by_contexts: list[str]) -> dict[str, Any]:
    return {
        "version": CITATIONS_FILE_VERSION,
        "papers": {
            "sinha2021.pdf": {
                "title": "Cerebellar models",
                "references": [REFERENCE, OUTSIDE],
                "contexts": [{"entry": 0, "callout": "[3]", "sentence": SENTENCE}],
                "cited_by": [],
            },
            "magee2000.pdf": {
                "title": "Dendritic integration",
                "references": [],
                "cited_by": [
                    {
                        "file_name": "sinha2021.pdf",
                        "title": "Cerebellar models",
                        "contexts": cited_by_contexts,
                    }
                ],
            },
        },
    }


@pytest.fixture(scope="module")
def library(tmp_path_factory, fake_embeddings) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("serve-citations")
    stores = build_stores(folder, fake_embeddings)
    links = folder / "papers" / ".klea-cache" / "serve_tests.citations.json"
    links.parent.mkdir(parents=True)
    links.write_text(json.dumps(_links([SENTENCE])), encoding="utf-8")
    config = json.loads(stores.config.read_text())
    config["domains"]["neuro"]["citations"] = "papers/.klea-cache/serve_tests.citations.json"
    stores.config.write_text(json.dumps(config), encoding="utf-8")
    return stores.config, links


def _options(config: RetrieverConfig, embeddings: Any) -> ServeOptions:
    return ServeOptions(config=config, embedding_model=embeddings, k=3)


@pytest.fixture(scope="module")
def server(library, fake_embeddings):
    options = _options(read_retriever_config(library[0]), fake_embeddings)
    with serving(options) as s:
        yield s


@pytest.fixture
def client(server):
    with httpx.Client(base_url=server.url, timeout=30) as http:
        yield http


def test_a_citing_paper_lists_its_references_with_their_targets(client):
    response = client.get("/api/papers/sinha2021.pdf/citations")
    assert response.status_code == 200
    body = response.json()
    assert list(body) == ["references", "cited_by"]
    assert [list(r) for r in body["references"]] == [
        ["label", "text", "title", "authors", "year", "doi", "arxiv", "target"]
    ] * 2
    assert [r["target"] for r in body["references"]] == ["magee2000.pdf", None]
    assert body["references"][0]["doi"] == "10.1038/35044552"
    assert body["cited_by"] == []


def test_a_cited_paper_lists_the_papers_citing_it_with_their_sentences(client):
    body = client.get("/api/papers/magee2000.pdf/citations").json()
    assert body == {
        "references": [],
        "cited_by": [
            {"file_name": "sinha2021.pdf", "title": "Cerebellar models", "contexts": [SENTENCE]}
        ],
    }


def test_a_paper_without_a_record_answers_empty_and_an_unknown_one_404(client):
    assert client.get("/api/papers/jones2015.pdf/citations").json() == {
        "references": [],
        "cited_by": [],
    }
    missing = client.get("/api/papers/nope.pdf/citations")
    assert missing.status_code == 404
    assert "nope.pdf" in missing.json()["detail"]


def test_the_mcp_tool_answers_the_same(server, client):
    from mcp import Client

    async def talk() -> tuple[Any, Any]:
        async with Client(f"{server.url}/mcp") as mcp:
            found = await mcp.call_tool("citations", {"file_name": "magee2000.pdf"})
            missing = await mcp.call_tool("citations", {"file_name": "nope.pdf"})
            return found, missing

    found, missing = asyncio.run(talk())
    assert found.structured_content == client.get("/api/papers/magee2000.pdf/citations").json()
    assert missing.is_error


def test_a_changed_file_is_answered_and_a_malformed_one_is_a_503_without_its_folder(
    library, client
):
    config, links = library
    original = links.read_text(encoding="utf-8")
    try:
        links.write_text(json.dumps(_links(["Another sentence [3].", SENTENCE])))
        stat = links.stat()
        os.utime(links, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        body = client.get("/api/papers/magee2000.pdf/citations").json()
        assert body["cited_by"][0]["contexts"] == ["Another sentence [3].", SENTENCE]
        links.write_text('{"version": 1, "papers": {"magee2000.pdf": {"references": 7}}}')
        broken = client.get("/api/papers/magee2000.pdf/citations")
        assert broken.status_code == 503
        detail = broken.json()["detail"]
        assert "serve_tests.citations.json" in detail
        assert "papers.magee2000.pdf.references" in detail
        assert str(links.parent) not in broken.text
        assert str(config.parent) not in broken.text
    finally:
        links.write_text(original, encoding="utf-8")
        stat = links.stat()
        os.utime(links, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2 * 10**9))
    assert client.get("/api/papers/magee2000.pdf/citations").status_code == 200


def test_the_reload_watcher_watches_the_links_file(library, fake_embeddings):
    config, links = library
    options = _options(read_retriever_config(config), fake_embeddings)
    assert links in store_files(options, config)


async def test_stores_without_a_links_file_answer_empty(library, fake_embeddings):
    config = read_retriever_config(library[0])
    for domain in config.domains.values():
        domain.citations = None
    service = await asyncio.to_thread(
        open_service, _options(config, fake_embeddings), lambda _: None
    )
    try:
        assert await service.citations("magee2000.pdf") == {"references": [], "cited_by": []}
    finally:
        await service.aclose()


async def test_the_result_graph_draws_citation_edges_beside_similarity_ones(
    library, fake_embeddings
):
    config_path, _ = library
    options = ServeOptions(
        config=read_retriever_config(config_path),
        embedding_model=fake_embeddings,
        fts5_index=config_path.parent / "chunks.sqlite",
        vectors=config_path.parent / "vectors.sqlite",
        k=3,
    )
    service = await asyncio.to_thread(open_service, options, lambda _: None)
    ids = ["sinha2021.pdf:0", "sinha2021.pdf:1", "magee2000.pdf:0", "jones2015.pdf:0"]
    try:
        both = await service.graph(ids)
        citing = await service.graph(ids, ["citation"])
        similar = await service.graph(ids, ["similarity"])
    finally:
        await service.aclose()
    assert both["citations"] is True
    assert both["available"] is True
    assert [n["file_name"] for n in both["nodes"]] == [
        "sinha2021.pdf",
        "sinha2021.pdf",
        "magee2000.pdf",
        "jones2015.pdf",
    ]
    # one edge from the citing paper's first result to the cited paper's first result
    assert citing["edges"] == [
        {
            "source": "sinha2021.pdf:0",
            "target": "magee2000.pdf:0",
            "weight": 1.0,
            "kind": "citation",
        }
    ]
    assert similar["edges"]
    assert {e["kind"] for e in similar["edges"]} == {"similarity"}
    assert both["edges"] == similar["edges"] + citing["edges"]
    assert citing["nodes"] == both["nodes"] == similar["nodes"]
