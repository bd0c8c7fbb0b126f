"""Plain questions as queries: content words, their quoted OR, and telling questions apart."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sci_etl_core.search import (
    QUESTION_STOP_WORDS,
    InMemoryTextSearchStore,
    Or,
    SearchDocument,
    Term,
    Unicode61Tokenizer,
    describe,
    parse_query,
    question_query,
    question_words,
    reads_as_question,
)
from search_strategies import field_scopes, query_text, tricky_text

QUESTION = "What do rotation curves tell us about dwarf galaxies?"


def test_a_question_keeps_its_content_words_folded_once_each() -> None:
    assert question_words(QUESTION) == [
        "rotation", "curves", "tell", "us", "about", "dwarf", "galaxies",
    ]  # fmt: skip
    assert question_words("Who cited Rödl and RÖDL, and Frankl?") == ["cited", "rodl", "frankl"]


def test_stop_words_are_a_parameter() -> None:
    assert question_words("the halo of it", stop_words=()) == ["the", "halo", "of", "it"]
    assert question_words("the halo of it", stop_words={"halo"}) == ["the", "of", "it"]
    assert question_query("dwarf halo", stop_words={"halo"}) == '"dwarf"'


def test_a_question_of_stop_words_only_keeps_them_all() -> None:
    assert question_words("to be or not to be") == ["to", "be", "or", "not"]
    assert question_query("?! ,") == ""


def test_fields_scope_every_word_and_are_checked() -> None:
    query = question_query("the dwarf galaxies", fields=("title", "body"))
    assert query == 'title,body:"dwarf" OR title,body:"galaxies"'
    assert parse_query(query) == Or(
        (Term("dwarf", ("title", "body")), Term("galaxies", ("title", "body")))
    )
    with pytest.raises(ValueError, match=r"unknown field.*'notes'.*title, abstract, body"):
        question_query("dwarf", fields=("notes",))


def test_syntax_is_never_syntax_in_a_question() -> None:
    query = question_query('Is "NEAR" -dark AND (matter)? title:matter*')
    assert query == '"near" OR "dark" OR "matter" OR "title"'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (QUESTION, True),
        ("how do chaperones fold", True),
        ("two words", False),
        ("heat AND shock proteins", False),
        ('"heat shock" proteins fold', False),
        ("title:heat shock proteins", False),
        ("chaperon* help proteins", False),
        ("proteins fold -yeast", False),
        ("(heat shock) proteins", False),
    ],
)
def test_reads_as_question(text: str, expected: bool) -> None:
    assert reads_as_question(text) is expected


def test_the_default_stop_list_holds_question_and_function_words() -> None:
    assert {"what", "how", "the", "of"} <= QUESTION_STOP_WORDS
    assert all(Unicode61Tokenizer().words(w) == [w] for w in QUESTION_STOP_WORDS)


@given(st.one_of(tricky_text(60), query_text(60), st.text(max_size=60)), field_scopes())
def test_the_query_always_parses_as_an_or_of_words(text: str, fields: tuple[str, ...]) -> None:
    query = question_query(text, fields=fields)
    if not query:
        assert Unicode61Tokenizer().words(text) == []
        return
    chips = describe(parse_query(query))
    assert [c.text for c in chips] == question_words(text)
    assert all(c.operator in ("OR", "") and not c.negated and not c.prefix for c in chips)
    assert all(tuple(c.fields) == tuple(fields) for c in chips)


async def test_the_query_ranks_the_record_holding_the_rare_words() -> None:
    store = InMemoryTextSearchStore()
    await store.index(
        [
            SearchDocument("dwarfs", "Dwarf galaxies", "", "Rotation curves of dwarf galaxies."),
            SearchDocument("what", "What is it", "", "What do we do about what is there?"),
        ]
    )
    hits = await store.search(parse_query(question_query(QUESTION)), limit=2)
    assert [h.record_id for h in hits] == ["dwarfs", "what"]
    every_word = await store.search(parse_query(question_query(QUESTION, stop_words=())))
    assert {h.record_id for h in every_word} == {"dwarfs", "what"}
