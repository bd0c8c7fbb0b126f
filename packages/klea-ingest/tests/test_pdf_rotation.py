"""Rotated pages and rotated text on the offline PDF path (issue 24).

Generated pages pin the rule: whatever the page's ``/Rotate`` and whatever quarter turn
the text matrix gives the text, the lines come out in reading order, with their words,
in the page's reading frame; text turned across the page's own direction (a vertical label)
is read in its own direction and marked rotated. Real pages of
``shared/data/realpapers-wild`` (slides, landscape tables stored with ``/Rotate 90``) keep
their text layer's words.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
from klea_utils.stores._ingest.pdf.pdf_frames import Frame, dominant_quarter, quarter_of
from klea_utils.stores._ingest.pdf.pdf_lines import page_lines
from realpapers import needs_wild, wild_page
from reportlab.pdfgen import canvas

pytestmark = pytest.mark.timeout(300)

PAGE = (612.0, 792.0)
BODY = [
    "Landscape tables hold the quarterly figures",
    "of every district office and its staff",
    "printed across the long side of the sheet",
    "so readers turn the page to read them",
]


def _turn_into(c: canvas.Canvas, quarter: int, unit: float = 1.0) -> tuple[float, float]:
    """Turn the canvas so text drawn at (x, y) runs ``quarter`` quarter turns from +x;
    return the reading frame's width and height."""
    width, height = PAGE[0] * unit, PAGE[1] * unit
    if quarter == 1:
        c.translate(width, 0)
    elif quarter == 2:
        c.translate(width, height)
    elif quarter == 3:
        c.translate(0, height)
    c.rotate(90 * quarter)
    c.scale(unit, unit)
    return PAGE if quarter % 2 == 0 else (PAGE[1], PAGE[0])


def _write(
    path: Path,
    *,
    rotate: int = 0,
    quarter: int = 0,
    lines: list[str] = BODY,
    label: str | None = None,
    size: float = 12,
    unit: float = 1.0,
) -> Path:
    """One page; ``unit`` scales everything (user space units of another size, as a
    page's ``/UserUnit`` would, which pdfium does not apply)."""
    c = canvas.Canvas(str(path), pagesize=(PAGE[0] * unit, PAGE[1] * unit))
    c.setPageRotation(rotate)
    c.saveState()
    _, frame_h = _turn_into(c, quarter, unit)
    c.setFont("Helvetica", size)
    for i, line in enumerate(lines):
        c.drawString(72, frame_h - 100 - i * 1.5 * size, line)
    c.restoreState()
    if label is not None:  # a vertical label up the left margin of an upright page
        c.saveState()
        c.translate(30, 300)
        c.rotate(90)
        c.setFont("Helvetica", 9)
        c.drawString(0, 0, label)
        c.restoreState()
    c.showPage()
    c.save()
    return path


def _lines(path: Path) -> list[tuple[str, bool, float, float, float, float]]:
    pdf = pdfium.PdfDocument(str(path))
    try:
        page = page_lines(pdf, 0)
        return [(ln.text, ln.rotated, ln.x0, ln.top, ln.x1, ln.bottom) for ln in page.lines]
    finally:
        pdf.close()


def _words(text: str) -> Counter[str]:
    text = unicodedata.normalize("NFKC", text).lower()
    return Counter(w for w in re.findall(r"[^\W\d_]+", text) if len(w) >= 3)


def _recall(reference: str, found: str) -> float:
    ref, got = _words(reference), _words(found)
    return sum(min(n, got[w]) for w, n in ref.items()) / max(1, sum(ref.values()))


# -- frames ---------------------------------------------------------------------------------


@pytest.mark.parametrize("quarter", [0, 1, 2, 3])
def test_a_frame_maps_points_back_and_forth(quarter: int) -> None:
    frame = Frame(quarter, 10.0, 20.0, 610.0, 820.0)
    for x, y in [(10.0, 20.0), (300.0, 500.0), (610.0, 820.0)]:
        left, top = frame.point(x, y)
        assert 0 <= left <= frame.width
        assert 0 <= top <= frame.height
        assert frame.user(left, top) == pytest.approx((x, y))


def test_a_frame_refuses_a_turn_that_is_not_a_quarter() -> None:
    with pytest.raises(ValueError, match="quarter turns"):
        Frame(4, 0, 0, 1, 1)


def test_pdfium_angles_map_to_quarters() -> None:
    # pdfium measures clockwise: text running up the page is at 3/2 pi
    assert quarter_of(0.0) == (0, False)
    assert quarter_of(4.712389) == (1, False)
    assert quarter_of(3.141593) == (2, False)
    assert quarter_of(1.570796) == (3, False)
    assert quarter_of(0.5) == (0, True)  # a slanted watermark
    assert dominant_quarter([1, 1, 0, 1, 3]) == 1
    assert dominant_quarter([]) == 0


# -- generated pages -------------------------------------------------------------------------


@pytest.mark.parametrize("rotate", [0, 90, 180, 270])
def test_a_page_with_rotate_reads_its_lines_in_order(tmp_path: Path, rotate: int) -> None:
    # drawn so that the viewer shows it upright: the text runs against the /Rotate
    quarter = rotate // 90
    lines = _lines(_write(tmp_path / "p.pdf", rotate=rotate, quarter=quarter))
    assert [text for text, *_ in lines] == BODY
    assert not any(rotated for _, rotated, *_ in lines)
    tops = [top for _, _, _, top, _, _ in lines]
    assert tops == sorted(tops)


@pytest.mark.parametrize("quarter", [1, 2, 3])
def test_text_drawn_turned_on_an_upright_page_reads_in_its_direction(
    tmp_path: Path, quarter: int
) -> None:
    # a landscape table drawn with a rotated matrix on a portrait page, no /Rotate
    path = _write(tmp_path / "p.pdf", quarter=quarter)
    lines = _lines(path)
    assert [text for text, *_ in lines] == BODY
    assert not any(rotated for _, rotated, *_ in lines)
    pdf = pdfium.PdfDocument(str(path))
    try:
        page = page_lines(pdf, 0)
    finally:
        pdf.close()
    assert (page.width, page.height) == ((612, 792) if quarter % 2 == 0 else (792, 612))
    for _, _, x0, top, x1, bottom in lines:  # inside the reading frame, wider than tall
        assert 0 <= x0 < x1 <= page.width
        assert 0 <= top < bottom <= page.height
        assert x1 - x0 > 3 * (bottom - top)


@pytest.mark.parametrize("rotate", [0, 90, 180, 270])
@pytest.mark.parametrize("quarter", [0, 1, 2, 3])
def test_two_columns_read_in_content_order_in_every_orientation(
    tmp_path: Path, rotate: int, quarter: int
) -> None:
    # pdfium lists text that runs down the displayed page bottom line first, per column
    c = canvas.Canvas(str(tmp_path / "p.pdf"), pagesize=PAGE)
    c.setPageRotation(rotate)
    width, height = _turn_into(c, quarter)
    c.setFont("Helvetica", 10)
    expected = ["A title above both columns"]
    c.drawString(72, height - 50, expected[0])
    for column in range(2):
        for row in range(3):
            expected.append(f"column {column} row {row} of the body")
            c.drawString(72 + column * width / 2, height - 100 - row * 14, expected[-1])
    c.showPage()
    c.save()
    assert [text for text, *_ in _lines(tmp_path / "p.pdf")] == expected


def test_a_vertical_label_on_an_upright_page_is_read_and_marked_rotated(tmp_path: Path) -> None:
    lines = _lines(_write(tmp_path / "p.pdf", label="Vertical margin label"))
    body = [ln for ln in lines if not ln[1]]
    turned = [ln for ln in lines if ln[1]]
    assert [text for text, *_ in body] == BODY
    assert [text for text, *_ in turned] == ["Vertical margin label"]
    _, _, x0, top, x1, bottom = turned[0]
    assert bottom - top > 3 * (x1 - x0)  # placed in the page's frame: tall and narrow
    assert x0 < 40
    assert 792 - 300 - 120 < top < bottom < 792 - 300 + 5


def test_a_rotated_page_converts_to_its_words(tmp_path: Path) -> None:
    doc, recovery = convert_pdf_offline(
        _write(tmp_path / "p.pdf", rotate=90, quarter=1), do_ocr=False
    )
    text = "\n".join(getattr(item, "text", "") for item, _ in doc.iterate_items())
    assert _recall("\n".join(BODY), text) == 1.0
    assert not recovery.describe()


@settings(max_examples=20, deadline=None)
@given(
    rotate=st.sampled_from([0, 90, 180, 270]),
    quarter=st.integers(0, 3),
    size=st.floats(8, 20),
    unit=st.sampled_from([0.2, 0.5, 1.0, 3.0, 10.0]),
    words=st.lists(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=9),
        min_size=3,
        max_size=8,
    ),
)
def test_any_rotation_text_turn_and_unit_give_the_same_lines(
    tmp_path_factory: pytest.TempPathFactory,
    rotate: int,
    quarter: int,
    size: float,
    unit: float,
    words: list[str],
) -> None:
    from reportlab.pdfbase.pdfmetrics import stringWidth

    line = " ".join(words)
    # a line that runs past the page's edge loses the glyphs no viewer shows
    reading_width = PAGE[0] if quarter % 2 == 0 else PAGE[1]
    assume(72 + stringWidth(line.upper(), "Helvetica", size) < reading_width)
    path = _write(
        tmp_path_factory.mktemp("rot") / "p.pdf",
        rotate=rotate,
        quarter=quarter,
        lines=[line, line.upper()],
        size=size,
        unit=unit,
    )
    lines = _lines(path)
    assert [text for text, *_ in lines] == [line, line.upper()]
    assert not any(rotated for _, rotated, *_ in lines)
    assert lines[0][3] < lines[1][3]  # the first line is above the second


# -- real pages ------------------------------------------------------------------------------


@needs_wild
@pytest.mark.parametrize(
    ("name", "index"),
    [
        ("govdocs1__421197.pdf", 2),  # slides stored sideways, /Rotate 90
        ("pdfplumber__senate-expenditures.pdf", 0),  # a landscape table, /Rotate 90
        ("tabula__Publication_of_award_of_Bids_for_Transport_Sector__August_2016.pdf", 0),
        ("pymupdf__test_2634.pdf", 2),
        ("cermine__test6.pdf", 8),  # a rotated table page inside an upright paper
    ],
)
def test_real_rotated_pages_keep_their_words(tmp_path: Path, name: str, index: int) -> None:
    path = wild_page(name, index, tmp_path)
    pdf = pdfium.PdfDocument(str(path))
    try:
        assert pdf[0].get_rotation() == 90
        textpage = pdf[0].get_textpage()
        reference = str(textpage.get_text_range())
        textpage.close()
    finally:
        pdf.close()
    doc, _ = convert_pdf_offline(path, do_ocr=False)
    items = [item for item, _ in doc.iterate_items() if getattr(item, "text", "")]
    text = "\n".join(item.text for item in items)
    assert _recall(reference, text) >= 0.9
    assert {prov.page_no for item in items for prov in item.prov} == {1}
