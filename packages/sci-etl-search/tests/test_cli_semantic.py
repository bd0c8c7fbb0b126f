"""The commands that use the vector memory, with the real packaged MiniLM model.

Each subprocess that embeds loads the model, so this module keeps to a handful of
them, sharing one indexed corpus.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from search_cli_support import INDEXED_IDS, index_corpus, run_cli

pytestmark = pytest.mark.slow

PARAPHRASE = "genetic scissors cutting DNA at unintended places"


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The corpus in a text index and, through the model, in a vector memory."""
    folder = tmp_path_factory.mktemp("cli-vectors")
    vectors = folder / "vectors.db"
    _, db = index_corpus(folder, "--vectors", vectors, "--chunk-words", "20")
    return db, vectors


def search(db: Path, vectors: Path, query: str, *args: str) -> dict[str, object]:
    result = run_cli("search", query, "--db", db, "--vectors", vectors, "--json", *args)
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_index_stores_passages_that_backfill_reads_back(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    _, vectors = stores
    # 20-word windows overlap by 10 words, half the window, as index chose.
    fresh = tmp_path / "fresh.db"
    backfill = run_cli(
        "backfill", "--db", fresh, "--vectors", vectors, "--overlap-words", "10", "--json"
    )
    assert backfill.returncode == 0, backfill.stderr
    assert json.loads(backfill.stdout) == {
        "indexed": len(INDEXED_IDS),
        "skipped_existing": 0,
        "skipped_empty": 0,
    }
    found = run_cli("search", "guide sequence", "--db", fresh, "--json")
    hits = json.loads(found.stdout)["hits"]
    assert [hit["record_id"] for hit in hits] == ["crispr"]
    assert hits[0]["title"] == "Off-target effects of CRISPR-Cas9"
    again = run_cli("backfill", "--db", fresh, "--vectors", vectors, "--overlap-words", "10")
    assert again.returncode == 0, again.stderr
    assert f"left {len(INDEXED_IDS)} already indexed" in again.stdout


def test_hybrid_finds_a_paraphrase_through_the_semantic_leg(stores: tuple[Path, Path]) -> None:
    db, vectors = stores
    data = search(db, vectors, PARAPHRASE, "--top-k", "3")
    hits = data["hits"]
    assert isinstance(hits, list)
    assert data["degraded"] == []
    assert data["skipped"] == []
    assert hits[0]["record_id"] == "crispr"
    assert hits[0]["semantic_rank"] == 1
    assert hits[0]["lexical_rank"] is None
    assert hits[0]["snippets"][0]["field"] == "body"


def test_semantic_mode_applies_filters(stores: tuple[Path, Path]) -> None:
    db, vectors = stores
    data = search(
        db, vectors, "searching documents", "--mode", "semantic", "--filter", "categories=cs.IR"
    )
    hits = data["hits"]
    assert isinstance(hits, list)
    assert {hit["record_id"] for hit in hits} == {"bm25", "dense-retrieval"}
    assert all(hit["lexical_rank"] is None for hit in hits)


def test_a_model_that_cannot_load_degrades_hybrid_search_to_lexical(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    db, vectors = stores
    result = run_cli(
        "search",
        "dwarf galaxies",
        "--db",
        db,
        "--vectors",
        vectors,
        "--json",
        "--model",
        str(tmp_path / "no-model"),
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["degraded"] == ["semantic"]
    assert data["hits"][0]["record_id"] == "dwarf-halos"
    assert "warning" in result.stderr
    semantic = run_cli(
        "search",
        "dwarf",
        "--db",
        db,
        "--vectors",
        vectors,
        "--mode",
        "semantic",
        "--model",
        str(tmp_path / "no-model"),
    )
    assert semantic.returncode == 1
    assert "embedder:" in semantic.stderr
    assert "Traceback" not in semantic.stderr


def test_graph_with_semantic_edges(stores: tuple[Path, Path]) -> None:
    db, vectors = stores
    result = run_cli(
        "graph",
        "bm25",
        "--db",
        db,
        "--vectors",
        vectors,
        "--edges",
        "semantic",
        "--min-weight",
        "0.2",
        "--fanout",
        "2",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    graph = json.loads(result.stdout)
    ids = {node["record_id"] for node in graph["nodes"]}
    assert "bm25" in ids
    assert "dense-retrieval" in ids
    assert graph["edges"]
    assert {edge["kind"] for edge in graph["edges"]} == {"semantic"}
    for edge in graph["edges"]:
        assert edge["source"] < edge["target"]
        assert 0.2 <= edge["weight"] <= 1.0
