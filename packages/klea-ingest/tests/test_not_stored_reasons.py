"""One true reason per file that is not stored, and no library noise (issue 24, items 2-4).

Through the real CLI in subprocesses, on small generated files: a password PDF, a PDF of
one blank page, a scan while ``tesseract`` is not on ``PATH``, a file that is no PDF, a page
tree that loops (pdfium refuses its second page, pypdf the whole tree), a file that times
out; and a page whose text lies outside its crop box, whose line across the crop edge used
to make Docling's document model warn (``UserWarning: Provenance bbox ... outside page
bounds``) from the worker.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ingest_corpus import sample_paragraphs, write_junk_pdf, write_scanned_pdf, write_text_pdf
from klea_utils.stores._ingest.convert.failures import failures_path
from klea_utils.stores._ingest.convert.not_stored import (
    CANNOT_OPEN,
    EMPTY_DOCUMENT,
    NO_READABLE_TEXT,
    OCR_NOT_INSTALLED,
    PASSWORD_NEEDED,
    TIME_OUT,
    no_chunks_reason,
    page_ranges,
)
from klea_utils.stores._ingest.pdf.offline_pdf import Recovery
from reportlab.lib.pagesizes import letter
from reportlab.pdfgen import canvas

pytestmark = pytest.mark.slow

ENV = {**os.environ, "KLEA_DOI_LOOKUP": "0", "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
ENV.pop("PYTHONWARNINGS", None)


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "klea_utils.stores.cli", *args],
        env=env or ENV,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def _build(source: Path, tmp: Path, *extra: str, env: dict[str, str] | None = None) -> Any:
    store = tmp / "stores"
    return _cli(
        "build",
        str(source),
        "--collection",
        "papers",
        "--store",
        f"chroma:{store / 'chroma'}",
        "--bm25-store",
        str(store / "bm25.pkl"),
        *extra,
        env=env,
    )


def _locked_pdf(path: Path) -> Path:
    pdf = canvas.Canvas(str(path), encrypt="secret")  # a user password: opening needs it
    pdf.drawString(72, 720, "Confidential results on dendritic spines.")
    pdf.showPage()
    pdf.save()
    return path


def _blank_pdf(path: Path) -> Path:
    pdf = canvas.Canvas(str(path), pagesize=letter)
    pdf.showPage()
    pdf.save()
    return path


def _looping_page_tree_pdf(path: Path) -> Path:
    """Page 1 is a real page; the tree's second kid is a Pages node whose kids loop."""
    text = b"BT /F1 14 Tf 72 720 Td (Pyramidal neurons integrate synaptic input.) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 2 /MediaBox [0 0 612 792] >>",
        b"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(text), text),
        b"<< /Type /Pages /Parent 2 0 R /Kids [7 0 R] /Count 1 >>",
        b"<< /Type /Pages /Parent 6 0 R /Kids [6 0 R] /Count 1 >>",
    ]
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(bytes(out))
    return path


def _text_outside_crop_box_pdf(path: Path) -> Path:
    """Text at the top of the media box, above a crop box that keeps only the page's foot
    (no text of the page: left out), and a line across the crop box's top edge, whose box
    runs past the page (Docling's document model warns about it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf = canvas.Canvas(str(path), pagesize=letter)
    pdf.setCropBox((0, 0, 612, 300))
    for n, para in enumerate(sample_paragraphs(3, words=12, seed=3)):
        pdf.drawString(72, 720 - 20 * n, para[:80])
        pdf.drawString(72, 200 - 20 * n, para[:80])
    pdf.drawString(72, 296, "A line across the crop box's top edge")
    pdf.showPage()
    pdf.save()
    return path


def _not_stored_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if "not stored:" in line]
    assert len(lines) == 1, stderr[-3000:]
    return lines[0]


@pytest.fixture(scope="module")
def reasons_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """One build of a folder with a good file and one file per reason; no tesseract."""
    tmp = tmp_path_factory.mktemp("reasons")
    source = tmp / "papers"
    write_text_pdf(source / "good.pdf", "Dendritic spines", sample_paragraphs(3, seed=1))
    _locked_pdf(source / "locked.pdf")
    _blank_pdf(source / "blank.pdf")
    write_scanned_pdf(source / "scan.pdf", ["SCANNED PAGE OF TEXT", "SECOND LINE"])
    write_junk_pdf(source / "junk.pdf")
    _looping_page_tree_pdf(source / "loop.pdf")
    _text_outside_crop_box_pdf(source / "cropped.pdf")
    bare = tmp / "bin"  # a PATH without tesseract: OCR is on but not installed
    bare.mkdir()
    result = _build(source, tmp, env={**ENV, "PATH": str(bare)})
    record = json.loads(failures_path(source).read_text(encoding="utf-8"))
    return {"result": result, "record": record, "source": source}


def test_each_file_not_stored_is_named_with_its_true_reason(reasons_run: dict[str, Any]) -> None:
    result = reasons_run["result"]
    assert result.returncode == 0, result.stderr[-3000:]  # good.pdf was stored
    line = _not_stored_line(result.stderr)
    assert line.startswith("4 file(s) not stored: ")
    assert f"locked.pdf ({PASSWORD_NEEDED}: the PDF is password-protected" in line
    assert f"blank.pdf ({EMPTY_DOCUMENT}: none of its 1 page(s) holds text or an image)" in line
    assert f"scan.pdf ({OCR_NOT_INSTALLED}: page(s) 1 need OCR" in line
    assert f"junk.pdf ({CANNOT_OPEN}: not a PDF file" in line
    assert "no cached chunks" not in result.stderr + result.stdout
    assert "scanned PDF without OCR?" not in result.stderr + result.stdout
    assert str(reasons_run["source"]) not in line  # the reason, not the path again


def test_the_failure_record_holds_the_same_reasons(reasons_run: dict[str, Any]) -> None:
    record = reasons_run["record"]
    assert sorted(record) == ["blank.pdf", "junk.pdf", "locked.pdf", "scan.pdf"]
    assert record["blank.pdf"]["status"] == "zero_chunks"
    assert f"blank.pdf: {EMPTY_DOCUMENT}: " in record["blank.pdf"]["error"]
    assert record["scan.pdf"]["status"] == "failed"
    assert f"scan.pdf: {OCR_NOT_INSTALLED}: " in record["scan.pdf"]["error"]


def test_a_looping_page_tree_keeps_the_page_pdfium_reads_and_names_the_other(
    reasons_run: dict[str, Any],
) -> None:
    result = reasons_run["result"]
    assert "loop.pdf (" not in _not_stored_line(result.stderr)
    notes = [line for line in result.stderr.splitlines() if "loop.pdf: page(s) 2" in line]
    assert notes, result.stderr[-3000:]
    assert "could not be read (pdfium: Failed to load page" in notes[0]
    assert "pypdf: " in notes[0]
    assert "PdfiumError" not in result.stderr


def test_library_warnings_stay_off_the_terminal(reasons_run: dict[str, Any]) -> None:
    result = reasons_run["result"]
    assert "cropped.pdf (" not in _not_stored_line(result.stderr)
    assert "Warning" not in result.stderr, result.stderr[-3000:]
    assert "prov.bbox" not in result.stderr


def test_a_line_across_the_crop_edge_is_cut_to_the_page_without_a_warning(tmp_path: Path) -> None:
    """The line across the crop box's top edge made Docling's document model clamp its box
    with a ``UserWarning`` per box; its box now reaches Docling cut to the page box, so even
    at ``-v`` the run holds no such line."""
    source = tmp_path / "papers"
    _text_outside_crop_box_pdf(tmp_path / "papers" / "cropped.pdf")
    result = _cli("chunk", str(source), "-v")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Conversion: 1 ok" in result.stderr
    assert "Provenance bbox" not in result.stderr
    assert "UserWarning" not in result.stderr


def test_library_warnings_go_to_the_log_at_info_not_to_stderr(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """What every conversion worker and the CLI install: a library's ``warnings.warn``
    becomes one INFO record of the warnings logger (shown at ``-v``), not two raw lines."""
    import warnings

    from klea_utils.stores._ingest.library_noise import WARNINGS_LOGGER, route_library_noise

    # catch_warnings puts the filters and ``showwarning`` back when it ends
    with caplog.at_level(logging.INFO, logger=WARNINGS_LOGGER), warnings.catch_warnings():
        warnings.simplefilter("always")
        route_library_noise()
        warnings.warn("Provenance bbox coordinate r is outside page bounds", stacklevel=1)
    records = [r for r in caplog.records if r.name == WARNINGS_LOGGER]
    assert len(records) == 1
    assert records[0].levelno == logging.INFO
    assert records[0].getMessage().startswith("UserWarning: Provenance bbox")
    # not the raw "<file>:<line>: UserWarning: ..." lines (a handler another test left on a
    # closed stream may still report its own logging error here)
    assert ": UserWarning: Provenance bbox" not in capsys.readouterr().err


def test_a_file_that_times_out_is_named_and_an_empty_store_exits_1(tmp_path: Path) -> None:
    source = tmp_path / "papers"
    lines = [f"LINE {n} OF A SLOW SCANNED PAGE" for n in range(12)]
    for page in range(3):
        write_scanned_pdf(source / f"part{page}.pdf", lines, scale=4.0)
    from pypdf import PdfWriter

    writer = PdfWriter()
    for page in range(3):
        writer.append(str(source / f"part{page}.pdf"))
        (source / f"part{page}.pdf").unlink()
    writer.write(str(source / "slow.pdf"))
    result = _build(source, tmp_path, "--file-timeout", "1")
    assert result.returncode == 1, result.stderr[-3000:]
    line = _not_stored_line(result.stderr)
    assert line.startswith(f"1 file(s) not stored: slow.pdf ({TIME_OUT}: ")
    assert "--file-timeout" in line


def test_the_reason_for_zero_chunks_follows_what_the_pages_held() -> None:
    blank = Recovery(pages=2)
    assert no_chunks_reason("a.pdf", blank, True).startswith(f"{EMPTY_DOCUMENT}: none of its 2")
    scan = Recovery(pages=3, image_pages=[1, 2, 3])
    off = no_chunks_reason("a.pdf", scan, False)
    assert off.startswith(f"{NO_READABLE_TEXT}: page(s) 1-3 are images")
    assert "--no-ocr" in off
    unread = Recovery(pages=2, failed=[1, 2], failure="pdfium: x; pypdf: y")
    assert no_chunks_reason("a.pdf", unread, True).startswith(f"{CANNOT_OPEN}: ")
    words = Recovery(pages=1, text_pages=[1])
    assert "made no chunk" in no_chunks_reason("a.pdf", words, True)
    assert no_chunks_reason("a.md", None, True).startswith(f"{EMPTY_DOCUMENT}: ")
    assert page_ranges([7, 1, 2, 3, 9, 10]) == "1-3, 7, 9-10"


def test_map_lint_names_each_file_not_stored_with_its_reason(reasons_run: dict[str, Any]) -> None:
    lint = _cli("map-lint", str(reasons_run["source"]))
    lines = [line for line in lint.stdout.splitlines() if line.startswith("Not required")]
    assert len(lines) == 1, lint.stdout
    assert lines[0].startswith("Not required, 4 file(s) not stored: ")
    assert f"blank.pdf ({EMPTY_DOCUMENT}: " in lines[0]  # zero chunks: no "conversion failed"
    assert f"scan.pdf ({OCR_NOT_INSTALLED}: " in lines[0]
    assert "conversion failed" not in lint.stdout


def test_a_scan_chunked_with_no_ocr_is_named_as_no_readable_text(tmp_path: Path) -> None:
    source = tmp_path / "papers"
    write_text_pdf(source / "good.pdf", "Dendritic spines", sample_paragraphs(2, seed=2))
    write_scanned_pdf(source / "scan.pdf", ["SCANNED PAGE OF TEXT", "SECOND LINE"])
    result = _cli("chunk", str(source), "--no-ocr")
    assert result.returncode == 0, result.stderr[-3000:]  # good.pdf was chunked
    lines = [line for line in result.stderr.splitlines() if "not chunked:" in line]
    assert len(lines) == 1, result.stderr[-3000:]
    assert lines[0].startswith(f"1 file(s) not chunked: scan.pdf ({NO_READABLE_TEXT}: page(s) 1")
    assert "--no-ocr" in lines[0]
