"""Vector memories from other packages, found by URI scheme: the plugin seam and ``--store``.

The command-line tests install a real entry point: a ``toy`` distribution (a
``.dist-info`` folder and a module on ``PYTHONPATH``) whose opener serves a SQLite vector
memory written here with a keyword embedder, so the seam is exercised as klea-retrieval
uses it, without any package but sci-etl-search.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from sci_etl_core.embeddings.plugins import (
    ENTRY_POINT_GROUP,
    OpenedVectorStore,
    UnknownVectorStoreSchemeError,
    open_vector_store_uri,
    parse_store_assignment,
)
from sci_etl_core.embeddings.store_memory import InMemoryEmbeddingStore
from sci_etl_core.exceptions import EmbeddingStoreError
from search_cli_support import index_corpus, run_cli

TOY_MODULE = """
from sci_etl_core.embeddings.async_base import AsyncEmbedder
from sci_etl_core.embeddings.plugins import OpenedVectorStore
from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore

TOPICS = ("galax", "quasar", "bm25", "coral", "sleep", "cas9", "graphene", "dual")


class KeywordEmbedder(AsyncEmbedder):
    async def embed(self, texts):
        return [[0.01 + (topic in text.lower()) for topic in TOPICS] for text in texts]


def open_toy(uri, collection, model=None):
    if collection != "papers":
        raise LookupError(f"no collection {collection!r} at {uri}")
    path = uri.partition(":")[2]
    return OpenedVectorStore(AsyncSqliteEmbeddingStore(path), KeywordEmbedder())
"""


class _Embedder:
    async def embed(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


def test_store_assignments_parse_or_name_the_fault() -> None:
    assert parse_store_assignment("papers=chroma:/data/s=1") == ("papers", "chroma:/data/s=1")
    with pytest.raises(ValueError, match="expected COLLECTION=URI"):
        parse_store_assignment("chroma:/data")
    with pytest.raises(ValueError, match="expected COLLECTION=URI"):
        parse_store_assignment(" =chroma:/data")
    with pytest.raises(ValueError, match="needs a scheme"):
        parse_store_assignment("papers=/data/chroma")


def test_the_opener_of_the_scheme_opens_the_store() -> None:
    memory = InMemoryEmbeddingStore()
    calls: list[tuple[str, str, str | None]] = []

    def opener(uri: str, collection: str, model: str | None = None) -> OpenedVectorStore:
        calls.append((uri, collection, model))
        return OpenedVectorStore(memory, _Embedder())  # type: ignore[arg-type]

    opened = open_vector_store_uri("mem:/x", "c", "m", openers={"mem": lambda: opener})
    assert opened.store is memory
    assert calls == [("mem:/x", "c", "m")]


def test_an_unknown_scheme_lists_the_known_ones() -> None:
    with pytest.raises(UnknownVectorStoreSchemeError, match="known schemes: a, mem") as caught:
        open_vector_store_uri("nope:/x", "c", openers={"mem": list, "a": list})
    assert isinstance(caught.value, EmbeddingStoreError)
    assert isinstance(caught.value, ValueError)


def test_an_opener_must_return_an_opened_store() -> None:
    with pytest.raises(TypeError, match="returned list, not OpenedVectorStore"):
        open_vector_store_uri("mem:/x", "c", openers={"mem": lambda: lambda *a: []})
    with pytest.raises(TypeError, match="must be an AsyncEmbeddingStore"):
        OpenedVectorStore(object(), _Embedder())  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """A text index, a vector memory of the same records, and a ``toy`` plugin installed."""
    folder = tmp_path_factory.mktemp("plugin")
    site = folder / "site"
    (site / "toy_vectors-0.1.dist-info").mkdir(parents=True)
    (site / "toy_vectors-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toy-vectors\nVersion: 0.1\n", encoding="utf-8"
    )
    (site / "toy_vectors-0.1.dist-info" / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\ntoy = toy_vectors:open_toy\n", encoding="utf-8"
    )
    (site / "toy_vectors.py").write_text(TOY_MODULE, encoding="utf-8")
    source, db = index_corpus(folder)
    vectors = folder / "vectors.db"
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    asyncio.run(_write_vectors(site, source, vectors))
    return db, vectors, env


async def _write_vectors(site: Path, source: Path, vectors: Path) -> None:
    import importlib.util

    from sci_etl_core.embeddings.store_base import EmbeddingChunk
    from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore

    spec = importlib.util.spec_from_file_location("toy_vectors", site / "toy_vectors.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    texts = {
        r.get("id") or r.get("record_id") or r["_id"]: f"{r['title']} {r.get('abstract', '')}"
        for r in records
        if r["title"].strip()
    }
    embedded = await module.KeywordEmbedder().embed(list(texts.values()))
    store = AsyncSqliteEmbeddingStore(vectors)
    try:
        await store.add(
            [
                EmbeddingChunk(rid, 0, text, vector)
                for (rid, text), vector in zip(texts.items(), embedded, strict=True)
            ]
        )
    finally:
        await store.aclose()


def test_search_store_reads_the_plugins_memory(toy: tuple[Path, Path, dict[str, str]]) -> None:
    db, vectors, env = toy
    store = f"papers=toy:{vectors}"
    semantic = run_cli(
        "search", "cas9", "--db", db, "--store", store, "--mode", "semantic", "--json", env=env
    )
    assert semantic.returncode == 0, semantic.stderr
    assert json.loads(semantic.stdout)["hits"][0]["record_id"] == "crispr"
    hybrid = run_cli("search", "graphene OR coral", "--db", db, "--store", store, "--json", env=env)
    assert hybrid.returncode == 0, hybrid.stderr
    hits = json.loads(hybrid.stdout)["hits"]
    assert {h["record_id"] for h in hits[:2]} == {"graphene", "coral"}
    assert all(h["semantic_rank"] is not None for h in hits[:2])


@pytest.mark.parametrize(
    ("store", "extra", "status", "fragment"),
    [
        ("papers=nope:/x", (), 2, "no installed package opens 'nope' vector stores"),
        ("papers-chroma", (), 2, "expected COLLECTION=URI"),
        ("other=toy:{vectors}", (), 1, "LookupError: no collection 'other'"),
        ("papers=toy:{vectors}", ("--vectors", "{vectors}"), 2, "not both"),
    ],
)
def test_bad_stores_are_named(
    toy: tuple[Path, Path, dict[str, str]],
    store: str,
    extra: tuple[str, ...],
    status: int,
    fragment: str,
) -> None:
    db, vectors, env = toy
    args = [a.format(vectors=vectors) for a in ("--store", store, *extra)]
    result = run_cli("search", "cas9", "--db", db, *args, env=env)
    assert result.returncode == status, result.stderr
    assert fragment in " ".join(result.stderr.split())
