"""BM25Retriever: preprocessing, scoring against rank_bm25, ids and metadata."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.langchain_bm25 import (
    BM25Retriever,
    default_preprocessing_func,
    stemmed_preprocessing_func,
)
from langchain_core.documents import Document
from rank_bm25 import BM25Okapi


def test_default_preprocessing_normalizes_folds_case_and_splits_words():
    assert default_preprocessing_func("Ef\ufb01cient  NEURONS, e.g. soft\u00adhyphen") == [
        "efficient",
        "neurons",
        "e",
        "g",
        "softhyphen",
    ]


@given(st.text())
def test_preprocessing_yields_casefolded_word_tokens(text):
    tokens = default_preprocessing_func(text)
    assert all(t and t == t.casefold() for t in tokens)
    assert default_preprocessing_func(" ".join(tokens)) == tokens


def test_scores_match_rank_bm25_and_ids_metadata_survive():
    texts = ["cats purr loudly", "dogs bark", "cats and dogs", "fish swim", "birds sing", "owls"]
    retriever = BM25Retriever.from_texts(
        texts, metadatas=[{"i": i} for i in range(6)], ids=[f"f:{i}" for i in range(6)], k=2
    )
    reference = BM25Okapi([t.split() for t in texts]).get_scores(["cats", "dogs"])
    hits = retriever.scored_documents("Cats DOGS")
    assert [d.page_content for d, _ in hits] == ["cats and dogs", "dogs bark"]
    assert hits[0][1] == pytest.approx(reference[2])
    assert hits[0][0].id == "f:2"
    assert hits[0][0].metadata == {"i": 2}
    assert [d.page_content for d in retriever.invoke("fish")] == ["fish swim"]
    assert retriever.scored_documents("unrelated words") == []
    assert retriever.scored_documents("cats", k=0) == []


def test_terms_with_zero_idf_still_match():
    retriever = BM25Retriever.from_texts(["cats purr", "dogs bark", "cats nap", "fish"])
    assert {d.page_content for d, _ in retriever.scored_documents("cats")} == {
        "cats purr",
        "cats nap",
    }


def test_empty_corpus_and_mismatched_inputs():
    assert BM25Retriever.from_documents([]).invoke("anything") == []
    with pytest.raises(ValueError, match="2 ids for 1 texts"):
        BM25Retriever.from_texts(["a"], ids=["x", "y"])
    with pytest.raises(ValueError, match="metadatas"):
        BM25Retriever.from_texts(["a"], metadatas=[{}, {}])


def test_bm25_params_and_custom_preprocessing_are_used():
    docs = [Document(page_content="A-B c"), Document(page_content="d")]
    retriever = BM25Retriever.from_documents(
        docs, bm25_params={"k1": 2.0}, preprocess_func=lambda t: t.split("-")
    )
    assert retriever.vectorizer.k1 == 2.0
    assert [d.page_content for d in retriever.invoke("A")] == ["A-B c"]


def test_stemmed_preprocessing_matches_fts5_porter():
    import sqlite3

    text = "Inhibition of MEK inhibits relapses; Ef\ufb01cient caf\u00e9 H-alpha"
    assert stemmed_preprocessing_func("Inhibition of MEK inhibits relapses") == [
        "inhibit",
        "of",
        "mek",
        "inhibit",
        "relaps",
    ]
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')"
    )
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    db.execute(
        "INSERT INTO t(x) VALUES (?)",
        ("Inhibition of MEK inhibits relapses; Efficient cafe H-alpha",),
    )
    expected = [term for (term,) in db.execute("SELECT term FROM v ORDER BY offset")]
    assert stemmed_preprocessing_func(text) == expected


def test_stemmed_preprocessing_finds_words_of_every_script():
    """The pickled leg: a question typed in the chunk's language ranks that chunk first."""
    from klea_utils.stores._retrieval.bm25_scoring import Bm25Index

    chunks = {
        "zh": "本文提出一种新的深度学习方法，用于医学图像分割。",
        "ko": "이 연구는 의료 영상 분할을 위한 새로운 방법을 제안한다.",
        "fa": "این پژوهش روش تازه‌ای برای یادگیری ماشین ارائه می‌دهد.",
        "ar": "قدمت هذه الدراسة طريقة جديدة للتعلم الآلي.",
        "en": "A new deep learning method for medical image segmentation.",
    }
    docs = [Document(id=key, page_content=text) for key, text in chunks.items()]
    index = Bm25Index.from_documents(docs, stemmed_preprocessing_func)
    for question, expected in (
        ("医学图像分割", "zh"),
        ("영상 분할 연구는", "ko"),
        ("یادگیری ماشین", "fa"),
        ("الدراسة والتعلم", "ar"),
        ("segmenting images", "en"),
    ):
        assert index.scored_documents(question, k=1)[0][0].id == expected, question
    assert stemmed_preprocessing_func("图像分割") == ["图像", "像分", "分割"]
