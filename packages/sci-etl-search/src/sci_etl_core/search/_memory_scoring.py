"""BM25 scores of the in-memory text store, as FTS5's ``bm25()`` computes them (internal).

:func:`score_matches` scores every record matching a compiled plan. A plan made only of
single-token leaves under ORs, or ANDs of such ORs, is scored straight from the
postings; any other plan record by record, counting only the phrases
:func:`~sci_etl_core.search._store_plan.collect` counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sci_etl_core.search._bm25 import K1, bm25_score, idf
from sci_etl_core.search._memory_index import InvertedIndex, passes
from sci_etl_core.search._store_plan import BoolPlan, Entry, LeafPlan, NearPlan, Plan
from sci_etl_core.search.filters import SearchFilter
from sci_etl_core.search.query import FIELDS

__all__ = ["score_matches"]


@dataclass(frozen=True)
class _Ranking:
    """One search's plan, its phrases' IDFs and the records it may not return."""

    plan: Plan
    leaves: list[LeafPlan]
    idfs: list[float]
    avgdl: float
    filters: Sequence[SearchFilter]
    exclude_record_id: str | None


def score_matches(
    index: InvertedIndex,
    plan: Plan,
    leaves: list[LeafPlan],
    filters: Sequence[SearchFilter],
    exclude_record_id: str | None,
) -> dict[str, float]:
    """Return the BM25 score of every record matching ``plan`` and ``filters``.

    ``leaves`` are the plan's phrases, in FTS5's order. ``exclude_record_id`` is left out.
    """
    if not index.total_tokens:
        return {}  # no document holds a token, so none can match
    rows = len(index.entries)
    ranking = _Ranking(
        plan=plan,
        leaves=leaves,
        idfs=[idf(rows, index.hits_of(leaf)) for leaf in leaves],
        avgdl=index.total_tokens / rows,
        filters=filters,
        exclude_record_id=exclude_record_id,
    )
    if _counts_every_occurrence(plan):
        return _simple_scores(index, ranking)
    return _general_scores(index, ranking)


def _general_scores(index: InvertedIndex, ranking: _Ranking) -> dict[str, float]:
    found = index.matching(ranking.plan, ranking.filters)
    if ranking.exclude_record_id is not None:
        found.pop(ranking.exclude_record_id, None)
    scores: dict[str, float] = {}
    for record_id, counted in found.items():
        entry = index.entries[record_id]
        row = [0.0] * len(ranking.leaves)
        for leaf, hits in counted:
            row[leaf.index] += _frequency(index, leaf, entry, hits)
        scores[record_id] = bm25_score(ranking.idfs, row, entry.length, ranking.avgdl)
    return scores


def _frequency(
    index: InvertedIndex, leaf: LeafPlan, entry: Entry, hits: dict[str, list[Any]] | None
) -> float:
    freq = 0.0
    for name in FIELDS:
        if name not in leaf.fields:
            continue
        if hits is None and leaf.simple:
            times = entry.counts[name][leaf.words[0]]
        else:
            if hits is None:
                hits = leaf.hits(entry, index.tokenizer)
            times = len(hits.get(name, ()))
        weight = index.weights[name]
        for _ in range(times):
            freq += weight
    return freq


def _simple_scores(index: InvertedIndex, ranking: _Ranking) -> dict[str, float]:
    """Score straight from the postings, for plans counting every occurrence.

    The arithmetic is that of :func:`~sci_etl_core.search._bm25.bm25_score`, phrase
    by phrase; a phrase absent from a row adds exactly nothing, so it is skipped.
    """
    allowed = _allowed(index, ranking)
    norms = index.norms(ranking.avgdl)
    k1_plus_1 = K1 + 1.0
    scores: dict[str, float] = {}
    for leaf in ranking.leaves:
        freqs = index.leaf_frequencies(leaf)
        weight_idf = ranking.idfs[leaf.index]
        get = scores.get
        if allowed is None:
            for record_id, freq in freqs.items():
                scores[record_id] = get(record_id, 0.0) + weight_idf * (
                    (freq * k1_plus_1) / (freq + norms[record_id])
                )
        else:
            for record_id, freq in freqs.items():
                if record_id in allowed:
                    scores[record_id] = get(record_id, 0.0) + weight_idf * (
                        (freq * k1_plus_1) / (freq + norms[record_id])
                    )
    return scores


def _allowed(index: InvertedIndex, ranking: _Ranking) -> set[str] | None:
    """Return the records a simple plan may score, or ``None`` when every posting may."""
    filters, excluded = ranking.filters, ranking.exclude_record_id
    if _is_disjunction(ranking.plan) and not filters and excluded is None:
        return None
    allowed = index.candidates(ranking.plan)
    if allowed is None:  # pragma: no cover - such plans hold no negation
        allowed = set(index.entries)
    if excluded is not None:
        allowed.discard(excluded)
    if filters:
        allowed = {rid for rid in allowed if passes(index.entries[rid].tags, filters)}
    return allowed


def _counts_every_occurrence(plan: Plan) -> bool:
    """Whether ``plan`` is made of single-token leaves under ORs, or ANDs of such ORs.

    In such a plan every leaf occurring in a matching document counts, and the
    candidates from the postings are exactly the matching documents.
    """
    if isinstance(plan, LeafPlan):
        return plan.simple
    if isinstance(plan, NearPlan) or plan.kind == "not":
        return False
    if plan.kind == "or":
        return all(isinstance(child, LeafPlan) and child.simple for child in plan.children)
    return all(_counts_every_occurrence(child) for child in plan.children)


def _is_disjunction(plan: Plan) -> bool:
    """Whether ``plan`` is one leaf or an OR of leaves, so every posting is a match."""
    return isinstance(plan, LeafPlan) or (isinstance(plan, BoolPlan) and plan.kind == "or")
