"""The places inside a file that the legs leave open to the focus."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._retrieval.leg_agreement import LegPlaces, leg_places, order_within_legs
from langchain_core.documents import Document


def _doc(text: str, name: str = "manual.pdf") -> Document:
    return Document(page_content=text, metadata={"file_name": name})


def _key(doc: Document) -> str:
    return doc.page_content


def _file(doc: Document) -> str:
    return str(doc.metadata["file_name"])


def test_places_are_counted_among_the_files_passages_in_each_list() -> None:
    a, b, other, c = _doc("a"), _doc("b"), _doc("x", "other.pdf"), _doc("c")
    places = leg_places(
        [("vector", [other, a, b, c]), ("bm25", [b, a, other]), ("bm25", [a, b])], _key, _file
    )
    assert places["a"] == LegPlaces(1, 2)
    assert places["b"] == LegPlaces(1, 2)
    assert places["x"] == LegPlaces(1, None)  # the third list misses it
    assert places["c"] == LegPlaces(3, None)


def test_one_leg_leaves_the_focus_free() -> None:
    a, b = _doc("a"), _doc("b")
    assert leg_places([("bm25", [a, b]), ("bm25", [b, a])], _key, _file) == {}


def test_a_passage_every_leg_ranks_first_keeps_first_place() -> None:
    # the focus prefers 2 and 1; every leg put 0 first in the file
    places = {0: LegPlaces(1, 1), 1: LegPlaces(2, 3), 2: LegPlaces(6, 9)}
    assert order_within_legs([2, 1, 0], places) == [0, 2, 1]
    assert order_within_legs([2, 1, 0], places, keep_worst=False) == [2, 1, 0]


def test_the_lift_keeps_a_passage_the_legs_put_deep_behind_those_they_put_first() -> None:
    places = {0: LegPlaces(1, 1), 1: LegPlaces(2, 2), 2: LegPlaces(7, 10), 3: LegPlaces(3, 4)}
    assert order_within_legs([2, 1, 0, 3], places, keep_worst=False, lift=2) == [1, 0, 3, 2]
    # one place up from the best place the legs give: 1 may take the first place
    assert order_within_legs([1, 0, 3, 2], places, keep_worst=False, lift=1) == [1, 0, 3, 2]


@given(
    st.lists(st.permutations(range(6)), min_size=2, max_size=3),
    st.permutations(range(6)),
    st.booleans(),
    st.one_of(st.none(), st.integers(0, 4)),
)
def test_the_order_is_a_permutation_within_the_worst_places(
    rankings: list[list[int]], focus: list[int], keep_worst: bool, lift: int | None
) -> None:
    docs = [_doc(str(i)) for i in range(6)]
    lists = [(f"leg{n}", [docs[i] for i in ranking]) for n, ranking in enumerate(rankings)]
    by_key = leg_places(lists, _key, _file)
    places = {i: by_key[str(i)] for i in range(6)}
    out = order_within_legs(focus, places, keep_worst, lift)
    assert sorted(out) == list(range(6))
    if keep_worst:
        assert all(out.index(i) + 1 <= (places[i].worst or 6) for i in range(6))
    if lift is not None and not keep_worst:
        assert all(out.index(i) + 1 >= places[i].best - lift for i in range(6))


def test_bad_places_are_refused() -> None:
    with pytest.raises(ValueError, match="best <= worst"):
        LegPlaces(3, 2)


def _fused_files(sets: list[tuple[str, list[tuple[Document, float]]]], focus: object) -> list[str]:
    from klea_utils.stores.config import RetrieverConfig
    from klea_utils.stores.pipeline import KleaPipeline

    library = RetrieverConfig.model_validate(
        {"domains": {"papers": {"bm25_stores": [{"name": "b", "path": "unused.pkl"}]}}}
    )
    pipeline = KleaPipeline(library, k=5, focus=focus)  # nothing is loaded: lists are given
    try:
        fused = pipeline._fuse("how are kiln temperatures logged", sets, [5] * len(sets), "papers")
    finally:
        pipeline.close()
    return [d.page_content[:6] for d, _ in fused]


def test_the_pipeline_keeps_the_legs_agreed_first_place_only_when_asked() -> None:
    from klea_utils.stores._retrieval.passage_focus import FocusParams

    texts = [
        "agreed: the plant's firing schedule and its checks, as the legs read the question",
        "second: a general overview of the plant and its staff",
        "third: the plant's safety rules for visitors",
        "wordy: kiln temperatures are logged every minute by the thermocouple recorder",
    ]
    passages = [_doc(t, "plant.pdf") for t in texts]
    ranked = [(d, 1.0 - i / 10) for i, d in enumerate(passages)]
    sets = [("vector store", ranked), ("BM25: bm25.pkl", ranked), ("BM25: fts5.sqlite", ranked)]
    # the focus alone lifts the passage holding the question's words over the legs' first
    assert _fused_files(sets, FocusParams())[0] == "wordy:"
    assert _fused_files(sets, FocusParams(agreed_places=True))[:2] == ["agreed", "second"]
    # one leg (BM25 alone, two stores of it): no agreement to keep
    assert _fused_files(sets[1:], FocusParams(agreed_places=True))[0] == "wordy:"
