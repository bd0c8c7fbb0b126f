"""The store progress shows chunks embedded against a known total: the chunks this run
embeds, read from each cache entry's recorded count (or counted in an older entry), never
by holding every chunk in memory."""

from __future__ import annotations

import json
import logging
import sys
import tracemalloc
from pathlib import Path
from typing import ClassVar

import pytest
from klea_utils.stores import chunk_cache, store_writer
from klea_utils.stores._ingest.store.folded_results import FoldedResults, fold_cached_results
from klea_utils.stores._ingest.store.store_progress import StoreProgress
from klea_utils.stores.chunk_cache import CachedFile, ChunkCache, compute_file_hash
from klea_utils.stores.store_writer import StoreTargets, StoreWriter
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding

LOGGER = "klea-test-store-progress"


def _cache(source: Path, name: str, chunks: int, *, text: str = "", old: bool = False) -> Path:
    """Write ``name`` and its cache entry of ``chunks`` chunks; ``old``: no recorded count."""
    path = source / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{name} {chunks} {text[:20]}", encoding="utf-8")
    file_hash = compute_file_hash(path)
    docs = [
        Document(
            page_content=f"{name} chunk {i} {text}",
            metadata={"file_name": name, "file_hash": file_hash, "headings": ["Intro"]},
        )
        for i in range(chunks)
    ]
    cache = ChunkCache(source)
    entry = cache.store(CachedFile(path, file_hash, docs, {"title": name}, ["Intro"]))
    if old:  # as klea-ingest wrote entries before it recorded chunk counts
        payload = json.loads(entry.read_text(encoding="utf-8"))
        del payload["chunk_count"]
        entry.write_text(json.dumps(payload), encoding="utf-8")
    return path


class Recording(StoreProgress):
    """A StoreProgress that keeps itself and the total it started with, for the test."""

    made: ClassVar[list[Recording]] = []

    def __enter__(self) -> Recording:
        self.initial_total = self.chunks_total
        Recording.made.append(self)
        super().__enter__()
        return self


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> type[Recording]:
    Recording.made = []
    monkeypatch.setattr(store_writer, "StoreProgress", Recording)
    return Recording


def _store(source: Path, store: Path) -> Recording:
    writer = StoreWriter(
        embedding_model="huggingface:all-MiniLM-L6-v2",
        logger=logging.getLogger(LOGGER),
        embed_batch_size=2,
        embeddings=DeterministicFakeEmbedding(size=16),
    )
    targets = StoreTargets(f"chroma:{store}", "papers", source)
    writer.write(writer.load_and_fold_results(source), targets)
    return Recording.made[-1]


def test_an_entry_records_its_chunk_count_in_its_first_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _cache(tmp_path, "a.md", 7, text="x" * 5000)
    cache = ChunkCache(tmp_path)
    (entry,) = cache.entries()
    assert entry.read_bytes().startswith(b'{"version": 2, "chunk_count": 7, ')

    def no_full_read(*_: object) -> bytes:
        raise AssertionError("the whole entry was read")

    monkeypatch.setattr(ChunkCache, "_read", no_full_read)
    assert cache.chunk_count(path, compute_file_hash(path)) == 7
    assert cache.chunk_count(path, "0" * 64) is None  # no entry for other bytes


def test_an_entry_without_a_count_is_still_read_and_is_counted(tmp_path: Path) -> None:
    path = _cache(tmp_path, "old.md", 4, old=True)
    cache = ChunkCache(tmp_path)
    file_hash = compute_file_hash(path)
    assert b"chunk_count" not in cache.entries()[0].read_bytes()
    assert cache.chunk_count(path, file_hash) == 4
    loaded = cache.load(path, file_hash)
    assert loaded is not None
    assert len(loaded.docs) == 4


def test_a_count_that_disagrees_with_the_chunks_is_a_corrupt_entry(tmp_path: Path) -> None:
    path = _cache(tmp_path, "a.md", 3)
    cache = ChunkCache(tmp_path)
    (entry,) = cache.entries()
    entry.write_bytes(entry.read_bytes().replace(b'"chunk_count": 3', b'"chunk_count": 9', 1))
    assert cache.load(path, compute_file_hash(path)) is None
    assert (entry.parent / (entry.name + ".corrupt")).is_file()


def test_the_total_is_what_the_run_embeds(
    tmp_path: Path, recording: type[Recording], caplog: pytest.LogCaptureFixture
) -> None:
    source, store = tmp_path / "papers", tmp_path / "store"
    _cache(source, "new.md", 3)
    _cache(source, "old.md", 5, old=True)  # cached before counts were recorded
    (source / "broken.pdf").write_bytes(b"%PDF-1.7 truncated")  # conversion failed: no entry
    with caplog.at_level(logging.INFO, logger=LOGGER):
        first = _store(source, store)
    assert (first.initial_total, first.chunks_total, first.chunks) == (8, 8, 8)
    assert (first.files_total, first.files) == (2, 2)
    assert "Storing 2 file(s): 8 chunk(s) to embed" in caplog.text
    assert "Stored 2/2 file(s), 8/8 chunk(s) embedded" in caplog.text

    # incremental: one new file and one changed; the unchanged one counts for nothing
    _cache(source, "added.md", 4)
    _cache(source, "new.md", 2, text="changed")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=LOGGER):
        second = _store(source, store)
    assert (second.initial_total, second.chunks_total, second.chunks) == (6, 6, 6)
    assert (second.files_total, second.files) == (3, 3)
    assert "Stored 3/3 file(s), 6/6 chunk(s) embedded" in caplog.text

    # nothing to embed: a total of 0 and no progress lines
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=LOGGER):
        third = _store(source, store)
    assert (third.initial_total, third.chunks) == (0, 0)
    assert "chunk(s) to embed" not in caplog.text
    assert "Stored 3/3" not in caplog.text


def test_the_terminal_line_shows_chunks_and_files_against_their_totals(
    tmp_path: Path, recording: type[Recording], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "papers"
    _cache(source, "a.md", 3)
    _cache(source, "b.md", 2, old=True)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    progress = _store(source, tmp_path / "store")
    (task,) = progress._progress.tasks
    assert (task.completed, task.total) == (5, 5)
    assert task.fields["files"] == "2/2"


def test_the_plan_is_corrected_as_files_arrive(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger(LOGGER)
    with StoreProgress(logger, plan={"same.md": 0, "cut.md": 6}) as progress:
        assert progress.chunks_total == 6
        progress.begin_file("same.md", 4)  # the store lost it: added again
        progress.advance(4)
        progress.file_done("same.md", skipped=False)
        progress.begin_file("cut.md", 6, done=5)  # a killed run stored 5 of its 6 chunks
        progress.advance(1)
        progress.file_done("cut.md", skipped=False)
        progress.file_done("late.md", skipped=True)  # not in the plan
    assert (progress.chunks, progress.chunks_total) == (5, 5)
    assert (progress.files, progress.files_total) == (3, 3)
    with StoreProgress(logger) as unplanned:  # a one-pass iterator: no total
        unplanned.begin_file("a.md", 2)
        unplanned.advance(2)
        unplanned.file_done("a.md", skipped=False)
    assert (unplanned.chunks, unplanned.chunks_total, unplanned.files_total) == (2, None, None)


def _peak_bytes(results: FoldedResults) -> tuple[int, dict[Path, tuple[str, int]]]:
    tracemalloc.start()
    try:
        counts = results.chunk_counts()
        return tracemalloc.get_traced_memory()[1], counts
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("old", [False, True], ids=["recorded", "old-entries"])
def test_counting_holds_at_most_one_entry_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: bool
) -> None:
    text = "axon " * 2000  # ~10 kB a chunk, 20 chunks a file: ~200 kB an entry
    files = [_cache(tmp_path, f"f{i:02}.md", 20, text=text, old=old) for i in range(20)]
    entry_size = max(p.stat().st_size for p in ChunkCache(tmp_path).entries())

    def no_chunks(*_: object) -> Document:
        raise AssertionError("a chunk was built while counting")

    monkeypatch.setattr(chunk_cache, "_doc_from_json", no_chunks)
    monkeypatch.setattr(chunk_cache, "_HASH_BLOCK", 1 << 14)  # hashing's buffer out of the way
    results = fold_cached_results(tmp_path, None, files, logging.getLogger(LOGGER))
    peak, counts = _peak_bytes(results)
    assert sorted(n for _, n in counts.values()) == [20] * 20
    # all 20 entries together are 20 * entry_size; one entry parsed is a few times its size
    assert peak < (5 * entry_size if old else 64_000), (peak, entry_size)


def test_unchanged_files_add_no_progress_lines(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An incremental run over 11 files, one of them new: two lines, not eleven."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    caplog.set_level(logging.INFO, logger=LOGGER)
    plan = {f"old{i}.md": 0 for i in range(10)} | {"new.md": 12}
    with StoreProgress(logging.getLogger(LOGGER), plan=plan) as progress:
        for i in range(10):
            progress.file_done(f"old{i}.md", skipped=True)
        progress.begin_file("new.md", 12)
        progress.advance(12)
        progress.file_done("new.md", skipped=False)
    assert [r.getMessage() for r in caplog.records if r.name == LOGGER] == [
        "Storing 11 file(s): 12 chunk(s) to embed",
        "Stored 11/11 file(s), 12/12 chunk(s) embedded",
    ]
