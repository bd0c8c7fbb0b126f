"""The extraction cascade without DOI services: PDF Info, Docling document, regex passes."""

from __future__ import annotations

from pathlib import Path

import pytest
from docling_core.types.doc import DocItemLabel, DoclingDocument
from hypothesis import given
from hypothesis import strategies as st
from ingest_corpus import write_lines_pdf
from klea_utils.stores._ingest.biblio import biblio_regex as rx
from klea_utils.stores.biblio import extract_metadata


@pytest.fixture(autouse=True)
def _no_doi_lookups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLEA_DOI_LOOKUP", "0")


def test_pdf_info_fields_count_when_page_one_prints_them(tmp_path: Path) -> None:
    path = write_lines_pdf(
        tmp_path / "paper.pdf",
        ["Journal of Things, Vol. 3", "Dendrites In Practice", "Ankur Sinha, Padraig Gleeson"],
        title="Dendrites in practice",
        author="Ankur Sinha; Padraig Gleeson",
        keywords="neurons, models",
        subject="doi:10.1000/xyz.1",
    )
    meta = extract_metadata(path)
    assert meta["title"] == "Dendrites in practice"
    assert meta["authors"] == ["Ankur Sinha", "Padraig Gleeson"]
    assert meta["keywords"] == ["neurons", "models"]
    assert meta["doi"] == "10.1000/xyz.1"
    assert meta["url_doi"] == "https://doi.org/10.1000/xyz.1"
    assert meta["_sources"]["title"] == "pdf_info"
    assert meta["_sources"]["authors"] == "pdf_info"
    assert meta["_metadata_complete"] is False  # no year, no journal


def test_pdf_info_fields_the_page_does_not_print_are_ignored(tmp_path: Path) -> None:
    path = write_lines_pdf(
        tmp_path / "paper.pdf",
        ["Journal of Things, Vol. 3", "A Page Title", "Jane Doe, John Roe", "Keywords: x; y"],
        title="Info Title",
        author="Ankur Sinha; Padraig Gleeson",
    )
    meta = extract_metadata(path)
    assert meta["title"] == "A Page Title"
    assert meta["authors"] == ["Jane Doe", "John Roe"]
    assert meta["_sources"]["title"] == "page_one"


def test_pdf_page_one_regex_fills_the_gaps(tmp_path: Path) -> None:
    path = write_lines_pdf(
        tmp_path / "scan.pdf",
        [
            "arXiv preprint 2101.00001",
            "Spiking Networks In Practice",
            "Jane Doe, John Roe",
            "Keywords: spiking; plasticity",
            "(c) 2019 The Authors",
            "See https://example.org/data.",
        ],
    )
    meta = extract_metadata(path)
    assert meta["title"] == "Spiking Networks In Practice"
    assert meta["authors"] == ["Jane Doe", "John Roe"]
    assert meta["keywords"] == ["spiking", "plasticity"]
    assert meta["year"] == 2019
    assert meta["url"] == "https://example.org/data"
    assert meta["_sources"]["title"] == "page_one"


def test_title_equal_to_stem_is_replaced_by_first_real_heading(tmp_path: Path) -> None:
    path = tmp_path / "my_paper.md"
    path.write_text("# my_paper\n\n## Research Article\n\n## Dendrites Compute\n\nText.\n")
    meta = extract_metadata(path)
    assert meta["title"] == "Dendrites Compute"
    assert meta["_sources"]["title"] == "heading"


def test_docling_document_title_and_links(tmp_path: Path) -> None:
    doc = DoclingDocument(name="x")
    doc.add_text(label=DocItemLabel.PAGE_HEADER, text="Journal of Banners")
    doc.add_title(text="The Docling Title")
    doc.add_text(label=DocItemLabel.TEXT, text="code", hyperlink="https://github.com/org/repo")
    doc.add_text(label=DocItemLabel.TEXT, text="doi", hyperlink="https://doi.org/10.5555/abc")
    doc.add_text(label=DocItemLabel.TEXT, text="Keywords: alpha, beta")
    path = tmp_path / "paper.docx"
    path.write_bytes(b"not read when a document is given")
    meta = extract_metadata(path, doc)
    assert meta["title"] == "The Docling Title"
    assert meta["url"] == "https://github.com/org/repo"
    assert meta["doi"] == "10.5555/abc"
    assert meta["keywords"] == ["alpha", "beta"]
    assert meta["_sources"]["url"] == "docling"


def test_html_is_read_without_tags(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(
        "<html><head><style>p{}</style></head><body><h1>Web Page Title</h1>"
        "<p>Authors: Ada Lovelace and Charles Babbage</p>"
        "<p>Published 1843. https://example.com/notes</p></body></html>"
    )
    meta = extract_metadata(path)
    assert meta["title"] == "Web Page Title"
    assert meta["authors"] == ["Ada Lovelace", "Charles Babbage"]
    assert meta["year"] == 1843
    assert meta["url"] == "https://example.com/notes"


def test_complete_metadata_flag(tmp_path: Path) -> None:
    path = write_lines_pdf(
        tmp_path / "full.pdf",
        ["Full Paper", "Published 2020 in Some Journal"],
        title="Full Paper",
        author="A. Person",
        subject="10.1/abc",
    )
    meta = extract_metadata(path)
    assert meta["_metadata_complete"] is False
    assert set(meta["_sources"]) <= set(meta)


def test_unreadable_files_give_only_internal_keys(tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4 garbage")
    meta = extract_metadata(path)
    assert meta == {"_metadata_complete": False, "_sources": {}}
    assert extract_metadata(tmp_path / "missing.txt") == {
        "_metadata_complete": False,
        "_sources": {},
    }


def test_many_urls_are_capped(tmp_path: Path) -> None:
    path = tmp_path / "refs.txt"
    path.write_text("Title Here\n" + "\n".join(f"https://site{i}.org/x" for i in range(30)))
    meta = extract_metadata(path)
    assert meta["url"] == "https://site0.org/x"
    assert "url_9" in meta
    assert "url_10" not in meta


_SUFFIX = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789.-_/", min_size=1, max_size=20)


@given(
    prefix=st.integers(1000, 999999999),
    suffix=_SUFFIX,
    trail=st.sampled_from(["", ".", ",", ";", ")"]),
)
def test_find_doi_strips_trailing_punctuation(prefix: int, suffix: str, trail: str) -> None:
    suffix = suffix.rstrip("./-_") or "a"
    doi = f"10.{prefix}/{suffix}"
    assert rx.find_doi(f"see doi:{doi}{trail} next") == doi
    assert rx.strip_doi(f"https://doi.org/{doi}") == doi


@given(
    st.lists(
        st.from_regex(r"[A-Za-z][a-z]{1,8}( [a-z]{2,8})?", fullmatch=True), min_size=1, max_size=6
    )
)
def test_keyword_lines_split_back(words: list[str]) -> None:
    words = [w for w in words if w.lower() != "and" and " and" not in w and "and " not in w]
    if not words:
        return
    assert rx.find_keywords("Abstract\nKeywords: " + "; ".join(words) + "\nIntro") == words


@given(st.text(max_size=300))
def test_regexes_never_raise(text: str) -> None:
    rx.find_doi(text)
    rx.find_urls(text)
    rx.find_keywords(text)
    rx.find_authors(text)
    rx.find_year(text)
    rx.find_title_and_authors(text)
    rx.find_byline(text)
    rx.first_text_line(text)
    rx.organisation_name(text)


_AFFILIATION = st.sampled_from(
    ["University of Calgary", "Hebrew University", "Department of Physics", "CWI"]
)
_PERSON = st.sampled_from(["Avi Wigderson", "Alina G. Meresescu", "J. R. Smith", "Ana Ortiz"])


@given(st.lists(st.tuples(_PERSON, _AFFILIATION), min_size=1, max_size=4))
def test_an_author_grid_gives_each_name_once_and_no_affiliation(
    grid: list[tuple[str, str]],
) -> None:
    # the text layer of a grid: "Name1* Aff1 Name2† Aff2 ..." (markers after the names)
    line = " ".join(f"{name}\u2217 {affiliation}" for name, affiliation in grid)
    assert rx.author_names(line) == [name for name, _ in grid]


@given(st.text(max_size=80))
def test_an_organisation_author_is_short_and_no_address(text: str) -> None:
    name = rx.organisation_name(text)
    if name is not None:
        assert 1 <= len(name.split()) <= 5
        assert "@" not in name
        assert not rx.URL_RE.search(name)
        assert not any(w.casefold() in {"university", "department"} for w in name.split())


# ------------------------------------------------------------------ bylines under the title

BYLINE = "Ana Ortiz, Liam Chen. Journal of Galactic Studies, 2021. doi:10.5555/jgs.2021.014"


def test_byline_under_the_title_gives_authors_journal_and_year(tmp_path: Path) -> None:
    path = tmp_path / "dark-matter.md"
    path.write_text(f"# Dark matter halos\n\n{BYLINE}\n\n## Abstract\n\nDwarfs are dark.\n")
    meta = extract_metadata(path)
    assert meta["title"] == "Dark matter halos"
    assert meta["authors"] == ["Ana Ortiz", "Liam Chen"]
    assert meta["journal"] == "Journal of Galactic Studies"
    assert meta["year"] == 2021
    assert meta["doi"] == "10.5555/jgs.2021.014"
    assert meta["_metadata_complete"] is True
    assert meta["_sources"]["journal"] == "page_one"


@pytest.mark.parametrize(
    ("line", "authors", "journal", "year"),
    [
        (
            "Ana Ortiz and Liam Chen. Nature Methods, 2019.",
            ["Ana Ortiz", "Liam Chen"],
            "Nature Methods",
            2019,
        ),
        (
            "J. Smith, K. Lee, and Bo Li. Proc. Natl. Acad. Sci., 2020",
            ["J. Smith", "K. Lee", "Bo Li"],
            "Proc. Natl. Acad. Sci.",
            2020,
        ),
        ("Sara Lind. eLife, 2018; 7:e1", ["Sara Lind"], "eLife", 2018),
    ],
)
def test_byline_variants(line: str, authors: list[str], journal: str, year: int) -> None:
    assert rx.parse_byline(line) == rx.Byline(authors, journal, year)


@pytest.mark.parametrize(
    "line",
    [
        "We thank Ana Ortiz. Nature Methods, 2020.",
        "The authors thank Ana Ortiz. Nature Methods, 2020 for comments.",
        "Results were confirmed by Ana Ortiz. Nature Methods, 2020.",
        "The Smith Lab. Annual Report, 2020.",
        "In this work, we study dwarf galaxies. Nature, 2020.",
        "Ana Ortiz, Liam Chen. Journal of Galactic Studies.",
        "Ana Ortiz, Liam Chen. Journal of Galactic Studies, 2021 and beyond.",
        "Dwarf galaxies, Liam Chen. Journal of Galactic Studies, 2021.",
    ],
)
def test_ordinary_sentences_are_not_bylines(line: str) -> None:
    assert rx.parse_byline(line) is None
    assert rx.find_title_and_authors(f"A Real Title Here\n{line}") == ("A Real Title Here", [])


_WORD = st.from_regex(r"[A-Z][a-z]{2,9}", fullmatch=True).filter(
    lambda w: w.casefold() not in rx.NOT_NAME_STARTS | {"and"}
)
_NAME = st.lists(_WORD, min_size=2, max_size=3).map(" ".join)
_JOURNAL = (
    st.lists(st.one_of(_WORD, st.just("of")), min_size=1, max_size=5)
    .filter(lambda ws: ws[0] != "of")
    .map(" ".join)
)


@given(
    names=st.lists(_NAME, min_size=1, max_size=4),
    style=st.sampled_from([", ", " and ", "; "]),
    journal=_JOURNAL,
    year=st.integers(1800, 2099),
    tail=st.sampled_from(["", ".", ". doi:10.5555/x.1", ". https://example.org"]),
)
def test_generated_bylines_round_trip(
    names: list[str], style: str, journal: str, year: int, tail: str
) -> None:
    line = f"{style.join(names)}. {journal}, {year}{tail}"
    assert rx.parse_byline(line) == rx.Byline(names, journal, year)
    title = "Measuring the dark matter in dwarf galaxies"
    assert rx.find_title_and_authors(f"{title}\n{line}") == (title, names)
    joined = rx.find_byline(f"{title} {line}\nAbstract text follows here.")
    assert joined == rx.Byline(names, journal, year, title=title)


@given(
    subject=st.sampled_from(["We", "Here we", "This study", "Our model", "I"]),
    verb=st.from_regex(r"[a-z]{3,9}( [a-z]{2,9}){0,3}", fullmatch=True),
    name=_NAME,
    journal=_JOURNAL,
    year=st.integers(1800, 2099),
)
def test_sentences_naming_a_person_and_a_year_are_not_bylines(
    subject: str, verb: str, name: str, journal: str, year: int
) -> None:
    line = f"{subject} {verb} {name}. {journal}, {year}."
    assert rx.parse_byline(line) is None
    assert rx.parse_byline(line, allow_title=True) is None


# ------------------------------------------------------ stem titles without headings (OCR)


def test_scanned_pdf_with_stem_title_takes_its_first_text_line(tmp_path: Path) -> None:
    joined = "Chaperones and protein folding in the cell Elena Rossi. Cell Biology Notes, 2016."
    path = write_lines_pdf(
        tmp_path / "protein-folding-scanned.pdf",
        [joined, "Abstract Molecular chaperones help newly made proteins fold."],
        title="protein-folding-scanned",
    )
    doc = DoclingDocument(name="protein-folding-scanned")  # OCR output: text, no headings
    for line in (joined, "Abstract Molecular chaperones help newly made proteins fold."):
        doc.add_text(label=DocItemLabel.TEXT, text=line)
    for meta in (extract_metadata(path), extract_metadata(path, doc)):
        assert meta["title"] == "Chaperones and protein folding in the cell"
        # the Info title (the file name) is not printed: the page's title is taken at once
        assert meta["_sources"]["title"] == "page_one"
        assert meta["authors"] == ["Elena Rossi"]
        assert meta["journal"] == "Cell Biology Notes"
        assert meta["year"] == 2016


def test_the_file_name_in_the_info_title_is_no_title(tmp_path: Path) -> None:
    path = write_lines_pdf(
        tmp_path / "scan-01.pdf", ["Vol. 3", "doi:10.1000/xyz.1"], title="scan-01"
    )
    assert "title" not in extract_metadata(path)


@given(
    title=st.from_regex(r"[A-Z][a-z]{4,9}( [a-z]{3,9}){3,6}", fullmatch=True),
    banners=st.lists(
        st.sampled_from(
            ["arXiv preprint 2101.00001", "Journal of Things, Vol. 3", "doi:10.1/x", "12"]
        ),
        max_size=3,
    ),
)
def test_first_text_line_skips_boilerplate(title: str, banners: list[str]) -> None:
    text = "\n".join([*banners, "", title, "Ana Ortiz, Liam Chen", "Body text follows here."])
    assert rx.first_text_line(text) == title


@pytest.mark.parametrize("placeholder", ["(anonymous)", "untitled", "[Untitled]", "paper.docx"])
def test_producer_placeholders_in_the_info_dictionary_are_ignored(
    tmp_path: Path, placeholder: str
) -> None:
    # reportlab writes "(anonymous)" as Title and Author when a script sets neither.
    path = write_lines_pdf(
        tmp_path / "paper.pdf",
        ["A Real Page Title", "Jane Doe, John Roe. Journal of Things, 2020."],
        title=placeholder,
        author=placeholder,
    )
    meta = extract_metadata(path)
    assert meta.get("title") != placeholder
    assert placeholder not in meta.get("authors", [])
