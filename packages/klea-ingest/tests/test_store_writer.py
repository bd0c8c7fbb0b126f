"""store_all against real Chroma with the packaged MiniLM: incremental runs, force, BM25, errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ingest_store_support import (
    CountingEmbeddings,
    fts5_records,
    make_builder,
    minilm,
    write_source,
)
from klea_utils.stores.ingest_exceptions import IngestError, SourceLayoutError
from klea_utils.stores.retrieval.bm25 import read_corpus
from klea_utils.stores.utils import instantiate_vector_store

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embeddings() -> CountingEmbeddings:
    return CountingEmbeddings(minilm())


def _paras(tag: str, n: int) -> list[str]:
    return [
        f"{tag} paragraph {i} about dendrites, synapses and cortical columns." for i in range(n)
    ]


def _contents(store_dir: Path, collection: str, embeddings) -> dict[str, str]:
    import logging

    store = instantiate_vector_store(
        f"chroma:{store_dir}", collection, embeddings, logging.getLogger("t")
    )
    got = store.get()
    return dict(zip(got["ids"], got["documents"], strict=True))


def test_incremental_lifecycle(tmp_path: Path, embeddings: CountingEmbeddings) -> None:
    source, store_dir = tmp_path / "src", tmp_path / "store"
    uri, bm25 = f"chroma:{store_dir}", tmp_path / "bm25.pkl"
    builder = make_builder(embeddings)
    results = [
        write_source(source, "a.md", _paras("a", 3)),
        write_source(source, "b.md", _paras("b", 5)),
    ]

    embeddings.embedded = 0
    summary = builder.store_all(iter(results), uri, "papers", source, bm25_path=str(bm25))
    assert summary.files_added == 2
    assert summary.chunks_added == 8
    assert embeddings.embedded == 8
    contents = _contents(store_dir, "papers", embeddings)
    assert sorted(contents) == sorted(
        [f"a.md:{i}" for i in range(3)] + [f"b.md:{i}" for i in range(5)]
    )
    corpus = read_corpus(bm25)
    assert len(corpus) == 8
    meta = corpus[0].metadata
    assert "_sources" not in meta
    assert meta["authors"][:2] == ["Ankur Sinha", "ankur sinha"]
    manifest = json.loads((source / ".klea-cache" / "papers.manifest.json").read_text())
    section = manifest["stores"][f"chroma:{store_dir.resolve()}"]
    entry = section["files"]["b.md"]
    assert {k: entry[k] for k in ("file_hash", "chunks", "complete")} == {
        "file_hash": results[1][0],
        "chunks": 5,
        "complete": True,
    }
    assert len(entry["digest"]) == 64

    # unchanged: nothing re-embedded
    embeddings.embedded = 0
    summary = builder.store_all(iter(results), uri, "papers", source, bm25_path=str(bm25))
    assert summary.files_skipped == 2
    assert embeddings.embedded == 0
    assert len(read_corpus(bm25)) == 8

    # b.md changed to fewer chunks: exactly the new chunks, no duplicates
    results[1] = write_source(source, "b.md", _paras("b-new", 2))
    embeddings.embedded = 0
    summary = builder.store_all(iter(results), uri, "papers", source, bm25_path=str(bm25))
    assert summary.files_replaced == 1
    assert embeddings.embedded == 2
    contents = _contents(store_dir, "papers", embeddings)
    assert sorted(k for k in contents if k.startswith("b.md")) == ["b.md:0", "b.md:1"]
    assert contents["b.md:0"].startswith("b-new")
    assert len(contents) == 5

    # a.md removed from the source: left alone in the collection and the corpus
    (source / "a.md").unlink()
    summary = builder.store_all(iter(results[1:]), uri, "papers", source, bm25_path=str(bm25))
    assert summary.files_skipped == 1
    assert "a.md:2" in _contents(store_dir, "papers", embeddings)
    assert sorted(d.metadata["file_name"] for d in read_corpus(bm25)) == ["a.md"] * 3 + ["b.md"] * 2

    # force: dropped and rebuilt from this run only
    summary = builder.store_all(
        iter(results[1:]), uri, "papers", source, force=True, bm25_path=str(bm25)
    )
    assert summary.files_added == 1
    assert sorted(_contents(store_dir, "papers", embeddings)) == ["b.md:0", "b.md:1"]
    assert len(read_corpus(bm25)) == 2


def test_same_bytes_cut_into_other_chunks_are_replaced(
    tmp_path: Path, embeddings: CountingEmbeddings
) -> None:
    """Other chunk settings or a newer extraction of unchanged bytes: same count, new text.

    The manifest compares the chunks' digest, not only the file's hash and chunk count,
    so neither the vector store nor the FTS5 index keeps the old passages.
    """
    source, store_dir, fts = tmp_path / "src", tmp_path / "store", tmp_path / "lex.sqlite"
    uri = f"chroma:{store_dir}"
    builder = make_builder(embeddings)
    file_hash, docs, path = write_source(source, "a.md", _paras("a", 3))

    def run(chunks):
        return builder.store_all(
            iter([(file_hash, chunks, path)]), uri, "papers", source, fts5_path=str(fts)
        )

    run(docs)
    recut = [d.model_copy(update={"page_content": f"recut {d.page_content}"}) for d in docs]
    embeddings.embedded = 0
    summary = run(recut)
    assert summary.files_replaced == 1
    assert embeddings.embedded == 3
    assert summary.fts5_chunks == 3
    assert all(t.startswith("recut") for t in _contents(store_dir, "papers", embeddings).values())
    assert all(t.startswith("recut") for t in _fts5_contents(fts).values())

    # a corrected metadata record changes what is stored too
    retitled = [
        d.model_copy(update={"metadata": {**d.metadata, "title": "Corrected"}}) for d in recut
    ]
    assert run(retitled).files_replaced == 1

    # and the same chunks again are skipped
    embeddings.embedded = 0
    summary = run(retitled)
    assert (summary.files_skipped, embeddings.embedded, summary.fts5_chunks) == (1, 0, 0)


def test_an_entry_without_digest_is_replaced_once(
    tmp_path: Path, embeddings: CountingEmbeddings
) -> None:
    """A manifest written before digests were recorded: each file is stored again once."""
    source, uri = tmp_path / "src", f"chroma:{tmp_path / 'store'}"
    builder = make_builder(embeddings)
    result = write_source(source, "a.md", _paras("a", 2))
    builder.store_all(iter([result]), uri, "papers", source)
    manifest_file = source / ".klea-cache" / "papers.manifest.json"
    manifest = json.loads(manifest_file.read_text())
    for section in manifest["stores"].values():
        for entry in section["files"].values():
            del entry["digest"]
    manifest_file.write_text(json.dumps(manifest))
    assert builder.store_all(iter([result]), uri, "papers", source).files_replaced == 1
    assert builder.store_all(iter([result]), uri, "papers", source).files_skipped == 1


def test_embedding_model_loaded_only_when_a_chunk_is_embedded(
    tmp_path: Path, embeddings: CountingEmbeddings
) -> None:
    import logging

    from klea_utils.stores._ingest.store.lazy_embeddings import LazyEmbeddings
    from klea_utils.stores.ingestion import StoresBuilder

    source, uri = tmp_path / "src", f"chroma:{tmp_path / 'store'}"
    results = [write_source(source, "a.md", _paras("a", 2))]
    make_builder(embeddings).store_all(results, uri, "papers", source)

    builder = StoresBuilder("huggingface:all-MiniLM-L6-v2", logging.getLogger("t"))
    lazy = builder.writer.embeddings
    assert isinstance(lazy, LazyEmbeddings)
    assert builder.store_all(results, uri, "papers", source).files_skipped == 1
    assert not lazy.loaded  # every file unchanged: nothing embedded, no model loaded

    results.append(write_source(source, "b.md", _paras("b", 1)))
    assert builder.store_all(results, uri, "papers", source).chunks_added == 1
    assert lazy.loaded
    model = lazy.model()
    results.append(write_source(source, "c.md", _paras("c", 1)))
    assert builder.store_all(results, uri, "papers", source).chunks_added == 1
    assert lazy.model() is model  # loaded once per writer
    assert StoresBuilder("huggingface:x", logging.getLogger("t")).writer.embeddings is not lazy


def test_duplicate_names_refused_before_writing(tmp_path: Path, embeddings) -> None:
    source = tmp_path / "src"
    one = write_source(source, "x/same.md", _paras("one", 1))
    two = write_source(source, "y/same.md", _paras("two", 1))
    with pytest.raises(SourceLayoutError) as info:
        make_builder(embeddings).store_all([one, two], f"chroma:{tmp_path / 's'}", "c", source)
    assert str(source / "x" / "same.md") in str(info.value)
    assert str(source / "y" / "same.md") in str(info.value)
    assert not (source / ".klea-cache" / "c.manifest.json").exists()


def test_foreign_bm25_corpus_is_not_overwritten(tmp_path: Path, embeddings) -> None:
    source = tmp_path / "src"
    res = [write_source(source, "a.md", _paras("a", 1))]
    bm25 = tmp_path / "bm25.pkl"
    uri = f"chroma:{tmp_path / 's'}"
    make_builder(embeddings).store_all(res, uri, "one", source, bm25_path=str(bm25))
    before = bm25.read_bytes()
    with pytest.raises(IngestError, match="belongs to collection 'one'"):
        make_builder(embeddings).store_all(res, uri, "two", source, bm25_path=str(bm25))
    assert bm25.read_bytes() == before
    other = tmp_path / "other.pkl"
    other.write_bytes(b"someone else's")
    with pytest.raises(IngestError, match="not written by this tool"):
        make_builder(embeddings).store_all(res, uri, "one", source, bm25_path=str(other))


def test_bad_collection_name(tmp_path: Path, embeddings) -> None:
    with pytest.raises(ValueError, match=r"collection name '\.\./x'"):
        make_builder(embeddings).store_all([], f"chroma:{tmp_path}", "../x", tmp_path)


def test_fts5_index_written(tmp_path: Path, embeddings) -> None:
    import asyncio

    from sci_etl_core.search import AsyncSqliteFts5Store

    source = tmp_path / "src"
    res = [
        write_source(source, "a.md", _paras("alpha", 2)),
        write_source(source, "b.md", ["zebra stripes"]),
    ]
    fts = tmp_path / "lex.sqlite"
    summary = make_builder(embeddings).store_all(
        res,
        f"chroma:{tmp_path / 's'}",
        "coll",
        source,
        fts5_path=str(fts),
    )
    assert summary.fts5_chunks == 3

    async def count() -> int:
        store = AsyncSqliteFts5Store(fts)
        try:
            return await store.count()
        finally:
            await store.aclose()

    assert asyncio.run(count()) == 3


def _fts5_contents(path: Path) -> dict[str, str]:
    """Every record of the FTS5 index at ``path``: id -> body."""
    return {record_id: doc.body for record_id, doc in fts5_records(path).items()}


def test_fts5_index_is_incremental(tmp_path: Path, embeddings: CountingEmbeddings) -> None:
    import asyncio

    from klea_utils.stores.retrieval.fts5_index import open_fts5_store

    source, uri, fts = tmp_path / "src", f"chroma:{tmp_path / 's'}", tmp_path / "lex.sqlite"
    builder = make_builder(embeddings)
    results = [
        write_source(source, "a.md", _paras("a", 3)),
        write_source(source, "b.md", ["\ufb01rst b\u00adpara", *_paras("b", 4)]),
    ]

    def run(res, *, force: bool = False):
        return builder.store_all(iter(res), uri, "papers", source, force=force, fts5_path=str(fts))

    assert run(results).fts5_chunks == 8
    contents = _fts5_contents(fts)
    assert len(contents) == 8
    assert contents["b.md:0"] == "first bpara"  # normalized like the BM25 backend reads it

    async def facets() -> dict[str, tuple[tuple[str, int], ...]]:
        store = open_fts5_store(fts)
        try:
            return await store.facet_counts(["file_name", "authors"])
        finally:
            await store.aclose()

    counts = asyncio.run(facets())
    assert dict(counts["file_name"]) == {"a.md": 3, "b.md": 5}
    assert dict(counts["authors"])["Ankur Sinha"] == 8

    # unchanged: nothing rewritten
    assert run(results).fts5_chunks == 0
    assert len(_fts5_contents(fts)) == 8

    # b.md changed to fewer chunks: its old ids deleted, the new ones written
    results[1] = write_source(source, "b.md", _paras("b-new", 2))
    assert run(results).fts5_chunks == 2
    contents = _fts5_contents(fts)
    assert sorted(k for k in contents if k.startswith("b.md")) == ["b.md:0", "b.md:1"]
    assert contents["b.md:0"].startswith("b-new")
    assert len(contents) == 5

    # a.md removed from the source: left alone in the index, as in the collection
    (source / "a.md").unlink()
    assert run(results[1:]).fts5_chunks == 0
    assert "a.md:2" in _fts5_contents(fts)

    # force: rebuilt from this run only
    assert run(results[1:], force=True).fts5_chunks == 2
    assert sorted(_fts5_contents(fts)) == ["b.md:0", "b.md:1"]

    # the index deleted behind our back: rewritten in full
    fts.unlink()
    assert run(results[1:]).fts5_chunks == 2

    # killed between SQLite creating the file and writing its header: rewritten in full
    for suffix in ("", "-wal", "-shm"):
        Path(f"{fts}{suffix}").unlink(missing_ok=True)
    fts.touch()
    assert run(results[1:]).fts5_chunks == 2
    assert sorted(_fts5_contents(fts)) == ["b.md:0", "b.md:1"]


def test_fts5_index_repaired_after_an_interrupted_file(
    tmp_path: Path, embeddings: CountingEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from klea_utils.stores import fts5_writer

    source, uri, fts = tmp_path / "src", f"chroma:{tmp_path / 's'}", tmp_path / "lex.sqlite"
    builder = make_builder(embeddings)
    results = [write_source(source, "a.md", _paras("a", 2))]
    builder.store_all(iter(results), uri, "papers", source, fts5_path=str(fts))
    real_write = fts5_writer.write_fts5_chunks

    def write_then_die(path, docs_with_ids, **kwargs):
        real_write(path, list(docs_with_ids)[:3], **kwargs)  # part of the file, then killed
        raise KeyboardInterrupt

    monkeypatch.setattr(fts5_writer, "write_fts5_chunks", write_then_die)
    results[0] = write_source(source, "a.md", _paras("a-long", 5))
    with pytest.raises(KeyboardInterrupt):
        builder.store_all(iter(results), uri, "papers", source, fts5_path=str(fts))
    sidecar = json.loads((tmp_path / "lex.sqlite.klea.json").read_text())
    assert sidecar["files"]["a.md"]["complete"] is False
    monkeypatch.setattr(fts5_writer, "write_fts5_chunks", real_write)

    # the rerun (the file shrank meanwhile) drops every id the interrupted run wrote
    results[0] = write_source(source, "a.md", _paras("a-short", 1))
    summary = builder.store_all(iter(results), uri, "papers", source, fts5_path=str(fts))
    assert summary.fts5_chunks == 1
    assert _fts5_contents(fts) == {"a.md:0": results[0][1][0].page_content}


def test_fts5_index_of_another_collection_or_tool_is_refused(
    tmp_path: Path, embeddings: CountingEmbeddings
) -> None:
    source, uri, fts = tmp_path / "src", f"chroma:{tmp_path / 's'}", tmp_path / "lex.sqlite"
    res = [write_source(source, "a.md", _paras("a", 1))]
    builder = make_builder(embeddings)
    builder.store_all(res, uri, "one", source, fts5_path=str(fts))
    before = fts.read_bytes()
    with pytest.raises(IngestError, match="another collection \\('one'\\)"):
        builder.store_all(res, uri, "two", source, fts5_path=str(fts))
    assert fts.read_bytes() == before
    # an index from an older klea-ingest (sidecar without a file list) is rebuilt
    (tmp_path / "lex.sqlite.klea.json").write_text(json.dumps({"collection": "one"}))
    assert builder.store_all(res, uri, "one", source, fts5_path=str(fts)).fts5_chunks == 1
    assert sorted(_fts5_contents(fts)) == ["a.md:0"]


_CRASH_SCRIPT = """
import sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
from ingest_store_support import make_builder, minilm, write_source

class Slow:
    def __init__(self, inner): self.inner = inner
    def embed_documents(self, texts):
        time.sleep(0.3)
        return self.inner.embed_documents(texts)
    def embed_query(self, text): return self.inner.embed_query(text)

source = Path(sys.argv[1])
def chunks(i):
    return [f"file {{i}} chunk {{j}} text" for j in range(4)]
results = [write_source(source, f"f{{i}}.md", chunks(i)) for i in range(6)]
emb = minilm() if sys.argv[3] == "fast" else Slow(minilm())
fts5 = sys.argv[5] if len(sys.argv) > 5 else None
make_builder(emb, batch=2).store_all(
    iter(results), sys.argv[2], sys.argv[4], source, fts5_path=fts5
)
"""


def test_kill_during_store_then_rerun_converges(tmp_path: Path, embeddings) -> None:
    script = tmp_path / "run_store.py"
    script.write_text(_CRASH_SCRIPT.format(tests=str(Path(__file__).parent)))
    source, uri = tmp_path / "src", f"chroma:{tmp_path / 'store'}"
    manifest = source / ".klea-cache" / "crash.manifest.json"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    fts_crash, fts_clean = tmp_path / "crash.sqlite", tmp_path / "clean.sqlite"
    proc = subprocess.Popen(
        [sys.executable, str(script), str(source), uri, "slow", "crash", str(fts_crash)], env=env
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if manifest.exists() and '"complete": true' in manifest.read_text():
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    (section,) = json.loads(manifest.read_text())["stores"].values()
    done = section["files"]
    assert 0 < sum(e["complete"] for e in done.values()) < 6

    def results():
        chunks = [[f"file {i} chunk {j} text" for j in range(4)] for i in range(6)]
        return [write_source(source, f"f{i}.md", chunks[i]) for i in range(6)]

    builder = make_builder(embeddings, batch=2)
    # the rerun after the kill
    builder.store_all(iter(results()), uri, "crash", source, fts5_path=str(fts_crash))
    builder.store_all(iter(results()), uri, "clean", source, fts5_path=str(fts_clean))
    crashed = _contents(tmp_path / "store", "crash", embeddings)
    clean = _contents(tmp_path / "store", "clean", embeddings)
    assert crashed == clean
    assert len(clean) == 24
    assert _fts5_contents(fts_crash) == _fts5_contents(fts_clean)
    assert len(_fts5_contents(fts_clean)) == 24
