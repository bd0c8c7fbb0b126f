"""Messages that say what is wrong with a file (issue 19, item 6)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from ingest_corpus import sample_paragraphs, write_markdown
from klea_utils.stores.ingestion import StoresBuilder
from reportlab.pdfgen import canvas

pytestmark = pytest.mark.slow


def _encrypted_pdf(path: Path) -> Path:
    pdf = canvas.Canvas(str(path), encrypt="secret")  # a user password: opening needs it
    pdf.drawString(72, 720, "Confidential results on dendritic spines.")
    pdf.showPage()
    pdf.save()
    return path


def test_encrypted_pdf_and_empty_markdown_are_named_for_what_they_are(
    tmp_path: Path, offline: None, caplog: pytest.LogCaptureFixture
) -> None:
    source = tmp_path / "papers"
    write_markdown(source / "good.md", "Good", sample_paragraphs(2, seed=1))
    _encrypted_pdf(source / "locked.pdf")
    (source / "empty.md").write_text("", encoding="utf-8")
    logger = logging.getLogger("klea-test-messages")
    logger.setLevel(logging.INFO)
    with caplog.at_level(logging.INFO):
        headings = StoresBuilder("m", logger, max_tokens=128).chunk_all(source, in_process=True)
    assert set(headings) == {"good.md"}
    assert "locked.pdf: password needed: the PDF is password-protected" in caplog.text
    assert "damaged or truncated" not in caplog.text
    empty_lines = [line for line in caplog.text.splitlines() if "empty.md" in line]
    assert empty_lines
    assert not any("scanned PDF" in line for line in empty_lines)
