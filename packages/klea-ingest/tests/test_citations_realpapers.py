"""Reference lists of the real development papers, parsed from the project's own conversion.

Each paper's reference pages (with a page before and, where one follows, the appendix
after) are cut out of its PDF and converted on the model-free path; the parsed entries
are checked against ``citations_truth.json``, which was made by reading the PDFs: the
entry count, the labels or first authors in order, every DOI and arXiv id printed, and a
few entries' title, first author and year. ``scripts/bench/citations.py`` prints the same
measures for whole papers.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache
from pathlib import Path

import pytest
from klea_utils.stores._ingest.citations.paper_citations import PaperCitations, parse_citations
from klea_utils.stores._ingest.citations.parse import ParsedReference, parse_references
from klea_utils.stores._ingest.citations.reference_section import body_before_references
from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
from realpapers import DATA, needs_data

pytestmark = [needs_data, pytest.mark.timeout(600)]

TRUTH = json.loads((Path(__file__).parent / "citations_truth.json").read_text())["papers"]

PAGES = {  # 1-based, inclusive: the reference list and its neighbours
    "9802040_quantum-vs-classical": (5, 6),
    "1708.00137_causation-contextuality": (17, 22),
    "0106220_serre-taubes-duality": (49, 52),
    "1803.07574_water-residence-time": (28, 33),
    "2412.19437_deepseek-v3": (35, 45),
}


@cache
def _references(stem: str, folder: Path) -> tuple[ParsedReference, ...]:
    import pypdfium2 as pdfium

    assert DATA is not None
    first, last = PAGES[stem]
    source = pdfium.PdfDocument(str(DATA / f"{stem}.pdf"))
    cut = pdfium.PdfDocument.new()
    try:
        cut.import_pages(source, list(range(first - 1, last)))
        path = folder / f"{stem}.pdf"
        cut.save(str(path))
    finally:
        cut.close()
        source.close()
    document, _ = convert_pdf_offline(path, do_ocr=False)
    return tuple(parse_references(document.export_to_markdown()))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("citations")


def _key(text: str) -> str:
    head = re.split(r"[,(]|\.\s(?=[A-Z][a-z]{2,}\s)", text, maxsplit=1)[0]
    return "".join(c for c in unicodedata.normalize("NFKD", head) if c.isalpha()).lower()[:6]


@pytest.mark.parametrize("stem", sorted(PAGES))
def test_entry_count_is_within_five_percent_of_the_printed_count(stem: str, folder: Path) -> None:
    refs = _references(stem, folder)
    printed = TRUTH[stem]["entries"]
    assert abs(len(refs) - printed) <= 0.05 * printed, (len(refs), printed)


@pytest.mark.parametrize("stem", [s for s in sorted(PAGES) if "labels" in TRUTH[s]])
def test_labelled_entries_carry_the_printed_labels_in_order(stem: str, folder: Path) -> None:
    assert [r.label for r in _references(stem, folder)] == TRUTH[stem]["labels"]


@pytest.mark.parametrize("stem", [s for s in sorted(PAGES) if "starts" in TRUTH[s]])
def test_author_year_entries_open_on_the_printed_first_authors(stem: str, folder: Path) -> None:
    import difflib

    opened = [_key(r.text) for r in _references(stem, folder)]
    printed = [_key(s) for s in TRUTH[stem]["starts"]]
    matcher = difflib.SequenceMatcher(a=opened, b=printed, autojunk=False)
    hits = sum(block.size for block in matcher.get_matching_blocks())
    assert hits / len(opened) >= 0.98  # split precision
    assert hits / len(printed) >= 0.94  # split recall (the converter drops a few lines)


@pytest.mark.parametrize("stem", sorted(PAGES))
def test_printed_dois_and_arxiv_ids_are_read(stem: str, folder: Path) -> None:
    refs = _references(stem, folder)
    dois = {r.doi for r in refs}
    arxiv = {r.arxiv for r in refs}
    assert set(TRUTH[stem]["dois"]) <= dois
    printed = TRUTH[stem]["arxiv"]
    missing = [a for a in printed if a not in arxiv]
    assert len(missing) <= 0.05 * len(printed), missing


@pytest.mark.parametrize("stem", sorted(PAGES))
def test_checked_entries_have_their_printed_fields(stem: str, folder: Path) -> None:
    refs = _references(stem, folder)
    for want in TRUTH[stem]["fields"]:
        if "label" in want:
            (ref,) = [r for r in refs if r.label == want["label"]]
        else:
            ref = next(r for r in refs if _key(r.text) == _key(want["start"]))
        title = unicodedata.normalize("NFKC", ref.title).lower()
        assert title.replace("’", "'") == want["title"].lower().replace("’", "'"), ref
        assert want["first_author"] in ref.authors[0], ref
        assert ref.year == want["year"], ref
        for name in ("doi", "arxiv"):
            if name in want:
                assert getattr(ref, name) == want[name], ref


@pytest.mark.parametrize(
    "stem", ["9802040_quantum-vs-classical", "1803.07574_water-residence-time"]
)
def test_retrieval_knows_the_chunks_of_a_reference_list(stem: str, folder: Path) -> None:
    """Retrieval steps reference-list chunks back by their heading chain
    (``klea_utils.stores._retrieval.reference_lists``): every chunk the chunker cuts from
    a real list is known as one, and no chunk of the body before it is."""
    from klea_utils.stores._retrieval.reference_lists import is_reference_list
    from realpapers import minilm_chunker

    entries = _references(stem, folder)  # cuts the pages into folder
    document, _ = convert_pdf_offline(folder / f"{stem}.pdf", do_ocr=False)
    docs = minilm_chunker().chunk(document, file_name=f"{stem}.pdf", file_hash="h")
    flagged = [d for d in docs if is_reference_list(d)]
    assert len(flagged) >= 2
    first_entry = " ".join(entries[0].text.split())[:30]
    start = next(i for i, d in enumerate(docs) if first_entry in " ".join(d.page_content.split()))
    assert all(
        is_reference_list(d) for d in docs[start:] if "Appendix" not in str(d.metadata["headings"])
    )
    assert not any(is_reference_list(d) for d in docs[:start])


def test_a_paper_without_a_reference_list_has_no_entries() -> None:
    assert DATA is not None
    document, _ = convert_pdf_offline(DATA / "docling_multi_page.pdf", do_ocr=False)
    assert parse_references(document.export_to_markdown()) == []


@cache
def _whole_paper(stem: str) -> PaperCitations:
    assert DATA is not None
    document, _ = convert_pdf_offline(DATA / f"{stem}.pdf", do_ocr=False)
    return parse_citations(document.export_to_markdown())


_NUMBERS = re.compile(
    r"\[(\d{1,3}(?:\s*[\-\u2013]\s*\d{1,3})?(?:\s*,\s*\d{1,3}(?:\s*[\-\u2013]\s*\d{1,3})?)*)\]"
)


@pytest.mark.parametrize(
    ("stem", "cited"),
    [
        ("1708.00137_causation-contextuality", 59),
        ("9802040_quantum-vs-classical", 27),
        ("1803.07574_water-residence-time", 31),
    ],
)
def test_callouts_link_to_their_entries_with_the_citing_sentence(stem: str, cited: int) -> None:
    paper = _whole_paper(stem)
    assert len({c.entry for c in paper.contexts}) >= cited
    for context in paper.contexts:
        assert context.callout in context.sentence


def test_every_numbered_callout_is_linked() -> None:
    assert DATA is not None
    document, _ = convert_pdf_offline(DATA / "1708.00137_causation-contextuality.pdf", do_ocr=False)
    text = document.export_to_markdown()
    body = body_before_references(text)
    # "[0, 1]" is an interval: a callout names numbers of the list (1 to 59)
    numbered = [
        n for n in _NUMBERS.findall(body) if all(1 <= int(d) <= 59 for d in re.findall(r"\d+", n))
    ]
    linked = {c.callout for c in _whole_paper("1708.00137_causation-contextuality").contexts}
    assert numbered
    assert {f"[{n}]" for n in numbered} <= linked


def test_the_citing_sentence_of_an_author_year_callout() -> None:
    paper = _whole_paper("1803.07574_water-residence-time")
    werner = next(i for i, r in enumerate(paper.references) if r.text.startswith("Werner"))
    sentences = paper.sentences_citing(werner)
    assert any("wetlands as a natural treatment plant" in s for s in sentences)
