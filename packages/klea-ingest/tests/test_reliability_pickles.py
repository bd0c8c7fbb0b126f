"""Nothing in a papers folder or a BM25 corpus can run code on load (issue 19, item 2)."""

from __future__ import annotations

import hashlib
import logging
import pickle
from pathlib import Path

from ingest_corpus import sample_paragraphs, write_markdown
from klea_utils.stores.chunk_cache import ChunkCache, compute_file_hash
from klea_utils.stores.cli import app
from klea_utils.stores.ingestion import StoresBuilder
from langchain_core.documents import Document
from typer.testing import CliRunner


class _Planted:
    """Unpickling this creates ``marker``: proof that loading the file ran code."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_planted_cache_pickle_is_never_unpickled(tmp_path: Path, offline: None) -> None:
    source, marker = tmp_path / "papers", tmp_path / "ran"
    doc = write_markdown(source / "a.md", "Handed over", sample_paragraphs(2, seed=1))
    file_hash = compute_file_hash(doc)
    key = hashlib.sha256(b"a.md").hexdigest()[:16]
    chunks = source / ".klea-cache" / "chunks"
    chunks.mkdir(parents=True)
    planted = chunks / f"{file_hash}-{key}.pkl"  # where klea-ingest 0.x kept the entry
    planted.write_bytes(pickle.dumps({"version": 1, "docs": [_Planted(marker)]}))

    builder = StoresBuilder("m", logging.getLogger("t"), max_tokens=128)
    headings = builder.chunk_all(source, in_process=True)

    assert not marker.exists()
    assert "a.md" in headings  # converted afresh
    assert not planted.exists()  # the old entry was pruned, unread
    (entry,) = ChunkCache(source).entries()
    assert entry.suffix == ".json"
    assert entry.read_text(encoding="utf-8").startswith("{")


def test_store_lint_refuses_a_hostile_corpus(tmp_path: Path) -> None:
    marker, corpus = tmp_path / "ran", tmp_path / "evil.bm25"
    with corpus.open("wb") as fh:
        pickle.dump([Document(page_content="fine", metadata={"file_name": "a.md"})], fh)
        pickle.dump([_Planted(marker)], fh)
    result = CliRunner().invoke(app, ["store-lint", "--bm25-store", str(corpus)])
    assert result.exit_code == 1
    assert f"BM25 corpus {str(corpus)!r}: batch 1 cannot be unpickled: refused" in result.output
    assert not marker.exists()
