"""Where klea's filter DSL and sci-etl's filters say the same thing, they select alike.

The shared conditions: equality and ``$in`` on a text or integer field (a
``MetadataFilter``), ``$contains`` on a list field (a ``MetadataFilter`` over its
elements), integer ranges (a ``RangeFilter`` with integer bounds), and ``$and`` across
fields (several filters). Negations differ on records that lack the field (klea never
matches a missing field; a negated sci-etl filter keeps it), so negations are compared on
records that have the field.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.filters import filter_docs_by_metadata
from langchain_core.documents import Document
from sci_etl_core.search import (
    InMemoryTextSearchStore,
    MetadataFilter,
    RangeFilter,
    SearchDocument,
    matches_filters,
)

JOURNALS = ["Nature", "Cell", "PLoS ONE"]
AUTHORS = ["Ankur Sinha", "Sinha", "Padraig Gleeson", "Magee"]

metadata = st.fixed_dictionaries(
    {},
    optional={
        "journal": st.sampled_from(JOURNALS),
        "year": st.integers(1995, 2025),
        "authors": st.lists(st.sampled_from(AUTHORS), max_size=3, unique=True),
    },
)
corpora = st.lists(metadata, min_size=1, max_size=25)


@st.composite
def shared_conditions(draw: st.DrawFn) -> tuple[dict[str, Any], list[Any], bool]:
    """Return a klea clause, the equivalent sci-etl filters, and whether it negates."""
    kind = draw(st.sampled_from(["eq", "in", "contains", "range", "nin", "and"]))
    if kind == "eq":
        journal = draw(st.sampled_from(JOURNALS))
        return {"journal": {"$eq": journal}}, [MetadataFilter("journal", {journal})], False
    if kind == "in":
        years = draw(st.lists(st.integers(1995, 2025), min_size=1, max_size=4, unique=True))
        return {"year": {"$in": years}}, [MetadataFilter("year", {str(y) for y in years})], False
    if kind == "contains":
        author = draw(st.sampled_from(AUTHORS))
        return {"authors": {"$contains": author}}, [MetadataFilter("authors", {author})], False
    if kind == "range":
        low, high = sorted(draw(st.lists(st.integers(1995, 2025), min_size=2, max_size=2)))
        clause = {"$and": [{"year": {"$gte": low}}, {"year": {"$lte": high}}]}
        return clause, [RangeFilter("year", low=low, high=high)], False
    if kind == "nin":
        journals = draw(st.lists(st.sampled_from(JOURNALS), min_size=1, max_size=2, unique=True))
        return (
            {"journal": {"$nin": journals}},
            [MetadataFilter("journal", set(journals), negated=True)],
            True,
        )
    journal = draw(st.sampled_from(JOURNALS))
    low = draw(st.integers(1995, 2025))
    return (
        {"$and": [{"journal": {"$eq": journal}}, {"year": {"$gte": low}}]},
        [MetadataFilter("journal", {journal}), RangeFilter("year", low=low)],
        False,
    )


def klea_selection(corpus: list[dict[str, Any]], clause: dict[str, Any]) -> set[int]:
    docs = [Document(page_content=str(i), metadata=m) for i, m in enumerate(corpus)]
    return {int(d.page_content) for d in filter_docs_by_metadata(docs, clause)}


def store_selection(corpus: list[dict[str, Any]], filters: list[Any]) -> set[int]:
    async def run() -> frozenset[str]:
        store = InMemoryTextSearchStore(facet_keys=("journal", "year", "authors"))
        await store.index(
            [SearchDocument(str(i), title="t", metadata=m) for i, m in enumerate(corpus)]
        )
        return await store.filter_ids(None, filters)

    return {int(rid) for rid in asyncio.run(run())}


@given(corpora, shared_conditions())
def test_same_condition_selects_same_records(
    corpus: list[dict[str, Any]], condition: tuple[dict[str, Any], list[Any], bool]
) -> None:
    clause, filters, negated = condition
    if negated:
        key = filters[0].key
        corpus = [m for m in corpus if key in m] or [{key: JOURNALS[0]}]
    expected = klea_selection(corpus, clause)
    assert {i for i, m in enumerate(corpus) if matches_filters(m, filters)} == expected
    assert store_selection(corpus, filters) == expected
