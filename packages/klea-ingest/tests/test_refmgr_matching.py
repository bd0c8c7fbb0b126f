"""Matching source files to reference entries (attachment, DOI, arXiv id, title), the
record a match gives, and the name and accent decoding (hypothesis)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.biblio.refmgr.latex import decode_latex, split_bibtex_names
from klea_utils.stores._ingest.biblio.refmgr.matching import title_similarity
from klea_utils.stores._ingest.biblio.refmgr.records import matched_default, unmatched_default
from klea_utils.stores.map_lint import format_metadata_lint_report, lint_metadata_map
from klea_utils.stores.references import (
    TITLE_MATCH_THRESHOLD,
    FileMatch,
    ReferenceEntry,
    ReferenceLibrary,
)


def _entry(key: str, **fields: object) -> ReferenceEntry:
    return ReferenceEntry(citekey=key, source="bibtex", origin=f"test {key}", **fields)  # type: ignore[arg-type]


LIBRARY = ReferenceLibrary(
    [
        _entry("attached", title="Dark matter halos", attachments=("/lib/files/halos.pdf",)),
        _entry("by_doi", title="Genome editing", doi="10.5555/GM.2023.101"),
        _entry("by_arxiv", title="Attention heads", arxiv="2401.01234"),
        _entry("by_title", title="Thermal conductivity of suspended graphene", year=2017),
        _entry("twin_a", title="Twin A", attachments=("/a/notes.pdf",)),
        _entry("twin_b", title="Twin B", attachments=("/b/notes.pdf",)),
    ]
)


def test_an_attachment_matches_by_path_or_by_a_unique_file_name(tmp_path: Path) -> None:
    assert LIBRARY.match(Path("/lib/files/halos.pdf")).how == "attachment"
    match = LIBRARY.match(tmp_path / "Halos.PDF")  # copied out of the library, case changed
    assert (match.how, match.entry and match.entry.citekey) == ("attachment", "attached")
    assert LIBRARY.match(Path("/a/notes.pdf")).entry == LIBRARY.entries[4]  # exact path wins
    assert LIBRARY.match(tmp_path / "notes.pdf").how is None  # two entries attach notes.pdf


def test_a_file_of_the_same_name_but_another_size_is_not_the_attachment(tmp_path: Path) -> None:
    attached = tmp_path / "library" / "main.pdf"
    attached.parent.mkdir()
    attached.write_bytes(b"%PDF the paper in the library")
    library = ReferenceLibrary([_entry("paper", title="Paper", attachments=(str(attached),))])
    copy = tmp_path / "folder" / "main.pdf"
    copy.parent.mkdir()
    copy.write_bytes(attached.read_bytes())
    assert library.match(copy).how == "attachment"
    copy.write_bytes(b"%PDF another paper called main.pdf")
    assert library.match(copy).how is None


def test_the_order_is_attachment_doi_arxiv_title(tmp_path: Path) -> None:
    text = "Thermal conductivity of suspended graphene\narXiv:2401.01234v3 doi:10.5555/gm.2023.101."
    assert LIBRARY.match(tmp_path / "halos.pdf", head_text=text).how == "attachment"
    assert LIBRARY.match(tmp_path / "x.pdf", head_text=text).report == (
        "matched by doi (bibtex by_doi)"
    )
    no_doi = text.replace("doi:10.5555/gm.2023.101", "")
    assert LIBRARY.match(tmp_path / "x.pdf", head_text=no_doi).how == "arxiv"
    assert LIBRARY.match(tmp_path / "2401.01234v2.pdf").how == "arxiv"  # id in the file name
    title_only = LIBRARY.match(
        tmp_path / "x.pdf", head_text="Thermal conductivity of suspended graphene"
    )
    assert title_only.report == "matched by title 1.00 (bibtex by_title)"
    assert (
        LIBRARY.match(tmp_path / "x.pdf", dois=["https://doi.org/10.5555/GM.2023.101"]).how == "doi"
    )


def test_a_cited_doi_or_arxiv_id_further_down_is_not_the_file_s(tmp_path: Path) -> None:
    text = (
        "A paper outside the library\ndoi:10.7777/own.2020.1\n"
        "As shown before (doi:10.5555/gm.2023.101; arXiv:2309.00001, arXiv:2401.01234) ..."
    )
    assert LIBRARY.match(tmp_path / "x.pdf", head_text=text).how is None


def test_title_similarity_and_its_threshold(tmp_path: Path) -> None:
    ocr = "Journal of Materials 12 (2017)\nThermal conductivty of suspended graphene\nOleg Petrov"
    match = LIBRARY.match(tmp_path / "scan.pdf", head_text=ocr)
    assert match.how == "title"
    assert match.score is not None
    assert TITLE_MATCH_THRESHOLD <= match.score < 1.0
    assert LIBRARY.match(tmp_path / "x.pdf", title="Thermal conductivity of graphene").how is None
    assert LIBRARY.match(tmp_path / "x.pdf", head_text="Genome editing in plants").how is None
    assert title_similarity("a b c", "", []) == 0.0


def test_an_unmatched_file_keeps_its_extracted_metadata_marked_unmatched(tmp_path: Path) -> None:
    match = LIBRARY.match(tmp_path / "other.pdf", head_text="Something else entirely")
    assert match == FileMatch()
    assert match.report == "unmatched"
    default = unmatched_default({"title": "Something", "_metadata_complete": False})
    assert default == {"title": "Something", "_metadata_complete": False, "_match": "unmatched"}


def test_a_matched_record_is_complete_and_names_a_conflicting_doi() -> None:
    entry = _entry(
        "smith2020",
        title="A title",
        authors=("Ana Ortiz",),
        year=2020,
        journal="J",
        doi="10.1000/abc",
        tags=("to-read",),
        collections=("Thesis",),
    )
    extracted = {
        "title": "Abstract",
        "doi": "10.9999/other",
        "keywords": ["dark matter"],
        "_sources": {"doi": "page_one", "title": "heading", "keywords": "text"},
        "_metadata_complete": False,
    }
    default = matched_default(FileMatch(entry, "title", 0.93), extracted)
    assert default["title"] == "A title"
    assert default["doi"] == "10.1000/abc"
    assert default["keywords"] == ["dark matter"]  # the entry had none: the file's fills it
    assert default["_sources"]["title"] == "bibtex"
    assert default["_sources"]["keywords"] == "text"
    assert (default["citekey"], default["tags"], default["collections"]) == (
        "smith2020", ["to-read"], ["Thesis"],
    )  # fmt: skip
    assert default["_metadata_complete"] is True
    assert default["_match"] == "matched by title 0.93 (bibtex smith2020)"
    report = lint_metadata_map(
        {"a.pdf": {"DEFAULT": default}, "b.pdf": {"DEFAULT": unmatched_default({})}}
    )
    assert report["matches"] == {
        "a.pdf": "matched by title 0.93 (bibtex smith2020)",
        "b.pdf": "unmatched",
    }
    assert report["issues"]["a.pdf"] == [
        "DEFAULT: conflict with the file: doi: the file says 10.9999/other (page_one), "
        "the bibtex entry 10.1000/abc"
    ]  # and no "missing core field" for what the entry lacks
    text = format_metadata_lint_report(report)
    assert "Reference library: 1 of 2 file(s) matched, 1 unmatched" in text
    assert "  a.pdf: matched by title 0.93 (bibtex smith2020)" in text
    assert "  b.pdf: unmatched" in text


_ACCENTS = {"\u0301": "'", "\u0300": "`", "\u0308": '"', "\u0302": "^", "\u0303": "~"}
_BASES = "aeiouAEIOU"
_plain = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
_accented = st.tuples(st.sampled_from(_BASES), st.sampled_from(sorted(_ACCENTS)))


@st.composite
def _words(draw: st.DrawFn) -> tuple[str, str]:
    """A capitalised word (Unicode) and its LaTeX spelling, some letters accented
    (``{\\'e}``)."""
    initial = draw(st.sampled_from("ABCDEFGHIJKLMNOPRSTUVWZ"))
    unicode_word, latex_word = initial, initial
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            base, mark = draw(_accented)
            unicode_word += unicodedata.normalize("NFC", base + mark)
            latex_word += f"{{\\{_ACCENTS[mark]}{base}}}"
        else:
            plain = draw(_plain)
            unicode_word += plain
            latex_word += plain
    return unicode_word, latex_word


@given(st.lists(_words(), min_size=1, max_size=6))
def test_latex_accents_decode_to_unicode(words: list[tuple[str, str]]) -> None:
    latex = " ".join(w for _, w in words)
    assert unicodedata.normalize("NFC", decode_latex(latex)) == " ".join(u for u, _ in words)
    assert decode_latex("{" + latex + "}") == decode_latex(latex)  # protective braces go


@given(_words(), _words(), st.sampled_from(["", "van", "de", "von der"]))
def test_last_first_and_first_last_give_the_same_display_name(
    first: tuple[str, str], last: tuple[str, str], particle: str
) -> None:
    von = f"{particle} " if particle else ""
    expected = " ".join(p for p in (first[0], particle, last[0]) if p)
    assert [
        unicodedata.normalize("NFC", n) for n in split_bibtex_names(f"{von}{last[1]}, {first[1]}")
    ] == [expected]
    assert [
        unicodedata.normalize("NFC", n) for n in split_bibtex_names(f"{first[1]} {von}{last[1]}")
    ] == [expected]


@given(st.lists(_words(), min_size=1, max_size=5), st.booleans())
def test_author_lists_keep_every_name_and_drop_others(
    names: list[tuple[str, str]], others: bool
) -> None:
    value = " and ".join(f"{w}, Ann" for _, w in names) + (" and others" if others else "")
    decoded = [unicodedata.normalize("NFC", n) for n in split_bibtex_names(value)]
    assert decoded == [f"Ann {u}" for u, _ in names]


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        ("{{DNA}} repair", "DNA repair"),
        ('M{\\"u}ller', "Müller"),
        ("{\\'E}cole", "École"),
        ("{\\c{c}}a va", "ça va"),
        ("{\\o}ystein", "øystein"),
        ("12--34", "12–34"),
        ("A \\& B", "A & B"),
        ('Schr\\"odinger', "Schrödinger"),
    ],
)
def test_common_latex(latex: str, text: str) -> None:
    assert decode_latex(latex) == text
