"""The content words of a question: what both lexical legs search for."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._retrieval.query_words import (
    LEXICAL_STOPWORDS,
    QUESTION_WORDS,
    content_words,
)
from klea_utils.stores.config import BM25StoreInfo, PerDomainConfig, RetrieverConfig
from klea_utils.stores.retrieval._fts5 import fts5_query
from klea_utils.stores.retrieval.bm25 import BM25RetrieverManager
from langchain_core.documents import Document
from retrieval_support import write_corpus_pickle, write_fts5_index
from sci_etl_core.search.tokenize import Unicode61Tokenizer

WORDS = st.sampled_from(
    [*sorted(LEXICAL_STOPWORDS)[:12], "What", "HOW", "Does", "kinase", "Rödl", "MEK", "K7"]
)


def test_question_and_stop_words_are_left_out():
    question = "What bandwidth does the intra-node interconnect provide?"
    assert content_words(question) == ["bandwidth", "intra", "node", "interconnect", "provide"]


def test_written_forms_keep_case_and_diacritics():
    assert content_words("Who cited Rödl and Frankl?", fold=False) == ["cited", "Rödl", "Frankl"]
    assert content_words("Who cited Rödl and Frankl?") == ["cited", "rodl", "frankl"]


@pytest.mark.parametrize("text", ["who", "What is it?", "to be or not"])
def test_a_query_of_stop_words_only_keeps_them(text):
    assert content_words(text) == list(dict.fromkeys(Unicode61Tokenizer().words(text)))


def test_no_words_no_query():
    assert content_words(" ?! ") == []
    assert fts5_query("What is it?") is not None


@given(st.lists(WORDS, max_size=12))
def test_content_words_are_the_distinct_non_stop_words_in_order(words):
    text = " ".join(words)
    tokens = list(dict.fromkeys(Unicode61Tokenizer().words(text)))
    kept = content_words(text)
    expected = [w for w in tokens if w not in LEXICAL_STOPWORDS] or tokens
    assert kept == expected
    written = content_words(text, fold=False)
    assert [Unicode61Tokenizer().words(w)[0] for w in written] == kept


DOCS = [
    Document(
        id="intro",
        page_content="What does the kinase do, and how does it respond? What do cells do?",
        metadata={"file_name": "a.pdf"},
    ),
    Document(
        id="results",
        page_content="Compound K7 inhibited the kinase: its inhibition constant was 4.2 uM.",
        metadata={"file_name": "a.pdf"},
    ),
    Document(id="other", page_content="Ocean heat uptake.", metadata={"file_name": "b.pdf"}),
]


@pytest.mark.parametrize("kind", ["pickle", "fts5"])
@pytest.mark.parametrize("question", sorted(QUESTION_WORDS)[:6])
def test_question_words_do_not_pick_the_passage(tmp_path, kind, question):
    if kind == "pickle":
        path = str(write_corpus_pickle(tmp_path / "c.pkl", DOCS))
    else:
        write_fts5_index(tmp_path / "c.sqlite", DOCS, stemming=True)
        path = f"fts5:{tmp_path / 'c.sqlite'}"
    store = BM25StoreInfo(name="s", path=path)
    config = RetrieverConfig(domains={"d": PerDomainConfig(bm25_stores=[store])})
    manager = BM25RetrieverManager(config, logging.getLogger("test"), default_k=3)
    hits = manager.retrieve("d", f"{question} does compound K7 inhibit the kinase?")
    assert hits[0][0].id == "results"


@given(st.lists(WORDS, max_size=12))
def test_repeats_are_kept_when_asked_and_order_is_the_texts(words):
    text = " ".join(words)
    tokens = Unicode61Tokenizer().words(text)
    kept = content_words(text, distinct=False)
    assert kept == ([w for w in tokens if w not in LEXICAL_STOPWORDS] or tokens)
    assert list(dict.fromkeys(kept)) == content_words(text)
