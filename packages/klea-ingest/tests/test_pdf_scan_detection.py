"""Scans found at any depth of a page's content, and read the right way up (issue 24).

A page without a text layer is a scan when its images cover at least ``MIN_SCAN_COVER``
of it, whether they are drawn on the page, inside a Form XObject (nested or not) or
inline; a logo alone is not. Generated pages (an image of text made with PIL) check the
cover and the OCR that follows, including a scan that is upside down on its page; real
pages of ``shared/data/realpapers-wild`` check the files that were stored with no chunks.
"""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_raw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from klea_utils.stores._ingest.pdf.ocr_orientation import tsv_score
from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
from klea_utils.stores._ingest.pdf.pdf_images import MIN_SCAN_COVER, image_cover
from klea_utils.stores._ingest.pdf.pdf_lines import page_lines
from PIL import Image, ImageDraw, ImageFont
from realpapers import WILD, needs_tesseract, needs_wild, wild_page
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas

pytestmark = pytest.mark.timeout(300)


PAGE = (612.0, 792.0)
SCAN_LINES = [
    "Scanned pages arrive from the copier",
    "as one picture of the whole sheet",
    "and only optical reading recovers them",
]


def _scan_image(turn: int = 0) -> Image.Image:
    """A page of printed text at 150 dpi, turned ``turn`` degrees counter-clockwise."""
    image = Image.new("L", (1275, 1650), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=44)
    for i, line in enumerate(SCAN_LINES):
        draw.text((120, 160 + 80 * i), line, fill=0, font=font)
    return image.rotate(turn, expand=True) if turn else image


def _page(path: Path, draw: object, *, rotate: int = 0) -> Path:
    c = canvas.Canvas(str(path), pagesize=PAGE)
    c.setPageRotation(rotate)
    draw(c)  # type: ignore[operator]
    c.showPage()
    c.save()
    return path


def _in_nested_forms(image: Image.Image, depth: int = 2) -> object:
    def draw(c: canvas.Canvas) -> None:
        c.beginForm("form0")
        c.drawImage(ImageReader(image), 0, 0, 306, 396)
        c.endForm()
        for level in range(1, depth):
            c.beginForm(f"form{level}")
            c.scale(2, 2) if level == 1 else c.translate(0, 0)
            c.doForm(f"form{level - 1}")
            c.endForm()
        if depth == 1:
            c.scale(2, 2)
        c.doForm(f"form{depth - 1}")

    return draw


def _cover(path: Path) -> float:
    pdf = pdfium.PdfDocument(str(path))
    try:
        page = pdf[0]
        try:
            return image_cover(pdfium_raw, page.raw, page.get_bbox())
        finally:
            page.close()
    finally:
        pdf.close()


def _text(path: Path) -> tuple[str, list[int]]:
    doc, recovery = convert_pdf_offline(path, do_ocr=True)
    text = "\n".join(getattr(item, "text", "") for item, _ in doc.iterate_items())
    return text.lower(), recovery.ocr


# -- image cover ------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_an_image_inside_nested_forms_covers_the_page(tmp_path: Path, depth: int) -> None:
    path = _page(tmp_path / "p.pdf", _in_nested_forms(_scan_image(), depth))
    assert _cover(path) == pytest.approx(1.0)
    pdf = pdfium.PdfDocument(str(path))
    try:
        assert page_lines(pdf, 0).has_images
    finally:
        pdf.close()


def test_an_inline_image_counts(tmp_path: Path) -> None:
    path = _page(tmp_path / "p.pdf", lambda c: c.drawInlineImage(_scan_image(), 56, 72, 500, 648))
    assert _cover(path) == pytest.approx(500 * 648 / (612 * 792))


def test_a_logo_is_not_a_scan(tmp_path: Path) -> None:
    logo = Image.new("L", (60, 60), 0)
    path = _page(tmp_path / "p.pdf", lambda c: c.drawImage(ImageReader(logo), 40, 720, 48, 48))
    assert _cover(path) < 0.01 < MIN_SCAN_COVER
    pdf = pdfium.PdfDocument(str(path))
    try:
        assert not page_lines(pdf, 0).has_images
    finally:
        pdf.close()
    _doc, recovery = convert_pdf_offline(path, do_ocr=True)
    assert recovery.ocr == []
    assert recovery.unreadable == []


@settings(max_examples=25, deadline=None)
@given(
    scales=st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=0, max_size=3),
    width=st.integers(20, 600),
    height=st.integers(20, 780),
    shift=st.tuples(st.integers(-300, 300), st.integers(-300, 300)),
)
def test_the_cover_is_the_placed_images_share_of_the_page(
    tmp_path_factory: pytest.TempPathFactory,
    scales: list[float],
    width: int,
    height: int,
    shift: tuple[int, int],
) -> None:
    image = Image.new("L", (8, 8), 128)
    factor = 1.0
    for scale in scales:
        factor *= scale

    def draw(c: canvas.Canvas) -> None:
        c.beginForm("level0")
        c.drawImage(ImageReader(image), 0, 0, width / factor, height / factor)
        c.endForm()
        for level, scale in enumerate(scales, start=1):
            c.beginForm(f"level{level}")
            c.scale(scale, scale)
            c.doForm(f"level{level - 1}")
            c.endForm()
        c.translate(*shift)
        c.doForm(f"level{len(scales)}")

    path = _page(tmp_path_factory.mktemp("cover") / "p.pdf", draw)
    x0, y0 = max(shift[0], 0), max(shift[1], 0)
    x1, y1 = min(shift[0] + width, PAGE[0]), min(shift[1] + height, PAGE[1])
    expected = max(x1 - x0, 0) * max(y1 - y0, 0) / (PAGE[0] * PAGE[1])
    assert _cover(path) == pytest.approx(expected, abs=1e-6)


# -- OCR of generated scans -------------------------------------------------------------------


@needs_tesseract
def test_a_scan_inside_nested_forms_is_read_by_ocr(tmp_path: Path) -> None:
    text, ocr = _text(_page(tmp_path / "p.pdf", _in_nested_forms(_scan_image(), 3)))
    assert ocr == [1]
    assert "optical reading recovers" in text


@needs_tesseract
def test_an_inline_scan_is_read_by_ocr(tmp_path: Path) -> None:
    path = _page(tmp_path / "p.pdf", lambda c: c.drawInlineImage(_scan_image(), 0, 0, *PAGE))
    text, ocr = _text(path)
    assert ocr == [1]
    assert "whole sheet" in text


@needs_tesseract
def test_an_upside_down_scan_is_turned_before_it_is_read(tmp_path: Path) -> None:
    path = _page(
        tmp_path / "p.pdf", lambda c: c.drawImage(ImageReader(_scan_image(180)), 0, 0, *PAGE)
    )
    text, ocr = _text(path)
    assert ocr == [1]
    assert "scanned pages arrive from the copier" in text


@needs_tesseract
def test_a_scan_on_a_rotated_page_is_read_as_displayed(tmp_path: Path) -> None:
    # /Rotate 90 with the image drawn turned the other way: upright on screen
    def draw(c: canvas.Canvas) -> None:
        c.drawImage(ImageReader(_scan_image(90)), 0, 0, *PAGE)

    text, ocr = _text(_page(tmp_path / "p.pdf", draw, rotate=90))
    assert ocr == [1]
    assert "optical reading recovers" in text


def test_tsv_scores_weigh_confidence_by_word_length() -> None:
    header = "\t".join(
        [
            "level",
            "page_num",
            "block_num",
            "par_num",
            "line_num",
            "word_num",
            "left",
            "top",
            "width",
            "height",
            "conf",
            "text",
        ]
    )
    rows = [
        "5\t1\t1\t1\t1\t1\t0\t0\t10\t10\t90\tupright",
        "5\t1\t1\t1\t1\t2\t0\t0\t10\t10\t30\tab",
        "4\t1\t1\t1\t1\t0\t0\t0\t10\t10\t-1\t",
    ]
    mean, good = tsv_score("\n".join([header, *rows]))
    assert mean == pytest.approx((7 * 90 + 2 * 30) / 9)
    assert good == 7
    assert tsv_score(header) == (0.0, 0.0)


# -- real pages -------------------------------------------------------------------------------


@needs_wild
@needs_tesseract
@pytest.mark.parametrize(
    ("name", "index"),
    [
        ("docling__ocr_test_rotated_90.pdf", 0),  # form XObject scan, sideways on screen
        ("docling__nemotron_multipage.pdf", 1),  # form XObject scan, upside down
    ],
)
def test_real_scans_in_form_xobjects_are_read(tmp_path: Path, name: str, index: int) -> None:
    path = wild_page(name, index, tmp_path)
    doc, recovery = convert_pdf_offline(path, do_ocr=True)
    items = [item for item, _ in doc.iterate_items() if getattr(item, "text", "")]
    text = " ".join(item.text for item in items).lower()
    assert recovery.ocr == [1]
    assert "docling bundles pdf document conversion" in text
    assert {prov.page_no for item in items for prov in item.prov} == {1}


@needs_wild
@needs_tesseract
def test_a_nearly_blank_real_scan_keeps_its_few_characters() -> None:
    assert WILD is not None
    doc, recovery = convert_pdf_offline(WILD / "pdfjs__scan-bad.pdf", do_ocr=True)
    text = " ".join(getattr(item, "text", "") for item, _ in doc.iterate_items())
    assert "pdf.js" in text
    assert recovery.unreadable == []
