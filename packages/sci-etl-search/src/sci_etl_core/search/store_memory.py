"""The in-memory text search store: an inverted index ranked exactly as FTS5 ranks."""

from __future__ import annotations

import heapq
import json
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

from sci_etl_core.search._memory_index import InvertedIndex, passes
from sci_etl_core.search._memory_scoring import score_matches
from sci_etl_core.search._store_checks import (
    check_facet_request,
    check_filter_request,
    check_range_request,
    check_record_ids,
    check_search_request,
    facet_key_set,
    sort_facet_counts,
)
from sci_etl_core.search._store_plan import Counted, collect, compile_plan
from sci_etl_core.search._store_snippets import cut_snippets
from sci_etl_core.search.filters import RangeFilter, SearchFilter
from sci_etl_core.search.query import FIELDS, Node
from sci_etl_core.search.store_base import (
    AsyncTextSearchStore,
    BM25Weights,
    SearchDocument,
    TextHit,
)
from sci_etl_core.search.tokenize import Tokenizer, Unicode61Tokenizer

__all__ = ["InMemoryTextSearchStore"]


class InMemoryTextSearchStore(AsyncTextSearchStore):
    """Non-persistent lexical index backed by a dict, ranked as SQLite FTS5 ranks.

    Documents are tokenized once, when indexed, by ``tokenizer`` (by default
    :class:`~sci_etl_core.search.tokenize.Unicode61Tokenizer`, which reproduces
    FTS5's own tokenizer), into an inverted index, so a query reads only the
    postings of its words. Matching follows
    :func:`~sci_etl_core.search.evaluate.matches`, so with the default tokenizer
    the store matches, filters, and counts exactly the records
    :class:`~sci_etl_core.search.store_sqlite_fts5.AsyncSqliteFts5Store` does,
    which makes it both an offline test double and a check on that store.

    Scores follow FTS5's ``bm25()`` formula: ``k1`` of 1.2, ``b`` of 0.75, an IDF
    floored at ``1e-6``, and the field weights. A word counts towards the
    score, and is highlighted, only where the part of the query holding it
    matches the document: an OR alternative or an AND group that does not
    match, and anything negated, adds nothing. FTS5 applies the same rule in
    most cases but not all: whether it counts a word inside a part of the query
    that fails to match depends on the state of its internal iterators, so for
    such queries the two stores can score, and so order, the same records
    differently. Matched record sets are always identical.

    The scores are identical (to floating-point rounding) on the query shapes
    where FTS5's counting is determined, which the parity tests generate: a
    term, phrase, or ``NEAR`` group; an OR of terms and phrases; and an AND whose
    operands are those or such ORs, none of them negated. There, a word inside a
    failing OR alternative is a whole leaf that does not occur in the row, which
    neither store counts. A ``NEAR`` group as an OR alternative is not such a
    shape: FTS5 counts its operands in a row where they occur but not near each
    other.

    The snippet is taken from the field with the most counted matches, with
    ties going to title, then abstract, then body, and ``snippets``
    holds one for every field with a counted match.

    Tags are derived from metadata on every write, so a filter or facet on any
    of ``facet_keys`` works at once: the store never needs a ``rebuild_tags``
    and never raises :class:`~sci_etl_core.exceptions.SearchStoreError`.
    """

    def __init__(
        self,
        *,
        facet_keys: Iterable[str] = (),
        weights: BM25Weights | None = None,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        self._facet_keys = facet_key_set(facet_keys)
        self._index = InvertedIndex(
            self._facet_keys,
            dict(zip(FIELDS, (weights or BM25Weights()).as_tuple(), strict=True)),
            tokenizer or Unicode61Tokenizer(),
        )

    @property
    def facet_keys(self) -> frozenset[str]:
        """The metadata keys this store tags documents by, for filters and facets."""
        return self._facet_keys

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer documents and queries are split with."""
        return self._index.tokenizer

    # -- writing -----------------------------------------------------------------------

    async def index(self, documents: Sequence[SearchDocument]) -> None:
        """Store ``documents``, replacing any stored document with the same ``record_id``."""
        for document in self._latest_documents(documents):
            self._index.remove(document.record_id)
            self._index.add(document)

    async def delete_record(self, record_id: str) -> None:
        """Remove the document of ``record_id``, if one is stored."""
        self._index.remove(record_id)

    # -- reading -----------------------------------------------------------------------

    async def search(
        self,
        query: Node,
        limit: int = 20,
        exclude_record_id: str | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> list[TextHit]:
        """Rank the documents matching ``query`` and ``filters`` by FTS5's BM25 formula."""
        node, filters = check_search_request(query, filters, self._facet_keys)
        if limit < 1:
            return []
        index = self._index
        plan, leaves = compile_plan(node, index.tokenizer)
        scores = score_matches(index, plan, leaves, filters, exclude_record_id)
        best = heapq.nsmallest(limit, ((-score, rid) for rid, score in scores.items()))
        results: list[TextHit] = []
        for negative, record_id in best:
            kept: Counted = []
            collect(plan, index.entries[record_id], index.tokenizer, kept)
            results.append(self._hit(record_id, -negative, kept))
        return results

    def _hit(self, record_id: str, score: float, counted: Counted) -> TextHit:
        document = self._index.documents[record_id]
        texts = {name: getattr(document, name) for name in FIELDS}
        snippets, chosen = cut_snippets(
            self._index.entries[record_id], texts, counted, self._index.tokenizer
        )
        return TextHit(
            record_id=record_id,
            score=score,
            snippet=chosen.text if chosen else "",
            highlights=chosen.highlights if chosen else (),
            metadata=json.loads(json.dumps(document.metadata)),
            title=document.title,
            snippets=snippets,
        )

    async def filter_ids(
        self,
        query: Node | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> frozenset[str]:
        """Return every record satisfying ``query`` and ``filters``, in no order."""
        node, filters = check_filter_request(query, filters, self._facet_keys)
        return frozenset(self._index.ids(node, filters))

    async def get_documents(self, record_ids: Collection[str]) -> dict[str, SearchDocument]:
        """Return the stored documents for ``record_ids``; unknown ids are omitted."""
        check_record_ids(record_ids)
        stored = self._index.documents
        return {rid: _copy(stored[rid]) for rid in set(record_ids) if rid in stored}

    async def facet_counts(
        self,
        keys: Sequence[str],
        *,
        query: Node | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> dict[str, tuple[tuple[str, int], ...]]:
        """Count matching documents per value of each facet key."""
        node, filters = check_facet_request(keys, query, filters, self._facet_keys)
        entries = self._index.entries
        matched = self._index.ids(node, ())
        result: dict[str, tuple[tuple[str, int], ...]] = {}
        for key in dict.fromkeys(keys):
            others = [item for item in filters if item.key != key]
            counts: Counter[str] = Counter()
            for record_id in matched:
                tags = entries[record_id].tags
                if passes(tags, others):
                    counts.update(tags.get(key, ()))
            result[key] = sort_facet_counts(dict(counts))
        return result

    async def range_counts(
        self,
        ranges: Sequence[RangeFilter],
        *,
        query: Node | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> tuple[int, ...]:
        """Count matching documents inside each of ``ranges``, in the order given."""
        node, filters = check_range_request(ranges, query, filters, self._facet_keys)
        entries = self._index.entries
        matched = self._index.ids(node, ())
        counts: list[int] = []
        for item in ranges:
            wanted = [*(f for f in filters if f.key != item.key), item]
            counts.append(sum(1 for rid in matched if passes(entries[rid].tags, wanted)))
        return tuple(counts)

    async def count(self) -> int:
        """Return how many documents the store holds."""
        return len(self._index.entries)

    async def aclose(self) -> None:
        """Do nothing: the store holds nothing open, and stays usable."""


def _copy(document: SearchDocument) -> SearchDocument:
    metadata = json.loads(json.dumps(document.metadata))
    return SearchDocument(
        document.record_id, document.title, document.abstract, document.body, metadata
    )
