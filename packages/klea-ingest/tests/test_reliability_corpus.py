"""A BM25 corpus cut short, or empty, is reported, not half-loaded (issue 19, item 7)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from ingest_store_support import make_builder, write_source
from klea_utils.stores.cli import app
from klea_utils.stores.exceptions import StoreBackendError
from klea_utils.stores.retrieval.bm25 import read_corpus
from langchain_core.embeddings import DeterministicFakeEmbedding
from typer.testing import CliRunner


def _stored_corpus(tmp_path: Path) -> tuple[Path, list]:
    source, corpus = tmp_path / "src", tmp_path / "c.bm25"
    results = [write_source(source, "a.md", [f"paragraph {i} on axons" for i in range(5)])]
    builder = make_builder(DeterministicFakeEmbedding(size=16), batch=2)
    builder.store_all(
        iter(results), f"chroma:{tmp_path / 's'}", "papers", source, bm25_path=str(corpus)
    )
    return corpus, results


def _cut_after_first_batch(corpus: Path) -> None:
    with corpus.open("rb") as fh:
        first = pickle.load(fh)  # our own file, written by the test above
    corpus.write_bytes(pickle.dumps(first))


def test_count_is_recorded_and_a_cut_corpus_is_an_error(tmp_path: Path) -> None:
    corpus, _ = _stored_corpus(tmp_path)
    sidecar = json.loads((tmp_path / "c.bm25.klea.json").read_text())
    assert sidecar["documents"] == len(read_corpus(corpus)) == 5
    _cut_after_first_batch(corpus)
    with pytest.raises(StoreBackendError, match=r"holds 2 documents but c\.bm25\.klea\.json"):
        read_corpus(corpus)
    result = CliRunner().invoke(app, ["store-lint", "--bm25-store", str(corpus)])
    assert result.exit_code == 1
    assert "truncated" in result.output


def test_empty_corpus_fails_store_lint(tmp_path: Path) -> None:
    empty = tmp_path / "empty.bm25"
    empty.write_bytes(b"")
    result = CliRunner().invoke(app, ["store-lint", "--bm25-store", str(empty)])
    assert result.exit_code == 1
    assert "holds no chunks" in result.output
