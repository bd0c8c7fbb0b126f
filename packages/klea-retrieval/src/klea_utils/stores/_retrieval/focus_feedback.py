"""Pseudo-relevance feedback inside the file the fusion ranks first (internal).

A question may name the thing it asks about with other words than the document ("below
zero" for "negative values"). Relevance feedback reads the words of the passages ranked
best for the question as if they were relevant, and adds the ones that stand out in them
to the question (RM3 and Rocchio in IR); here only inside the file the fusion ranks first,
where the top passages speak the document's own vocabulary, and only to re-order that
file's passages (:mod:`~klea_utils.stores._retrieval.passage_focus`).

:func:`expansion_terms` picks the words: a word's weight is how often it stands in the
feedback passages times how few of the file's pooled passages hold it (an IDF over the
file's pool), so the topic words every passage repeats are not picked; the question's
own words, numbers and words of fewer than :data:`MIN_LETTERS` letters are left out.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Sequence

__all__ = ["MIN_LETTERS", "expansion_terms"]

MIN_LETTERS = 3
"""Fewest letters an expansion term must have."""


def expansion_terms(
    asked: Collection[str],
    feedback: Sequence[Sequence[str]],
    pool: Sequence[Sequence[str]],
    count: int,
    left_out: Collection[str] = (),
) -> list[str]:
    """The ``count`` terms that stand out in the ``feedback`` passages, best first.

    Args:
        asked: The question's terms (never picked).
        feedback: The terms of each feedback passage.
        pool: The terms of each passage of the file's pool (the IDF is counted there).
        count: How many terms to pick (0: none).
        left_out: Further terms never picked (stop words).
    """
    if count < 1 or not feedback:
        return []
    holders: Counter[str] = Counter()
    for terms in pool:
        holders.update(set(terms))
    n = max(len(pool), 1)
    weights: dict[str, float] = {}
    for terms in feedback:
        for term, tf in Counter(terms).items():
            if term in asked or term in left_out or len(term) < MIN_LETTERS:
                continue
            if not term.isalpha():
                continue
            weights[term] = weights.get(term, 0.0) + tf * math.log(
                1.0 + (n + 1.0) / (holders[term] + 0.5)
            )
    # a stable sort keeps first-seen order among equal weights: the same in every process
    return sorted(weights, key=lambda t: -weights[t])[:count]
