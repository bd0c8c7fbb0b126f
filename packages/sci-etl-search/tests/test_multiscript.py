"""MultiscriptTokenizer: examples, index/query symmetry, FTS5 parity of the shadow text."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sci_etl_core.search.compile_fts5 import is_rankable
from sci_etl_core.search.evaluate import matches
from sci_etl_core.search.multiscript import MultiscriptTokenizer, shadow_query, shadow_text
from sci_etl_core.search.query import Node, Phrase, Term
from sci_etl_core.search.store_base import SearchDocument
from sci_etl_core.search.tokenize import Tokenizer, Unicode61Tokenizer
from search_fts5_oracle import (
    expected,
    fts5_filter,
    fts5_match,
    fts5_oracle,
    indexed_terms,
    load,
    vocab_oracle,
)
from search_strategies import (
    multiscript_documents,
    multiscript_queries,
    multiscript_text,
    tricky_text,
)

TOKENIZER = MultiscriptTokenizer()
UNICODE61 = Unicode61Tokenizer()


@pytest.fixture(scope="module")
def fts5() -> Iterator[sqlite3.Connection]:
    with vocab_oracle("unicode61 remove_diacritics 2") as db:
        yield db


def fts5_words(db: sqlite3.Connection, text: str) -> list[str]:
    return [term.decode("utf-8") for term in indexed_terms(db, text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("研究方法", ["研究", "究方", "方法"]),
        ("字", ["字"]),
        ("GPT模型很好。", ["gpt", "模型", "型很", "很好"]),
        ("東京大学の研究", ["東京", "京大", "大学", "学の", "の研", "研究"]),
        ("ｶﾀｶﾅ", ["カタ", "タカ", "カナ"]),
        ("연구는 연구에서 연구", ["연구", "연구", "연구"]),
        ("결과 가능성이", ["결과", "가능", "능성"]),
        ("ภาษาไทย", ["ภา", "าษ", "ษา", "าไ", "ไท", "ทย"]),
        ("كِتَابٌ مدرسة", ["كتاب", "مدرسه"]),
        ("کتاب یک أحمد إلى ﻻ", ["كتاب", "يك", "احمد", "الي", "لا"]),
        ("سال ۱۴۰۲ و ٢٠٢٣", ["سال", "1402", "و", "2023"]),
        ("علـــم", ["علم"]),
        ("کتاب\u200cها می\u200cخواهم", ["كتاب", "ها", "مي", "خواهم"]),
        ("ＡＢＣ１", ["abc1"]),
        ("H-alpha Müller Straße", ["h", "alpha", "muller", "straße"]),
    ],
)
def test_documented_examples(text: str, expected: list[str], fts5: sqlite3.Connection) -> None:
    assert TOKENIZER.words(text) == expected
    assert [token.text for token in TOKENIZER.tokens(text)] == expected
    assert fts5_words(fts5, shadow_text(text)) == expected


def test_offsets_point_at_the_original_spelling() -> None:
    text = "مدرسة 研究方法 연구는"
    spans = [text[token.start : token.end] for token in TOKENIZER.tokens(text)]
    assert spans == ["مدرسة", "研究", "究方", "方法", "연구"]


def test_is_a_tokenizer() -> None:
    assert isinstance(TOKENIZER, Tokenizer)


@given(tricky_text())
def test_text_without_those_scripts_is_unicode61(text: str) -> None:
    if shadow_text(text) == text:
        assert TOKENIZER.tokens(text) == UNICODE61.tokens(text)


@given(multiscript_text())
def test_shadow_text_matches_fts5_token_for_token(text: str) -> None:
    with vocab_oracle("unicode61 remove_diacritics 2") as db:
        assert fts5_words(db, shadow_text(text)) == TOKENIZER.words(text)
    assert UNICODE61.words(shadow_text(text)) == TOKENIZER.words(text)


@given(multiscript_text())
def test_words_equal_token_texts(text: str) -> None:
    assert TOKENIZER.words(text) == [token.text for token in TOKENIZER.tokens(text)]


@given(multiscript_text())
def test_offsets_are_in_order_and_inside_the_text(text: str) -> None:
    tokens = TOKENIZER.tokens(text)
    assert all(0 <= t.start < t.end <= len(text) for t in tokens)
    assert [t.start for t in tokens] == sorted(t.start for t in tokens)


@given(multiscript_text())
def test_a_token_retokenizes_to_itself(text: str) -> None:
    """Index/query symmetry: the span of each token, typed as a query, gives that token."""
    for token in TOKENIZER.tokens(text):
        assert TOKENIZER.words(token.text) == [token.text]


@given(multiscript_text(), st.data())
def test_a_run_of_the_text_typed_as_a_query_finds_it(text: str, data: st.DataObject) -> None:
    """A stretch of whole tokens, typed as a query without spaces, matches the text."""
    tokens = TOKENIZER.tokens(text)
    if not tokens:
        return
    first = data.draw(st.integers(0, len(tokens) - 1))
    last = data.draw(st.integers(first, len(tokens) - 1))
    phrase = [token.text for token in tokens[first : last + 1]]
    document = SearchDocument(record_id="r", body=text)
    assert matches(Phrase(tuple(phrase)), document, tokenizer=TOKENIZER)


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("方法", "本文提出一种新的研究方法。"),
        ("研究方法", "本文提出一种新的研究方法。"),
        ("研究者", "東京大学の研究者たちは"),
        ("연구는", "이 연구에서 우리는"),
        ("کتاب", "هذا كتاب جديد"),
        ("مدرسة", "مدرسه"),
        ("ภาษา", "ภาษาไทยง่าย"),
    ],
)
def test_a_word_typed_as_people_type_it_finds_the_text(query: str, text: str) -> None:
    document = SearchDocument(record_id="r", body=text)
    assert matches(Term(query), document, tokenizer=TOKENIZER)
    assert not matches(Term(query), document, tokenizer=UNICODE61)


@given(st.lists(multiscript_documents(), min_size=1, max_size=5), multiscript_queries())
def test_fts5_on_shadow_text_selects_what_the_twin_matches(
    docs: list[SearchDocument], node: Node
) -> None:
    """The FTS5 shadow path (shadow text indexed, shadow query) agrees with the twin."""
    shadowed = [
        SearchDocument(
            d.record_id, shadow_text(d.title), shadow_text(d.abstract), shadow_text(d.body)
        )
        for d in docs
    ]
    with fts5_oracle("unicode61 remove_diacritics 2") as db:
        load(db, shadowed)
        assert fts5_filter(db, shadow_query(node)) == expected(node, docs, TOKENIZER)
        if is_rankable(node):
            assert fts5_match(db, shadow_query(node)) == expected(node, docs, TOKENIZER)
