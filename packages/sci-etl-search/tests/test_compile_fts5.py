"""FTS5 compilation: parity of `matches` with real FTS5, rankability, and injection safety."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sci_etl_core.exceptions import SearchQueryError
from sci_etl_core.search.compile_fts5 import (
    FILTER_LEAF,
    is_rankable,
    require_rankable,
    to_filter_expression,
    to_match_expression,
)
from sci_etl_core.search.parser import parse_query
from sci_etl_core.search.query import And, Near, Node, Not, Or, Phrase, Term
from sci_etl_core.search.store_base import SearchDocument
from search_fts5_oracle import expected, fts5_filter, fts5_match, fts5_oracle, load
from search_strategies import documents, query_nodes, query_text

CORPORA = st.lists(documents(), min_size=1, max_size=6)


@pytest.fixture(scope="module")
def db() -> Iterator[sqlite3.Connection]:
    with fts5_oracle("unicode61 remove_diacritics 2") as connection:
        yield connection


@given(query_nodes(), CORPORA)
def test_match_expression_selects_what_matches_accepts(
    db: sqlite3.Connection, node: Node, docs: list[SearchDocument]
) -> None:
    load(db, docs)
    if is_rankable(node):
        assert fts5_match(db, node) == expected(node, docs)
    else:
        with pytest.raises(SearchQueryError):
            to_match_expression(node)


@given(query_nodes(), CORPORA)
def test_filter_expression_selects_what_matches_accepts(
    db: sqlite3.Connection, node: Node, docs: list[SearchDocument]
) -> None:
    load(db, docs)
    assert fts5_filter(db, node) == expected(node, docs)


def test_near_examples_against_fts5(db: sqlite3.Connection) -> None:
    docs = [
        SearchDocument(str(i), body=text)
        for i, text in enumerate(["a x x b", "b x a", "a x x x b"])
    ]
    load(db, docs)
    near = Near((Term("a"), Term("b")), 2)
    assert fts5_match(db, near) == expected(near, docs) == {1, 2}


def test_not_b_or_c_example() -> None:
    sql, params = to_filter_expression(parse_query("NOT b OR c"))
    assert sql == f"((NOT {FILTER_LEAF}) OR {FILTER_LEAF})"
    assert params == ('"b"', '"c"')


@pytest.mark.parametrize(
    ("node", "expression"),
    [
        (Term("a"), '"a"'),
        (Term("photometr", prefix=True), '"photometr"*'),
        (Phrase(("dwarf", "galaxy"), ("title", "abstract")), '{title abstract} : "dwarf galaxy"'),
        (And((Term("a"), Not(Term("b")))), '("a" NOT "b")'),
        (And((Not(Term("b")), Term("a"), Term("c"))), '(("a" AND "c") NOT "b")'),
        (Or((Term("a"), And((Term("b"), Term("c"))))), '("a" OR ("b" AND "c"))'),
        (Near((Term("a"), Phrase(("b", "c"))), 3, ("body",)), '{body} : NEAR("a" "b c", 3)'),
        (Term('say "hi"'), '"say ""hi"""'),
        (Term("a\x00b\ud800c"), '"a b c"'),
    ],
)
def test_compiled_expressions(node: Node, expression: str) -> None:
    assert to_match_expression(node) == expression


@pytest.mark.parametrize(
    "query", ["NOT a", "a OR NOT b", "-a -b", "a AND NOT (b OR NOT c)", "(a -b) OR -c"]
)
def test_unrankable_queries_are_refused(query: str) -> None:
    node = parse_query(query)
    assert not is_rankable(node)
    with pytest.raises(SearchQueryError, match="cannot be ranked"):
        require_rankable(node)
    with pytest.raises(SearchQueryError):
        to_match_expression(node)
    to_filter_expression(node)  # any query compiles to a filter


@pytest.mark.parametrize("query", ["a", "a -b", "a OR b", "NEAR(a b) -(c OR d)", "a (b OR c) -d"])
def test_rankable_queries(query: str) -> None:
    node = parse_query(query)
    assert is_rankable(node)
    require_rankable(node)


INJECTIONS = [
    "'); DROP TABLE documents; --",
    '"a" OR "b"',
    'x" OR 1=1 --',
    "NEAR(a b, 1) * : ^ {title} : x",
    '""""',
    "a*:b",
]


@pytest.mark.parametrize("payload", INJECTIONS)
def test_injection_stays_one_literal(db: sqlite3.Connection, payload: str) -> None:
    node = Term(payload)
    expression = to_match_expression(node)
    assert expression == '"' + payload.replace('"', '""') + '"'
    sql, params = to_filter_expression(Not(node))
    assert sql == f"(NOT {FILTER_LEAF})"
    assert params == (expression,)
    load(db, [SearchDocument("1", body=payload), SearchDocument("2", body="other")])
    assert fts5_match(db, node) == expected(node, [SearchDocument("1", body=payload)]) | set()
    assert db.execute("SELECT count(*) FROM documents").fetchone()[0] == 2


@given(query_text())
def test_query_text_never_changes_the_sql_structure(text: str) -> None:
    try:
        node = parse_query(text)
    except SearchQueryError:
        return
    sql, params = to_filter_expression(node)
    assert sql.replace(FILTER_LEAF, "").strip("() ANDORT") == ""
    assert sql.count("?") == len(params)
    for param in params:
        assert "\x00" not in param
