"""The in-memory text store's inverted index: postings, candidates and counts (internal).

:class:`InvertedIndex` keeps every stored document tokenized, with postings per word
and per field and word, so a query reads only the postings of its words. It answers
which records can match a plan, which do, and the counts BM25 needs; the scoring
itself is :mod:`~sci_etl_core.search._memory_scoring`'s.
"""

from __future__ import annotations

import bisect
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from sci_etl_core.search._bm25 import K1, B
from sci_etl_core.search._store_plan import (
    Counted,
    Entry,
    LeafPlan,
    NearPlan,
    Plan,
    collect,
    compile_plan,
)
from sci_etl_core.search.evaluate import TokenizedDocument
from sci_etl_core.search.filters import (
    MetadataFilter,
    SearchFilter,
    encode_metadata,
    sanitize_text,
    tag_in_range,
    tag_rows,
)
from sci_etl_core.search.query import FIELDS, Node
from sci_etl_core.search.store_base import SearchDocument
from sci_etl_core.search.tokenize import Tokenizer

__all__ = ["InvertedIndex", "passes"]


class InvertedIndex:
    """Stored documents, tokenized once, with the postings and caches that serve queries."""

    def __init__(
        self, facet_keys: frozenset[str], weights: dict[str, float], tokenizer: Tokenizer
    ) -> None:
        self.facet_keys = facet_keys
        self.weights = weights
        self.tokenizer = tokenizer
        self.documents: dict[str, SearchDocument] = {}
        self.entries: dict[str, Entry] = {}
        self.total_tokens = 0
        self._postings: dict[str, set[str]] = {}
        self._field_postings: dict[tuple[str, str], dict[str, int]] = {}
        self._vocabulary: list[str] = []
        self._vocabulary_stale = False
        self._norm_cache: tuple[float, dict[str, float]] | None = None
        self._frequencies: dict[str, dict[str, float]] = {}

    # -- writing -----------------------------------------------------------------------

    def _words(self, text: str) -> tuple[str, ...]:
        return tuple(token.text for token in self.tokenizer.tokens(text))

    def add(self, document: SearchDocument) -> None:
        """Store ``document``, which no stored document shares a ``record_id`` with."""
        stored = SearchDocument(
            record_id=document.record_id,
            title=sanitize_text(document.title),
            abstract=sanitize_text(document.abstract),
            body=sanitize_text(document.body),
            metadata=json.loads(encode_metadata(document.metadata)),
        )
        fields = {name: self._words(getattr(stored, name)) for name in FIELDS}
        tags: dict[str, set[str]] = {}
        for key, value in tag_rows(document.metadata, self.facet_keys):
            tags.setdefault(key, set()).add(value)
        entry = Entry(
            tokens=TokenizedDocument._trusted(**fields),
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
        self.total_tokens += entry.length
        self.documents[record_id] = stored
        self.entries[record_id] = entry

    def remove(self, record_id: str) -> None:
        """Remove the document of ``record_id``, if one is stored."""
        entry = self.entries.pop(record_id, None)
        if entry is None:
            return
        del self.documents[record_id]
        self._norm_cache = None
        self.total_tokens -= entry.length
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

    def candidates(self, plan: Plan) -> set[str] | None:
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
        children = [self.candidates(child) for child in plan.children]
        if plan.kind == "or":
            if any(child is None for child in children):
                return None
            return set().union(*(child for child in children if child is not None))
        narrowing = [child for child in children if child is not None]
        if not narrowing:
            return None
        narrowing.sort(key=len)
        return set.intersection(*narrowing)

    def matching(self, plan: Plan, filters: Sequence[SearchFilter]) -> dict[str, Counted]:
        """Return each record matching ``plan`` and ``filters``, with its counted phrases."""
        candidates = self.candidates(plan)
        pool: Iterable[str] = self.entries if candidates is None else candidates
        found: dict[str, Counted] = {}
        for record_id in pool:
            entry = self.entries[record_id]
            if not passes(entry.tags, filters):
                continue
            counted: Counted = []
            if collect(plan, entry, self.tokenizer, counted):
                found[record_id] = counted
        return found

    def ids(self, node: Node | None, filters: Sequence[SearchFilter]) -> set[str]:
        """Return the records matching the normalized ``node`` and ``filters``."""
        if node is None:
            return {rid for rid, entry in self.entries.items() if passes(entry.tags, filters)}
        plan, _ = compile_plan(node, self.tokenizer)
        return set(self.matching(plan, filters))

    # -- counts ------------------------------------------------------------------------

    def hits_of(self, leaf: LeafPlan) -> int:
        """Return how many records ``leaf`` occurs in, FTS5's ``n_i``."""
        if leaf.simple and len(leaf.fields) == len(FIELDS):
            return len(self._postings.get(leaf.words[0], ()))
        candidates = self._leaf_candidates(leaf)
        if leaf.simple:
            return len(candidates)
        return sum(1 for rid in candidates if leaf.occurs(self.entries[rid], self.tokenizer))

    def leaf_frequencies(self, leaf: LeafPlan) -> dict[str, float]:
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
            weight = self.weights[name]
            for record_id, times in self._field_postings.get((name, word), {}).items():
                freq = freqs.get(record_id, 0.0)
                for _ in range(times):
                    freq += weight
                freqs[record_id] = freq
        return freqs

    def norms(self, avgdl: float) -> dict[str, float]:
        """Return each document's ``k1 * (1 - b + b * D / avgdl)``, cached per corpus state."""
        if self._norm_cache is None or self._norm_cache[0] != avgdl:
            norms = {
                rid: K1 * (1 - B + B * float(entry.length) / avgdl)
                for rid, entry in self.entries.items()
            }
            self._norm_cache = (avgdl, norms)
        return self._norm_cache[1]


def passes(tags: dict[str, frozenset[str]], filters: Iterable[SearchFilter]) -> bool:
    """Whether a document with ``tags`` satisfies every one of ``filters``."""
    for item in filters:
        values = tags.get(item.key, frozenset())
        if isinstance(item, MetadataFilter):
            hit = not values.isdisjoint(item.values)
        else:
            hit = any(tag_in_range(value, item.low, item.high) for value in values)
        if hit == item.negated:
            return False
    return True


def _discard(index: dict[Any, set[str]], key: Any, record_id: str) -> None:
    holders = index.get(key)
    if holders is not None:
        holders.discard(record_id)
        if not holders:
            del index[key]
