"""Person names, truncation and serialization of reference material, text normalization."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.utils import (
    REF_DOC_OVERHEAD,
    SOURCE_SCORES_KEY,
    display_person_names,
    expand_person_names,
    normalize_text,
    serialize_reference_material,
    truncate_reference_material,
)
from langchain_core.documents import Document


def test_expand_person_names_seed_example():
    assert expand_person_names(["Ankur Sinha"]) == [
        "Ankur Sinha",
        "ankur sinha",
        "Ankur",
        "Sinha",
        "ankur",
        "sinha",
    ]
    assert expand_person_names(["A B", 3, "", None]) == ["A B", "a b", "A", "B", "a", "b"]


def test_display_person_names_seed_example():
    assert display_person_names(["Ankur Sinha", "Padraig Gleeson", "Sinha", "gleeson"]) == [
        "Ankur Sinha",
        "Padraig Gleeson",
    ]
    assert display_person_names(["Plato", "Ankur Sinha"]) == ["Plato", "Ankur Sinha"]


names = st.lists(
    st.lists(st.text("AbCdé", min_size=1, max_size=4), min_size=1, max_size=3).map(" ".join),
    max_size=4,
)


@given(names)
def test_expansion_is_idempotent_and_display_recovers_cased_names(full_names):
    once = expand_person_names(full_names)
    assert expand_person_names(once) == once
    shown = display_person_names(once)
    assert set(shown) <= set(once)
    for name in full_names:
        if not name.islower() and len(name.split()) > 1:
            assert name in shown


def test_normalize_text_folds_artifacts():
    assert (
        normalize_text("ef\ufb01cient\u00ad \uff21\u00b2 a\u00a0b \u2014")
        == "efficient A2 a b \u2014"
    )


def test_normalize_text_strips_format_characters_so_words_stay_whole() -> None:
    # Seed: "soft hyphens (\u00ad) split words mid-token, no-break / zero-width characters
    # distort embeddings and BM25 keyword matching [...] This strips or maps them so that
    # indexed chunks and retrieval queries share the same plain-text form."
    assert normalize_text("neu\u200eron syn\u200fapse star\ufe0f") == "neuron synapse star"
    assert normalize_text("a\u202bb\u2066c\u2069d\U000e0041e") == "abcde"
    # "Typographic em/en dashes are kept unchanged."
    assert normalize_text("a\u2014b\u2013c") == "a\u2014b\u2013c"


def test_a_persian_zero_width_non_joiner_is_a_word_break() -> None:
    """Issue 37: in Persian U+200C ends a compound's first word without a visible space;
    Lucene's Persian analysis and FTS5's unicode61 split there. Elsewhere (Devanagari) it
    sits inside a word and goes with the other format characters."""
    assert (
        normalize_text("\u06a9\u062a\u0627\u0628\u200c\u0647\u0627")
        == "\u06a9\u062a\u0627\u0628 \u0647\u0627"
    )
    assert (
        normalize_text("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645")
        == "\u0645\u06cc \u062e\u0648\u0627\u0647\u0645"
    )
    assert normalize_text("\u0915\u094d\u200c\u0937") == "\u0915\u094d\u0937"
    assert normalize_text("a\u200cb") == "ab"


def test_every_format_character_is_stripped() -> None:
    import sys
    import unicodedata

    cf = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert normalize_text("x" + "x".join(cf) + "x") == "x" * (len(cf) + 1)


@given(st.text())
def test_normalize_text_is_idempotent_and_leaves_no_format_character(text: str) -> None:
    import unicodedata

    once = normalize_text(text)
    assert normalize_text(once) == once
    assert not [c for c in once if unicodedata.category(c) == "Cf"]


def docs_for(name: str, n: int, size: int) -> list[tuple[Document, float]]:
    return [
        (Document(page_content="x" * size, metadata={"file_name": name}), 1.0 / (i + 1))
        for i in range(n)
    ]


def test_truncate_counts_content_plus_overhead_and_keeps_the_crossing_doc():
    material = {"a": docs_for("a", 3, 100), "b": docs_for("b", 2, 100)}
    out = truncate_reference_material(material, max_chars=REF_DOC_OVERHEAD + 150)
    assert [len(v) for v in out.values()] == [2, 0]
    assert list(out) == ["a", "b"]
    assert truncate_reference_material(material, 1)["a"] == material["a"][:1]
    assert len(material["a"]) == 3
    with pytest.raises(ValueError, match="max_chars"):
        truncate_reference_material(material, -1)


def test_truncate_never_yields_empty_context():
    # Seed: "The first document that crosses the budget is still included, so a single
    # large chunk never silently yields empty context."
    material = {"a": [], "b": docs_for("b", 2, 5000)}
    out = truncate_reference_material(material, 0)
    assert out == {"a": [], "b": material["b"][:1]}
    assert truncate_reference_material({"a": [], "b": []}, 0) == {"a": [], "b": []}


def test_serialize_groups_per_file_with_shared_fields_once_and_no_scores():
    shared = {
        "file_name": "sinha.pdf",
        "title": "Models",
        "year": 2021,
        "authors": ["Ankur Sinha", "ankur sinha", "Ankur", "Sinha", "ankur", "sinha"],
    }
    material = {
        "neuro": [
            (
                Document(
                    page_content="chunk one",
                    metadata={
                        **shared,
                        "headings": ["Intro"],
                        "url": "http://a",
                        SOURCE_SCORES_KEY: {"BM25": 9.5},
                    },
                ),
                0.9,
            ),
            (
                Document(page_content="other file", metadata={"file_name": "b.pdf", "year": 1999}),
                0.5,
            ),
            (Document(page_content="chunk two", metadata={**shared, "url": "http://b"}), 0.4),
        ]
    }
    text = serialize_reference_material(material)
    assert text.startswith(
        "### Source document 1/2: [sinha.pdf]\ntitle: Models | authors: Ankur Sinha | year: 2021"
    )
    assert text.count("title: Models") == 1
    assert "#### Excerpt 1/2 (Intro)\nurl: http://a\nchunk one" in text
    assert "url: http://b\nchunk two" in text
    assert "### Source document 2/2: [b.pdf]\nyear: 1999" in text
    assert "9.5" not in text
    assert "0.9" not in text
    assert "ankur sinha" not in text
    assert serialize_reference_material({}) == ""


def test_excerpts_are_labelled_with_their_pages() -> None:
    base = {"file_name": "a.pdf", "headings": ["Methods"]}
    docs = [
        (Document(page_content="one", metadata={**base, "page_start": 7, "page_end": 8}), 0.9),
        (Document(page_content="two", metadata={**base, "page_start": 3, "page_end": 3}), 0.5),
        (Document(page_content="three", metadata=dict(base)), 0.1),
    ]
    text = serialize_reference_material({"d": docs})
    assert "#### Excerpt 1/3 (Methods) [pp. 7-8]" in text
    assert "#### Excerpt 2/3 (Methods) [p. 3]" in text
    assert "#### Excerpt 3/3 (Methods)\n" in text
    assert "page_start" not in text


def test_a_chunk_seen_in_two_domains_ranks_its_file_by_its_best_score() -> None:
    # Seed: "Files are ordered by their best chunk's score; chunks within a file by score."
    x = Document(page_content="X", metadata={"file_name": "a.pdf"})
    y = Document(page_content="Y", metadata={"file_name": "b.pdf"})
    material = {"papers": [(x, 0.1), (y, 0.5)], "code": [(x, 0.9)]}
    text = serialize_reference_material(material)
    assert text.index("[a.pdf]") < text.index("[b.pdf]")
    assert text.startswith("### Source document 1/2: [a.pdf]")
    assert text.count("\nX") == 1


def test_chunks_within_a_file_follow_their_best_score_across_domains() -> None:
    one = Document(page_content="one", metadata={"file_name": "a.pdf"})
    two = Document(page_content="two", metadata={"file_name": "a.pdf"})
    material = {"papers": [(one, 0.8), (two, 0.2)], "code": [(two, 0.95)]}
    text = serialize_reference_material(material)
    assert text.index("two") < text.index("one")
