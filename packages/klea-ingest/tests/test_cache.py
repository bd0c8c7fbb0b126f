"""The chunk cache: atomic entries, quarantine of corrupt ones, pruning, parent kill -9."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ingest_corpus import sample_paragraphs, write_markdown
from klea_utils.stores.chunk_cache import (
    CachedFile,
    ChunkCache,
    compute_file_hash,
    iter_cached_files,
)
from klea_utils.stores.ingestion import StoresBuilder
from langchain_core.documents import Document


@pytest.fixture(scope="module")
def builder(offline: None) -> StoresBuilder:
    logger = logging.getLogger("test-cache")
    logger.setLevel(logging.INFO)
    return StoresBuilder("m", logger, max_tokens=128)


def _corpus(root: Path, count: int) -> list[Path]:
    return [
        write_markdown(root / f"doc{i}.md", f"Title {i}", sample_paragraphs(2, seed=i))
        for i in range(count)
    ]


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=25)
@given(
    texts=st.lists(_text, max_size=5),
    headings=st.lists(_text, max_size=3),
    metadata=st.dictionaries(st.text(max_size=8), st.integers() | _text, max_size=4),
)
def test_entries_round_trip(
    tmp_path: Path, texts: list[str], headings: list[str], metadata: dict[str, object]
) -> None:
    source = tmp_path / "doc.md"
    source.write_text("x", encoding="utf-8")
    file_hash = compute_file_hash(source)
    docs = [Document(page_content=t, metadata={"headings": headings}) for t in texts]
    cache = ChunkCache(tmp_path)
    cache.store(CachedFile(source, file_hash, docs, metadata, [" > ".join(headings)]))
    loaded = cache.load(source, file_hash)
    assert loaded is not None
    assert loaded.docs == docs
    assert loaded.metadata == metadata
    assert loaded.file_path == source.resolve()
    assert not list(cache.chunks_dir.glob("*.tmp"))


def test_cached_file_validates(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sha256"):
        CachedFile(tmp_path / "a.md", "nothex")
    with pytest.raises(TypeError, match="Document"):
        CachedFile(tmp_path / "a.md", "0" * 64, docs=["text"])  # type: ignore[list-item]


def test_corrupt_entry_is_quarantined_and_rebuilt(
    builder: StoresBuilder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (doc,) = _corpus(tmp_path, 1)
    builder.chunk_all(tmp_path, in_process=True)
    cache = ChunkCache(tmp_path)
    (entry,) = cache.entries()
    entry.write_bytes(b"\x80\x04 garbage, not a pickle")
    with caplog.at_level(logging.WARNING):
        headings = builder.chunk_all(tmp_path, in_process=True)
    assert "Corrupt cache entry" in caplog.text
    assert (entry.parent / (entry.name + ".corrupt")).is_file()
    assert "Title 0 > Section 1" in headings["doc0.md"]
    loaded = cache.load(doc, compute_file_hash(doc))
    assert loaded is not None
    assert loaded.docs


def test_deleted_and_changed_files_are_pruned(builder: StoresBuilder, tmp_path: Path) -> None:
    docs = _corpus(tmp_path, 3)
    builder.chunk_all(tmp_path, in_process=True)
    assert len(ChunkCache(tmp_path).entries()) == 3
    docs[0].unlink()
    write_markdown(docs[1], "Changed", sample_paragraphs(1, seed=9))
    headings = builder.chunk_all(tmp_path, in_process=True)
    assert set(headings) == {"doc1.md", "doc2.md"}
    assert "Changed > Section 1" in headings["doc1.md"]
    assert len(ChunkCache(tmp_path).entries()) == 2
    missing: list[Path] = []
    cached = list(iter_cached_files(tmp_path, missing=missing))
    assert [c.file_path.name for c in cached] == ["doc1.md", "doc2.md"]
    assert missing == []


def test_iter_cached_files_reports_files_without_entries(tmp_path: Path) -> None:
    (doc,) = _corpus(tmp_path, 1)
    missing: list[Path] = []
    assert list(iter_cached_files(tmp_path, missing=missing)) == []
    assert missing == [doc]


_CHILD = """
import logging, sys
from pathlib import Path
from klea_utils.stores.ingestion import StoresBuilder
logging.basicConfig(level=logging.INFO)
StoresBuilder("m", logging.getLogger("child"), max_tokens=128).chunk_all(
    Path(sys.argv[1]), in_process=True
)
"""


@pytest.mark.slow
def test_parent_kill_9_then_rerun_converts_only_what_is_missing(
    builder: StoresBuilder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _corpus(tmp_path, 40)
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    cache = ChunkCache(tmp_path)
    deadline = time.monotonic() + 240
    while len(cache.entries()) < 3 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    done = len(cache.entries())
    assert 3 <= done < 40, "the kill should land mid-run"
    for entry in cache.entries():  # every entry left behind is complete
        name = entry.name.split("-")[0]
        assert cache.load(
            next(p for p in tmp_path.glob("*.md") if compute_file_hash(p) == name), name
        )
    with caplog.at_level(logging.INFO, logger="test-cache"):
        headings = builder.chunk_all(tmp_path, in_process=True)
    assert len(headings) == 40
    assert f"40 source file(s): {done} cached, {40 - done} to convert" in caplog.text
    assert not list(cache.chunks_dir.glob("*.tmp"))
    assert not list(cache.chunks_dir.glob("*.corrupt"))


def test_a_changed_chunking_setting_re_chunks_and_an_unchanged_one_does_not(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, offline: None
) -> None:
    (doc,) = _corpus(tmp_path, 1)
    logger = logging.getLogger("test-cache-settings")
    logger.setLevel(logging.INFO)

    def chunks(**options: int) -> list[Document]:
        StoresBuilder("m", logger, **options).chunk_all(tmp_path, in_process=True)
        (cached,) = iter_cached_files(tmp_path)
        return cached.docs

    wide = chunks(max_tokens=128)
    with caplog.at_level(logging.INFO):
        assert chunks(max_tokens=128) == wide
    assert "1 cached, 0 to convert" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO):
        narrow = chunks(max_tokens=40)
    assert "0 cached, 1 to convert" in caplog.text
    assert len(narrow) > len(wide)
    overlapped = chunks(max_tokens=40, overlap_sentences=1)
    assert len(overlapped) >= len(narrow)
    assert [d.metadata["chunk_index"] for d in overlapped] == list(range(len(overlapped)))
    # a cache opened with other settings does not hand the entry out; one without, does
    settings = ChunkCache(tmp_path).load(doc, compute_file_hash(doc))
    assert settings is not None
    other = {"rules": 2, "max_tokens": 40, "merge_peers": True, "overlap_sentences": 0}
    assert ChunkCache(tmp_path, chunking=other).load(doc, compute_file_hash(doc)) is None
