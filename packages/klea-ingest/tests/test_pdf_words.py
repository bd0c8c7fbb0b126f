"""Words of the offline PDF path: hyphens, scripts, glyphs outside the BMP, contents pages.

Each real-paper test names the page of ``shared/data/realpapers-dev`` whose words were
lost or damaged before (word recall below the raw text layer's, issue 15); the generated
tests pin the rule itself.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.pdf.hyphens import Hyphenation
from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
from klea_utils.stores._ingest.pdf.pdf_structure import join_lines
from realpapers import DATA, WILD, needs_data, needs_wild

pytestmark = pytest.mark.timeout(600)


@cache
def _items(name: str) -> list[tuple[str, str, list[int], int | None]]:
    assert DATA is not None
    doc, _ = convert_pdf_offline(DATA / name, do_ocr=False)
    return [
        (item.label.value, item.text, [p.page_no for p in item.prov], getattr(item, "level", None))
        for item, _ in doc.iterate_items()
        if hasattr(item, "text")
    ]


def _text(name: str) -> str:
    return "\n".join(text for _, text, _, _ in _items(name))


# -- line-end hyphens ------------------------------------------------------------------------


def test_a_compound_written_elsewhere_keeps_its_line_end_hyphen() -> None:
    hyphens = Hyphenation(["the cross-correlation method is fast", "we use the cross\ufffe"])
    assert join_lines(["we use the cross\ufffe", "correlation method"], hyphens) == (
        "we use the cross-correlation method"
    )
    assert join_lines(["two neigh\ufffe", "boring sites"], hyphens) == "two neighboring sites"


@pytest.mark.parametrize(
    ("before", "after", "kept"),
    [
        ("DeepSeek", "V3 is", True),  # a capital after the hyphen: no hyphenation
        ("Deep", "Seek wins", False),  # unless the joined word is written elsewhere
        ("FP8", "training", True),  # a digit before it
        ("trans", "forms any", False),  # OCR's plain hyphen with no evidence: hyphenation
        ("base", "line consistency", False),  # "multi-line" elsewhere is no evidence
    ],
)
def test_line_end_hyphen_rules(before: str, after: str, kept: bool) -> None:
    hyphens = Hyphenation(["a multi-line cell by DeepSeek", f"{before}-"])
    assert hyphens.keep(before, after) is kept
    joined = join_lines([f"{before}\ufffe", after], hyphens)  # pdfium's line-end mark
    assert joined.startswith(f"{before}-" if kept else f"{before}{after.split()[0]}")


_LINE = st.text(alphabet="abcXY- \ufffe", min_size=1, max_size=20)


@given(st.lists(_LINE, min_size=1, max_size=6), st.lists(_LINE, max_size=4))
def test_joining_lines_never_loses_a_letter(lines: list[str], evidence: list[str]) -> None:
    joined = join_lines(lines, Hyphenation(evidence))
    assert re.sub(r"[\W_]", "", joined) == re.sub(r"[\W_]", "", "".join(lines))
    assert "\ufffe" not in joined


@needs_data
def test_real_compounds_keep_their_hyphen_at_a_line_end() -> None:
    # 1803.07574 p. 11, 15, 21: "cross-" ends a line three times; the paper writes the word
    # with its hyphen everywhere else
    text = _text("1803.07574_water-residence-time.pdf")
    assert "crosscorrelation" not in text
    assert "better than the cross-correlation." in text


@needs_data
def test_a_hyphenated_word_goes_on_past_a_line_with_a_subscript() -> None:
    # 0106220 p. 27: "... embedded ω-symplectic sur-" / "faces in X." under a line that starts
    # with a subscripted symbol; p. 27 also breaks "Jn-" / "holomorphic", a compound the
    # paper writes with its hyphen elsewhere
    text = _text("0106220_serre-taubes-duality.pdf")
    assert "ω-symplectic surfaces in X." in text
    assert "Cn is jn-holomorphic" in text
    assert "Let ω′ be a rational perturbation" in " ".join(text.split())


# -- glyphs and scripts ----------------------------------------------------------------------


@needs_data
def test_math_italic_letters_outside_the_bmp_are_kept() -> None:
    # 2412.19437 p. 22: "the per-head dimension 𝑑ℎ to 128" lost its 𝑑 (a UTF-16 pair in
    # pdfium) and glued "dimension" to the subscript
    text = " ".join(_text("2412.19437_deepseek-v3.pdf").split())
    assert "attention heads 𝑛ℎ to 128 and the per-head dimension 𝑑ℎ to 128" in text
    assert "dimensionℎ" not in text


@needs_data
def test_a_smaller_piece_a_word_space_away_is_a_word() -> None:
    # 0106220 p. 8: "the Gromov invariant of D = KX/2 is (2n-2 over n-1)" glued "is2n"
    text = _text("0106220_serre-taubes-duality.pdf")
    assert "is2n" not in text
    assert "KX/2 is 2n" in text


# -- contents pages and empty headings -------------------------------------------------------


@needs_data
def test_contents_entries_are_not_headings_and_an_empty_heading_nests_the_next() -> None:
    items = _items("2412.19437_deepseek-v3.pdf")
    headings = [(text, level) for label, text, _, level in items if label == "section_header"]
    texts = [text for text, _ in headings]
    # p. 3: the bold chapter lines of the table of contents
    assert "6 Conclusion, Limitations, and Future Directions 35" not in texts
    assert "6. Conclusion, Limitations, and Future Directions" in texts
    # p. 45: "Appendix" right above "A. Contributions and Acknowledgments"
    appendix = texts.index("Appendix")
    assert texts[appendix + 1] == "A. Contributions and Acknowledgments"
    assert headings[appendix + 1][1] > headings[appendix][1]


@needs_data
def test_a_heading_wrapped_over_two_lines_is_one_heading() -> None:
    # 2412.19437 p. 48: "C. Expert Specialization ... and Aux-Loss-" / "Free Models" (bold)
    headings = [
        t for label, t, _, _ in _items("2412.19437_deepseek-v3.pdf") if label == "section_header"
    ]
    assert (
        "C. Expert Specialization Patterns of the 16B Aux-Loss-Based and Aux-Loss-Free Models"
        in headings
    )
    assert "Free Models" not in headings


@needs_data
def test_a_numbered_italic_line_is_a_heading() -> None:
    # 1803.07574 p. 5: elsarticle sets subsections in italics (NimbusRomNo9L-ReguItal)
    headings = [
        t
        for label, t, _, _ in _items("1803.07574_water-residence-time.pdf")
        if label == "section_header"
    ]
    assert "3.1. Estimation of kest with the Projected Newton Method" in headings


def test_two_bold_lines_far_apart_are_not_one_heading(tmp_path: Path) -> None:
    from reportlab.pdfgen import canvas

    path = tmp_path / "headings.pdf"
    c = canvas.Canvas(str(path))
    c.setFont("Times-Bold", 20)
    c.drawString(72, 790, "A Report on Headings")
    c.setFont("Times-Bold", 14)
    c.drawString(72, 760, "Appendix")
    c.drawString(72, 730, "A. Contributions and Acknowledgments")
    c.setFont("Times-Bold", 12)
    c.drawString(72, 690, "B. A Long Heading About Expert Specialization Patterns of")
    c.drawString(72, 676, "the Large Models")
    c.setFont("Times-Roman", 10)
    for row in range(6):
        c.drawString(
            72, 650 - 12 * row, f"Body sentence number {row} says something useful here and more."
        )
    c.save()
    doc, _ = convert_pdf_offline(path, do_ocr=False)
    headings = [
        item.text for item, _ in doc.iterate_items() if item.label.value == "section_header"
    ]
    assert headings[:2] == ["Appendix", "A. Contributions and Acknowledgments"]
    assert "B. A Long Heading About Expert Specialization Patterns of the Large Models" in headings


@needs_data
def test_a_caption_printed_below_its_table_follows_the_rows() -> None:
    # 2412.19437 p. 31: Table 6's caption is printed under the rows
    tables = [text for label, text, _, _ in _items("2412.19437_deepseek-v3.pdf") if "|" in text]
    table6 = next(t for t in tables if "Table 6 | Comparison between DeepSeek-V3" in t)
    assert table6.splitlines()[-1].startswith("Table 6 | Comparison between DeepSeek-V3")


# -- accents TeX draws as separate glyphs ----------------------------------------------------


@needs_data
def test_accents_drawn_over_letters_join_them() -> None:
    # 1803.07574 p. 1: TeX draws the acute and the cedilla as their own glyphs, which
    # pdfium reads as "Fred´ eric Schmidt ´" and "Franc¸ois"
    text = " ".join(_text("1803.07574_water-residence-time.pdf").split())
    assert "Frédéric Schmidt" in text
    assert "François Landais" in text
    assert "Fred´" not in text
    assert "Franc¸" not in text


def test_a_spacing_accent_joins_the_letter_it_is_drawn_over(tmp_path: Path) -> None:
    from reportlab.pdfgen import canvas

    path = tmp_path / "accents.pdf"
    c = canvas.Canvas(str(path))
    c.setFont("Times-Roman", 12)
    # "Frédéric Garçon" the TeX way: base letters, then each accent drawn over (or under)
    # its letter after the rest of the word; a URL's tilde sits on the line and stays.
    x = 72.0
    word = "Frederic"
    c.drawString(x, 700, word)
    for index in (2, 4):
        left = x + c.stringWidth(word[:index], "Times-Roman", 12)
        width = c.stringWidth(word[index], "Times-Roman", 12)
        c.drawString(left + (width - c.stringWidth("\u00b4", "Times-Roman", 12)) / 2, 703, "\u00b4")
    second = x + c.stringWidth(word + " ", "Times-Roman", 12)
    c.drawString(second, 700, "Garcon")
    left = second + c.stringWidth("Gar", "Times-Roman", 12)
    c.drawString(left + 0.5, 700, "\u00b8")
    c.drawString(72, 680, "See https://example.org/~user for more.")
    c.save()
    doc, _ = convert_pdf_offline(path, do_ocr=False)
    text = " ".join(item.text for item, _ in doc.iterate_items() if hasattr(item, "text"))
    assert "Frédéric" in text
    assert "Garçon" in text
    assert "https://example.org/~user" in text


_ACCENT_CHARS = "\u00b4\u00a8\u02c6\u00b8`~"


@st.composite
def _glyph_rows(draw: st.DrawFn) -> list[Any]:
    """A line of letters and accent glyphs at random places, with generated blanks."""
    from klea_utils.stores._ingest.pdf.pdf_chars import PdfChar

    chars: list[Any] = []
    x = 0.0
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["letter", "letter", "accent", "blank"]))
        if kind == "blank":
            chars.append(PdfChar(" ", 0, 0, 0, 0, 0, -1))
            continue
        if kind == "accent":
            left = draw(st.floats(-10, x + 10))
            top = draw(st.floats(80, 110))
            text = draw(st.sampled_from(_ACCENT_CHARS))
            chars.append(PdfChar(text, left, left + 2, top + 2, top, 10, 0))
            continue
        text = draw(st.sampled_from("aeiouncgzı"))
        chars.append(PdfChar(text, x, x + 5, 100, 95, 10, 0))
        x += draw(st.floats(5, 9))
    return chars


@given(_glyph_rows())
def test_attaching_accents_never_loses_a_letter_or_an_accent(chars: list[Any]) -> None:
    import unicodedata

    from klea_utils.stores._ingest.pdf.pdf_accents import attach_accents

    def letters(text: str) -> str:
        decomposed = unicodedata.normalize("NFD", text)
        bare = "".join(ch for ch in decomposed if ch.isalpha() and ch not in _ACCENT_CHARS)
        return bare.replace("ı", "i")

    before = "".join(c.text for c in chars if c.font != -1)
    after = "".join(c.text for c in attach_accents([*map(_copy, chars)]) if c.font != -1)
    assert letters(after) == letters(before)
    marks = sum(unicodedata.combining(ch) > 0 for ch in unicodedata.normalize("NFD", after))
    kept = sum(ch in _ACCENT_CHARS for ch in after)
    assert marks + kept == sum(ch in _ACCENT_CHARS for ch in before)


def _copy(char: Any) -> Any:
    from dataclasses import replace

    return replace(char)


def test_no_blank_between_a_narrow_digit_and_its_decimal_point() -> None:
    """A ``1`` is a stroke in a digit-wide cell and a point a dot at the left of its own:
    the ink of ``1.3`` is 0.28 em apart (a table of ``camelot__birdisland``), more than a
    word space between letters, less than a blank between numbers."""
    from klea_utils.stores._ingest.pdf.text_scripts import (
        DIGIT_GAP_EM,
        WORD_GAP_EM,
        word_gap_em,
    )

    assert word_gap_em("1", ".") == word_gap_em("1", ",") == word_gap_em("1", "9") == DIGIT_GAP_EM
    assert word_gap_em("a", ".") == word_gap_em(".", "3") == WORD_GAP_EM


@needs_wild
def test_a_decimal_number_with_a_narrow_one_stays_whole() -> None:
    import pypdfium2 as pdfium
    from klea_utils.stores._ingest.pdf.pdf_lines import page_lines

    assert WILD is not None
    pdf = pdfium.PdfDocument(str(WILD / "camelot__birdisland.pdf"))
    try:
        text = "\n".join(line.text for line in page_lines(pdf, 0).lines)
    finally:
        pdf.close()
    assert "GROUP 1.3 - 2.0" in text
    assert not re.search(r"(?<![\d.])1 \.\d", text)
