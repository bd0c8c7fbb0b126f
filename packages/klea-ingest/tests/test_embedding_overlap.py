"""Embedding during conversion (issue 40): the same stored chunks and vectors, errors named.

A build embeds each converted file's chunks in a thread of its own process while the
workers convert the others (``_ingest/store/overlap_embedder.py``); the store phase looks
each text up in the table of early vectors before embedding it. Checked on the sample
corpus's small real PDFs and a Markdown file, converted for real, embedded with the
packaged MiniLM on onnxruntime (int8, one text per run).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.store.concurrent_runs import ConcurrentRuns
from klea_utils.stores._ingest.store.document_embedder import (
    DocumentEmbedder,
    load_document_embedder,
)
from klea_utils.stores._ingest.store.early_vectors import EarlyVectors
from klea_utils.stores._ingest.store.lazy_embeddings import LazyEmbeddings
from klea_utils.stores._ingest.store.overlap_embedder import (
    OverlapEmbedder,
    start_overlap,
    stored_versions,
)
from klea_utils.stores.chunk_cache import iter_cached_files
from klea_utils.stores.ingest_exceptions import EmbeddingError
from klea_utils.stores.ingestion import StoresBuilder, _submitter
from klea_utils.stores.onnx_minilm import available_cores
from langchain_core.embeddings import Embeddings

MODEL = "huggingface:all-MiniLM-L6-v2"
SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "corpus" / "papers"
FILES = (
    "climate-sensitivity.pdf",
    "graphene-thermal-conductivity.pdf",
    "quantum-error-correction.pdf",
    "crispr-off-target.md",
)
LOG = logging.getLogger("klea-test-overlap")


def _papers(folder: Path) -> Path:
    source = folder / "papers"
    source.mkdir(parents=True)
    for name in FILES:
        shutil.copy2(SAMPLE / name, source / name)
    return source


def _builder(*, overlap: bool) -> StoresBuilder:
    return StoresBuilder(MODEL, LOG, max_tokens=60, device="cpu", embed_during_conversion=overlap)


def _chroma(folder: Path) -> dict[str, Any]:
    from klea_utils.stores.utils import instantiate_vector_store

    store = instantiate_vector_store(f"chroma:{folder}", "papers", None, LOG)
    got = store.get(include=["documents", "metadatas", "embeddings"])
    rows = zip(got["ids"], got["documents"], got["metadatas"], got["embeddings"], strict=True)
    return {i: (doc, meta, [float(x) for x in vec]) for i, doc, meta, vec in rows}


def _store(builder: StoresBuilder, source: Path, work: Path) -> dict[str, Any]:
    builder.store_all(
        builder.writer.load_and_fold_results(source), f"chroma:{work}", "papers", source
    )
    return _chroma(work)


@pytest.fixture(scope="module")
def sequential_build(offline: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample built the sequential way (convert everything, then embed and store)."""
    work = tmp_path_factory.mktemp("sequential")
    source = _papers(work)
    _builder(overlap=False).build(str(source), f"chroma:{work / 'chroma'}", "papers")
    return work


@pytest.fixture(scope="module")
def sequential(sequential_build: Path) -> dict[str, Any]:
    return _chroma(sequential_build / "chroma")


def test_overlapped_build_stores_the_sequential_chunks_and_vectors(
    sequential: dict[str, Any], tmp_path: Path
) -> None:
    source = _papers(tmp_path)
    builder = _builder(overlap=True)
    builder.build(str(source), f"chroma:{tmp_path / 'chroma'}", "papers", workers=1)

    assert len(sequential) >= len(FILES)
    assert _chroma(tmp_path / "chroma") == sequential  # ids, texts, metadata, exact vectors
    embeddings = builder.writer.embeddings
    assert isinstance(embeddings, LazyEmbeddings)
    assert embeddings.early is None  # the table is released with the build


def test_vectors_embedded_during_conversion_are_the_ones_stored(
    sequential: dict[str, Any], tmp_path: Path
) -> None:
    """Every file handed to the thread before the store phase: no chunk is embedded twice."""
    source = _papers(tmp_path)
    builder = _builder(overlap=True)
    overlap = start_overlap(builder.writer.embeddings, source, LOG)
    assert overlap is not None
    builder._chunk_all(source, False, None, 200, in_process=True, on_converted=_submitter(overlap))
    overlap.close(finish=True)
    texts = {d.page_content for cached in iter_cached_files(source) for d in cached.docs}
    assert overlap.files == len(FILES)
    assert len(overlap.table) == len(texts)
    embeddings = builder.writer.embeddings
    assert isinstance(embeddings, LazyEmbeddings)
    assert not embeddings.loaded
    overlap.lend(embeddings)  # the store phase runs the thread's session, a text per core
    assert overlap.embedder is not None
    lent = embeddings.model()
    assert isinstance(lent, ConcurrentRuns)
    assert isinstance(overlap.embedder.embeddings, ConcurrentRuns)
    assert lent.model is overlap.embedder.embeddings.model
    assert lent.runs == available_cores()
    assert embeddings.identity == overlap.table.identity

    stored = _store(builder, source, tmp_path / "chroma")

    assert stored == sequential
    assert overlap.table.taken == len(texts)
    assert len(overlap.table) == 0


@pytest.mark.parametrize("force", [False, True])
def test_files_the_collection_holds_are_not_embedded_again(
    sequential_build: Path, force: bool
) -> None:
    """A build converting files again (new chunking rules) whose chunks the store holds:
    the thread leaves them alone, unless the collection is rebuilt (``force``)."""
    source = sequential_build / "papers"
    uri = f"chroma:{sequential_build / 'chroma'}"
    stored = stored_versions(source, uri, "papers", "huggingface:all-MiniLM-L6-v2", force=force)
    builder = _builder(overlap=True)
    overlap = start_overlap(builder.writer.embeddings, source, LOG, stored)
    assert overlap is not None
    cached = list(iter_cached_files(source))
    for entry in cached:
        overlap.submit(str(entry.file_path), entry.file_hash)
    overlap.close(finish=True)
    if force:
        assert overlap.skipped == 0
        assert overlap.texts > 0
    else:
        assert overlap.skipped == len(cached) == len(FILES)
        assert overlap.texts == 0
    overlap.detach(builder.writer.embeddings)


class _BrokenEmbeddings(Embeddings):
    """An embedder that cannot embed the graphene paper's text (a real exception)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if any("graphene" in text.lower() for text in texts):
            raise ValueError("input rank 3 is not 2")
        return [[1.0, 0.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def test_a_failure_in_the_embedding_thread_names_the_file(offline: None, tmp_path: Path) -> None:
    source = _papers(tmp_path)
    table = EarlyVectors("broken")
    overlap = OverlapEmbedder(
        lambda: DocumentEmbedder(_BrokenEmbeddings(), "broken"), table, source, LOG
    ).start()
    builder = _builder(overlap=True)

    def convert_then_finish() -> None:
        builder._chunk_all(
            source, False, None, 200, in_process=True, on_converted=_submitter(overlap)
        )
        overlap.close(finish=True)

    with pytest.raises(EmbeddingError) as caught:
        convert_then_finish()
    overlap.close(check=False)

    error = caught.value
    assert error.file_name == "graphene-thermal-conductivity.pdf"
    assert str(error).startswith("graphene-thermal-conductivity.pdf: its chunks could not be")
    assert "ValueError: input rank 3 is not 2" in str(error)
    assert str(tmp_path) not in str(error)
    assert isinstance(error.__cause__, ValueError)
    # the conversions are cached: a run again goes on from there
    assert {c.file_path.name for c in iter_cached_files(source)} >= {FILES[0], FILES[1]}


def test_the_thread_does_nothing_where_vectors_depend_on_more_than_their_text(
    tmp_path: Path,
) -> None:
    overlap = OverlapEmbedder(lambda: None, EarlyVectors(""), tmp_path, LOG).start()
    overlap.submit(str(tmp_path / "a.pdf"), "0" * 64)
    overlap.close(finish=True)
    assert (overlap.files, overlap.texts, overlap.embeddings) == (0, 0, None)
    assert start_overlap(_BrokenEmbeddings(), tmp_path, LOG) is None  # a caller's embedder


@given(
    texts=st.lists(st.text(max_size=40), max_size=12),
    cap=st.integers(min_value=0, max_value=6 * 4 * 3),
)
def test_early_vectors_hold_at_most_their_cap_and_give_each_back_once(
    texts: list[str], cap: int
) -> None:
    table = EarlyVectors("e", max_bytes=cap)
    held = {}
    for index, text in enumerate(texts):
        vector = [float(index), 0.5, -1.25]
        if table.put(text, vector):
            held.setdefault(text, vector)
    assert len(table) == len(held) <= cap // 12
    for text, vector in held.items():
        assert text in table
        assert table.take(text) == vector
        assert table.take(text) is None
    assert len(table) == 0
    assert not table.full or cap == 0


def test_early_vectors_refuse_a_negative_cap() -> None:
    with pytest.raises(ValueError, match="max_bytes must be >= 0, got -1"):
        EarlyVectors("e", max_bytes=-1)


def test_a_lookup_by_another_embedder_embeds_again(tmp_path: Path) -> None:
    lazy = LazyEmbeddings(MODEL, "cpu", LOG)
    lazy.early = EarlyVectors("someone else")
    lazy.early.put("a text", [1.0] * 384)
    (vector,) = lazy.embed_documents(["a text"])
    assert vector != [1.0] * 384
    assert lazy.early.taken == 0


@pytest.mark.parametrize("flag", [True, False])
def test_the_cli_option_reaches_the_builder(flag: bool) -> None:
    from klea_utils.stores._ingest.cli_options import make_builder

    builder = make_builder(MODEL, LOG, device="cpu", embed_during_conversion=flag)
    assert builder.embed_during_conversion is flag
    overlap = builder._start_overlap(Path("/nonexistent"), _targets())
    assert (overlap is None) is not flag
    if overlap is not None:
        overlap.close()


def _targets() -> Any:
    from klea_utils.stores.store_writer import StoreTargets

    return StoreTargets("chroma:/nonexistent/chroma", "papers", Path("/nonexistent"))


def test_the_store_phase_embeds_the_next_file_while_writing_one_the_same_vectors(
    sequential: dict[str, Any], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The store phase embeds file k + 1 in a thread while it writes file k (``embed_ahead``):
    the chunks and exact vectors of a store phase given ready embeddings (no look-ahead),
    every file but the first embedded ahead, and the table released afterwards."""
    source = _papers(tmp_path)
    builder = _builder(overlap=False)
    builder._chunk_all(source, False, None, 200, in_process=True)
    ready = load_document_embedder(MODEL, "cpu", LOG)
    file_by_file = _builder(overlap=False)
    file_by_file.writer.embeddings = ready.embeddings
    assert _store(file_by_file, source, tmp_path / "file-by-file") == sequential

    with caplog.at_level(logging.INFO, logger=LOG.name):
        ahead = _store(builder, source, tmp_path / "ahead")

    assert ahead == sequential
    first = next(iter(iter_cached_files(source)))
    later = {d.page_content for c in iter_cached_files(source) for d in c.docs}
    later -= {d.page_content for d in first.docs}
    said = [r.getMessage() for r in caplog.records if "of the next file while writing" in r.message]
    assert said, "the look-ahead embedded nothing"
    assert int(said[0].split()[1]) >= len(later)
    embeddings = builder.writer.embeddings
    assert isinstance(embeddings, LazyEmbeddings)
    assert embeddings.early is None


def test_files_the_collection_holds_are_not_embedded_ahead(tmp_path: Path) -> None:
    """A second store phase over unchanged files embeds nothing, ahead or not."""
    source = _papers(tmp_path)
    builder = _builder(overlap=False)
    builder._chunk_all(source, False, None, 200, in_process=True)
    _store(builder, source, tmp_path / "chroma")
    again = _builder(overlap=False)
    _store(again, source, tmp_path / "chroma")
    embeddings = again.writer.embeddings
    assert isinstance(embeddings, LazyEmbeddings)
    assert not embeddings.loaded


class _FailingLoad(LazyEmbeddings):
    """The build's embeddings whose model cannot be loaded (an unreachable model, say)."""

    def model(self) -> Embeddings:
        raise RuntimeError("no model here")


def test_a_failing_look_ahead_hands_every_file_on_and_raises_nothing() -> None:
    """The look-ahead stops quietly; the store phase embeds and reports errors itself."""
    from klea_utils.stores._ingest.store.embed_ahead import embed_ahead
    from langchain_core.documents import Document

    files = [(f"f{i}.pdf", f"h{i}", [Document(page_content=f"text {i}")]) for i in range(3)]
    failing = _FailingLoad(MODEL, "cpu", LOG)
    assert list(embed_ahead(iter(files), failing, lambda f: False, LOG)) == files
    assert failing.early is None
    assert list(embed_ahead(iter(files), None, lambda f: False, LOG)) == files
    assert list(embed_ahead(iter([]), failing, lambda f: False, LOG)) == []
