"""Hybrid search and the graph over the stores ``build`` makes, with no second embedding.

Three sample papers go through ``klea-stores-create build`` (Chroma, ``fts5:`` index, stores
configuration); ``klea-serve --stores-config`` on that configuration alone answers hybrid
searches and draws a graph through the HTTP API and MCP, reading the Chroma collection
through ``KleaVectorMemory``. The ids of the two legs name the same passages, and the
hybrid hits equal those of a sci-etl in-memory vector memory holding the same vectors.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from integration_cli import BIN, ENV, SAMPLE_PAPERS, run_command

pytestmark = pytest.mark.slow

QUESTION = "Which features predict off-target cleavage by Cas9?"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("serve-hybrid")
    folder = root / "my-papers"
    folder.mkdir()
    for name in ("crispr-off-target.md", "dark-matter-dwarf-galaxies.md", "bm25-revisited.md"):
        shutil.copy(SAMPLE_PAPERS / name, folder)
    done = run_command(
        "klea-stores-create",
        "build",
        "my-papers",
        "--store",
        "chroma:stores/chroma",
        "--collection",
        "papers",
        "--fts5-store",
        "stores/papers.sqlite",
        "--max-tokens",
        "128",
        "--write-stores-config",
        "stores/stores.json",
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    return root / "stores"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def server(built: Path) -> Iterator[str]:
    port = _free_port()
    log = (built / "serve.log").open("w+", encoding="utf-8")
    process = subprocess.Popen(
        [
            str(BIN / "klea-serve"),
            "--stores-config",
            str(built / "stores.json"),
            "--port",
            str(port),
        ],
        env=ENV,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while True:
            try:  # the socket opens first; health says "ok" once the stores are loaded
                health = httpx.get(f"{url}/api/health", timeout=5)
                if health.status_code == 200 and health.json()["status"] == "ok":
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise AssertionError(f"klea-serve did not start:\n{log.read()}")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=60)
        log.close()


def _fts5_ids(index: Path) -> set[str]:
    from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

    async def ids() -> set[str]:
        store = AsyncSqliteFts5Store(index)
        try:
            return set(await store.filter_ids(None))
        finally:
            await store.aclose()

    return asyncio.run(ids())


def test_health_names_the_vectors_of_the_domain(server: str, built: Path) -> None:
    body = httpx.get(f"{server}/api/health", timeout=30).json()
    assert body["vectors"] is True
    log = (built / "serve.log").read_text(encoding="utf-8")
    assert "with the vectors of domain 'papers' (papers)" in log


def test_hybrid_search_and_graph_over_the_http_api(server: str, built: Path) -> None:
    params = {"q": QUESTION, "mode": "hybrid", "limit": 8}
    body = httpx.get(f"{server}/api/search", params=params, timeout=60).json()
    assert body["error"] is None
    assert body["mode"] == "hybrid"
    assert body["degraded"] == []
    hits = body["hits"]
    assert hits
    assert hits[0]["file"] == "crispr-off-target.md"
    assert any(h["semantic_rank"] is not None for h in hits)
    assert any(h["lexical_rank"] is not None and h["semantic_rank"] is not None for h in hits)
    assert {h["record_id"] for h in hits} <= _fts5_ids(built / "papers.sqlite")
    semantic = httpx.get(
        f"{server}/api/search", params={**params, "mode": "semantic"}, timeout=60
    ).json()
    assert semantic["hits"][0]["file"] == "crispr-off-target.md"
    grouped = httpx.get(
        f"{server}/api/search", params={**params, "group": "paper"}, timeout=60
    ).json()
    assert grouped["papers"][0]["file"] == "crispr-off-target.md"
    ids = [h["record_id"] for h in hits]
    graph = httpx.post(f"{server}/api/graph", json={"record_ids": ids}, timeout=60).json()
    assert graph["available"] is True
    assert graph["edges"]
    assert {e["source"] for e in graph["edges"]} | {e["target"] for e in graph["edges"]} <= set(ids)


def test_hybrid_search_over_mcp(server: str) -> None:
    from mcp import Client

    async def talk() -> dict:
        async with Client(f"{server}/mcp") as mcp:
            result = await mcp.call_tool("search", {"query": QUESTION, "mode": "hybrid"})
            return dict(result.structured_content or {})

    found = asyncio.run(talk())
    assert found["mode"] == "hybrid"
    assert found["hits"][0]["file"] == "crispr-off-target.md"
    assert any(h["semantic_rank"] is not None for h in found["hits"])


def test_hybrid_hits_equal_a_sci_etl_memory_of_the_same_vectors(built: Path) -> None:
    from klea_utils.stores.embedding_models import DEFAULT_EMBEDDING_MODEL, load_query_embeddings
    from klea_utils.stores.sci_etl_vectors import LangChainEmbedder, open_vector_memory
    from sci_etl_core.embeddings.finder_async import AsyncSimilarArticleFinder
    from sci_etl_core.embeddings.store_base import EmbeddingChunk
    from sci_etl_core.embeddings.store_memory import InMemoryEmbeddingStore
    from sci_etl_core.search import AsyncHybridSearcher, question_query
    from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

    embeddings = load_query_embeddings(DEFAULT_EMBEDDING_MODEL)
    klea = open_vector_memory(f"chroma:{built / 'chroma'}", "papers", embeddings)
    ids = sorted(_fts5_ids(built / "papers.sqlite"))

    async def hits(memory, text_store) -> list[list[tuple[str, int | None, int | None]]]:
        searcher = AsyncHybridSearcher(
            text_store, AsyncSimilarArticleFinder(LangChainEmbedder(embeddings), memory)
        )
        out = []
        for question in (QUESTION, "How do dwarf galaxies constrain dark matter?"):
            query = question_query(question) or question
            outcome = await searcher.search(query, top_k=10)
            out.append([(h.record_id, h.lexical_rank, h.semantic_rank) for h in outcome.hits])
        return out

    async def compare() -> None:
        assert await klea.count() == len(ids)
        stored = await klea.vectors(ids)
        assert set(stored) == set(ids)  # every passage of the index has its vector
        reference = InMemoryEmbeddingStore()
        docs_store = AsyncSqliteFts5Store(built / "papers.sqlite")
        try:
            docs = await docs_store.get_documents(ids)
            await reference.add(
                [EmbeddingChunk(rid, 0, docs[rid].body, stored[rid]) for rid in ids]
            )
            through_klea = await hits(klea, docs_store)
            through_memory = await hits(reference, docs_store)
        finally:
            await docs_store.aclose()
        assert through_klea == through_memory
        assert all(any(s is not None for _, _, s in found) for found in through_klea)

    asyncio.run(compare())


def test_sci_etl_search_cli_searches_the_klea_collection(built: Path) -> None:
    import json

    done = run_command(
        "sci-etl-search",
        "search",
        "--any",
        QUESTION,
        "--db",
        "papers.sqlite",
        "--store",
        "papers=chroma:chroma",
        "--mode",
        "hybrid",
        "--json",
        cwd=built,
    )
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)["hits"]
    assert hits[0]["record_id"].startswith("crispr-off-target.md:")
    assert any(h["lexical_rank"] and h["semantic_rank"] for h in hits)
    for store, status, fragment in (
        ("papers=chroma:nope", 1, "no Chroma store at"),
        ("p=chroma:chroma", 2, "collection name 'p' must be 3-512 characters"),
    ):
        failed = run_command(
            "sci-etl-search", "search", "x", "--db", "papers.sqlite", "--store", store, cwd=built
        )
        assert failed.returncode == status, failed.stderr
        assert fragment in failed.stderr
