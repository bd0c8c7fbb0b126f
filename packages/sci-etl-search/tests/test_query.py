"""The query AST: validation, normalization, describe and semantic_text."""

from __future__ import annotations

import pytest
from hypothesis import given
from sci_etl_core.search.evaluate import matches
from sci_etl_core.search.parser import parse_query
from sci_etl_core.search.query import (
    FIELDS,
    NEAR_DISTANCE,
    And,
    Near,
    Node,
    Not,
    Or,
    Phrase,
    QueryChip,
    Term,
    describe,
    normalize,
    semantic_text,
)
from sci_etl_core.search.store_base import SearchDocument
from search_strategies import documents, query_nodes

a, b, c = Term("a"), Term("b"), Term("c")


def test_constants() -> None:
    assert FIELDS == ("title", "abstract", "body")
    assert NEAR_DISTANCE == 10
    assert Near((a, b)).distance == 10


@pytest.mark.parametrize(
    "build",
    [
        lambda: Term(""),
        lambda: Term("a", ("text",)),
        lambda: Term("a", ("title", "title")),
        lambda: Phrase(()),
        lambda: Phrase(("a", "")),
        lambda: Near((a,)),
        lambda: Near((a, Term("b", ("title",)))),
        lambda: Near((a, b), -1),
        lambda: And(()),
        lambda: Or(()),
        lambda: Not("a"),
    ],
)
def test_invalid_nodes_raise(build: object) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - each case names a different field
        build()  # type: ignore[operator]


def test_lists_become_tuples() -> None:
    assert Phrase(["a", "b"], ["title"]) == Phrase(("a", "b"), ("title",))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("node", "normal"),
    [
        (Not(Not(a)), a),
        (And((a, Not(b), Not(c))), And((a, Not(Or((b, c)))))),
        (And((a, And((b, c)))), And((a, b, c))),
        (Or((Or((a,)),)), a),
        (And((Not(b), Not(c))), Not(Or((b, c)))),
        (And((c, Not(Or((a, b))), Not(b))), And((c, Not(Or((a, b, b)))))),
        (Or((b, a)), Or((b, a))),
    ],
)
def test_normalize_rules(node: Node, normal: Node) -> None:
    assert normalize(node) == normal


@given(query_nodes())
def test_normalize_is_idempotent(node: Node) -> None:
    once = normalize(node)
    assert normalize(once) == once


@given(query_nodes(), documents())
def test_normalize_preserves_matches(node: Node, doc: SearchDocument) -> None:
    assert matches(normalize(node), doc) == matches(node, doc)


@given(query_nodes())
def test_normal_ands_have_one_negation_at_most(node: Node) -> None:
    stack = [normalize(node)]
    while stack:
        current = stack.pop()
        if isinstance(current, And):
            nots = [op for op in current.operands if isinstance(op, Not)]
            assert len(nots) <= 1
            assert len(nots) < len(current.operands)
        if isinstance(current, And | Or):
            assert len(current.operands) > 1
            stack.extend(current.operands)
        elif isinstance(current, Not):
            assert not isinstance(current.operand, Not)
            stack.append(current.operand)


def test_describe() -> None:
    chips = describe(parse_query('title:quasar (dwarf OR "dark matter") -halo* NEAR(a "b c", 3)'))
    assert chips == [
        QueryChip("quasar", ("title",), "AND", depth=0),
        QueryChip("dwarf", (), "OR", depth=1),
        QueryChip("dark matter", (), "OR", phrase=True, depth=1),
        QueryChip("halo", (), "AND", negated=True, prefix=True, depth=0),
        QueryChip('a "b c"', (), "AND", depth=0, near=3),
    ]
    assert describe(parse_query("NOT NOT a")) == [QueryChip("a")]


def test_chip_depth_counts_the_groups_around_it() -> None:
    # Seed: "depth counts the groups around it, so a UI can bracket a (b OR c)".
    assert [(c.text, c.depth) for c in describe(parse_query("a (b OR c)"))] == [
        ("a", 0),
        ("b", 1),
        ("c", 1),
    ]
    chips = describe(parse_query("pho* || (title:dark || (abstract:matter && halo))"))
    assert [(c.text, c.depth) for c in chips] == [
        ("pho", 0),
        ("dark", 0),
        ("matter", 1),
        ("halo", 1),
    ]
    assert [c.depth for c in describe(parse_query("a"))] == [0]
    assert [c.depth for c in describe(parse_query("-(a OR b)"))] == [1, 1]
    assert [c.depth for c in describe(parse_query("(a (b OR (c d)))"))] == [0, 1, 2, 2]


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("quasar -dwarf", "quasar"),
        ("photometr* dwarf", "dwarf"),
        ("photometr*", ""),
        ("quasar OR blazar", "quasar blazar"),
        ("quasar AND blazar", "quasar blazar"),
        ('title:"dwarf galaxy" NEAR(halo "dark matter")', "dwarf galaxy halo dark matter"),
    ],
)
def test_semantic_text(query: str, text: str) -> None:
    assert semantic_text(parse_query(query)) == text


def test_chip_validates() -> None:
    with pytest.raises(ValueError, match="operator"):
        QueryChip("a", operator="NOT")
