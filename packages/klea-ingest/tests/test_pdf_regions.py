"""Every PDF chunk is pinned to its boxes on the page (issue 36).

The proof: the text that pdfium finds inside a chunk's ``regions``
(``PdfTextPage.get_text_bounded``) holds at least 95% of the chunk's words, on a
development paper, a two-column paper and a rotated page of real PDFs; on OCRed pages
tesseract's boxes, mapped from image pixels to PDF points with the page's ``/Rotate`` (and
OSD's turn) undone, frame the words of the page's own text layer; a scanned page's regions
hold its OCR text and lie on the page; every development question's answer lies inside
the regions of the chunk that holds it.
"""

from __future__ import annotations

import itertools
import json
import warnings
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

import pypdfium2 as pdfium
import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.chunking.chunk_regions import chunk_regions, piece_span
from klea_utils.stores._ingest.chunking.chunking import CHUNKING_VERSION
from klea_utils.stores._ingest.pdf.line_regions import line_box, line_spans
from klea_utils.stores._ingest.pdf.ocr import ocr_page_lines
from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
from klea_utils.stores._ingest.pdf.region_check import (
    ocr_text_inside,
    region_text,
    words_inside_share,
)
from langchain_core.documents import Document
from realpapers import (
    DATA,
    WILD,
    minilm_chunker,
    needs_data,
    needs_tesseract,
    needs_wild,
    wild_page,
)
from reportlab.pdfgen import canvas

pytestmark = pytest.mark.timeout(600)

MIN_SHARE = 0.95


@cache
def _chunks(path: Path) -> tuple[list[Document], tuple[int, ...], Any]:
    document, recovery = convert_pdf_offline(path, do_ocr=True)
    docs = minilm_chunker().chunk(document, file_name=path.name, file_hash="h")
    return docs, tuple(recovery.ocr), document


@pytest.fixture
def open_pdf() -> Iterator[Any]:
    opened: list[Any] = []

    def open_(path: Path) -> Any:
        opened.append(pdfium.PdfDocument(str(path)))
        return opened[-1]

    yield open_
    for pdf in opened:
        pdf.close()


def _shares(path: Path, pdf: Any) -> list[tuple[float, int, Document]]:
    docs, _, _ = _chunks(path)
    out = []
    for doc in docs:
        regions = doc.metadata["regions"]
        share = words_inside_share(
            doc.page_content, region_text(pdf, regions), doc.metadata["headings"]
        )
        out.append((share, len(doc.page_content.split()), doc))
    return out


def _wild_page_shares(name: str, index: int, tmp_path: Path) -> list[tuple[float, int, Document]]:
    """:func:`_shares` of page ``index`` (0-based) of the wild file ``name``, alone."""
    path = wild_page(name, index, tmp_path)
    pdf = pdfium.PdfDocument(str(path))
    try:
        return _shares(path, pdf)
    finally:
        pdf.close()


def _file_share(shares: list[tuple[float, int, Document]]) -> float:
    return sum(share * words for share, words, _ in shares) / sum(w for _, w, _ in shares)


# -- real PDFs with a text layer --------------------------------------------------------------


@needs_data
@needs_wild
@pytest.mark.parametrize(
    ("data_set", "name"),
    [
        ("dev", "9802040_quantum-vs-classical.pdf"),  # a development paper
        ("wild", "cermine__test2.pdf"),  # two columns
        ("wild", "pdfplumber__senate-expenditures.pdf"),  # /Rotate 90, a landscape table
    ],
)
def test_the_words_of_every_chunk_lie_inside_its_regions(
    data_set: str, name: str, open_pdf: Any
) -> None:
    folder = DATA if data_set == "dev" else WILD
    assert folder is not None
    path = folder / name
    pdf = open_pdf(path)
    shares = _shares(path, pdf)
    assert shares
    for share, _, doc in shares:
        regions = doc.metadata["regions"]
        assert regions, doc.page_content[:80]
        pages = {r["page"] for r in regions}
        assert min(pages) == doc.metadata["page_start"]
        assert max(pages) == doc.metadata["page_end"]
        for region in regions:
            left, bottom, right, top = region["bbox"]
            box = pdf[region["page"] - 1].get_bbox()
            assert box[0] - 1 <= left < right <= box[2] + 1
            assert box[1] - 1 <= bottom < top <= box[3] + 1
        assert share >= 0.9, (share, doc.page_content[:120])
    assert _file_share(shares) >= MIN_SHARE


@needs_data
def test_a_chunk_crossing_a_page_has_boxes_on_both_pages_in_reading_order() -> None:
    assert DATA is not None
    docs, _, _ = _chunks(DATA / "9802040_quantum-vs-classical.pdf")
    crossing = [d for d in docs if d.metadata["page_start"] < d.metadata["page_end"]]
    assert crossing
    for doc in crossing:
        pages = [r["page"] for r in doc.metadata["regions"]]
        assert pages == sorted(pages)
        assert {doc.metadata["page_start"], doc.metadata["page_end"]} <= set(pages)


@needs_data
def test_every_answer_lies_inside_the_regions_of_the_chunk_that_holds_it(open_pdf: Any) -> None:
    assert DATA is not None
    name = "9802040_quantum-vs-classical.pdf"
    questions = [
        json.loads(line)
        for line in (DATA.parent / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line)["file"] == name
    ]
    assert questions
    docs, _, _ = _chunks(DATA / name)
    pdf = open_pdf(DATA / name)
    for question in questions:
        holding = [d for d in docs if question["answer"] in d.page_content]
        assert holding, question["id"]
        for doc in holding:
            inside = region_text(pdf, doc.metadata["regions"])
            assert words_inside_share(question["answer"], inside) == 1.0, question["id"]


# -- OCR: tesseract's boxes mapped back to the page -------------------------------------------

_OCR_BODY = [
    "Regions pin every passage to the page",
    "so a reader finds the sentence quickly",
    "whatever the rotation of the scanned sheet",
    "and the boxes come back in PDF points",
    "measured from the bottom left corner",
    "of the page before it is turned",
]


def _turned_page(path: Path, rotate: int, quarter: int) -> Path:
    """A portrait page with a text layer, text drawn ``quarter`` turns round, then
    ``/Rotate rotate`` set by pdfium (the page box stays portrait)."""
    width, height = 612.0, 792.0
    drawn = path.with_name("drawn.pdf")
    c = canvas.Canvas(str(drawn), pagesize=(width, height))
    c.translate(*[(0, 0), (width, 0), (width, height), (0, height)][quarter])
    c.rotate(90 * quarter)
    frame_h = height if quarter % 2 == 0 else width
    c.setFont("Helvetica", 16)
    for i, line in enumerate(_OCR_BODY):
        c.drawString(60, frame_h - 120 - i * 28, line)
    c.showPage()
    c.save()
    pdf = pdfium.PdfDocument(str(drawn))
    try:
        pdf[0].set_rotation(rotate)
        pdf.save(str(path))
    finally:
        pdf.close()
    return path


@needs_tesseract
@pytest.mark.parametrize(
    ("rotate", "quarter"),
    [
        (0, 0),
        (90, 1),  # a landscape page shown upright by /Rotate
        (270, 3),
        (0, 2),  # printed upside down: OSD turns the image before it is read
    ],
)
def test_ocr_boxes_map_back_to_the_words_of_the_text_layer(
    tmp_path: Path, rotate: int, quarter: int, open_pdf: Any
) -> None:
    path = _turned_page(tmp_path / "page.pdf", rotate, quarter)
    pdf = open_pdf(path)
    page = ocr_page_lines(pdf, 0, path)
    assert page.frame is not None
    assert page.frame.quarter == quarter  # /Rotate, and OSD's turn of an upside-down scan
    assert page.lines
    for line in page.lines:
        left, bottom, right, top = line_box(page.frame, line)
        regions = [{"page": 1, "bbox": [left, bottom, right, top]}]
        assert words_inside_share(line.text, region_text(pdf, regions)) >= MIN_SHARE, line.text
    ocr_text = " ".join(line.text for line in page.lines)
    assert words_inside_share(" ".join(_OCR_BODY), ocr_text) >= MIN_SHARE  # it read the page


@needs_wild
@needs_tesseract
def test_a_rotated_scan_has_regions_that_hold_its_ocr_text_on_the_page() -> None:
    assert WILD is not None
    path = WILD / "docling__ocr_test_rotated_90.pdf"
    docs, ocr_pages, document = _chunks(path)
    assert ocr_pages == (1,)
    lines = [
        (
            item.text[prov.charspan[0] : prov.charspan[1]],
            (prov.bbox.l, prov.bbox.b, prov.bbox.r, prov.bbox.t),
        )
        for item, _ in document.iterate_items()
        if isinstance(getattr(item, "text", None), str)
        for prov in item.prov
    ]
    pdf = pdfium.PdfDocument(str(path))
    try:
        page_box = pdf[0].get_bbox()
    finally:
        pdf.close()
    assert docs
    for doc in docs:
        boxes = [tuple(r["bbox"]) for r in doc.metadata["regions"]]
        assert boxes
        for left, bottom, right, top in boxes:
            assert page_box[0] - 1 <= left < right <= page_box[2] + 1
            assert page_box[1] - 1 <= bottom < top <= page_box[3] + 1
        inside = ocr_text_inside(lines, boxes)
        assert words_inside_share(doc.page_content, inside, doc.metadata["headings"]) >= MIN_SHARE


# -- the parts ---------------------------------------------------------------------------------


def test_chunks_without_page_provenance_have_no_regions() -> None:
    from docling_core.types.doc.document import DoclingDocument
    from docling_core.types.doc.labels import DocItemLabel

    document = DoclingDocument(name="notes")
    document.add_text(label=DocItemLabel.TEXT, text="A Markdown paragraph has no page.")
    (doc,) = minilm_chunker().chunk(document, file_name="notes.md", file_hash="h")
    assert "regions" not in doc.metadata


def _cropped_page_pdf(path: Path) -> Path:
    """One page of body text whose crop box does not start at the origin."""
    pdf = canvas.Canvas(str(path), pagesize=(612, 792))
    pdf.setCropBox((36, 48, 576, 760))
    pdf.setFont("Helvetica", 11)
    sentence = "Pyramidal neurons integrate synaptic input along their dendrites. "
    for row in range(30):
        pdf.drawString(72, 700 - 20 * row, f"{row + 1}. {sentence}")
    pdf.showPage()
    pdf.save()
    return path


def test_a_page_read_by_pypdf_gives_each_chunk_the_whole_page(tmp_path: Path) -> None:
    """pypdf reads text without geometry: a chunk of such a page is framed by the page's
    box (pdfium's, in user space), which holds all of its words, never left without one."""
    from klea_utils.stores._ingest.pdf.pdf_fallback import SecondReader
    from klea_utils.stores._ingest.pdf.pdf_structure import build_document

    path = _cropped_page_pdf(tmp_path / "cropped.pdf")
    page = SecondReader(path).page_lines(0)
    assert page is not None
    assert page.frame is None
    docs = minilm_chunker().chunk(
        build_document("cropped", [page]), file_name=path.name, file_hash="h"
    )
    assert len(docs) > 1
    pdf = pdfium.PdfDocument(str(path))
    try:
        page_box = [round(v, 2) for v in pdf[0].get_bbox()]
        for doc in docs:
            assert doc.metadata["regions"] == [{"page": 1, "bbox": page_box}]
            inside = region_text(pdf, doc.metadata["regions"])
            assert words_inside_share(doc.page_content, inside, doc.metadata["headings"]) == 1.0
    finally:
        pdf.close()


def test_a_provenance_without_a_box_gets_its_whole_page() -> None:
    from docling_core.types.doc.base import BoundingBox, CoordOrigin, Size
    from docling_core.types.doc.common.reference import ProvenanceItem
    from docling_core.types.doc.document import DoclingDocument
    from docling_core.types.doc.labels import DocItemLabel

    document = DoclingDocument(name="flat")
    document.add_page(page_no=1, size=Size(width=595, height=842))
    empty = BoundingBox(l=0, t=0, r=0, b=0, coord_origin=CoordOrigin.BOTTOMLEFT)
    prov = ProvenanceItem(page_no=1, bbox=empty, charspan=(0, 20))
    document.add_text(label=DocItemLabel.TEXT, text="Text without a place.", prov=prov)
    (doc,) = minilm_chunker().chunk(document, file_name="flat.pdf", file_hash="h")
    assert doc.metadata["regions"] == [{"page": 1, "bbox": [0.0, 0.0, 595.0, 842.0]}]


def test_a_right_to_left_word_read_in_visual_order_is_found() -> None:
    # pdfium reads a layer without logical-order marks last letter first: the box holds
    # the word all the same; a left-to-right word read backwards is not the word
    assert words_inside_share("فقرة إضافية", "ةرقف ةيفاضإ") == 1.0
    assert words_inside_share("dendrites integrate", "setirdned etargetni") == 0.0


def test_the_chunking_rules_version_counts_regions() -> None:
    # caches written before regions (5: whole-page ones; 7: captions, table rows, glyphs
    # off the page) rebuild
    assert CHUNKING_VERSION >= 7


_WORDS = st.lists(
    st.sampled_from(["the", "cat", "sat", "on", "a", "mat", "ran", "off"]), min_size=1
)


@given(_WORDS, st.data())
def test_a_piece_is_found_where_it_was_cut(words: list[str], data: st.DataObject) -> None:
    whole = " ".join(words)
    first = data.draw(st.integers(0, len(words) - 1))
    last = data.draw(st.integers(first, len(words) - 1))
    piece = " ".join(words[first : last + 1])
    span = piece_span(piece, whole)
    if span is None:
        return  # the whole text, or a piece that cannot be told apart
    start, end = span
    assert whole[start:end].split() == piece.split()


@given(st.lists(st.text(alphabet="abc -", min_size=1, max_size=12), min_size=1, max_size=8))
def test_line_spans_are_ordered_and_cover_the_text(lines: list[str]) -> None:
    text = " ".join(" ".join(line.split()) for line in lines)
    spans = line_spans(lines, text)
    assert len(spans) == len(lines)
    assert spans[-1][1] == len(text)
    for (a_start, a_end), (b_start, _) in itertools.pairwise(spans):
        assert a_start <= a_end == b_start


def test_a_cut_paragraph_keeps_the_boxes_of_its_own_lines() -> None:
    from docling_core.types.doc.base import BoundingBox, CoordOrigin
    from docling_core.types.doc.common.reference import ProvenanceItem

    class Item:
        text = "One two three four five six. Seven eight nine ten eleven twelve."
        prov: ClassVar[list[Any]] = [
            ProvenanceItem(
                page_no=1,
                bbox=BoundingBox(
                    l=10, t=100 - 10 * i, r=200, b=92 - 10 * i, coord_origin=CoordOrigin.BOTTOMLEFT
                ),
                charspan=span,
            )
            for i, span in enumerate([(0, 28), (29, 65)])
        ]

    regions = chunk_regions([Item()], "Seven eight nine ten eleven twelve.")
    assert regions == [{"page": 1, "bbox": [10.0, 82.0, 200.0, 90.0]}]
    assert len(chunk_regions([Item()], Item.text)) == 2


# -- close-out of the full run: captions, table rows, glyphs off the page, split words ------


def _table_page_pdf(path: Path, *, off_page: str = "") -> Path:
    """A paragraph, a ``Table 2:`` caption over a table whose rows open with short codes
    that recur in the rows above (``C``, ``GT``), and optionally a string drawn far off
    the page's right edge (a broken writer's content stream)."""
    pdf = canvas.Canvas(str(path), pagesize=(612, 792))
    pdf.setFont("Helvetica", 10)
    pdf.drawString(72, 720, "Seed treatments vary between the brands sold in the region.")
    pdf.drawString(  # over 80 characters: a caption, not a first row of the table
        72,
        690,
        "Table 2: Seed treatment codes of every brand in the trial, with the product and "
        "its treatment",
    )
    rows = [
        ("Code", "Brand", "Product", "Treatment"),
        ("C", "Agrisure", "GT CB", "Cruiser C"),
        ("GT", "Genuity", "C GT", "Escalate GT"),
        ("C", "Dynasty", "GT", "Gaucho C"),
        ("GT", "Excalibre", "C", "Maxim GT"),
        ("HX", "Herculex", "GT HX", "Poncho C"),
    ]
    for number, row in enumerate(rows):
        for column, cell in enumerate(row):
            pdf.drawString(72 + 120 * column, 670 - 16 * number, cell)
    if off_page:
        pdf.drawString(900, 500, off_page)  # right of the page, sides swapped or not
    pdf.showPage()
    pdf.save()
    return path


def test_a_table_keeps_the_box_of_its_caption_and_each_row_its_own(tmp_path: Path) -> None:
    path = _table_page_pdf(tmp_path / "table.pdf")
    docs, _, document = _chunks(path)
    (table,) = [d for d in docs if "Table 2:" in d.page_content]
    boxes = table.metadata["regions"]
    pdf = pdfium.PdfDocument(str(path))
    try:
        texts = [region_text(pdf, [box]).strip() for box in boxes]
        share = words_inside_share(table.page_content, region_text(pdf, boxes))
    finally:
        pdf.close()
    first = next(i for i, text in enumerate(texts) if text.startswith("Table 2: Seed"))
    assert [t.split()[0] for t in texts[first + 1 :]] == ["Code", "C", "GT", "C", "GT", "HX"]
    assert share == 1.0
    # each row's provenance names that row's span of the table's text
    (item,) = [t for t in document.texts if t.text.startswith("Table 2:")]
    for prov in item.prov[1:]:
        start, end = prov.charspan
        row = item.text[start:end].strip()
        assert row.replace(" | ", " ").split()[0] in ("Code", "C", "GT", "HX"), row


def test_glyphs_off_the_page_are_no_text_of_it(tmp_path: Path) -> None:
    spill = "0.2.0408 Tc 44.25 0.75 re f 728.2 TD 036 3 Tj"
    path = _table_page_pdf(tmp_path / "spilled.pdf", off_page=spill)
    pdf = pdfium.PdfDocument(str(path))
    try:
        assert "44.25" in pdf[0].get_textpage().get_text_range()  # pdfium's layer holds it
        docs, _, _ = _chunks(path)
        assert docs
        for doc in docs:
            assert "Tc" not in doc.page_content
            assert "44.25" not in doc.page_content
            inside = region_text(pdf, doc.metadata["regions"])
            assert words_inside_share(doc.page_content, inside, doc.metadata["headings"]) == 1.0
    finally:
        pdf.close()


@needs_wild
def test_a_page_whose_writer_spilled_its_content_stream_off_the_page(tmp_path: Path) -> None:
    """A real form page whose text runs thousands of points past its right edge: its
    chunks read what the page shows, and their regions hold their words (before: 0.14-0.54
    per chunk, the page's share 0.3)."""
    shares = _wild_page_shares("govdocs1__219789.pdf", 46, tmp_path)
    assert shares
    assert min(share for share, _, _ in shares) >= 0.9
    assert _file_share(shares) >= MIN_SHARE


def test_a_word_split_by_a_blank_in_one_reading_is_found() -> None:
    # two readings of the same glyphs may put a blank in different places (wide kerning,
    # a line drawn twice): the letters in the same order are the same word
    assert words_inside_share("XTRA I nsect Protection", "XTRA Insect Protection") == 1.0
    assert words_inside_share("Thliecnooges", "T h l iec no og es") == 0.0  # not the other way
    assert words_inside_share("T h l iec noog es", "Thliecnooges") == 1.0
    assert words_inside_share("هذه ف قرة", "هذه ةرقف") == 1.0  # and read in visual order
    assert words_inside_share("i nsect", "insects") == 0.0
    assert words_inside_share("form ______", "form _________") == 1.0  # blanks to fill in


@given(st.lists(st.sampled_from(["seed", "corn", "yield", "plot", "rate"]), min_size=1), st.data())
def test_the_share_counts_each_found_word_once(words: list[str], data: st.DataObject) -> None:
    inside = " ".join(data.draw(st.lists(st.sampled_from(words), max_size=len(words))))
    share = words_inside_share(" ".join(words), inside)
    assert 0.0 <= share <= 1.0
    assert share * len(words) <= len(inside.split()) + 1e-9
    assert words_inside_share(" ".join(words), " ".join(words)) == 1.0


@needs_wild
@pytest.mark.parametrize(
    ("name", "index"),
    [
        ("camelot__birdisland.pdf", 1),  # a footnote table whose rows open with short codes
        ("pdfjs__issue19971.pdf", 5),  # a garbled Arabic paragraph among three languages
    ],
)
def test_real_pages_the_whole_set_run_found_short_hold_their_words(
    tmp_path: Path, name: str, index: int
) -> None:
    """Before the close-out the worst chunk of each page read 0.45 (birdisland: boxes a
    row or more too low) and 0.59 (issue19971: a blank placed differently in two readings
    of the same garbled glyphs)."""
    shares = _wild_page_shares(name, index, tmp_path)
    assert shares
    assert min(share for share, _, _ in shares) >= 0.8, [s for s, _, _ in shares]
    assert _file_share(shares) >= MIN_SHARE


@needs_wild
@pytest.mark.parametrize(
    ("name", "index", "edge"),
    [
        ("govdocs1__303226.pdf", 11, 612.0),  # a table wider than its letter page
        ("unstructured__failure-after-repair.pdf", 23, 419.53),  # a line wholly past the edge
    ],
)
def test_a_line_running_off_the_page_keeps_only_its_visible_box(
    tmp_path: Path, name: str, index: int, edge: float
) -> None:
    """Docling clamps, and warns about, every box beyond its page (3,032 warnings over the
    wild set): boxes now reach it cut to the page box, and the run is quiet."""
    path = wild_page(name, index, tmp_path)
    document, _ = convert_pdf_offline(path, do_ocr=False)
    rights = [prov.bbox.r for item in document.texts for prov in item.prov]
    assert rights
    assert max(rights) <= edge + 0.01  # cut at the edge, not beyond it
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Provenance bbox ... outside page bounds"
        type(document).model_validate_json(document.model_dump_json())
