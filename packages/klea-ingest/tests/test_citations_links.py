"""Links inside a library: a development library whose generated papers cite the dev papers.

The five multi-page development papers are stored under what they are (title, authors,
year, arXiv id; 1708.00137 also its journal DOI). Generated papers cite them in each style
(numbered by title only, author-year, with a DOI, with an arXiv id) and add near misses
that must not link: a changed title word, the authors swapped, a year far off, a paper
citing itself. Every expected link must be made (recall) and no other (precision).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from klea_utils.stores._ingest.citations.library_links import CitationLibrary, PaperIdentity
from klea_utils.stores._ingest.citations.links_file import read_links, write_links
from klea_utils.stores._ingest.citations.paper_citations import PaperCitations, parse_citations
from klea_utils.stores.ingest_exceptions import CitationLinksError

DEV = [
    PaperIdentity(
        "1708.00137_causation-contextuality.pdf",
        "Causation does not explain contextuality",
        ("Sally Shrapnel", "Fabio Costa"),
        2018,
        doi="10.22331/q-2018-05-18-63",
        arxiv="1708.00137",
    ),
    PaperIdentity(
        "9802040_quantum-vs-classical.pdf",
        "Quantum vs. Classical Communication and Computation",
        ("Harry Buhrman", "Richard Cleve", "Avi Wigderson"),
        1998,
        arxiv="quant-ph/9802040",
    ),
    PaperIdentity(
        "0106220_serre-taubes-duality.pdf",
        "Serre-Taubes duality for pseudoholomorphic curves",
        ("Ivan Smith",),
        2001,
        arxiv="math/0106220",
    ),
    PaperIdentity(
        "1803.07574_water-residence-time.pdf",
        "Water Residence Time Estimation by 1D Deconvolution in the Form of a "
        "l2-Regularized Inverse Problem With Smoothness, Positivity and Causality Constraints",
        ("Alina G. Meresescu", "Matthieu Kowalski", "Frédéric Schmidt", "François Landais"),
        2018,
        arxiv="1803.07574",
    ),
    PaperIdentity(
        "2412.19437_deepseek-v3.pdf",
        "DeepSeek-V3 Technical Report",
        ("DeepSeek-AI",),
        2024,
        arxiv="2412.19437",
    ),
]
NAMES = {p.file_name.split("_")[0]: p.file_name for p in DEV}

NUMBERED_BY_TITLE = """# Contextuality, a review

Contextuality is not explained by causation [1], and communication complexity separates
quantum from classical [2, 4]. A near miss [3] and a late journal version [5].

## References

[1] S. Shrapnel and F. Costa, “Causation does not explain contextuality,” Quantum 2, 63 (2018).
[2] H. Buhrman, R. Cleve, and A. Wigderson, “Quantum vs. classical communication and
computation,” in Proc. 30th ACM STOC, pp. 63–68 (1998).
[3] S. Shrapnel and F. Costa, “Causation does explain contextuality,” Found. Phys. 1, 2 (2018).
[4] R. Cleve and H. Buhrman, “Substituting quantum entanglement for communication,” Phys.
Rev. A 56, 1201 (1997).
[5] I. Smith, “Serre-Taubes duality for pseudoholomorphic curves,” Topology 42, 931 (2003).
"""

AUTHOR_YEAR = """# Deconvolution in hydrology

Residence times were estimated by deconvolution (Meresescu et al., 2018). Smith (2001)
studied curves. Shrapnel and Costa (2018) and Costa and Shrapnel (2018) disagree.

## References

Meresescu, A. G., Kowalski, M., Schmidt, F., & Landais, F. (2018). Water residence time
estimation by 1D deconvolution in the form of a l2-regularized inverse problem with
smoothness, positivity and causality constraints. Computers & Geosciences, 115, 105–121.

Meresescu, A. G., & Kowalski, M. (2018). Water residence time estimation by 2D
deconvolution in the form of a l2-regularized inverse problem with smoothness, positivity
and causality constraints. Hydrology, 1, 1–2.

Smith, I. (2001). Serre-Taubes duality for pseudoholomorphic curves. Preprint, 1–52.

Costa, F., & Shrapnel, S. (2018). Causation does not explain contextuality. Quantum, 2, 63.

Smith, I. (1990). Serre-Taubes duality for pseudoholomorphic curves. Old Notes, 1–5.
"""

WITH_IDENTIFIERS = """# Large models and contexts

We build on DeepSeek-V3 [1], on contextuality [2] and on quantum protocols [3], and on our
own earlier work [4].

## References

[1] DeepSeek-AI. DeepSeek-V3 technical report. arXiv preprint arXiv: 2412 . 19437, 2024.
[2] A. Author, “A title that is wrong,” Quantum 2, 63 (2018). doi:10 . 22331/q-2018-05-18-63.
[3] H. Buhrman et al., “Another wrong title,” arXiv:quant-ph/9802040 (1998).
[4] Z. Self, “Our own earlier work,” arXiv:2501.00001 (2025).
"""

CITING = {
    "numbered.pdf": (NUMBERED_BY_TITLE, PaperIdentity("numbered.pdf", "Contextuality, a review")),
    "author-year.pdf": (AUTHOR_YEAR, PaperIdentity("author-year.pdf", "Deconvolution")),
    "identifiers.pdf": (
        WITH_IDENTIFIERS,
        PaperIdentity("identifiers.pdf", "Large models", ("Z. Self",), 2025, arxiv="2501.00001"),
    ),
}

EXPECTED = {
    ("numbered.pdf", NAMES["1708.00137"]),
    ("numbered.pdf", NAMES["9802040"]),
    ("numbered.pdf", NAMES["0106220"]),
    ("author-year.pdf", NAMES["1803.07574"]),
    ("author-year.pdf", NAMES["0106220"]),
    ("identifiers.pdf", NAMES["2412.19437"]),
    ("identifiers.pdf", NAMES["1708.00137"]),
    ("identifiers.pdf", NAMES["9802040"]),
}


def _library(with_dev: bool = True) -> CitationLibrary:
    library = CitationLibrary()
    for text, identity in CITING.values():
        library.add(identity, parse_citations(text))
    if with_dev:
        for identity in DEV:
            library.add(identity, PaperCitations())
    return library


def test_every_expected_link_and_no_other() -> None:
    links = set(_library().links())
    assert links == EXPECTED  # precision and recall 1.0 on the development library


def test_near_misses_stay_unlinked() -> None:
    library = _library()
    numbered = library.targets("numbered.pdf")
    assert numbered[2] is None  # "does explain": one word changed
    author_year = library.targets("author-year.pdf")
    assert author_year[1] is None  # "2D deconvolution", a shorter author list
    assert author_year[3] is None  # the authors swapped
    assert author_year[4] is None  # eleven years off
    assert library.targets("identifiers.pdf")[3] is None  # the paper itself


def test_adding_a_paper_links_the_papers_that_cite_it_and_removing_it_drops_them() -> None:
    library = _library(with_dev=False)
    assert library.links() == []
    deepseek = next(p for p in DEV if p.file_name == NAMES["2412.19437"])
    library.add(deepseek, PaperCitations())
    assert library.links() == [("identifiers.pdf", deepseek.file_name)]
    library.remove(deepseek.file_name)
    assert library.links() == []


def test_cited_by_keeps_the_citing_sentences() -> None:
    cited_by = _library().cited_by(NAMES["0106220"])
    assert [c.file_name for c in cited_by] == ["author-year.pdf", "numbered.pdf"]
    assert cited_by[0].contexts == ("Smith (2001) studied curves.",)
    assert cited_by[1].contexts == ("A near miss [3] and a late journal version [5].",)
    (numbered,) = [
        c for c in _library().cited_by(NAMES["9802040"]) if c.file_name == "numbered.pdf"
    ]
    assert "separates quantum from classical [2, 4]" in numbered.contexts[0]


def test_two_stored_papers_with_one_key_link_neither() -> None:
    library = _library()
    twin = PaperIdentity("twin.pdf", "DeepSeek-V3 Technical Report", ("X",), arxiv="2412.19437")
    library.add(twin, PaperCitations())
    assert library.targets("identifiers.pdf")[0] is None


def test_the_links_file_round_trips_and_is_written_atomically(tmp_path: Path) -> None:
    path = tmp_path / "papers.citations.json"
    write_links(path, _library())
    payload = json.loads(path.read_text())
    numbered = payload["papers"]["numbered.pdf"]
    assert [r["target"] for r in numbered["references"]] == [
        NAMES["1708.00137"],
        NAMES["9802040"],
        None,
        None,
        NAMES["0106220"],
    ]
    cited = payload["papers"][NAMES["1708.00137"]]["cited_by"]
    assert {c["file_name"] for c in cited} == {"numbered.pdf", "identifiers.pdf"}
    assert set(read_links(path).links()) == EXPECTED
    assert [p.name for p in tmp_path.iterdir()] == ["papers.citations.json"]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ('{"version": 9, "papers": {}}', "version"),
        ('{"version": 1, "papers": []}', "papers"),
        ('{"version": 1, "papers": {"a.pdf": {"references": [{"label": "1"}]}}}', "papers.a.pdf"),
        ('{"version": 1, "papers": {"a.pdf": {"year": "2020"}}}', "papers.a.pdf"),
        ("not json", "(file)"),
    ],
)
def test_a_malformed_links_file_names_the_file_and_field_not_the_folder(
    tmp_path: Path, payload: str, field: str
) -> None:
    path = tmp_path / "secret-folder" / "papers.citations.json"
    path.parent.mkdir()
    path.write_text(payload)
    with pytest.raises(CitationLinksError) as caught:
        read_links(path)
    assert caught.value.field == field
    assert str(caught.value).startswith(f"papers.citations.json: {field}")
    assert "secret-folder" not in str(caught.value)


def test_an_absent_links_file_is_an_empty_library(tmp_path: Path) -> None:
    assert len(read_links(tmp_path / "none.json")) == 0
