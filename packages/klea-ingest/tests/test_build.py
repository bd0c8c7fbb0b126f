"""build() from a generated corpus into Chroma, Qdrant (local) and PGVector, queried back."""

from __future__ import annotations

import logging
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from ingest_corpus import (
    sample_paragraphs,
    write_docx,
    write_html,
    write_markdown,
    write_scanned_pdf,
    write_text_pdf,
)
from ingest_store_support import query_store
from klea_utils.stores.ingestion import StoresBuilder

pytestmark = pytest.mark.slow
MODEL = "huggingface:all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("corpus")
    write_markdown(src / "alpha.md", "Alpha Dendrites", sample_paragraphs(3, seed=1))
    write_html(src / "beta.html", "Beta Synapses", sample_paragraphs(3, seed=2))
    write_docx(src / "gamma.docx", "Gamma Cortex", sample_paragraphs(3, seed=3))
    write_text_pdf(src / "delta.pdf", "Delta Plasticity", sample_paragraphs(3, seed=4))
    write_scanned_pdf(
        src / "scan.pdf", ["Scanned Hippocampus Report", "place cells fire in sequence"]
    )
    return src


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="klea-ingest-pg-", ignore_cleanup_errors=True) as d:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
            import pgserver

            server = pgserver.get_server(Path(d) / "pgdata", cleanup_mode="delete")
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        yield server.get_uri()
        server.cleanup()


def _builder() -> StoresBuilder:
    return StoresBuilder(
        MODEL, logging.getLogger("klea-test-build"), max_tokens=200, embed_batch_size=8
    )


EXPECTED = {"alpha.md", "beta.html", "gamma.docx", "delta.pdf"}


def _check(store_uri: str, collection: str, summary) -> None:
    stored = {p.name for p in summary.missing_files}
    assert not (EXPECTED & stored), summary.missing_files
    assert summary.files_added >= 4
    hits = query_store(store_uri, collection, "Gamma Cortex", k=10)
    names = {h.metadata["file_name"] for h in hits}
    assert names <= EXPECTED | {"scan.pdf"}
    assert "gamma.docx" in names
    for hit in hits:
        assert hit.metadata["file_hash"]
        assert "_sources" not in hit.metadata


@pytest.fixture(params=["chroma", "qdrant", "pgvector"])
def store_uri(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """One backend per test, so a failing backend does not hide the others."""
    if request.param == "pgvector":
        return f"pgvector:{request.getfixturevalue('pg_url')}"
    return f"{request.param}:{tmp_path / request.param}"


def test_build_then_rebuild_skips_everything(corpus: Path, tmp_path: Path, store_uri: str) -> None:
    builder = _builder()
    bm25 = str(tmp_path / "papers.bm25")
    summary = builder.build(str(corpus), store_uri, "papers", bm25_path=bm25)
    _check(store_uri, "papers", summary)
    converted = _pdf_pages(builder.converted_files)  # none when an earlier backend's run cached all
    _check_timing(builder, corpus, pages=converted, chunks=summary.chunks_added)
    again = builder.build(str(corpus), store_uri, "papers", bm25_path=bm25)
    assert again.chunks_added == 0
    assert again.files_skipped == summary.files_added
    _check_timing(builder, corpus, pages=0, chunks=0)


def _pdf_pages(files: list[Path]) -> int:
    import pypdfium2 as pdfium

    return sum(len(pdfium.PdfDocument(str(path))) for path in files if path.suffix == ".pdf")


def _check_timing(builder: StoresBuilder, source: Path, *, pages: int, chunks: int) -> None:
    """The build timed its phases, counted what they worked on, and saved the record."""
    import json

    timing = builder.last_timing
    assert timing is not None
    assert list(timing.phases) == ["conversion", "store", "rest"]
    assert timing.phases["conversion"].pages == pages
    assert timing.phases["store"].chunks == chunks
    for phase in timing.phases.values():
        assert phase.wall_s > 0
        assert phase.cpu_s >= 0
    record = json.loads((source / ".klea-cache" / "papers.timing.json").read_text())
    assert record["phases"]["conversion"]["pages"] == pages
    assert record["phases"]["store"]["chunks"] == chunks
    assert record["total"]["wall_s"] == pytest.approx(timing.total().wall_s, abs=0.01)


def _stored_chunks(store_uri: str, collection: str) -> dict[str, str]:
    """Every chunk of ``alpha.md`` and ``beta.md`` in the collection: id -> text."""
    from klea_utils.stores._ingest.store.lazy_embeddings import LazyEmbeddings
    from klea_utils.stores.utils import instantiate_vector_store

    store = instantiate_vector_store(
        store_uri, collection, LazyEmbeddings(MODEL, "cpu"), logging.getLogger("klea-test")
    )
    try:
        assert store.has_index()  # built once, at the end of the collection's first run
        ids = [f"{name}:{i}" for name in ("alpha.md", "beta.md") for i in range(40)]
        return {str(doc.id): doc.page_content for doc in store.get_by_ids(ids)}
    finally:
        store._engine.dispose()


def test_pgvector_collections_of_one_database_keep_their_own_chunks(
    tmp_path: Path, pg_url: str
) -> None:
    """Same file names in two collections: LangChain keys rows by id across the database."""
    src = tmp_path / "src"
    write_markdown(src / "alpha.md", "Alpha Dendrites", sample_paragraphs(3, seed=1))
    write_markdown(src / "beta.md", "Beta Synapses", sample_paragraphs(3, seed=2))
    uri, builder = f"pgvector:{pg_url}", _builder()
    one = builder.build(str(src), uri, "lab-one", bm25_path=str(tmp_path / "one.bm25"))
    two = builder.build(str(src), uri, "lab-two", bm25_path=str(tmp_path / "two.bm25"))
    assert one.chunks_added == two.chunks_added > 0
    before = _stored_chunks(uri, "lab-one")
    assert len(before) == one.chunks_added
    assert _stored_chunks(uri, "lab-two") == before

    write_markdown(src / "beta.md", "Beta Revised", sample_paragraphs(1, seed=7))
    again = builder.build(str(src), uri, "lab-two", bm25_path=str(tmp_path / "two.bm25"))
    assert again.files_replaced == 1
    assert again.chunks_deleted > 0
    assert _stored_chunks(uri, "lab-one") == before
    revised = _stored_chunks(uri, "lab-two")
    assert any("Revised" in text for text in revised.values())
    assert {k: v for k, v in revised.items() if k.startswith("alpha")} == {
        k: v for k, v in before.items() if k.startswith("alpha")
    }
