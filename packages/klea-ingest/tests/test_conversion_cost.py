"""Files are dealt to workers by their guessed conversion cost, scans weighed as such.

Dealt by bytes, a worker could get every scan and run tesseract alone at the end of a
build. The cost counts a PDF's pages, those that will need OCR (no text layer and a scan's
image, or an unreadable layer) at OCR's price, from a few probed pages; the costliest
files are dealt first and each worker converts its costliest first.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from klea_utils.stores._ingest.workers.conversion_cost import (
    BYTES_PER_SECOND,
    OCR_PAGE_S,
    TEXT_PAGE_S,
    conversion_cost,
    probed_costs,
)
from klea_utils.stores._ingest.workers.dispatch import balanced_batches
from realpapers import WILD, needs_wild


@needs_wild
def test_a_scan_costs_ocr_pages_and_a_text_file_text_pages() -> None:
    assert WILD is not None
    assert conversion_cost(WILD / "ocrmypdf__linn.pdf") == OCR_PAGE_S  # one scanned page
    # three scanned pages, and two pages with a text layer
    assert conversion_cost(WILD / "pdfplumber__issue-203-decimalize.pdf") == 3 * OCR_PAGE_S
    assert conversion_cost(WILD / "grobid__ZFN-A-054-0304-0272.pdf") == 2 * TEXT_PAGE_S


def test_a_file_pdfium_cannot_open_or_no_pdf_costs_its_bytes(tmp_path: Path) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\n" + b"x" * 8000)
    note = tmp_path / "note.md"
    note.write_text("# A note\n\nSome words.\n", encoding="utf-8")
    assert conversion_cost(broken) == broken.stat().st_size / BYTES_PER_SECOND
    assert conversion_cost(note) == note.stat().st_size / BYTES_PER_SECOND
    assert conversion_cost(tmp_path / "gone.pdf") == 0.0


@needs_wild
def test_the_scans_are_dealt_apart_and_converted_first(tmp_path: Path) -> None:
    assert WILD is not None
    names = [
        "grobid__ZFN-A-054-0304-0272.pdf",  # 2 text pages, 470 kB
        "cermine__test2.pdf",  # 6 text pages, the largest file
        "ocrmypdf__linn.pdf",  # 1 scanned page, 75 kB
        "pdfjs__scan-bad.pdf",  # 1 scanned page, 30 kB
        "camelot__mednine.pdf",  # 4 text pages
    ]
    for name in names:
        shutil.copy(WILD / name, tmp_path / name)
    items = [(str(tmp_path / name), "h") for name in names]
    batches = balanced_batches(items, 10, 2)
    firsts = sorted(Path(batch[0][0]).name for batch in batches)
    # by bytes both scans were the smallest files, dealt last, to the same side
    assert firsts == ["ocrmypdf__linn.pdf", "pdfjs__scan-bad.pdf"]
    assert sorted(item for batch in batches for item in batch) == sorted(items)


@needs_wild
def test_the_probes_run_in_a_child_and_a_stuck_one_falls_back_to_bytes() -> None:
    assert WILD is not None
    paths = [WILD / "ocrmypdf__linn.pdf", WILD / "grobid__ZFN-A-054-0304-0272.pdf"]
    assert probed_costs(paths) == [conversion_cost(path) for path in paths]
    # a probe that does not answer in time (a PDF that hangs pdfium, say) costs bytes
    bytes_only = [path.stat().st_size / BYTES_PER_SECOND for path in paths]
    assert probed_costs(paths, timeout_s=0.0) == bytes_only
    assert probed_costs([]) == []
