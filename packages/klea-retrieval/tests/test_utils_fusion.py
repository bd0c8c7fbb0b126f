"""rrf_merge: rank-only fusion, deduplication, tie rule, source scores."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.utils import RRF_K, SOURCE_SCORES_KEY, rrf_merge
from langchain_core.documents import Document


def doc(name: str, text: str = "x") -> Document:
    return Document(page_content=text, metadata={"file_name": name})


def test_scores_are_reciprocal_ranks_summed_over_sources():
    a, b, c = doc("a"), doc("b"), doc("c")
    merged = rrf_merge([("vector store", [(a, 0.9), (b, 0.8)]), ("BM25", [(b, 7.0), (c, 3.0)])])
    scores = {d.metadata["file_name"]: s for d, s in merged}
    assert scores["b"] == pytest.approx(1 / (RRF_K + 2) + 1 / (RRF_K + 1))
    assert scores["a"] == pytest.approx(1 / (RRF_K + 1))
    assert [d.metadata["file_name"] for d, _ in merged] == ["b", "a", "c"]
    b_meta = merged[0][0].metadata
    assert b_meta[SOURCE_SCORES_KEY] == {"vector store": 0.8, "BM25": 7.0}


def test_duplicates_count_once_at_first_position_and_input_is_untouched():
    a, b = doc("a"), doc("b")
    a_again = Document(page_content="x", metadata={"file_name": "a", "extra": 1})
    merged = rrf_merge([("s", [(a, 1.0), (a_again, 0.5), (b, 0.1)])])
    assert [(d.metadata["file_name"], s) for d, s in merged] == [
        ("a", pytest.approx(1 / (RRF_K + 1))),
        ("b", pytest.approx(1 / (RRF_K + 2))),
    ]
    assert SOURCE_SCORES_KEY not in a.metadata


def test_equal_scores_are_ordered_by_file_then_content():
    merged = rrf_merge(
        [("s1", [(doc("b"), 1.0)]), ("s2", [(doc("a", "z"), 1.0)]), ("s3", [(doc("a", "y"), 1.0)])]
    )
    assert [(d.metadata["file_name"], d.page_content) for d, _ in merged] == [
        ("a", "y"),
        ("a", "z"),
        ("b", "x"),
    ]


def test_num_refs_max_caps_and_rejects_negative():
    sets = [("s", [(doc(str(i)), 1.0) for i in range(5)])]
    assert len(rrf_merge(sets, num_refs_max=2)) == 2
    assert rrf_merge([]) == []
    with pytest.raises(ValueError, match="num_refs_max"):
        rrf_merge(sets, num_refs_max=-1)


lists = st.lists(
    st.lists(st.sampled_from("abcdefg"), max_size=6).map(lambda xs: [(doc(x), 1.0) for x in xs]),
    max_size=4,
)


@given(lists)
def test_result_is_independent_of_source_order(result_lists):
    forward = rrf_merge([(f"s{i}", r) for i, r in enumerate(result_lists)])
    backward = rrf_merge([(f"s{i}", r) for i, r in reversed(list(enumerate(result_lists)))])
    assert [(d.metadata["file_name"], s) for d, s in forward] == [
        (d.metadata["file_name"], s) for d, s in backward
    ]
    scores = [s for _, s in forward]
    assert scores == sorted(scores, reverse=True)


named_lists = st.lists(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "ab", ""]), st.sampled_from(["x", "y", "xy"])),
        max_size=6,
    ),
    max_size=4,
)


@given(named_lists)
def test_order_and_scores_match_sci_etl_reciprocal_rank_fusion(result_lists):
    from klea_utils.stores._retrieval.fusion import document_key
    from sci_etl_core.search.fusion import reciprocal_rank_fusion

    sets = [
        (f"s{i}", [(doc(name, text), 0.5) for name, text in r]) for i, r in enumerate(result_lists)
    ]
    ours = [(document_key(d), s) for d, s in rrf_merge(sets)]
    theirs = reciprocal_rank_fusion([[(document_key(d), s) for d, s in r] for _, r in sets])
    assert ours == theirs
