"""klea's ``rrf_merge`` and sci-etl's ``reciprocal_rank_fusion`` order the same lists alike.

A klea document is identified by file name and content; here each record id becomes a
document with that ``file_name`` and empty content, so both functions see the same
identities and the same tie-break order.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.utils import RRF_K, rrf_merge
from langchain_core.documents import Document
from sci_etl_core.search import FusionParams, reciprocal_rank_fusion

record_ids = st.text(alphabet="abcdefgh", min_size=1, max_size=3)
ranked_list = st.lists(
    st.tuples(record_ids, st.floats(min_value=-5, max_value=5, allow_nan=False)), max_size=12
)
labelled_lists = st.lists(
    st.tuples(st.sampled_from(["vs", "bm25", "fts5"]), ranked_list), max_size=4
)


def as_documents(ranked: list[tuple[str, float]]) -> list[tuple[Document, float]]:
    return [
        (Document(page_content="", metadata={"file_name": rid}), score) for rid, score in ranked
    ]


@given(labelled_lists)
def test_both_fusions_give_one_order_and_one_score(
    lists: list[tuple[str, list[tuple[str, float]]]],
) -> None:
    klea = rrf_merge([(label, as_documents(ranked)) for label, ranked in lists])
    sci = reciprocal_rank_fusion([ranked for _, ranked in lists], FusionParams(k=RRF_K))
    assert [doc.metadata["file_name"] for doc, _ in klea] == [rid for rid, _ in sci]
    assert [score for _, score in klea] == pytest.approx([score for _, score in sci], rel=0, abs=0)


def test_a_worked_example_agrees() -> None:
    lexical = [("b", 9.0), ("a", 7.0), ("c", 1.0)]
    semantic = [("a", 0.9), ("d", 0.8), ("b", 0.1)]
    klea = rrf_merge([("BM25", as_documents(lexical)), ("vector store", as_documents(semantic))])
    sci = reciprocal_rank_fusion([lexical, semantic])
    assert [d.metadata["file_name"] for d, _ in klea] == [r for r, _ in sci] == ["a", "b", "d", "c"]
