"""Recency re-rank and the cross-encoder re-rank with a real (tiny) CrossEncoder."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.utils import (
    DEFAULT_CROSS_ENCODER_MODEL,
    RECENCY_MISSING_YEAR_SCORE,
    SOURCE_SCORES_KEY,
    cross_encoder_rerank,
    load_cross_encoder,
    rerank_by_recency,
)
from langchain_core.documents import Document
from retrieval_support import build_tiny_cross_encoder


def d(name: str, year: object = None) -> Document:
    meta: dict[str, object] = {"file_name": name}
    if year is not None:
        meta["year"] = year
    return Document(page_content=name, metadata=meta)


def test_recency_blends_normalized_relevance_and_year():
    merged = [(d("old", 2000), 1.0), (d("new", 2020), 0.9), (d("none"), 0.5)]
    out = rerank_by_recency(merged)
    scores = {doc.page_content: s for doc, s in out}
    assert scores["old"] == pytest.approx(0.9 * 1.0 + 0.1 * 0.0)
    assert scores["new"] == pytest.approx(0.9 * 0.8 + 0.1 * 1.0)
    assert scores["none"] == pytest.approx(0.1 * RECENCY_MISSING_YEAR_SCORE)
    assert [doc.page_content for doc, _ in out] == ["old", "new", "none"]


def test_recency_guards_single_values_and_non_int_years():
    out = rerank_by_recency([(d("a", 2020), 0.3), (d("b", "2021"), 0.3), (d("c", True), 0.3)])
    assert {doc.page_content: s for doc, s in out} == {
        "a": pytest.approx(1.0),
        "b": pytest.approx(0.95),
        "c": pytest.approx(0.95),
    }
    assert rerank_by_recency([]) == []
    with pytest.raises(ValueError, match="time_weight"):
        rerank_by_recency([(d("a"), 1.0)], time_weight=-0.1)


@given(
    st.lists(
        st.tuples(st.floats(-10, 10), st.one_of(st.none(), st.integers(1900, 2030))), max_size=8
    )
)
def test_recency_keeps_documents_and_sorts(pairs):
    merged = [(d(str(i), y), s) for i, (s, y) in enumerate(pairs)]
    out = rerank_by_recency(merged)
    assert sorted(doc.page_content for doc, _ in out) == sorted(
        doc.page_content for doc, _ in merged
    )
    scores = [s for _, s in out]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 + 1e-9 and math.isfinite(s) for s in scores)


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    folder = build_tiny_cross_encoder(tmp_path_factory.mktemp("ce") / "tiny-bert")
    return load_cross_encoder(str(folder))


def test_cross_encoder_rerank_orders_by_model_scores(tiny_cross_encoder):
    docs = [
        (Document(page_content=t, metadata={"file_name": t, SOURCE_SCORES_KEY: {"BM25": 1.0}}), 0.1)
        for t in ("calcium imaging of cortical neurons", "dopamine neurons", "protein structure")
    ]
    out = cross_encoder_rerank("cortical neurons", docs, model=tiny_cross_encoder)
    expected = tiny_cross_encoder.predict(
        [("cortical neurons", doc.page_content) for doc, _ in docs], show_progress_bar=False
    )
    assert sorted(float(x) for x in expected) == sorted(s for _, s in out)
    assert [s for _, s in out] == sorted((s for _, s in out), reverse=True)
    assert all(doc.metadata[SOURCE_SCORES_KEY] == {"BM25": 1.0} for doc, _ in out)
    assert cross_encoder_rerank("q", [], model=tiny_cross_encoder) == []


def test_load_cross_encoder_rejects_empty_names():
    assert DEFAULT_CROSS_ENCODER_MODEL == "cross-encoder/ms-marco-MiniLM-L-6-v2"
    for bad in ("", "  ", None):
        with pytest.raises(ValueError, match="non-empty"):
            load_cross_encoder(bad)  # type: ignore[arg-type]
