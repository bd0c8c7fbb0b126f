"""Metadata guessed without a reference manager: the sample corpus, bylines, titles, names.

The sample corpus (``examples/corpus/papers``: Markdown, HTML, Word, text PDFs and one
scanned PDF) has a hand-made truth table below; every file's title, author list and
venue must be guessed right from the file alone (no ``.bib``, no DOI services).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from docling_core.types.doc import DocItemLabel, DoclingDocument
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.biblio import biblio_regex as rx
from klea_utils.stores._ingest.convert.conversion import Converter
from klea_utils.stores.biblio import extract_metadata
from realpapers import needs_tesseract

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "corpus" / "papers"

# file -> (title, authors, venue), written by hand from the files.
TRUTH: dict[str, tuple[str, list[str], str]] = {
    "antibiotic-resistance-soil.docx": (
        "Antibiotic resistance genes in agricultural soil",
        ["Peter Novak", "Lena Fischer"],
        "Environmental Microbiology",
    ),
    "bm25-revisited.md": (
        "BM25 revisited: term saturation and length normalization",
        ["Sara Lind"],
        "Information Retrieval Letters",
    ),
    "climate-sensitivity.pdf": (
        "Constraining equilibrium climate sensitivity",
        ["Nora Berg", "Samuel Okafor"],
        "Climate Dynamics Letters",
    ),
    "coral-bleaching-heatwaves.html": (
        "Marine heatwaves and coral bleaching thresholds",
        ["Hana Sato", "Diego Ruiz"],
        "Ocean Ecology",
    ),
    "crispr-off-target.md": (
        "Predicting CRISPR off-target cleavage",
        ["Maya Gupta", "Tom Becker"],
        "Genome Methods",
    ),
    "dark-matter-dwarf-galaxies.md": (
        "Dark matter halos of dwarf galaxies",
        ["Ana Ortiz", "Liam Chen"],
        "Journal of Galactic Studies",
    ),
    "graphene-thermal-conductivity.pdf": (
        "Thermal conductivity of suspended graphene",
        ["Oleg Petrov"],
        "Applied Materials Physics",
    ),
    "malaria-vaccine-trial.docx": (
        "A malaria vaccine trial in young children",
        ["Amina Diallo", "John Carter"],
        "Tropical Medicine",
    ),
    "protein-folding-scanned.pdf": (
        "Chaperones and protein folding in the cell",
        ["Elena Rossi"],
        "Cell Biology Notes",
    ),
    "quantum-error-correction.pdf": (
        "Surface code error correction below threshold",
        ["Marta Kowalska", "Ravi Iyer"],
        "Quantum Devices",
    ),
    "sleep-memory-consolidation.md": (
        "Sleep spindles and memory consolidation",
        ["Ines Moreau", "Kofi Mensah"],
        "Neuroscience Reports",
    ),
    "transformer-attention.html": (
        "Attention heads in transformer language models",
        ["Yuki Tanaka"],
        "Machine Learning Review",
    ),
}

# scripts/test installs tesseract (the scanned paper needs it): under CI a missing one fails.


@pytest.fixture(autouse=True)
def _no_doi_lookups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLEA_DOI_LOOKUP", "0")


@pytest.mark.slow
@needs_tesseract
def test_the_sample_corpus_is_guessed_right_without_a_bib() -> None:
    assert sorted(TRUTH) == sorted(p.name for p in SAMPLE.iterdir() if p.is_file())
    converter = Converter(do_ocr=True, logger=logging.getLogger(__name__))
    wrong = {}
    for name, truth in TRUTH.items():
        path = SAMPLE / name
        meta = extract_metadata(path, converter.convert(path))
        got = (meta.get("title"), meta.get("authors"), meta.get("journal"))
        if got != truth:
            wrong[name] = got
    assert wrong == {}


# --------------------------------------------------------------------------- bylines


@pytest.mark.parametrize(
    ("line", "names"),
    [
        ("Maya Gupta, Tom Becker. Genome Methods, 2023.", ["Maya Gupta", "Tom Becker"]),
        ("Ana Ortiz, Liam Chen. Journal of Galactic Studies, 2021. doi:10.1/x", None),
        ("Ines Moreau and Kofi Mensah. Neuroscience Reports, 2020.", None),
        ("Smith, J. R., Doe, K. Journal of Things, 2019.", ["J. R. Smith", "K. Doe"]),
    ],
)
def test_a_byline_author_list_stops_at_the_venue(line: str, names: list[str] | None) -> None:
    byline = rx.parse_byline(line)
    assert byline is not None
    expected = names or [n.strip() for n in line.split(".")[0].replace(" and ", ", ").split(",")]
    assert rx.author_names(line) == expected
    assert byline.authors == expected
    assert not any("." in n.split()[-1] for n in rx.author_names(line))


def _document(items: list[tuple[DocItemLabel, str]]) -> DoclingDocument:
    doc = DoclingDocument(name="paper")
    for label, text in items:
        if label == DocItemLabel.TITLE:
            doc.add_title(text=text)
        elif label == DocItemLabel.SECTION_HEADER:
            doc.add_heading(text=text)
        else:
            doc.add_text(label=label, text=text)
    return doc


def test_a_docling_author_item_with_a_byline_keeps_the_journal_apart(tmp_path: Path) -> None:
    path = tmp_path / "paper.html"
    path.write_text("<h1>x</h1>", encoding="utf-8")
    doc = _document(
        [
            (DocItemLabel.TITLE, "Marine heatwaves and coral bleaching thresholds"),
            (DocItemLabel.TEXT, "Hana Sato, Diego Ruiz. Ocean Ecology, 2022. doi:10.5555/oe.1"),
        ]
    )
    meta = extract_metadata(path, doc)
    assert meta["authors"] == ["Hana Sato", "Diego Ruiz"]
    assert meta["journal"] == "Ocean Ecology"
    assert meta["year"] == 2022


# --------------------------------------------------------------------------- titles


def test_an_ocred_page_is_titled_by_its_title_not_its_first_heading(tmp_path: Path) -> None:
    path = tmp_path / "scan-0001.pdf"
    path.write_bytes(b"")  # no PDF Info: the stem stands for the title
    doc = _document(
        [
            (
                DocItemLabel.TEXT,
                "Chaperones and protein folding in the cell Elena Rossi. Cell Biology Notes, "
                "2016. doi:10.5555/cbn.2016.012",
            ),
            (DocItemLabel.SECTION_HEADER, "Abstract"),
            (DocItemLabel.TEXT, "Molecular chaperones help newly made proteins fold."),
            (DocItemLabel.SECTION_HEADER, "Results"),
        ]
    )
    meta = extract_metadata(path, doc)
    assert meta["title"] == "Chaperones and protein folding in the cell"
    assert meta["authors"] == ["Elena Rossi"]
    assert meta["journal"] == "Cell Biology Notes"


@pytest.mark.parametrize(
    "line",
    [
        "Abstract",
        "1. Introduction",
        "I. INTRODUCTION",
        "Materials and Methods",
        "Acknowledgements",
        "Author(s): Jane Doe, John Roe",
        "Website: https://example.org",
        "Keywords: soil; genes",
        "Keywords soil genes",
        "E-mail: jane@example.org",
    ],
)
def test_labels_and_section_headings_are_never_titles(line: str) -> None:
    assert rx.never_title(line)
    title, _ = rx.find_title_and_authors(f"{line}\nA Study of Things in Soil\nJane Doe\n")
    assert title == "A Study of Things in Soil"


@pytest.mark.parametrize(
    "title",
    ["BM25 revisited: term saturation", "Introduction to Quantum Codes", "Methods Matter"],
)
def test_titles_that_look_like_labels_or_sections_stay_titles(title: str) -> None:
    assert not rx.never_title(title)


def test_the_h1_wins_over_labelled_lines_in_markdown(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text(
        "Author(s): Jane Doe, John Roe\nWebsite: https://example.org/lab\n"
        "Keywords soil, genes\n\n# Antibiotic resistance in soil\n\n## Introduction\n\nText.\n",
        encoding="utf-8",
    )
    meta = extract_metadata(path)
    assert meta["title"] == "Antibiotic resistance in soil"
    assert meta["authors"] == ["Jane Doe", "John Roe"]
    doc = _document(
        [
            (DocItemLabel.TEXT, "Author(s): Jane Doe, John Roe"),
            (DocItemLabel.TEXT, "Website: https://example.org/lab"),
            (DocItemLabel.TITLE, "Antibiotic resistance in soil"),
            (DocItemLabel.SECTION_HEADER, "Introduction"),
        ]
    )
    assert extract_metadata(path, doc)["title"] == "Antibiotic resistance in soil"


def test_a_stem_title_gives_way_to_a_heading_that_is_no_section_name(tmp_path: Path) -> None:
    path = tmp_path / "report.md"
    path.write_text("## Introduction\n\n## Soil genes after drought\n\nText.\n", encoding="utf-8")
    doc = _document(
        [
            (DocItemLabel.SECTION_HEADER, "Introduction"),
            (DocItemLabel.SECTION_HEADER, "Soil genes after drought"),
            (DocItemLabel.TEXT, "Text."),
        ]
    )
    doc_meta = extract_metadata(path, doc)
    assert doc_meta["title"] == "Soil genes after drought"


@pytest.mark.parametrize(
    ("line", "names"),
    [
        ("Authors: Sinha, Ankur; van der Berg, Jan", ["Ankur Sinha", "Jan van der Berg"]),
        ("Author(s): Smith, J. R. and Doe, K.", ["J. R. Smith", "K. Doe"]),
        ("By Jane Doe, John Roe, Jr.", ["Jane Doe", "John Roe Jr."]),
        ("Authors: Ana Ortiz1, Liam Chen2*", ["Ana Ortiz", "Liam Chen"]),
    ],
)
def test_an_authors_line_is_read_in_either_name_order(line: str, names: list[str]) -> None:
    assert rx.find_authors(f"A Title Here\n{line}\nAbstract\n") == names


GIVEN_NAMES = st.sampled_from(["Maya", "Tom", "Ana", "Liam", "Ines", "Kofi", "J.", "A. B."])
SURNAMES = st.sampled_from(["Gupta", "Becker", "Ortiz", "Chen", "Moreau", "Mensah", "Okafor"])
JOURNALS = st.sampled_from(
    ["Genome Methods", "Journal of Galactic Studies", "Ocean Ecology", "Neuroscience Reports"]
)


@given(
    st.lists(st.tuples(GIVEN_NAMES, SURNAMES), min_size=1, max_size=4),
    st.sampled_from([", ", " and "]),
    JOURNALS,
    st.integers(1900, 2029),
    st.sampled_from(["", ".", ". doi:10.5555/x.1", "; 12(3):4-9"]),
)
def test_a_byline_gives_its_names_and_its_venue_apart(
    people: list[tuple[str, str]], separator: str, journal: str, year: int, tail: str
) -> None:
    names = [f"{given} {surname}" for given, surname in people]
    line = f"{separator.join(names)}. {journal}, {year}{tail}"
    byline = rx.parse_byline(line)
    assert byline is not None
    assert (byline.authors, byline.journal, byline.year) == (names, journal, year)
    assert rx.author_names(line) == names
