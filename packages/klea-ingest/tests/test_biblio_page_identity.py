"""What a paper is, read from its page: year, arXiv id, Info fields only where the page agrees.

Each example is a line printed on a real file of realpapers-dev or realpapers-wild (see
``scripts/bench/truth/metadata.jsonl``); the bench ``scripts/bench/metadata_truth.py``
measures the whole cascade on those files.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ingest_corpus import write_lines_pdf
from klea_utils.stores._ingest.biblio.info_trust import info_people, is_noise_title, title_agrees
from klea_utils.stores._ingest.biblio.page_years import arxiv_id, page_year
from klea_utils.stores.biblio import extract_metadata


@pytest.fixture(autouse=True)
def _no_doi_lookups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLEA_DOI_LOOKUP", "0")


@pytest.mark.parametrize(
    ("page", "year"),
    [
        ("Clinical Science (2014) 126, 305–313 (Printed in Great Britain)\nTitle", 2014),
        ("Z. Naturforsch. 54 a, 272-273 (1999);\nreceived December 15, 1998", 1999),
        ("541\nJ. Physiol. (I955) I28, 54I-546\nREANIMATION OF RATS", 1955),
        ("Received 4 October 2005\nRevised 7 March 2006\nVol. 29 No. 2, 2007", 2007),
        ("Volume 2010, Article ID 157939, 6 pages\nReceived 9 November 2010", 2010),
        ("Submitted 25 March 2016\nAccepted 9 May 2017\nPublished 5 June 2017", 2017),
        ("RING PHYSICS ISSUES\nYannis PAPAPHILIPPOU\nNovember 1, 2000", 2000),
        ("Madera Counties, California\nMid-Pacific Region July 2006", 2006),
        ("D_ATDX_2022_12_1068\n20 décembre 2022\nDossier réalisé par :", 2022),
        ("Data di realizzazione: Aprile 2023", 2023),
        ("Author : Johan van der Knijff\nDate : 20-10-2009", 2009),
        ("Analysis KDD ’22, August 14–18, 2022, Washington, DC, USA", 2022),
        ("Causation\n21st November 2018\nAccepted in Quantum 2018-05-04", 2018),
    ],
)
def test_the_year_a_page_states(page: str, year: int) -> None:
    assert page_year(page) == year


@pytest.mark.parametrize(
    "page",
    [
        "Patented in 1868 by Christopher Latham Sholes, the typewriter\n"
        "• WordStar (1978): Developed for the CP/M operating system",
        "patterns for pre-defined relations (Riloff, 1996; Yangarber et al., 2000)",
        "Form CMS-1490S (version 01/18) 1\nExpires 10/31/2022",
        "LL File No. 2004-208\nIRAQ: LEGAL HISTORY AND TRADITIONS",
    ],
)
def test_no_year_from_prose_ids_or_form_codes(page: str) -> None:
    assert page_year(page) is None


def test_the_arxiv_id_dates_a_preprint_both_styles() -> None:
    stamp = "arXiv:0908.0054v1 [astro-ph.CO] 1 Aug 2009"
    assert arxiv_id(stamp) == ("0908.0054v1", 2009)
    assert arxiv_id("arXiv:hep-th/9901001v2 12 Jan 1999") == ("hep-th/9901001v2", 1999)
    assert arxiv_id("", "1001._0908.0054.pdf") == ("0908.0054", 2009)
    assert arxiv_id("", "hep-th_9901001_duality.pdf") == ("hep-th_9901001", 1999)
    assert arxiv_id("", "0106220_serre-taubes-duality.pdf") is None  # no archive: not an id
    # a page year from the first version to two years later is the journal version's
    assert page_year("21st November 2018", "1708.00137_x.pdf") == 2018
    # any other is the date LaTeX printed when the file was built again
    assert (
        page_year("Preprint submitted to Geosciences November 30, 2026", "1803.07574.pdf") == 2018
    )
    assert page_year("AIME 2024 results", "2412.19437_deepseek-v3.pdf") == 2024


@given(st.text(max_size=300), st.text(max_size=40))
def test_a_year_is_printed_on_the_page_or_dated_by_an_id(page: str, name: str) -> None:
    year = page_year(page, name)
    if year is not None:
        digits = re.sub(r"[IlOo]", "0", page)
        assert str(year)[2:] in digits or arxiv_id(page, name) is not None


@pytest.mark.parametrize(
    "value",
    [
        "Microsoft Word - USJBSI Draft EA updated based on comments.doc",
        "S2MNCE01birdisland.xlsx",
        "p020-dutot.dvi",
        "Yannis_DOE2000",
        "88300 162..177",
        "PowerPoint Presentation",
        "Document",
        "package",
        "The information in this document is provided for general guidance only and does "
        "not constitute legal advice; no warranty is given as to its accuracy and readers "
        "should take advice before acting on any of it.",
    ],
)
def test_noise_is_no_title(value: str) -> None:
    assert is_noise_title(value)


def test_real_titles_are_not_noise() -> None:
    for title in (
        "VESPA: Very large-scale Evolutionary and Selective Pressure Analyses",
        "2012 BETTER VARIETIES Harvest Report for Minnesota Central [ MNCE ]",
        "Налоговая декларация по налогу",
    ):
        assert not is_noise_title(title)


def test_info_fields_count_only_when_page_one_prints_them() -> None:
    page = "NIST SP 800-223\nHigh-Performance Computing Security\nArchitecture, Threat Analysis"
    page += "\nYang Guo"
    assert title_agrees(
        "High-Performance Computing (HPC) Security: Architecture, Threat Analysis", page
    )
    assert not title_agrees("The Law Library serves the needs of the U", page)
    assert info_people(["Yang Guo", "Ramaswamy Chandramouli"], page) == [
        "Yang Guo",
        "Ramaswamy Chandramouli",
    ]
    for account in (["froscan"], ["Administrator"], ["Toshiba"], ["Mike Montgomery"]):
        assert info_people(account, page) == []  # no person, or one the page does not name
    assert info_people(["Centers for Medicare & Medicaid Services"], "Centers for Medicare") == []
    slide = "Some Trucs and Machins about Google Go\nNarbel\nUniversity of Bordeaux 1"
    assert info_people(["Narbel"], slide) == ["Narbel"]  # a one-word byline on its own line
    assert info_people(["Owner"], "Owner\nReport") == []
    assert info_people(["Txus"], slide) == []


def test_producer_fields_never_fill_awrite_lines_pdf(tmp_path: Path) -> None:
    path = write_lines_pdf(
        tmp_path / "report.pdf",
        ["Final Environmental Assessment", "Bureau of Reclamation", "Mid-Pacific Region July 2006"],
        title="Microsoft Word - USJBSI Draft EA.doc",
        author="Administrator",
    )
    meta = extract_metadata(path)
    assert meta["title"] == "Final Environmental Assessment"
    assert "authors" not in meta
    assert meta["year"] == 2006


def test_a_title_block_that_ran_into_its_byline_is_cut_before_it(tmp_path: Path) -> None:
    from docling_core.types.doc import DoclingDocument

    doc = DoclingDocument(name="jphysiol")
    doc.add_title(
        text="REANIMATION OF RATS BY MICROWAVE DIATHERMY By R. K. ANDJUS* AND J. LOVELOCK"
    )
    path = tmp_path / "jphysiol.pdf"
    path.write_bytes(b"%PDF-1.4 not read further")
    meta = extract_metadata(path, doc)
    assert meta["title"] == "REANIMATION OF RATS BY MICROWAVE DIATHERMY"
    assert meta["authors"][0].split()[-1] == "ANDJUS"
