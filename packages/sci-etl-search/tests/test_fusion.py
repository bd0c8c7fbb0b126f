"""Reciprocal rank fusion and normalized score fusion: exact values and properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sci_etl_core.search.fusion import (
    FusedHit,
    FusionParams,
    normalized_score_fusion,
    reciprocal_rank_fusion,
)

IDS = st.sampled_from([f"r{n}" for n in range(8)])
SCORES = st.floats(-50, 50, allow_nan=False)
LISTS = st.lists(st.lists(st.tuples(IDS, SCORES), max_size=8), max_size=4)
STRATEGIES = [reciprocal_rank_fusion, normalized_score_fusion]


def test_rrf_exact_values_and_ties() -> None:
    fused = reciprocal_rank_fusion([[("a", 9.0), ("b", 1.0)], [("b", 0.5), ("c", 0.1)]])
    assert fused == [
        ("b", math.fsum([1 / 62, 1 / 61])),
        ("a", 1 / 61),
        ("c", 1 / 62),
    ]
    assert reciprocal_rank_fusion([[("y", 1.0)], [("x", 1.0)]]) == [("x", 1 / 61), ("y", 1 / 61)]


def test_rrf_counts_repeats_once_at_first_position() -> None:
    assert reciprocal_rank_fusion([[("a", 1.0), ("a", 1.0), ("b", 1.0)]], FusionParams(k=0)) == [
        ("a", 1.0),
        ("b", 0.5),
    ]


def test_weights_apply_per_list() -> None:
    fused = reciprocal_rank_fusion(
        [[("a", 1.0)], [("b", 1.0)]], FusionParams(k=1, weights=[1.0, 3.0])
    )
    assert fused == [("b", 1.5), ("a", 0.5)]
    assert FusionParams(weights=[1, 2]).weights == (1, 2)


def test_normalized_fusion_values() -> None:
    fused = normalized_score_fusion(
        [[("a", 10.0), ("b", 5.0), ("c", 0.0)], [("c", 0.9), ("a", 0.9)]]
    )
    assert fused == [("a", 2.0), ("c", 1.0), ("b", 0.5)]
    assert normalized_score_fusion([[("a", 2.0), ("a", 0.0), ("b", 1.0)]]) == [
        ("a", 1.0),
        ("b", 0.0),
    ]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"k": -1}, "k must be finite and >= 0"),
        ({"k": math.inf}, "k must be finite"),
        ({"weights": []}, "at least one weight"),
        ({"weights": [1.0, -0.5]}, r"weights\[1\] must be a finite number >= 0"),
        ({"weights": [math.nan]}, r"weights\[0\]"),
    ],
)
def test_params_validation(params: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FusionParams(**params)  # type: ignore[arg-type]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_bad_lists_are_located(strategy: object) -> None:
    with pytest.raises(ValueError, match=r"ranked_lists\[1\]\[0\]: record_id must be a string"):
        strategy([[("a", 1.0)], [(3, 1.0)]])  # type: ignore[operator]
    with pytest.raises(ValueError, match="2 weights for 1 lists"):
        strategy([[("a", 1.0)]], FusionParams(weights=[1, 1]))  # type: ignore[operator]
    with pytest.raises(ValueError, match=r"ranked_lists\[0\]\[1\] is not a"):
        strategy([[("a", 1.0), "b"]])  # type: ignore[operator]


def test_normalized_fusion_rejects_non_finite_scores() -> None:
    with pytest.raises(ValueError, match=r"ranked_lists\[0\]\[0\]: score must be a finite"):
        normalized_score_fusion([[("a", math.nan)]])


def test_fused_hit_validation() -> None:
    with pytest.raises(ValueError, match="lexical_rank"):
        FusedHit("a", 1.0, lexical_rank=0)
    with pytest.raises(ValueError, match="score must be finite"):
        FusedHit("a", math.inf)


@pytest.mark.parametrize("strategy", STRATEGIES)
@given(lists=LISTS, data=st.data())
def test_invariant_to_list_order(
    strategy: object, lists: list[list[tuple[str, float]]], data: st.DataObject
) -> None:
    weights = data.draw(st.lists(st.floats(0, 5), min_size=len(lists), max_size=len(lists)))
    params = FusionParams(weights=weights) if lists else None
    order = data.draw(st.permutations(range(len(lists))))
    shuffled = [lists[i] for i in order]
    shuffled_params = FusionParams(weights=[weights[i] for i in order]) if lists else None
    assert strategy(lists, params) == strategy(shuffled, shuffled_params)  # type: ignore[operator]


@pytest.mark.parametrize("strategy", STRATEGIES)
@given(lists=LISTS)
def test_each_record_once_best_first(
    strategy: object, lists: list[list[tuple[str, float]]]
) -> None:
    fused = strategy(lists)  # type: ignore[operator]
    ids = [record_id for record_id, _ in fused]
    assert sorted(ids) == sorted({record_id for ranked in lists for record_id, _ in ranked})
    keys = [(-score, record_id) for record_id, score in fused]
    assert keys == sorted(keys)


@pytest.mark.parametrize("strategy", STRATEGIES)
@given(lists=LISTS, data=st.data())
def test_repeated_records_count_once(
    strategy: object, lists: list[list[tuple[str, float]]], data: st.DataObject
) -> None:
    def dedupe(ranked: list[tuple[str, float]]) -> list[tuple[str, float]]:
        seen: dict[str, float] = {}
        for record_id, score in ranked:
            seen.setdefault(record_id, score)
        return list(seen.items())

    assert strategy(lists) == strategy([dedupe(r) for r in lists])  # type: ignore[operator]


@given(
    lists=st.lists(st.lists(IDS, max_size=8, unique=True), min_size=1, max_size=4), data=st.data()
)
def test_rrf_promoting_a_record_never_lowers_its_score(
    lists: list[list[str]], data: st.DataObject
) -> None:
    index = data.draw(st.integers(0, len(lists) - 1))
    ranked = lists[index]
    if len(ranked) < 2:
        return
    position = data.draw(st.integers(1, len(ranked) - 1))
    target = ranked[position]
    promoted = list(ranked)
    promoted[position - 1], promoted[position] = promoted[position], promoted[position - 1]
    before = dict(reciprocal_rank_fusion([[(r, 0.0) for r in lst] for lst in lists]))
    after_lists = [promoted if i == index else lst for i, lst in enumerate(lists)]
    after = dict(reciprocal_rank_fusion([[(r, 0.0) for r in lst] for lst in after_lists]))
    assert after[target] >= before[target]


@given(
    lists=st.lists(st.lists(st.tuples(IDS, SCORES), max_size=8), min_size=1, max_size=3),
    data=st.data(),
)
def test_normalized_raising_a_score_never_lowers_it(
    lists: list[list[tuple[str, float]]], data: st.DataObject
) -> None:
    index = data.draw(st.integers(0, len(lists) - 1))
    if not lists[index]:
        return
    ranked = dict(reversed(lists[index]))  # first occurrence wins
    target = data.draw(st.sampled_from(sorted(ranked)))
    raised = [(target, max(s for _, s in lists[index]) + 1.0)] + [
        p for p in lists[index] if p[0] != target
    ]
    before = dict(normalized_score_fusion(lists))
    after = dict(
        normalized_score_fusion([raised if i == index else lst for i, lst in enumerate(lists)])
    )
    assert after[target] >= before[target] - 1e-12
