"""Real Docling conversion and chunking of every test format, in-process.

One module-scoped ``chunk_all`` run over a small mixed corpus (Markdown, HTML, DOCX, a
text PDF, a scanned PDF, and broken PDFs) backs most assertions, so Docling and the
tokenizer load once.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ingest_corpus import (
    sample_paragraphs,
    write_docx,
    write_html,
    write_junk_pdf,
    write_markdown,
    write_scanned_pdf,
    write_text_pdf,
    write_truncated_pdf,
    write_zero_page_pdf,
)
from klea_utils.stores._ingest.convert.conversion import Converter, validate_device
from klea_utils.stores._ingest.pdf import ocr as _ocr
from klea_utils.stores.chunk_cache import iter_cached_files
from klea_utils.stores.ingest_exceptions import ConversionError, OcrUnavailableError
from klea_utils.stores.ingestion import StoresBuilder


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def text(self, level: int = logging.WARNING) -> str:
        return "\n".join(r.getMessage() for r in self.records if r.levelno >= level)


@pytest.fixture(scope="module")
def run(offline: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("conversion")
    paras = sample_paragraphs(3, words=60)
    write_markdown(root / "notes.md", "Markdown Title", paras)
    write_html(root / "page.html", "Html Title", paras)
    write_docx(root / "report.docx", "Docx Title", paras)
    text_pdf = write_text_pdf(root / "paper.pdf", "Pdf Title", paras)
    write_scanned_pdf(root / "scan.pdf", ["OCR TESTING WORDS", "SECOND SCANNED LINE"])
    write_zero_page_pdf(root / "empty.pdf")
    write_truncated_pdf(root / "cut.pdf", text_pdf)
    write_junk_pdf(root / "junk.pdf")
    handler = _Records()
    logger = logging.getLogger("test-conversion")
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    worker_logger = logging.getLogger("klea_utils.stores.chunk_worker")
    worker_logger.addHandler(handler)
    try:
        builder = StoresBuilder("huggingface:all-MiniLM-L6-v2", logger, max_tokens=128)
        headings = builder.chunk_all(root, in_process=True)
    finally:
        logger.removeHandler(handler)
        worker_logger.removeHandler(handler)
    cached = {c.file_path.name: c for c in iter_cached_files(root)}
    return {"root": root, "headings": headings, "cached": cached, "log": handler}


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("notes.md", "Markdown Title"),
        ("page.html", "Html Title"),
        ("report.docx", "Docx Title"),
        ("paper.pdf", "Pdf Title"),
    ],
)
def test_formats_convert_and_chunk_with_headings(
    run: dict[str, Any], name: str, title: str
) -> None:
    cached = run["cached"][name]
    assert cached.docs
    for doc in cached.docs:
        assert doc.metadata["file_name"] == name
        assert doc.metadata["file_hash"] == cached.file_hash
        assert doc.metadata["headings"][0] == title
        assert doc.metadata["headings"][-1].startswith("Section ")
        # contextualize() prepends the heading chain to the chunk text
        assert doc.page_content.startswith(title)
    assert f"{title} > Section 1" in run["headings"][name]
    assert "DEFAULT" in run["headings"][name]
    assert isinstance(run["headings"][name]["DEFAULT"], dict)


def test_chunk_text_is_normalized_and_within_budget(run: dict[str, Any]) -> None:
    from klea_utils.stores._ingest.chunking.token_counter import load_token_counter
    from klea_utils.stores.utils import normalize_text

    counter = load_token_counter("BAAI/bge-m3", logging.getLogger("t"))
    for cached in run["cached"].values():
        for doc in cached.docs:
            assert normalize_text(doc.page_content) == doc.page_content
            body = doc.page_content
            assert counter.count(body) <= 128 + 16  # headings may add a few


def test_scanned_pdf_is_read_back_by_tesseract(run: dict[str, Any]) -> None:
    text = " ".join(d.page_content for d in run["cached"]["scan.pdf"].docs)
    assert "OCR TESTING WORDS" in text
    assert "SECOND SCANNED LINE" in text


def test_broken_pdfs_fail_with_named_errors_and_the_rest_succeed(run: dict[str, Any]) -> None:
    errors = run["log"].text(logging.INFO)
    assert "5 ok, 0 with zero chunks, 3 failed" in errors
    assert "empty.pdf: empty document: the PDF has zero pages" in errors
    assert "cut.pdf: cannot be opened: the PDF is damaged or truncated (pdfium: " in errors
    assert "junk.pdf: cannot be opened: not a PDF file" in errors
    assert set(run["headings"]) == {"notes.md", "page.html", "report.docx", "paper.pdf", "scan.pdf"}


def test_offline_fallbacks_warn_once_naming_what_is_lost(run: dict[str, Any]) -> None:
    warnings = run["log"].text()
    assert warnings.count("model-free path") == 1
    assert "scanned or unreadable pages are OCRed" in warnings
    assert "artifacts_path" in warnings
    # The default embedder's own tokenizer counts the chunks: no tokenizer fallback.
    assert "'BAAI/bge-m3'" not in warnings


def test_max_tokens_beyond_the_embedder_is_refused_unless_forced(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("t")
    with pytest.raises(ValueError, match=r"max_tokens=450 is more than the 256 tokens") as info:
        StoresBuilder("huggingface:all-MiniLM-L6-v2", logger, max_tokens=450)
    assert "\n" not in str(info.value)
    with caplog.at_level(logging.WARNING):
        forced = StoresBuilder(
            "huggingface:all-MiniLM-L6-v2", logger, max_tokens=450, force_max_tokens=True
        )
    assert forced.max_tokens == 450
    assert "max_tokens=450 exceeds the 256 tokens" in caplog.text


def test_default_chunk_budget_and_tokenizer_follow_the_embedder() -> None:
    logger = logging.getLogger("t")
    minilm = StoresBuilder("huggingface:all-MiniLM-L6-v2", logger)
    assert minilm.max_tokens == 256
    assert "minilm" in minilm.tokenizer_model.lower()
    bge = StoresBuilder("huggingface:BAAI/bge-m3", logger)
    assert (bge.max_tokens, bge.tokenizer_model) == (450, "BAAI/bge-m3")


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "cpu:0", ""])
def test_bad_device_is_rejected_by_name(bad: str) -> None:
    with pytest.raises(ValueError, match="device must be one of"):
        StoresBuilder("m", logging.getLogger("t"), device=bad)


@given(
    st.sampled_from(["auto", "cpu", "cuda", "mps"]) | st.integers(0, 15).map(lambda n: f"cuda:{n}")
)
def test_valid_devices_pass(device: str) -> None:
    assert validate_device(device) == device


def test_converter_errors_name_the_file(offline: None, tmp_path: Path) -> None:
    converter = Converter(do_ocr=False)
    with pytest.raises(ConversionError, match=r"junk\.pdf: cannot be opened: not a PDF") as info:
        converter.convert(write_junk_pdf(tmp_path / "junk.pdf"))
    assert info.value.path.name == "junk.pdf"


def test_ocr_without_tesseract_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The model-free PDF path: a scan whose pages need OCR, with no tesseract on PATH.
    from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline

    scan = write_scanned_pdf(tmp_path / "scan.pdf", ["TEXT"])
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert not _ocr.tesseract_available()
    with pytest.raises(OcrUnavailableError, match=r"page\(s\) 1 need OCR.*tesseract-ocr") as info:
        convert_pdf_offline(scan, do_ocr=True)
    assert info.value.path == scan


def test_scanned_pdf_without_ocr_gives_zero_chunks(offline: None, tmp_path: Path) -> None:
    write_scanned_pdf(tmp_path / "scan.pdf", ["TEXT"])
    builder = StoresBuilder("m", logging.getLogger("t"), max_tokens=128, do_ocr=False)
    assert builder.chunk_all(tmp_path, in_process=True) == {}
    assert list(iter_cached_files(tmp_path)) == []


def test_a_long_section_is_counted_without_a_transformers_warning(
    offline: None, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A section longer than the model's input is measured before it is split: silently."""
    logger = logging.getLogger("test-conversion-long")
    one_section = [" ".join(sample_paragraphs(12, words=80))]  # far over 512 word pieces
    write_markdown(tmp_path / "long.md", "Long Title", one_section)
    builder = StoresBuilder("huggingface:all-MiniLM-L6-v2", logger)
    builder.chunk_all(tmp_path, in_process=True)
    cached = {c.file_path.name: c for c in iter_cached_files(tmp_path)}
    assert len(cached["long.md"].docs) > 2  # it was long, and it was split
    assert "Token indices sequence length" not in capfd.readouterr().err
