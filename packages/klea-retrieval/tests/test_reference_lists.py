"""Reference-list chunks step back unless the question asks for a reference list (issue 38)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._retrieval.reference_lists import (
    asks_for_reference_list,
    is_reference_list,
    reads_as_entries,
    settle_reference_lists,
)
from langchain_core.documents import Document


def _chunk(file: str, heading: str, text: str = "") -> Document:
    title = f"Paper {file}"
    return Document(
        page_content=f"{title}\n{heading}\n{text or heading}",
        metadata={"file_name": f"{file}.pdf", "headings": [title, heading]},
    )


@pytest.mark.parametrize(
    "heading",
    [
        "References",
        "REFERENCES",
        "6. REFERENCES",
        "11 References",
        "SECTION 6 REFERENCES",
        "Bibliography",
        "Annex C: Selected Bibliography",
        "M.1 General references",
        "2 Normative references",
        "Literature Cited",
        "Works Cited",
        "References and Notes",
    ],
)
def test_the_headings_of_reference_lists_are_known(heading: str) -> None:
    assert is_reference_list(_chunk("a", heading))


@pytest.mark.parametrize(
    "heading",
    [
        "24.3 Reference Counting",
        "2.2.3 Cross-reference table",
        "M.2 DCT references",
        "2. HPC System Reference Architecture",
        "3.3 NE Tagging and Coreference Resolution",
        "Introduction",
    ],
)
def test_sections_about_references_are_no_reference_list(heading: str) -> None:
    assert not is_reference_list(_chunk("a", heading))


def test_a_section_under_a_bibliography_is_part_of_the_list() -> None:
    doc = Document(
        page_content="M.5 Huffman coding references\n[1] D. A. Huffman, Proc. IRE, 1952.",
        metadata={
            "headings": ["CCITT T.81", "Annex M", "Bibliography", "M.5 Huffman coding references"]
        },
    )
    assert is_reference_list(doc)


def test_a_chunk_without_headings_is_no_reference_list() -> None:
    assert not is_reference_list(Document(page_content="References\n[1] A. Smith."))
    assert not is_reference_list(Document(page_content="x", metadata={"headings": "References"}))


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("What is the title of the 1987 Frankl and Rodl paper listed in the references?", True),
        ("Which journal appears most often in its list of references?", True),
        ("What does the bibliography list for Shor?", True),
        ("In the bibliography of the JPEG standard, where was Huffman's paper published?", True),
        ("What does the reference list give as the venue of [12]?", True),
        ("Which Israeli body funded Wigderson's part of the work?", False),
        ("According to the work cited on the adiabatic limit, what do solutions become?", False),
        ("What is the reference temperature of the test?", False),
    ],
)
def test_a_question_asks_for_a_reference_list_by_naming_it(question: str, asks: bool) -> None:
    assert asks_for_reference_list(question) is asks


def test_another_papers_reference_list_gives_its_place_up() -> None:
    ranked = [
        (_chunk("other", "References"), 1.0),  # found only by its list of titles
        (_chunk("right", "3 Method", "the answer"), 0.9),
        (_chunk("right", "4 Results"), 0.5),
    ]
    settled = settle_reference_lists("How does the method work?", ranked)
    assert [d.metadata["headings"][-1] for d, _ in settled] == [
        "3 Method",
        "4 Results",
        "References",
    ]
    assert [s for _, s in settled] == [1.0, 0.9, 0.5]  # the places keep their scores


def test_a_file_keeps_its_places_and_fills_them_with_its_other_passages_first() -> None:
    ranked = [
        (_chunk("right", "References"), 1.0),
        (_chunk("other", "2 Background"), 0.9),
        (_chunk("right", "5.3 Heuristic interlude", "the answer"), 0.8),
    ]
    settled = settle_reference_lists("What do the solutions turn into?", ranked)
    assert [(d.metadata["file_name"], d.metadata["headings"][-1]) for d, _ in settled] == [
        ("right.pdf", "5.3 Heuristic interlude"),
        ("other.pdf", "2 Background"),
        ("right.pdf", "References"),
    ]


def test_a_question_naming_the_list_gets_it_first_within_its_file() -> None:
    ranked = [
        (_chunk("right", "3 Proofs", "Frankl and Rodl [FR87] showed"), 1.0),
        (
            _chunk("right", "References", "[FR87] P. Frankl and V. Rodl, Forbidden intersections"),
            0.9,
        ),
        (_chunk("other", "References"), 0.8),
    ]
    question = "What is the title of the 1987 Frankl and Rodl paper listed in the references?"
    settled = settle_reference_lists(question, ranked)
    assert "Forbidden intersections" in settled[0][0].page_content
    assert settled[2][0].metadata["file_name"] == "other.pdf"  # files keep their places


def test_asked_for_the_list_a_passage_that_reads_as_entries_keeps_its_lead() -> None:
    """A bibliography's section whose chain lost the "Bibliography" heading (a real
    standard's Annex M) still reads as entries: lifting the other sections must not pass
    it."""
    entries = Document(
        page_content="CCITT T.81\nAnnex M\nM.5 Huffman coding references\nHUFFMAN (D.A.): A "
        "Method for the Construction of Minimum Redundancy codes, Proc. IRE, Vol. 40, "
        "pp. 1098-1101, 1952.",
        metadata={
            "file_name": "t81.pdf",
            "headings": ["CCITT T.81", "Annex M", "M.5 Huffman coding references"],
        },
    )
    general = Document(
        page_content="CCITT T.81\nAnnex M\nBibliography\nM.1 General references\n...",
        metadata={
            "file_name": "t81.pdf",
            "headings": ["CCITT T.81", "Annex M", "Bibliography", "M.1 General references"],
        },
    )
    intro = Document(
        page_content="CCITT T.81\nIntroduction\nThis standard...",
        metadata={"file_name": "t81.pdf", "headings": ["CCITT T.81", "Introduction"]},
    )
    question = "In the bibliography of the JPEG standard, where was Huffman's 1952 paper published?"
    assert reads_as_entries(entries)
    assert not is_reference_list(entries)
    settled = settle_reference_lists(question, [(intro, 1.0), (entries, 0.9), (general, 0.8)])
    assert [d for d, _ in settled] == [entries, general, intro]
    prose = _chunk(
        "a",
        "2 Method",
        "As Smith et al. (2020) showed, the method converges fast when the step size "
        "shrinks with the residual; we follow their schedule, keep the first two terms "
        "of the expansion, and stop once the change between two iterations falls below "
        "the tolerance set for the whole run, which the next section measures.",
    )
    assert not reads_as_entries(prose)


def test_without_reference_lists_nothing_moves() -> None:
    ranked = [(_chunk("a", "Intro"), 1.0), (_chunk("b", "Methods"), 0.5)]
    assert settle_reference_lists("What is new?", ranked) == ranked


_HEADINGS = st.sampled_from(["References", "Bibliography", "Intro", "2 Method", "Results"])


@given(
    st.lists(st.tuples(st.sampled_from("abc"), _HEADINGS), max_size=12),
    st.booleans(),
)
def test_settling_is_a_permutation_that_keeps_the_scores(
    chunks: list[tuple[str, str]], asked: bool
) -> None:
    ranked = [
        (_chunk(file, heading, f"text {i}"), 1.0 - i / 20)
        for i, (file, heading) in enumerate(chunks)
    ]
    question = "Which paper is listed in the references?" if asked else "What is shown?"
    settled = settle_reference_lists(question, ranked)
    assert [s for _, s in settled] == [s for _, s in ranked]
    assert sorted(d.page_content for d, _ in settled) == sorted(d.page_content for d, _ in ranked)
    for file in "abc":  # within a file, lists come after (or, asked for, before) the rest
        kinds = [
            is_reference_list(d) for d, _ in settled if d.metadata["file_name"] == f"{file}.pdf"
        ]
        assert kinds == sorted(kinds, reverse=asked)
    if not asked:  # a file of lists only holds no place before a file with other passages
        owners = [d.metadata["file_name"] for d, _ in settled]
        only = {
            f
            for f in owners
            if all(is_reference_list(d) for d, _ in settled if d.metadata["file_name"] == f)
        }
        flags = [f in only for f in owners]
        assert flags == sorted(flags)
