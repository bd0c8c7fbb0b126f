"""parse_query and friends: the grammar, located errors, and robustness on any input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sci_etl_core.exceptions import SearchQueryError
from sci_etl_core.search.parser import (
    MAX_GROUP_DEPTH,
    parse_query,
    parse_ranked_query,
    parse_semantic_query,
)
from sci_etl_core.search.query import And, Near, Node, Not, Or, Phrase, Term, normalize
from search_strategies import query_text

a, b, c = Term("a"), Term("b"), Term("c")


@pytest.mark.parametrize(
    ("text", "node"),
    [
        ("galaxy", Term("galaxy")),
        ("H-alpha", Phrase(("h", "alpha"))),
        ("Müller", Term("muller")),
        ("Straße", Term("straße")),
        ('"dwarf galaxy"', Phrase(("dwarf", "galaxy"))),
        ('"Galaxy"', Term("galaxy")),
        ("photometr*", Term("photometr", prefix=True)),
        ("title:quasar", Term("quasar", ("title",))),
        ('TITLE,Abstract:"dwarf galaxy"', Phrase(("dwarf", "galaxy"), ("title", "abstract"))),
        (
            'NEAR(dwarf "dark matter" halo*, 5)',
            Near((Term("dwarf"), Phrase(("dark", "matter")), Term("halo", prefix=True)), 5),
        ),
        ("NEAR(dwarf halo)", Near((Term("dwarf"), Term("halo")), 10)),
        ('NEAR("dwarf halo", 3)', Near((Term("dwarf"), Term("halo")), 3)),
        ("title:NEAR(dwarf halo)", Near((Term("dwarf"), Term("halo")), 10, ("title",))),
        ("a AND b", And((a, b))),
        ("a && b", And((a, b))),
        ("a b", And((a, b))),
        ("a OR b", Or((a, b))),
        ("a || b", Or((a, b))),
        ("NOT a", Not(a)),
        ("-a", Not(a)),
        ("a and b", And((a, Term("and"), b))),
        ("a OR b c", Or((a, And((b, c))))),
        ("(a OR b) c", And((Or((a, b)), c))),
        ("NOT a b", And((Not(a), b))),
        ("a -b -c", And((a, Not(Or((b, c)))))),
        ("NOT NOT a", a),
        ("((a))", a),
    ],
)
def test_grammar(text: str, node: Node) -> None:
    assert parse_query(text) == node


def test_default_fields() -> None:
    assert parse_query("a title:b", default_fields=("abstract",)) == And(
        (Term("a", ("abstract",)), Term("b", ("title",)))
    )
    assert parse_query("NEAR(a b)", default_fields=["body"]) == Near((a, b), 10, ("body",))
    with pytest.raises(ValueError, match="unknown field"):
        parse_query("a", default_fields=("text",))


@pytest.mark.parametrize(
    ("text", "position", "token"),
    [
        ("", None, ""),
        ("   ", None, ""),
        ("a AND", 2, "AND"),
        ("OR a", 0, "OR"),
        ("a OR OR b", 2, "OR"),
        ("(a", 0, "("),
        ("a)", 1, ")"),
        ("a ()", 2, "()"),
        ('a "b c', 2, '"b c'),
        ("a NOT", 2, "NOT"),
        ("a - b", 2, "-"),
        ("a*b", 1, "*"),
        ("*", 0, "*"),
        ('"a b"*', 5, "*"),
        ("+++", 0, "+++"),
        ('x ""', 2, '""'),
        ("text:a", 0, "text"),
        ("title,title:a", 6, "title"),
        ("title: a", 0, "title:"),
        ("title:(a)", 0, "title:"),
        ("NEAR(a)", 0, "NEAR(a)"),
        ("NEAR(a OR b)", 7, "OR"),
        ("NEAR(a -b)", 7, "-b"),
        ("NEAR(a title:b)", 7, "title:b"),
        ("NEAR(a (b))", 7, "("),
        ("NEAR(a b, x)", 8, ","),
        ("NEAR(a b", 0, "NEAR("),
        ("(" * (MAX_GROUP_DEPTH + 1) + "a" + ")" * (MAX_GROUP_DEPTH + 1), MAX_GROUP_DEPTH, "("),
    ],
)
def test_errors_are_located(text: str, position: int | None, token: str) -> None:
    with pytest.raises(SearchQueryError) as caught:
        parse_query(text)
    assert caught.value.position == position
    assert caught.value.token == token
    if position is not None:
        assert text[position:].startswith(token)
        assert caught.value.caret_line(text).splitlines()[-1].startswith(" " * position + "^")


def test_max_depth_is_allowed() -> None:
    depth = MAX_GROUP_DEPTH
    assert parse_query("(" * depth + "a" + ")" * depth) == a


def test_long_inputs_do_not_recurse() -> None:
    assert parse_query("NOT " * 20001 + "a") == Not(a)
    assert parse_query("- " * 0 + "-" * 10000 + "a") == a
    wide = parse_query(" OR ".join(["a b"] * 5000))
    assert isinstance(wide, Or)
    assert len(wide.operands) == 5000
    negated = parse_query("x" + " -a" * 5000)
    assert negated == And((Term("x"), Not(Or((a,) * 5000))))


def test_ranked_query() -> None:
    assert parse_ranked_query("a -b") == And((a, Not(b)))
    with pytest.raises(SearchQueryError, match="cannot be ranked") as caught:
        parse_ranked_query("a OR NOT b")
    assert (caught.value.position, caught.value.token) == (5, "NOT")
    with pytest.raises(SearchQueryError) as caught:
        parse_ranked_query("  -b")
    assert (caught.value.position, caught.value.token) == (2, "-")


def test_semantic_query() -> None:
    assert parse_semantic_query("quasar -dwarf") == (
        And((Term("quasar"), Not(Term("dwarf")))),
        "quasar",
    )
    assert parse_semantic_query("photometr* dwarf")[1] == "dwarf"
    with pytest.raises(SearchQueryError):
        parse_semantic_query("-dwarf")


def _check(text: str) -> None:
    error: SearchQueryError | None = None
    try:
        node = parse_query(text)
    except SearchQueryError as raised:
        error = raised
    if error is None:
        assert normalize(node) == node
    elif error.position is None:
        assert not text.strip()
    else:
        assert 0 <= error.position <= len(text)
        assert text[error.position :].startswith(error.token)


@given(query_text())
def test_any_query_text_parses_or_fails_located(text: str) -> None:
    _check(text)


@given(st.text(max_size=40))
def test_any_text_parses_or_fails_located(text: str) -> None:
    _check(text)
