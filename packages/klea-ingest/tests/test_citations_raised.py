"""Raised-digit callouts (issue 38): ``shown before³`` links to entry 3 of a numbered list.

A generated paper in the superscript style (reportlab ``<super>``), converted by the
offline PDF path, shows the whole chain: the line reader writes a raised run after a word
in superscript digits, the citation step links it with its sentence. The negatives: an
exponent after a single letter, a number past the list, and the raised footnote marks of
a real development paper that calls its references in brackets.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.citations.callouts import find_callouts
from klea_utils.stores._ingest.citations.paper_citations import parse_citations
from klea_utils.stores._ingest.citations.parse import ParsedReference
from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
from klea_utils.stores._ingest.pdf.pdf_chars import PdfChar
from klea_utils.stores._ingest.pdf.raised_digits import SUPERSCRIPT, raise_callout_digits
from realpapers import DATA, needs_data

_ENTRIES = [
    "Smith, J. Grid cells in the entorhinal cortex. Nature 1, 2-9 (2001).",
    "Lee, K. Cognitive maps of space. Cell 2, 3-10 (2002).",
    "Ortiz, A. Replay of place cell sequences. Neuron 3, 4-11 (2003).",
    "Chen, L. Place fields in large rooms. Science 4, 5-12 (2004).",
    "Kim, S. Firing rates and field size. eLife 5, 6-13 (2005).",
    "Park, J. Scaling of place fields. PNAS 6, 7-14 (2006).",
]
_BODY = (
    "Place cells fire in sequence, as shown before<super>3</super>. "
    "Grid cells tile space<super>1,2</super> and the rate grows as x<super>2</super> "
    "for large fields<super>4-6</super>. "
    "Later trials<super>9</super> were not run."
)


def _superscript_paper(path: Path) -> Path:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer

    styles = getSampleStyleSheet()
    styles["BodyText"].fontName = "Helvetica"
    story = [
        Paragraph("Raised Callouts in a Small Paper", styles["Title"]),
        Paragraph(_BODY, styles["BodyText"]),
        Paragraph("References", styles["Heading2"]),
    ]
    for number, entry in enumerate(_ENTRIES, 1):
        story += [Paragraph(f"{number}. {entry}", styles["BodyText"]), Spacer(1, 8)]
    SimpleDocTemplate(str(path), pagesize=A4, invariant=1).build(story)
    return path


def _markdown(path: Path) -> str:
    document, _ = convert_pdf_offline(path, do_ocr=False)
    return str(document.export_to_markdown())


def test_raised_callouts_link_to_the_numbered_entries_with_their_sentence(
    tmp_path: Path,
) -> None:
    text = _markdown(_superscript_paper(tmp_path / "raised.pdf"))
    assert "before\u00b3." in text
    assert "x2 " in text  # the exponent stays as printed
    paper = parse_citations(text)
    assert [r.label for r in paper.references] == ["1", "2", "3", "4", "5", "6"]
    linked = {(c.entry + 1, c.callout) for c in paper.contexts}
    assert linked == {
        (3, "\u00b3"),
        (1, "\u00b9,\u00b2"),
        (2, "\u00b9,\u00b2"),
        (4, "\u2074\u207b\u2076"),
        (5, "\u2074\u207b\u2076"),
        (6, "\u2074\u207b\u2076"),
    }  # not 9: the list has six entries
    assert paper.sentences_citing(2) == ["Place cells fire in sequence, as shown before\u00b3."]


@needs_data
def test_raised_footnote_marks_of_a_bracket_style_paper_are_no_callouts() -> None:
    assert DATA is not None
    text = _markdown(DATA / "1708.00137_causation-contextuality.pdf")
    assert "operations\u2074" in text  # its footnote marks, printed raised
    paper = parse_citations(text)
    assert len(paper.references) > 5
    raised = [
        c for c in paper.contexts if re.search("[\u00b9\u00b2\u00b3\u2070-\u2079]", c.callout)
    ]
    assert paper.contexts
    assert not raised


@given(
    numbers=st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=4),
    size=st.integers(min_value=0, max_value=12),
)
def test_a_raised_callout_names_only_entries_of_the_list(numbers: list[int], size: int) -> None:
    references = [
        ParsedReference(label=str(n), text=f"Author {n}. Title {n}.") for n in range(1, size + 1)
    ]
    run = ",".join(str(n) for n in numbers).translate(SUPERSCRIPT)
    contexts = find_callouts(f"As shown in earlier work{run}. Then more.", references)
    for context in contexts:
        assert 0 <= context.entry < size
    in_list = size >= 3 and all(1 <= n <= size for n in numbers)
    assert bool(contexts) == in_list


_PLAIN = str.maketrans(
    "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b", "0123456789-"
)


@given(
    st.lists(
        st.tuples(st.sampled_from(list("ab xX.,)19-")), st.booleans()), min_size=1, max_size=30
    )
)
def test_raising_only_rewrites_raised_digits_after_a_word(glyphs: list[tuple[str, bool]]) -> None:
    """Every glyph stays (only digits and a run's dash change to superscripts), and a raised
    run is written raised only after two letters or a closing mark."""
    chars = []
    for index, (text, raised) in enumerate(glyphs):
        size, bottom = (6.0, 96.0) if raised else (10.0, 100.0)
        chars.append(PdfChar(text=text, left=5.0 * index, right=5.0 * index + 4,
                             bottom=bottom, top=bottom - size, size=size, font=1))  # fmt: skip
    out = raise_callout_digits(chars, 10.0)
    assert [c.text.translate(_PLAIN) for c in out] == [c.text for c in chars]
    for index, char in enumerate(out):
        if char.text != chars[index].text:
            assert chars[index].text.isdigit() or chars[index].text in ",-"
            assert glyphs[index][1]
            start = index
            while start > 0 and glyphs[start - 1][1] and glyphs[start - 1][0] in "19,-":
                start -= 1
            before = "".join(text for text, _ in glyphs[:start])
            assert before.endswith((".", ",", ")")) or before[-2:].isalpha()
