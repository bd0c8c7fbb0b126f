"""The title block and the byline under it, as real-world files print them (issue 38).

The examples are the lines of realpapers-wild files the metadata bench
(``scripts/bench/metadata_truth.py``) found wrong: a title's second line set smaller
(``ocrmypdf__linn``), a title broken mid-phrase (``pdfjs__issue12963``), a masthead's
small ``The`` (``govdocs1__507676``), a title in title case over two items
(``grobid__ZFN``), bylines the converted text runs into the next lines (a slide's
``Rob Pike``, ``Author : Johan van der Knijff``, names behind footnote marks).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.biblio.author_lines import names_in_line
from klea_utils.stores._ingest.biblio.bylines import find_title_and_authors
from klea_utils.stores._ingest.biblio.info_trust import fold_words, is_noise_author
from klea_utils.stores._ingest.biblio.page_years import page_year, title_year
from klea_utils.stores._ingest.biblio.title_layout import running_head_key
from klea_utils.stores._ingest.biblio.under_title import authors_under_title
from klea_utils.stores._ingest.pdf.pdf_lines import Line, PageLines
from klea_utils.stores._ingest.pdf.pdf_structure import build_document
from klea_utils.stores.biblio import extract_metadata
from realpapers import WILD, minilm_chunker, needs_wild


@pytest.fixture(autouse=True)
def _no_doi_lookups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLEA_DOI_LOOKUP", "0")


def _title(rows: list[tuple[str, float, float]]) -> str | None:
    """The title the offline path builds from lines ``(text, top, size)`` on one page."""
    lines = [
        Line(text=text, page_no=1, x0=72.0, top=top, x1=72.0 + 5 * len(text), bottom=top + size,
             size=size)
        for text, top, size in rows
    ]  # fmt: skip
    body = [
        (f"Body text line {i} of the page goes on here.", 300.0 + 12 * i, 10.0) for i in range(8)
    ]
    lines += [
        Line(text=t, page_no=1, x0=72.0, top=top, x1=400.0, bottom=top + s, size=s)
        for t, top, s in body
    ]
    page = PageLines(page_no=1, width=612.0, height=792.0, lines=lines, raw_text="")
    document = build_document("t", [page])
    return next((t.text for t in document.texts if str(t.label.value) == "title"), None)


def test_a_title_block_goes_on_over_a_smaller_second_line_and_a_broken_phrase() -> None:
    linn = [("The LinnSequencer", 31.4, 20.6), ("32 Track MIDI Sequence Recorder", 51.6, 16.8)]
    assert _title(linn) == "The LinnSequencer 32 Track MIDI Sequence Recorder"
    form = [
        ("Tax return for the tax paid,", 81.1, 14.0),
        ("in connection with the simplified system", 93.6, 10.0),
    ]
    assert _title(form) == "Tax return for the tax paid, in connection with the simplified system"
    masthead = [("The", 72.7, 12.0), ("GLIDER EXPRESS", 97.8, 48.0)]
    assert _title(masthead) == "The GLIDER EXPRESS"


def test_a_title_block_stops_at_a_smaller_byline_and_a_finished_sentence() -> None:
    byline = [("Bi-criteria Algorithm for Scheduling", 72.1, 17.9), ("Pierre Dutot", 92.0, 12.0)]
    assert _title(byline) == "Bi-criteria Algorithm for Scheduling"
    ended = [("A Title That Ends Here.", 60.0, 20.0), ("A Subtitle Set Smaller", 82.0, 16.0)]
    assert _title(ended) == "A Title That Ends Here."


def test_a_title_in_title_case_over_two_items_is_joined() -> None:
    page = (
        "272\nExact Solitary-wave Solutions for the General\nFifth-order Shallow Water-wave "
        "Models\nNotes\nWoo-Pyo Hong and Young-Dae Jung"
    )
    title, _ = find_title_and_authors(page)
    assert (
        title
        == "Exact Solitary-wave Solutions for the General Fifth-order Shallow Water-wave Models"
    )
    # a byline, a venue or a list of names is never the title's second line
    assert (
        find_title_and_authors("Deep Learning for Protein Folding\nJohn Smith and Ann Lee")[0]
        == "Deep Learning for Protein Folding"
    )
    assert (
        find_title_and_authors("A Real Title Here\nThe Smith Lab Annual Report 2020")[0]
        == "A Real Title Here"
    )


@pytest.mark.parametrize(
    ("page", "title", "first"),
    [
        ("Another Go at Language Design\nRob Pike\ngolang . org\nApril 28, 2010",
         "Another Go at Language Design", "Rob Pike"),
        ("Adobe Portable Document Format\nInventory of long-term preservation risks\n"
         "Version : 0.2\nAuthor : Johan van der Knijff\nDate : 20-10-2009",
         "Adobe Portable Document Format Inventory of long-term preservation risks",
         "Johan van der Knijff"),
        ("Ultra light bosonic dark matter and CMB\n"
         "Ivan Rodriguez Montoya\u2217 \u2020 and Tonatiuh Matos Chassin\u2217 \u2021",
         "Ultra light bosonic dark matter and CMB", "Ivan Rodriguez Montoya"),
        # a Japanese slide (pdfminer__nlp2004slides): the title broken inside its one
        # "word", one name a line with a space between family and given name
        ("コンパラブルな新聞記事からの\r\n固有表現の発見\r\n新山 祐介\r\n関根 聡\r\n"
         "Computer Science Department",
         "コンパラブルな新聞記事からの固有表現の発見", "新山 祐介"),
    ],
)  # fmt: skip
def test_the_byline_under_the_title_in_the_text_layer(page: str, title: str, first: str) -> None:
    assert authors_under_title(page, title)[0] == first


@pytest.mark.parametrize(
    "below",
    [
        "Geologic Drilling & Aggregate Sampling Program, Upper",
        "Departamento de Seguridad Nacional",
        "Commune de S\u00e9ranon",
        "INSIDE THIS ISSUE",
        "Technical Report",
        "User Guide",
        "LEGAL HISTORY AND TRADITIONS",
        "Local Governance, Civil Society",
        "Abstract\nJohn Smith",  # a name after the text opens is no byline
        "本报告 内容",  # two Han words apart ("this report", "content"): no name
    ],
)
def test_no_byline_from_programmes_offices_or_the_text(below: str) -> None:
    assert authors_under_title(f"A Report Title Here\n{below}", "A Report Title Here") == []


def test_an_envelope_icon_after_a_name_keeps_the_name() -> None:
    line = "Zejiang Shen1 ( ), Ruochen Zhang2, Melissa Dell3"
    assert names_in_line(line)[:2] == ["Zejiang Shen", "Ruochen Zhang"]
    assert is_noise_author("Commune de S\u00e9ranon")
    assert not is_noise_author("Johan van der Knijff")


def test_no_year_from_a_footnote_a_rule_citation_or_a_printer_stamp() -> None:
    assert page_year("33. Two recent (seminal) examples are Sutton (1991) and Reiss (1991)") is None
    assert page_year("[36 FR 7801, Apr. 24, 1971, as amended at 37") is None
    assert page_year("Title\nVerDate 27<APR>2000 10:56 Apr 28, 2000 Jkt 190069 PO 00000") is None
    assert page_year("Clinical Science (2014) 126, 305-313 (Printed in Great Britain)") == 2014


@given(st.text(max_size=400), st.text(min_size=1, max_size=60))
def test_a_byline_is_only_names_printed_on_the_page(page: str, title: str) -> None:
    printed = set(fold_words(page))
    for name in authors_under_title(page, title):
        assert set(fold_words(name)) <= printed


@needs_wild
@pytest.mark.parametrize(
    ("name", "title", "first", "year"),
    [
        ("grobid__ZFN-A-054-0304-0272.pdf",
         "Exact Solitary-wave Solutions for the General Fifth-order Shallow Water-wave Models",
         "Hong", 1999),
        ("opf__test_fontArialNotEmbedded.pdf", None, "Knijff", 2009),
        ("grobid__1001._0908.0054.pdf", None, "Montoya", 2009),
        ("govdocs1__247224.pdf", None, None, 2006),
        ("camelot__eu-004.pdf",
         "CHAPTER 6 \u2013 AN OVERVIEW OF MARKET STRUTURE BASED UPON EXISTING SOURCES", None, None),
        ("govdocs1__303226.pdf", None, None, None),
        ("pdfplumber__issue-336-example.pdf", None, None, 2020),  # "（2020 年版）", an edition
    ],
)  # fmt: skip
def test_real_pages(name: str, title: str | None, first: str | None, year: int | None) -> None:
    assert WILD is not None
    meta = extract_metadata(Path(os.fspath(WILD / name)))
    if title is not None:
        assert meta["title"] == title
    authors = meta.get("authors") or []
    assert (authors[0].split()[-1] if authors else None) == first
    assert meta.get("year") == year


def test_a_title_with_nothing_under_it_stays_the_pages_text(tmp_path: Path) -> None:
    """A scan of two large lines and nothing else: as a title block they would leave the
    document no passage, and the build would store nothing (the build test's corpus)."""
    from ingest_corpus import write_scanned_pdf
    from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline

    lines = ["Scanned Hippocampus Report", "place cells fire in sequence"]
    path = write_scanned_pdf(tmp_path / "scan.pdf", lines)
    document, _ = convert_pdf_offline(path, do_ocr=True)
    docs = minilm_chunker().chunk(document, file_name=path.name, file_hash="h")
    text = " ".join(d.page_content for d in docs)
    assert "Hippocampus" in text
    assert "place cells fire in sequence" in text


def test_a_heading_beside_the_title_is_another_column() -> None:
    """Two headings side by side, each over two lines (a Korean brochure's top): the title
    is the first one, not the four lines in reading order."""
    left, right = 20.0, 290.0
    lines = [
        Line(text=t, page_no=1, x0=x, top=top, x1=x + 200.0, bottom=top + 16.0, size=16.0)
        for t, x, top in [
            ("Discount stores and fuel", left, 25.0),
            ("Coffee shops and bakeries", right, 25.0),
            ("1.5% points back", left, 47.0),
            ("2% points back", right, 47.0),
        ]
    ]
    lines += [
        Line(text=f"Body text line {i} of the page goes on here.", page_no=1, x0=20.0,
             top=300.0 + 12 * i, x1=400.0, bottom=310.0 + 12 * i, size=10.0)
        for i in range(8)
    ]  # fmt: skip
    page = PageLines(page_no=1, width=612.0, height=792.0, lines=lines, raw_text="")
    document = build_document("t", [page])
    title = next(t.text for t in document.texts if str(t.label.value) == "title")
    assert title == "Discount stores and fuel 1.5% points back"


@needs_wild
@pytest.mark.parametrize(
    "name",
    [
        "pdfplumber__senate-expenditures.pdf",  # a row of table column heads
        "govdocs1__303226.pdf",  # a running head, its part number unlike the next pages'
        "pdfplumber__issue-336-example.pdf",  # a one-page excerpt's small running head
        "pdfcpu__read.go.pdf",  # "2 Copyright 2018 The pdfcpu Authors ." in a listing
    ],
)
def test_no_title_from_column_heads_running_heads_or_notices(name: str) -> None:
    assert WILD is not None
    assert extract_metadata(Path(os.fspath(WILD / name))).get("title") is None


@given(
    words=st.lists(st.sampled_from(["Drug", "Enforcement", "Justice", "Annual", "Report"]),
                   min_size=2, max_size=6),
    number=st.integers(min_value=1, max_value=9999),
    part=st.integers(min_value=1, max_value=99),
)  # fmt: skip
def test_a_running_head_key_drops_its_part_number(words: list[str], number: int, part: int) -> None:
    head = " ".join(words)
    key = running_head_key(head)
    assert key == " ".join(w.casefold() for w in words)
    assert running_head_key(f"{head}, Pt. {number}") == key
    assert running_head_key(f"{number} {head} \u00a7 {number}.{part}") == key


def test_a_caption_in_capitals_under_the_title_is_no_byline() -> None:
    """ocrmypdf__multipage: a picture's caption under a chapter's title is no author; a
    byline in capitals with initials still is."""
    assert find_title_and_authors("Chapter Two Begins\nTHEY TIP-TOED ALONG\nThe night")[1] == []
    _, authors = find_title_and_authors("Reanimation of Rats From Cold\nR. K. ANDJUS")
    assert [a.casefold() for a in authors] == ["r. k. andjus"]


@pytest.mark.parametrize(
    ("title", "year"),
    [
        ("الانتخابات التشريعية 2014", 2014),
        ("The Digital Millennium Copyright Act of 1998", 1998),
        ("2012 BETTER VARIETIES Harvest Report", 2012),
        ("Vision 2090 for the Region", None),  # a year to come
        ("From 1990 to 2000: a Review", None),  # two years: which one?
        ("IRM 2.3.59 and Form 1040-2019", None),  # numbers inside codes
    ],
)  # fmt: skip
def test_the_year_a_title_names(title: str, year: int | None) -> None:
    assert title_year(title) == year


WORDS_ONLY = st.lists(
    st.sampled_from(["Annual", "Report", "of", "the", "Act", "Harvest"]), max_size=5
)


@given(WORDS_ONLY, WORDS_ONLY, st.integers(min_value=1800, max_value=2025))
def test_a_past_year_among_words_is_the_title_year(
    before: list[str], after: list[str], year: int
) -> None:
    title = " ".join([*before, str(year), *after])
    assert title_year(title) == year
    assert title_year(" ".join([*before, *after])) is None


def test_an_edition_statement_dates_the_page() -> None:
    assert page_year("Guide to Field Work\n2019 Edition\nPrepared for the staff") == 2019
    assert page_year("Standard for Land Use\uff082020 \u5e74\u7248\uff09\n173\nbody") == 2020
    assert page_year("The second edition of this guide was revised in many places") is None
