"""Python evaluation: occurrences, FTS5's NEAR algorithm, and Boolean matching."""

from __future__ import annotations

import pytest
from sci_etl_core.search.evaluate import (
    TokenizedDocument,
    matches,
    near_hits,
    near_occurrences,
    occurrences,
    trim_near,
)
from sci_etl_core.search.query import Near, Not, Or, Phrase, Term
from sci_etl_core.search.store_base import SearchDocument


def body(text: str) -> TokenizedDocument:
    return TokenizedDocument.from_document(SearchDocument("r", body=text))


@pytest.mark.parametrize(
    ("text", "matched"), [("a x x b", True), ("b x a", True), ("a x x x b", False)]
)
def test_seed_near_example(text: str, matched: bool) -> None:
    assert matches(Near((Term("a"), Term("b")), 2), body(text)) is matched


def test_near_phrase_operand_ends_within_distance() -> None:
    near = Near((Phrase(("b", "c")), Term("a")), 1)
    assert matches(near, body("b c x a"))
    assert not matches(near, body("b c x x a"))


def test_near_never_spans_fields() -> None:
    doc = TokenizedDocument.from_document(SearchDocument("r", title="a", abstract="b"))
    assert not matches(Near((Term("a"), Term("b")), 10), doc)
    assert matches(Near((Term("a"), Term("b")), 0, ("title",)), TokenizedDocument(title=("a", "b")))
    assert not matches(
        Near((Term("a"), Term("b")), 0, ("body",)), TokenizedDocument(title=("a", "b"))
    )


def test_occurrences_overlap_and_fields() -> None:
    doc = TokenizedDocument(title=("a", "a", "a"), body=("a",))
    assert occurrences(Phrase(("a", "a")), doc) == {"title": [(0, 2), (1, 3)]}
    assert occurrences(Term("a", ("body",)), doc) == {"body": [(0, 1)]}
    assert occurrences(Term("zz"), doc) == {}


def test_prefix_and_split_terms() -> None:
    doc = body("Photometric H-alpha lines")
    assert matches(Term("photometr", prefix=True), doc)
    assert not matches(Term("photometr"), doc)
    assert matches(Term("h-alpha"), doc)  # re-tokenized into a phrase
    assert matches(Term("h alph", prefix=True), doc)
    assert not matches(Term("+++"), doc)  # no token: matches nothing


def test_trim_near_keeps_what_fts5_walks_past() -> None:
    a = {"body": [(0, 1), (5, 6), (20, 21)]}
    b = {"body": [(2, 3)]}
    assert trim_near([a, b], 3) == [{"body": [(0, 1), (5, 6)]}, {"body": [(2, 3)]}]
    assert trim_near([a, {}], 3) == [{}, {}]


def test_near_hits_drops_empty_operands() -> None:
    a = {"body": [(0, 1), (9, 10)]}
    assert near_hits([a, {}], [1, 0], 1) == [a, {}]
    with pytest.raises(ValueError, match="spans"):
        near_hits([a], [1, 1], 1)


def test_near_occurrences_and_dropped_operand() -> None:
    near = Near((Term("a"), Term("+++"), Term("b")), 1)
    result = near_occurrences(near, body("a b x x a"))
    assert result == [{"body": [(0, 1)]}, {}, {"body": [(1, 2)]}]
    lone = Near((Term("a"), Term("+++")), 1)
    assert near_occurrences(lone, body("a x a")) == [{"body": [(0, 1), (2, 3)]}, {}]


def test_pure_negation_and_unnormalized_nodes() -> None:
    doc = body("a b")
    assert matches(Not(Term("c")), doc)
    assert not matches(Not(Not(Term("c"))), doc)
    assert matches(Or((Not(Term("a")), Term("b"))), SearchDocument("r", body="a b"))


def test_tokenized_document_validates() -> None:
    with pytest.raises(TypeError):
        TokenizedDocument(title=("a", 1))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown field"):
        TokenizedDocument().field("text")
