"""Printed page numbers beside the physical ones (issue 36): ``page_label`` on PDF chunks.

The PDF's own page labels win; else the number printed in the running head or foot, when
enough pages agree on one offset from the physical page. A reference then reads
"p. 7 (printed 1234)".
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.chunking.chunking import MINILM_MAX_TOKENS
from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
from klea_utils.stores._ingest.pdf.page_labels import (
    folio_candidates,
    page_labels,
    printed_page_numbers,
)
from klea_utils.stores.packaged_minilm import packaged_minilm_path
from realpapers import WILD, minilm_chunker, needs_wild

pytestmark = pytest.mark.timeout(300)


def test_folio_candidates_of_running_lines() -> None:
    assert folio_candidates("- 12 -", bare=True) == [12]
    assert folio_candidates("Page 3 of 10", bare=True) == [3]
    assert folio_candidates("Notes 273", bare=False) == [273]
    assert folio_candidates("1234 J. Chem. Phys. 12", bare=False) == [1234]
    assert folio_candidates("Journal of Examples", bare=False) == []


def test_the_offset_most_pages_agree_on_wins() -> None:
    candidates = {2: [1235, 2019], 3: [1236, 2019], 4: [1237], 5: [2019]}
    assert printed_page_numbers(candidates) == {2: "1235", 3: "1236", 4: "1237"}


def test_one_page_alone_is_not_believed() -> None:
    assert printed_page_numbers({1: [272]}) == {}
    assert printed_page_numbers({}) == {}


def test_a_lone_folio_is_believed_only_from_a_bare_page_number_line() -> None:
    assert printed_page_numbers({1: [272]}, bare={1: [272]}) == {1: "272"}
    assert printed_page_numbers({1: [], 2: [15], 3: []}, bare={2: [15]}) == {2: "15"}
    # a number at the edge of a running head ("Journal 2019") is no bare line
    assert printed_page_numbers({1: [2019]}, bare={}) == {}
    # two candidates, or two pages that disagree: nothing to believe
    assert printed_page_numbers({1: [3, 2019]}, bare={1: [3]}) == {}
    assert printed_page_numbers({1: [7], 2: [40]}, bare={1: [7], 2: [40]}) == {}


def _one_page_excerpt(path: Path, foot: str) -> Path:
    """A single page of body text with ``foot`` printed alone at the bottom."""
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=(612, 792))
    pdf.setFont("Helvetica", 11)
    for row in range(25):
        pdf.drawString(72, 700 - 20 * row, f"Line {row + 1} of the excerpt's body text reads on.")
    pdf.drawString(300, 40, foot)
    pdf.showPage()
    pdf.save()
    return path


def test_a_one_page_excerpt_is_labelled_by_its_printed_folio(tmp_path: Path) -> None:
    path = _one_page_excerpt(tmp_path / "excerpt.pdf", "1234")
    document, recovery = convert_pdf_offline(path, do_ocr=False)
    assert recovery.printed == {1: "1234"}
    labels = page_labels(path, recovery.printed)
    docs = minilm_chunker().chunk(document, file_name=path.name, file_hash="h", page_labels=labels)
    assert docs
    assert all(doc.metadata["page_label"] == "1234" for doc in docs)
    assert all("1234" not in doc.page_content for doc in docs)  # the folio is no body text


@given(st.integers(-5, 2000), st.lists(st.integers(1, 500), min_size=2, max_size=20, unique=True))
def test_consistent_folios_are_read_back(offset: int, pages: list[int]) -> None:
    labels = printed_page_numbers({page: [page + offset] for page in pages})
    assert labels == {page: str(page + offset) for page in pages}


@needs_wild
def test_a_report_numbered_after_its_front_matter_gets_its_printed_numbers() -> None:
    assert WILD is not None
    path = WILD / "pymupdf__test_2634.pdf"  # pages 6-10 print 1-5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        document, recovery = convert_pdf_offline(path, do_ocr=False)
    assert recovery.printed == {6: "1", 7: "2", 8: "3", 9: "4", 10: "5"}
    docs = minilm_chunker().chunk(
        document,
        file_name=path.name,
        file_hash="h",
        page_labels=page_labels(path, recovery.printed),
    )
    late = [d for d in docs if d.metadata["page_start"] == d.metadata["page_end"] == 8]
    assert late
    assert {d.metadata["page_label"] for d in late} == {"3"}
    early = [d for d in docs if d.metadata["page_end"] <= 5]
    assert early
    assert all("page_label" not in d.metadata for d in early)


@needs_wild
def test_the_pdfs_own_page_labels_win() -> None:
    assert WILD is not None
    labels = page_labels(WILD / "pdfcpu__ECSTR11-01.pdf", {3: "999"})
    assert labels[3] == "i"  # /PageLabels: roman front matter
    assert labels[4] == "ii"


def test_a_file_pdfium_cannot_open_keeps_the_printed_numbers(tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4 not really")
    assert page_labels(path, {2: "12"}) == {2: "12"}


@needs_wild
def test_the_file_processor_stores_page_labels_and_regions(tmp_path: Path) -> None:
    import shutil

    from klea_utils.stores._ingest.convert.file_processing import FileProcessor

    assert WILD is not None
    source = tmp_path / "papers"
    source.mkdir()
    path = Path(shutil.copy(WILD / "pymupdf__test_2634.pdf", source / "report.pdf"))
    processor = FileProcessor(
        source_path=source,
        max_tokens=MINILM_MAX_TOKENS,
        merge_peers=True,
        tokenizer_model=str(packaged_minilm_path()),
        do_ocr=False,
        device="cpu",
        artifacts_path=tmp_path / "no-models",
        logger=logging.getLogger("test"),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome = processor.convert(path, "0" * 64)
    assert outcome.cached is not None
    docs = outcome.cached.docs
    assert all(d.metadata["regions"] for d in docs)
    on_nine = [d for d in docs if d.metadata["page_start"] == d.metadata["page_end"] == 9]
    assert on_nine
    assert {d.metadata.get("page_label") for d in on_nine} == {"4"}
    across = [d for d in docs if (d.metadata["page_start"], d.metadata["page_end"]) == (9, 10)]
    assert all(d.metadata["page_label"] == "4-5" for d in across)
