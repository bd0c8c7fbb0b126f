"""Pre-check: OCR classification of real PDFs, progress logging, organise without loss."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ingest_corpus import (
    sample_paragraphs,
    write_junk_pdf,
    write_markdown,
    write_scanned_pdf,
    write_text_pdf,
    write_zero_page_pdf,
)
from klea_utils.stores import precheck
from klea_utils.stores.precheck import (
    IMAGE_PAGE_CHAR_THRESHOLD,
    IMAGE_PAGE_FRACTION,
    NO_OCR_DIR_NAME,
    NO_PAGES_NEEDS_OCR,
    OCR_DIR_NAME,
    PageStats,
    classify_directory,
    classify_pdf,
    format_precheck_report,
    organise_directory,
)


def test_documented_constants() -> None:
    assert IMAGE_PAGE_CHAR_THRESHOLD == 50
    assert IMAGE_PAGE_FRACTION == 0.5
    assert (OCR_DIR_NAME, NO_OCR_DIR_NAME) == ("ocr", "no-ocr")
    assert NO_PAGES_NEEDS_OCR is True


def test_text_pdf_needs_no_ocr(tmp_path: Path) -> None:
    result = classify_pdf(write_text_pdf(tmp_path / "t.pdf", "Title", sample_paragraphs(3)))
    assert not result.needs_ocr
    assert result.stats.pages == 1
    assert result.stats.image_pages == 0
    assert result.stats.total_chars > 300


def test_scanned_pdf_needs_ocr(tmp_path: Path) -> None:
    result = classify_pdf(write_scanned_pdf(tmp_path / "s.pdf", ["SCANNED PAGE TEXT"]))
    assert result.needs_ocr
    assert result.stats == PageStats(pages=1, image_pages=1, total_chars=0)


@pytest.mark.parametrize("writer", [write_zero_page_pdf, write_junk_pdf])
def test_unreadable_or_empty_pdfs_need_ocr(tmp_path: Path, writer: object) -> None:
    result = classify_pdf(writer(tmp_path / "bad.pdf"))  # type: ignore[operator]
    assert result.needs_ocr
    assert result.stats.pages == 0


def test_missing_pdf_is_conservatively_ocr(tmp_path: Path) -> None:
    assert classify_pdf(tmp_path / "gone.pdf").needs_ocr


@given(
    pages=st.integers(min_value=0, max_value=50),
    data=st.data(),
)
def test_decision_follows_the_image_page_fraction(pages: int, data: st.DataObject) -> None:
    image_pages = data.draw(st.integers(min_value=0, max_value=pages))
    stats = PageStats(pages=pages, image_pages=image_pages, total_chars=0)
    expected = NO_PAGES_NEEDS_OCR if pages == 0 else image_pages / pages >= IMAGE_PAGE_FRACTION
    assert precheck._decide(stats) is expected


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"pages": -1}, "pages"), ({"pages": 1, "image_pages": 2}, "image_pages")],
)
def test_page_stats_reject_impossible_values(kwargs: dict[str, int], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        PageStats(**kwargs)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("precheck")
    write_text_pdf(root / "a" / "paper.pdf", "A", sample_paragraphs(2))
    write_scanned_pdf(root / "b" / "paper.pdf", ["SCANNED"])
    write_text_pdf(root / "top.pdf", "Top", sample_paragraphs(2, seed=3))
    write_markdown(root / "notes.md", "Notes", sample_paragraphs(1))
    write_text_pdf(root / ".klea-cache" / "ignored.pdf", "X", sample_paragraphs(1))
    return root


def test_classify_directory_logs_progress_and_skips_artifacts(
    corpus: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="klea_utils.stores.precheck"):
        result = classify_directory(corpus)
    assert sorted(p.relative_to(corpus).as_posix() for p in result) == [
        "a/paper.pdf",
        "b/paper.pdf",
        "top.pdf",
    ]
    assert [p.relative_to(corpus).as_posix() for p, c in result.items() if c.needs_ocr] == [
        "b/paper.pdf"
    ]
    progress = [r for r in caplog.records if "PDFs classified" in r.getMessage()]
    assert len(progress) == 3  # every file for a small corpus
    assert "3/3" in progress[-1].getMessage()
    report = format_precheck_report(result)
    assert "PDFs checked: 3" in report
    assert "needing OCR: 1" in report
    assert "b/paper.pdf" in report


def test_organise_copies_and_keeps_relative_paths(corpus: Path, tmp_path: Path) -> None:
    import shutil

    src = tmp_path / "src"
    shutil.copytree(corpus, src)
    before = sorted(p.relative_to(src) for p in src.rglob("*") if p.is_file())
    ocr_dir, no_ocr_dir = organise_directory(src)
    assert ocr_dir == src / "ocr"
    assert no_ocr_dir == src / "no-ocr"
    assert (ocr_dir / "b" / "paper.pdf").read_bytes() == (src / "b" / "paper.pdf").read_bytes()
    assert (no_ocr_dir / "a" / "paper.pdf").read_bytes() == (src / "a" / "paper.pdf").read_bytes()
    assert (no_ocr_dir / "top.pdf").is_file()
    assert (no_ocr_dir / "notes.md").is_file()
    assert not (no_ocr_dir / ".klea-cache").exists()
    # originals untouched (copied, never moved); re-running is idempotent
    after = sorted(
        p.relative_to(src)
        for p in src.rglob("*")
        if p.is_file() and p.relative_to(src).parts[0] not in ("ocr", "no-ocr")
    )
    assert after == before
    organise_directory(src)
    assert sorted(p.relative_to(src) for p in ocr_dir.rglob("*") if p.is_file()) == [
        Path("ocr/b/paper.pdf")
    ]
    assert len([p for p in no_ocr_dir.rglob("*") if p.is_file()]) == 3


def test_organise_copies_dotfiles_to_no_ocr(tmp_path: Path) -> None:
    # Seed: "Non-PDF files (which never need OCR) are also copied to no-ocr/".
    (tmp_path / ".env").write_text("KEY=1\n", encoding="utf-8")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / ".hidden.md").write_text("# Hidden\n", encoding="utf-8")
    _, no_ocr_dir = organise_directory(tmp_path, {})
    assert (no_ocr_dir / ".env").read_text(encoding="utf-8") == "KEY=1\n"
    assert (no_ocr_dir / "notes" / ".hidden.md").is_file()
