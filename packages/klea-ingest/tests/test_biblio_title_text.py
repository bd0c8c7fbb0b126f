"""What page one's title, byline and year rules of the fourth round read (issue 38).

The examples are what the metadata bench (``scripts/bench/metadata_truth.py``) read wrong
on the second held-out batch of ``realpapers-wild``: OCR's reading of a scanned form taken
as its title (``pymupdf__test_4034``, ``pdfplumber__malformed-from-issue-932``), a form's
letter-spaced head (``pdfjs__bug1815476``), the laboratory that prepared a report taken as
its author (``govdocs1__392154``), a firm (``pymupdf__test_3863``), a thesis cover's lone
year (``pdfcpu__ECSTR11-01``), a purchase order's labelled date, a test file's first
sentence (``opf__corruptionOneByteMissing``), a one-word title and its subtitle
(``govdocs1__379049``), a title run on into the heading under it (``pdfjs__issue19971``)
and a running foot (``pdfjs__issue13211``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.biblio.info_trust import (
    is_noise_author,
    is_noise_title,
    title_agrees,
)
from klea_utils.stores._ingest.biblio.page_years import page_year
from klea_utils.stores._ingest.biblio.title_layout import refused_title_line
from klea_utils.stores._ingest.biblio.title_text import close_letter_spacing, reads_as_words
from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
from klea_utils.stores.biblio import extract_metadata
from realpapers import WILD, needs_wild, wild_page


@pytest.fixture(autouse=True)
def _no_doi_lookups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLEA_DOI_LOOKUP", "0")


@pytest.mark.parametrize("garbage", ["JUN ey ee", "LAE MQKRWAE) ZEFR, ARAER)", "a i ee"])
def test_ocr_read_specks_are_no_title(garbage: str) -> None:
    assert not reads_as_words(garbage)
    assert is_noise_title(garbage)


@pytest.mark.parametrize(
    "title",
    [
        "Owners of Nuclear Power Plants",
        "Knightsbridge Strengths of McDonald and iPhone",  # one long consonant run, camel case
        "pdf.js",
        "To Be or Not to Be",
        "Evaluating the GO Programming Language with Design Patterns",
        "SOLICITAÇÃO DE EMPENHO",
        "Angstschweiß",
        "行政处罚决定书",
        "Results (2019) of the survey",
    ],
)
def test_real_titles_read_as_words(title: str) -> None:
    assert reads_as_words(title)


def test_a_letter_spaced_head_is_closed_up() -> None:
    assert close_letter_spacing("A N E X O") == "ANEXO"
    assert close_letter_spacing("E X P O N E: the rest") == "EXPONE: the rest"
    assert close_letter_spacing("Vitamin A and B") == "Vitamin A and B"
    assert close_letter_spacing("S O L I C I T A") == "SOLICITA"


@given(st.lists(st.from_regex(r"[A-Za-z]{2,9}", fullmatch=True), min_size=1, max_size=8))
def test_closing_up_leaves_words_of_two_letters_or_more(words: list[str]) -> None:
    title = " ".join(words)
    assert close_letter_spacing(title) == title


@given(st.text(max_size=60))
def test_the_checks_take_any_text(text: str) -> None:
    reads_as_words(text)
    closed = close_letter_spacing(text)
    assert closed.replace(" ", "") == text.replace(" ", "")


def test_a_firm_is_no_author() -> None:
    assert is_noise_author("Ruhrgas AG Essen")
    assert not is_noise_author("Frank Schmager")


def test_a_lone_cover_year_and_a_labelled_date() -> None:
    cover = "Evaluating the GO\nby\nFrank Schmager\nA thesis\nVictoria University\n2010"
    assert page_year(cover) == 2010
    assert page_year("Tabela 1990\n1991\n1992\nTotal") is None  # a column of years
    assert page_year("Processo: 399/2019 Data SE: 30/05/2019 Projeto") == 2019
    assert page_year("Plan\n2999") is None  # never a year to come


@needs_wild
def test_a_letter_spaced_form_head_is_its_title() -> None:
    assert WILD is not None
    meta = extract_metadata(Path(os.fspath(WILD / "pdfjs__bug1815476.pdf")))
    assert meta["title"] == "ANEXO"


@needs_wild
def test_a_thesis_cover_year() -> None:
    assert WILD is not None
    meta = extract_metadata(Path(os.fspath(WILD / "pdfcpu__ECSTR11-01.pdf")))
    assert meta["year"] == 2010


@needs_wild
def test_the_preparers_not_the_laboratory(tmp_path: Path) -> None:
    """``Prepared by R. L. Reid, V. S. White`` and, below, ``Oak Ridge National
    Laboratory``: the people are the authors, the laboratory's place name is none."""
    page = wild_page("govdocs1__392154.pdf", 0, tmp_path)
    document, _ = convert_pdf_offline(page, do_ocr=False)
    meta = extract_metadata(page, document)
    assert meta["authors"][0] == "R. L. Reid"


def test_a_paragraphs_first_sentence_is_no_title() -> None:
    """A test file's Info title is the first sentence of its only paragraph."""
    page = "This is a test document. It only contains some text.\nCreative Commons CC0."
    assert not title_agrees("This is a test document", page)
    assert title_agrees("Owners of Nuclear Power Plants", "Owners of Nuclear Power Plants\nby")
    assert is_noise_title("This is a test document. It only contains some text.")
    assert not is_noise_title("U.S. Policy in Asia")


def _converted_title(name: str, folder: Path) -> str | None:
    assert WILD is not None
    document, _ = convert_pdf_offline(wild_page(name, 0, folder), do_ocr=False)
    return next((t.text for t in document.texts if str(t.label.value) == "title"), None)


@needs_wild
def test_a_subtitle_under_a_one_word_title_finishes_it(tmp_path: Path) -> None:
    """``Russia`` at 24 pt, two lines at 14 pt right under it, then a blank and
    ``FINAL REPORT`` at 11 pt."""
    title = _converted_title("govdocs1__379049.pdf", tmp_path)
    assert title == (
        "Russia Democracy Assessment: Political Process, Local Governance, and Civil Society"
    )


@needs_wild
def test_a_title_stops_at_the_smaller_heading_a_blank_under_it(tmp_path: Path) -> None:
    """``QA Test Master Document`` at 26 pt; ``Font Variations`` at 20 pt over a blank of
    more than an em: a section's heading, not the title's second line."""
    assert _converted_title("pdfjs__issue19971.pdf", tmp_path) == "QA Test Master Document"


@needs_wild
def test_a_running_foot_is_no_title() -> None:
    """A Thai exam page whose text layer gives its running foot first."""
    assert WILD is not None
    path = Path(os.fspath(WILD / "pdfjs__issue13211.pdf"))
    foot = "เรียนเลขพี่นวย (คณิตมงคลพิทักษ์สุข) 3 เวกเตอร์ที่มีขนาดเท่ากับ u v"
    assert refused_title_line(path, foot) == "running foot"


@needs_wild
@pytest.mark.parametrize(
    ("name", "line", "why"),
    [
        ("govdocs1__303226.pdf", "Drug Enforcement Administration, Justice Pt. 1308",
         "running head"),  # the next pages' top lines are read too
        ("pdfjs__issue13211.pdf", "เรียนเลขพี่นวย (คณิตมงคลพิทักษ์สุข) 3", "running foot"),
        ("govdocs1__392154.pdf", "Owners of Nuclear Power Plants", None),
    ],
)  # fmt: skip
def test_the_conversions_page_lines_refuse_as_the_file_does(
    name: str, line: str, why: str | None, tmp_path: Path
) -> None:
    """The build hands the metadata step the lines the conversion read: the same refusal
    as reading the file again, without opening it (a path that is gone still answers)."""
    assert WILD is not None
    path = Path(os.fspath(WILD / name))
    _, recovery = convert_pdf_offline(path, do_ocr=False)
    assert len(recovery.head_lines) == min(6, recovery.pages)
    assert refused_title_line(path, line) == why
    assert refused_title_line(tmp_path / "gone.pdf", line, recovery.head_lines) == why
    assert refused_title_line(tmp_path / "gone.pdf", line, [None]) is None
