"""Which pages are readable: the check that decides when a page is OCRed (issue 24).

Tables of hexadecimal codes, letter-spaced source code and acronyms are legible text
layers; OCR of them is wasted work, and its reading was dropped anyway. Text from fonts
without a Unicode map (Latin look-alikes for Cyrillic, dingbats, stray letters of other
scripts) stays unreadable. Real pages of ``shared/data/realpapers-wild`` check both sides.
"""

from __future__ import annotations

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_raw
import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.pdf.pdf_chars import HYPHEN_MARK, _codes, read_chars
from klea_utils.stores._ingest.pdf.pdf_frames import Frame
from klea_utils.stores._ingest.pdf.pdf_lines import page_lines
from klea_utils.stores._ingest.pdf.text_quality import assess
from realpapers import WILD, needs_wild

PROSE = "The encoder writes each table before the scan that uses it. "

HEX_TABLE = "\n".join(
    " ".join(f"0x{(row * 8 + col) * 37 % 256:02X}" for col in range(8)) for row in range(20)
)
CODE_TABLE = "\n".join(
    f"{row:X}/{col} 16 1111111110{row:04b} {row * 97:04X}" for row in range(10) for col in range(3)
)
SPACED_CODE = (
    "Interfaces: Towards Polymorphism\n"
    "t y p e PrintableTruc i n t e r f a c e {\nPrintStandard ( ) ;\n}\n"
    "f u nc main ( ) { v a r x i n t ; fmt . P r i n t l n ( x ) }\n"
) * 3
ACRONYMS = "Table K.7 - Encoder test sequence\nEC D MPS CX Qe A C CT ST Bx\n" + PROSE
PUNCTUATED = "O'Brien's and/or e-mail, U.S.A. (see f(x), log(n) and p. 3); well-known. " * 5


@pytest.mark.parametrize(
    "text",
    [HEX_TABLE + "\n" + PROSE, CODE_TABLE + "\n" + PROSE, SPACED_CODE, ACRONYMS, PUNCTUATED],
)
def test_codes_tables_and_code_are_readable(text: str) -> None:
    quality = assess(text)
    assert quality.readable, quality


@pytest.mark.parametrize(
    "text",
    [
        # a Cyrillic page read as Latin by an old OCR layer
        "Hanoroo6no>KeHVIS'I nO,[ITB8p}f{,[I810Ll OT4eCTBO npe.QCT8sneHHH nHCT8X " * 10,
        # the same, with punctuation for the Cyrillic letters Latin has no look-alike for
        "PaJ,Qen 3. ~eneeoM liiCnOilb30BaHl-U1 HMYLL\\eCTBO aeHe)f(HbtX IWHe}I{Hble " * 10,
        # Caesar-shifted glyph codes (a font whose codes are not Unicode)
        "Wkh hqfrghu zulwhv hdfk wdeoh ehiruh wkh vfdq wkdw xvhv lw " * 10,
        # stray letters of several scripts from a broken Arabic font
        "\u0514 \u03f8\u0407 \u03b0 \u00ce \u07d9 \u03a8 \u03e3 \u0137 g \u03d9 \u0286 " * 10,
        "\u2731 \u2746\u2764\u2660\u2761\u275e \u25c6\u275b " * 20,
    ],
)
def test_garbage_stays_unreadable(text: str) -> None:
    quality = assess(text)
    assert not quality.readable, quality


def test_a_page_of_numbers_and_labels_alone_is_not_readable() -> None:
    """Nothing votes: no word to vouch for the layer, as before."""
    assert not assess("0x00 0x01 12 A/1 K.5 " * 30).readable


def test_one_chinese_character_is_a_word() -> None:
    assert assess("\u5e73\u6210 \u65e5 \u91d1\u66dc\u65e5 \u7b2c \u5b98\u5831 " * 10).readable


@given(st.text(min_size=1, max_size=200))
def test_assess_is_total_and_bounded(text: str) -> None:
    quality = assess(text)
    assert 0.0 <= quality.word_share <= 1.0
    assert 0.0 <= quality.junk_share <= 1.0
    assert quality.chars == len("".join(text.split()))


def _per_glyph_codes(textpage: object, count: int) -> list[int]:
    return [pdfium_raw.FPDFText_GetUnicode(textpage, i) for i in range(count)]


def _same_text(bulk: int, single: int) -> bool:
    """pdfium's page text writes U+FFFE where a glyph says 0x02 (a hyphenation mark)."""
    return bulk == single or {bulk, single} == {0x02, 0xFFFE}


def test_codes_read_in_one_call_match_pdfium_glyph_by_glyph(tmp_path: object) -> None:
    from reportlab.pdfgen import canvas

    path = f"{tmp_path}/hyphens.pdf"
    c = canvas.Canvas(path)
    for row, line in enumerate(
        ["A line that ends in a hyphen-", "ated word, and \u00e9t\u00e9 too."] * 10
    ):
        c.drawString(72, 760 - 14 * row, line)
    c.save()
    pdf = pdfium.PdfDocument(path)
    textpage = pdf[0].get_textpage()
    count = pdfium_raw.FPDFText_CountChars(textpage.raw)
    bulk = _codes(pdfium_raw, textpage.raw, count)
    single = _per_glyph_codes(textpage.raw, count)
    assert len(bulk) == count
    assert 0x02 in single  # pdfium marked the line-end hyphens: the case in question
    assert all(_same_text(a, b) for a, b in zip(bulk, single, strict=True))
    text = "".join(
        ch.text
        for ch in read_chars(pdfium_raw, textpage.raw, Frame(0, *pdf[0].get_cropbox()))
        if ch
    )
    assert "ated word" in text
    assert "\u00e9t\u00e9" in text


@needs_wild
@pytest.mark.parametrize(
    ("name", "page"),
    [
        ("pdfcpu__itu-t81.pdf", 164),  # a table of hexadecimal codes
        ("pdfcpu__5116.DCT_Filter.pdf", 41),  # 0x00 0x01 ...
        ("pdfcpu__go-lecture.pdf", 16),  # letter-spaced source code
        ("govdocs1__219789.pdf", 47),  # a questionnaire's form
    ],
)
def test_real_legible_pages_are_not_sent_to_ocr(name: str, page: int) -> None:
    assert WILD is not None
    lines = page_lines(pdfium.PdfDocument(str(WILD / name)), page - 1)
    assert assess(lines.raw_text).readable


@needs_wild
@pytest.mark.parametrize(
    ("name", "page"),
    [
        ("pdfjs__issue12963.pdf", 2),  # Cyrillic read as Latin look-alikes
        ("pdfjs__issue12963.pdf", 8),  # the same, ``PaJ,Qen 3``, ``HMYLL\eCTBO`` (m22)
        ("pdfjs__ThuluthFeatures.pdf", 1),  # an Arabic font without a Unicode map
        ("govdocs1__507676.pdf", 1),  # a newsletter whose font codes are not Unicode
    ],
)
def test_real_garbage_pages_are_still_unreadable(name: str, page: int) -> None:
    assert WILD is not None
    lines = page_lines(pdfium.PdfDocument(str(WILD / name)), page - 1)
    assert not assess(lines.raw_text).readable


@needs_wild
def test_glyphs_without_a_code_are_dropped_as_before() -> None:
    """``pdfcpu__read.go.pdf`` draws glyphs whose code is 0: the page text writes U+FFFE
    for them, which must not become hyphenation marks."""
    assert WILD is not None
    pdf = pdfium.PdfDocument(str(WILD / "pdfcpu__read.go.pdf"))
    page = pdf[0]
    textpage = page.get_textpage()
    count = pdfium_raw.FPDFText_CountChars(textpage.raw)
    single = _per_glyph_codes(textpage.raw, count)
    assert 0 in single  # the case this test is about
    assert _codes(pdfium_raw, textpage.raw, count) == single
    chars = read_chars(pdfium_raw, textpage.raw, Frame(0, *page.get_cropbox()))
    assert not any(ch is not None and ch.text == HYPHEN_MARK for ch in chars)
