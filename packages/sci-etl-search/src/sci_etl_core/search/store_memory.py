"""The in-memory text search store: an inverted index ranked exactly as FTS5 ranks."""

from __future__ import annotations

import bisect
import heapq
import json
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from sci_etl_core.search._bm25 import K1, B, bm25_score, idf
from sci_etl_core.search._store_checks import (
    check_facet_request,
    check_filter_request,
    check_range_request,
    check_record_ids,
    check_search_request,
    facet_key_set,
    sort_facet_counts,
)
from sci_etl_core.search._store_plan import (
    BoolPlan,
    Counted,
    Entry,
    LeafPlan,
    NearPlan,
    Plan,
    collect,
    compile_plan,
)
from sci_etl_core.search._store_snippets import cut_snippets
from sci_etl_core.search.evaluate import TokenizedDocument
from sci_etl_core.search.filters import (
    MetadataFilter,
    RangeFilter,
    SearchFilter,
    encode_metadata,
    sanitize_text,
    tag_in_range,
    tag_rows,
)
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
        self._weights = dict(zip(FIELDS, (weights or BM25Weights()).as_tuple(), strict=True))
        self._tokenizer: Tokenizer = tokenizer or Unicode61Tokenizer()
        self._documents: dict[str, SearchDocument] = {}
        self._entries: dict[str, Entry] = {}
        self._postings: dict[str, set[str]] = {}
        self._field_postings: dict[tuple[str, str], dict[str, int]] = {}
        self._vocabulary: list[str] = []
        self._vocabulary_stale = False
        self._total_tokens = 0
        self._norm_cache: tuple[float, dict[str, float]] | None = None
        self._frequencies: dict[str, dict[str, float]] = {}

    @property
    def facet_keys(self) -> frozenset[str]:
        """The metadata keys this store tags documents by, for filters and facets."""
        return self._facet_keys

    # -- writing -----------------------------------------------------------------------

    def _words(self, text: str) -> tuple[str, ...]:
        return tuple(token.text for token in self._tokenizer.tokens(text))

    async def index(self, documents: Sequence[SearchDocument]) -> None:
        """Store ``documents``, replacing any stored document with the same ``record_id``."""
        for document in self._latest_documents(documents):
            self._remove(document.record_id)
            self._add(document)

    def _add(self, document: SearchDocument) -> None:
        stored = SearchDocument(
            record_id=document.record_id,
            title=sanitize_text(document.title),
            abstract=sanitize_text(document.abstract),
            body=sanitize_text(document.body),
            metadata=json.loads(encode_metadata(document.metadata)),
        )
        fields = {name: self._words(getattr(stored, name)) for name in FIELDS}
        tags: dict[str, set[str]] = {}
        for key, value in tag_rows(document.metadata, self._facet_keys):
            tags.setdefault(key, set()).add(value)
        entry = Entry(
            tokens=TokenizedDocument(**fields),
            counts={name: Counter(words) for name, words in fields.items()},
            length=sum(len(words) for words in fields.values()),
            tags={key: frozenset(values) for key, values in tags.items()},
        )
        record_id = stored.record_id
        for name, counts in entry.counts.items():
            for word in counts:
                self._postings.setdefault(word, set()).add(record_id)
                self._field_postings.setdefault((name, word), {})[record_id] = counts[word]
                self._frequencies.pop(word, None)
        self._vocabulary_stale = True
        self._norm_cache = None
        self._total_tokens += entry.length
        self._documents[record_id] = stored
        self._entries[record_id] = entry

    def _remove(self, record_id: str) -> None:
        entry = self._entries.pop(record_id, None)
        if entry is None:
            return
        del self._documents[record_id]
        self._norm_cache = None
        self._total_tokens -= entry.length
        for name, counts in entry.counts.items():
            for word in counts:
                self._frequencies.pop(word, None)
                _discard(self._postings, word, record_id)
                postings = self._field_postings.get((name, word))
                if postings is not None:
                    postings.pop(record_id, None)
                    if not postings:
                        del self._field_postings[(name, word)]
        self._vocabulary_stale = True

    async def delete_record(self, record_id: str) -> None:
        """Remove the document of ``record_id``, if one is stored."""
        self._remove(record_id)

    # -- candidates --------------------------------------------------------------------

    def _prefixed(self, prefix: str) -> set[str]:
        if self._vocabulary_stale:
            self._vocabulary = sorted(self._postings)
            self._vocabulary_stale = False
        found: set[str] = set()
        start = bisect.bisect_left(self._vocabulary, prefix)
        for word in self._vocabulary[start:]:
            if not word.startswith(prefix):
                break
            found |= self._postings[word]
        return found

    def _leaf_candidates(self, leaf: LeafPlan) -> set[str]:
        if not leaf.words:
            return set()
        if leaf.simple and len(leaf.fields) < len(FIELDS):
            found: set[str] = set()
            for name in leaf.fields:
                found.update(self._field_postings.get((name, leaf.words[0]), ()))
            return found
        sets: list[set[str]] = [self._postings.get(word, set()) for word in leaf.words[:-1]]
        last = leaf.words[-1]
        prefix = getattr(leaf.leaf, "prefix", False)
        sets.append(self._prefixed(last) if prefix else self._postings.get(last, set()))
        sets.sort(key=len)
        result = set(sets[0])
        for other in sets[1:]:
            result &= other
        return result

    def _candidates(self, plan: Plan) -> set[str] | None:
        """Return a superset of the records matching ``plan``, or ``None`` for all."""
        if isinstance(plan, LeafPlan):
            return self._leaf_candidates(plan)
        if isinstance(plan, NearPlan):
            sets = [self._leaf_candidates(op) for op in plan.operands if op.words]
            if not sets:
                return set()
            return set.intersection(*sets)
        if plan.kind == "not":
            return None
        children = [self._candidates(child) for child in plan.children]
        if plan.kind == "or":
            if any(child is None for child in children):
                return None
            return set().union(*(child for child in children if child is not None))
        narrowing = [child for child in children if child is not None]
        if not narrowing:
            return None
        narrowing.sort(key=len)
        return set.intersection(*narrowing)

    def _matching(self, plan: Plan, filters: Sequence[SearchFilter]) -> dict[str, Counted]:
        candidates = self._candidates(plan)
        pool: Iterable[str] = self._entries if candidates is None else candidates
        found: dict[str, Counted] = {}
        for record_id in pool:
            entry = self._entries[record_id]
            if not _passes(entry.tags, filters):
                continue
            counted: Counted = []
            if collect(plan, entry, self._tokenizer, counted):
                found[record_id] = counted
        return found

    def _ids(self, node: Node | None, filters: Sequence[SearchFilter]) -> set[str]:
        """Return the records matching the normalized ``node`` and ``filters``."""
        if node is None:
            return {rid for rid, entry in self._entries.items() if _passes(entry.tags, filters)}
        plan, _ = compile_plan(node, self._tokenizer)
        return set(self._matching(plan, filters))

    # -- scoring -----------------------------------------------------------------------

    def _hits_of(self, leaf: LeafPlan) -> int:
        if leaf.simple and len(leaf.fields) == len(FIELDS):
            return len(self._postings.get(leaf.words[0], ()))
        candidates = self._leaf_candidates(leaf)
        if leaf.simple:
            return len(candidates)
        return sum(1 for rid in candidates if leaf.occurs(self._entries[rid], self._tokenizer))

    def _frequency(self, leaf: LeafPlan, entry: Entry, hits: dict[str, list[Any]] | None) -> float:
        freq = 0.0
        for name in FIELDS:
            if name not in leaf.fields:
                continue
            if hits is None and leaf.simple:
                times = entry.counts[name][leaf.words[0]]
            else:
                if hits is None:
                    hits = leaf.hits(entry, self._tokenizer)
                times = len(hits.get(name, ()))
            weight = self._weights[name]
            for _ in range(times):
                freq += weight
        return freq

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
        plan, leaves = compile_plan(node, self._tokenizer)
        rows = len(self._entries)
        if not self._total_tokens:
            return []  # no document holds a token, so none can match
        avgdl = self._total_tokens / rows
        idfs = [idf(rows, self._hits_of(leaf)) for leaf in leaves]
        if _counts_every_occurrence(plan):
            scores = self._simple_scores(plan, leaves, idfs, avgdl, filters, exclude_record_id)
        else:
            scores = self._general_scores(plan, leaves, idfs, avgdl, filters, exclude_record_id)
        best = heapq.nsmallest(limit, ((-score, rid) for rid, score in scores.items()))
        results: list[TextHit] = []
        for negative, record_id in best:
            kept: Counted = []
            collect(plan, self._entries[record_id], self._tokenizer, kept)
            results.append(self._hit(record_id, -negative, kept))
        return results

    def _general_scores(
        self,
        plan: Plan,
        leaves: list[LeafPlan],
        idfs: list[float],
        avgdl: float,
        filters: Sequence[SearchFilter],
        exclude_record_id: str | None,
    ) -> dict[str, float]:
        found = self._matching(plan, filters)
        if exclude_record_id is not None:
            found.pop(exclude_record_id, None)
        scores: dict[str, float] = {}
        for record_id, counted in found.items():
            entry = self._entries[record_id]
            row = [0.0] * len(leaves)
            for leaf, hits in counted:
                row[leaf.index] += self._frequency(leaf, entry, hits)
            scores[record_id] = bm25_score(idfs, row, entry.length, avgdl)
        return scores

    def _simple_scores(
        self,
        plan: Plan,
        leaves: list[LeafPlan],
        idfs: list[float],
        avgdl: float,
        filters: Sequence[SearchFilter],
        exclude_record_id: str | None,
    ) -> dict[str, float]:
        """Score straight from the postings, for plans counting every occurrence.

        The arithmetic is that of :func:`~sci_etl_core.search._bm25.bm25_score`, phrase
        by phrase; a phrase absent from a row adds exactly nothing, so it is skipped.
        """
        restrict = not _is_disjunction(plan) or bool(filters) or exclude_record_id is not None
        allowed: set[str] | None = None
        if restrict:
            allowed = self._candidates(plan)
            if allowed is None:  # pragma: no cover - such plans hold no negation
                allowed = set(self._entries)
            if exclude_record_id is not None:
                allowed.discard(exclude_record_id)
            if filters:
                allowed = {rid for rid in allowed if _passes(self._entries[rid].tags, filters)}
        norms = self._norms(avgdl)
        k1_plus_1 = K1 + 1.0
        scores: dict[str, float] = {}
        for leaf in leaves:
            freqs = self._leaf_frequencies(leaf)
            weight_idf = idfs[leaf.index]
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

    def _leaf_frequencies(self, leaf: LeafPlan) -> dict[str, float]:
        """Return the weighted count of a single-token leaf in every document holding it."""
        word = leaf.words[0]
        if len(leaf.fields) == len(FIELDS):
            cached = self._frequencies.get(word)
            if cached is None:
                cached = self._frequencies[word] = self._weighted(word, FIELDS)
            return cached
        return self._weighted(word, leaf.fields)

    def _weighted(self, word: str, fields: Sequence[str]) -> dict[str, float]:
        freqs: dict[str, float] = {}
        for name in FIELDS:
            if name not in fields:
                continue
            weight = self._weights[name]
            for record_id, times in self._field_postings.get((name, word), {}).items():
                freq = freqs.get(record_id, 0.0)
                for _ in range(times):
                    freq += weight
                freqs[record_id] = freq
        return freqs

    def _norms(self, avgdl: float) -> dict[str, float]:
        """Return each document's ``k1 * (1 - b + b * D / avgdl)``, cached per corpus state."""
        if self._norm_cache is None or self._norm_cache[0] != avgdl:
            norms = {
                rid: K1 * (1 - B + B * float(entry.length) / avgdl)
                for rid, entry in self._entries.items()
            }
            self._norm_cache = (avgdl, norms)
        return self._norm_cache[1]

    def _hit(self, record_id: str, score: float, counted: Counted) -> TextHit:
        document = self._documents[record_id]
        texts = {name: getattr(document, name) for name in FIELDS}
        snippets, chosen = cut_snippets(self._entries[record_id], texts, counted, self._tokenizer)
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
        return frozenset(self._ids(node, filters))

    async def get_documents(self, record_ids: Collection[str]) -> dict[str, SearchDocument]:
        """Return the stored documents for ``record_ids``; unknown ids are omitted."""
        check_record_ids(record_ids)
        return {
            rid: _copy(self._documents[rid]) for rid in set(record_ids) if rid in self._documents
        }

    async def facet_counts(
        self,
        keys: Sequence[str],
        *,
        query: Node | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> dict[str, tuple[tuple[str, int], ...]]:
        """Count matching documents per value of each facet key."""
        node, filters = check_facet_request(keys, query, filters, self._facet_keys)
        matched = self._ids(node, ())
        result: dict[str, tuple[tuple[str, int], ...]] = {}
        for key in dict.fromkeys(keys):
            others = [item for item in filters if item.key != key]
            counts: Counter[str] = Counter()
            for record_id in matched:
                tags = self._entries[record_id].tags
                if _passes(tags, others):
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
        matched = self._ids(node, ())
        counts: list[int] = []
        for item in ranges:
            wanted = [*(f for f in filters if f.key != item.key), item]
            counts.append(sum(1 for rid in matched if _passes(self._entries[rid].tags, wanted)))
        return tuple(counts)

    async def count(self) -> int:
        """Return how many documents the store holds."""
        return len(self._entries)

    async def aclose(self) -> None:
        """Do nothing: the store holds nothing open, and stays usable."""


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


def _discard(index: dict[Any, set[str]], key: Any, record_id: str) -> None:
    holders = index.get(key)
    if holders is not None:
        holders.discard(record_id)
        if not holders:
            del index[key]


def _copy(document: SearchDocument) -> SearchDocument:
    metadata = json.loads(json.dumps(document.metadata))
    return SearchDocument(
        document.record_id, document.title, document.abstract, document.body, metadata
    )


def _passes(tags: dict[str, frozenset[str]], filters: Iterable[SearchFilter]) -> bool:
    for item in filters:
        values = tags.get(item.key, frozenset())
        if isinstance(item, MetadataFilter):
            hit = not values.isdisjoint(item.values)
        else:
            hit = any(tag_in_range(value, item.low, item.high) for value in values)
        if hit == item.negated:
            return False
    return True
