"""Unicode61Tokenizer: documented examples and parity with real SQLite FTS5."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import given
from sci_etl_core.search.tokenize import (
    FTS5_MAX_TOKEN_BYTES,
    SURROGATE_CODE_POINTS,
    Token,
    Tokenizer,
    Unicode61Tokenizer,
)
from search_fts5_oracle import indexed_terms, vocab_oracle
from search_strategies import tricky_text

TOKENIZER = Unicode61Tokenizer()


def texts(text: str) -> list[str]:
    return [token.text for token in TOKENIZER.tokens(text)]


@pytest.fixture(scope="module")
def fts5() -> Iterator[sqlite3.Connection]:
    with vocab_oracle("unicode61 remove_diacritics 2") as db:
        yield db


def fts5_tokens(db: sqlite3.Connection, text: str) -> list[str]:
    return [term.decode("utf-8") for term in indexed_terms(db, text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("H-alpha", ["h", "alpha"]),
        ("Müller", ["muller"]),
        ("Straße", ["straße"]),
        ("STRASSE ẞ", ["strasse", "ß"]),
        ("İstanbul ıe", ["istanbul", "ıe"]),
        ("ΣΊΣΥΦΟΣ σίσυφος", ["σίσυφοσ", "σίσυφοσ"]),
        ("e\u0301te\u0301", ["ete"]),
        ("\u0301 \u0300", []),
        ("a\x00b", ["a", "b"]),
        ("", []),
        ("  --  ", []),
    ],
)
def test_documented_examples(text: str, expected: list[str], fts5: sqlite3.Connection) -> None:
    assert texts(text) == expected
    assert fts5_tokens(fts5, text) == expected


def test_offsets_are_python_character_offsets() -> None:
    text = "Ünïcode  H-alpha 𐐀x"
    tokens = TOKENIZER.tokens(text)
    assert tokens == [
        Token("unicode", 0, 7),
        Token("h", 9, 10),
        Token("alpha", 11, 16),
        Token("𐐨x", 17, 19),
    ]
    assert [text[t.start : t.end] for t in tokens] == ["Ünïcode", "H", "alpha", "𐐀x"]


def test_surrogates_are_separators() -> None:
    assert 0xD800 in SURROGATE_CODE_POINTS
    assert texts("a\ud800b\udfffc") == ["a", "b", "c"]


def test_never_truncates() -> None:
    word = "a" * (FTS5_MAX_TOKEN_BYTES + 10)
    assert texts(word) == [word]


def test_words_equal_token_texts() -> None:
    text = "Müller's H-alpha ẞ 𐐀x \u0301e"
    assert TOKENIZER.words(text) == texts(text)


def test_is_a_tokenizer() -> None:
    assert isinstance(TOKENIZER, Tokenizer)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("a", -1, 0), ValueError),
        (("a", 3, 2), ValueError),
        ((1, 0, 1), TypeError),
        (("a", 0.0, 1), TypeError),
    ],
)
def test_token_validates(args: tuple[object, object, object], error: type[Exception]) -> None:
    with pytest.raises(error):
        Token(*args)  # type: ignore[arg-type]


@given(tricky_text())
def test_equals_fts5_on_tricky_text(fts5: sqlite3.Connection, text: str) -> None:
    assert texts(text) == fts5_tokens(fts5, text)
    assert TOKENIZER.words(text) == texts(text)


@given(tricky_text())
def test_offsets_retokenize_to_the_same_token(text: str) -> None:
    for token in TOKENIZER.tokens(text):
        piece = text[token.start : token.end]
        assert TOKENIZER.tokens(piece) == [Token(token.text, 0, len(piece))]
