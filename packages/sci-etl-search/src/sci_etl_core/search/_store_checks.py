"""Request checks and result shaping shared by every text search store (internal).

Each ``check_*`` function validates one kind of request before any I/O, and returns
what the store works with: the normalized query and the filters as a tuple.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from sci_etl_core.search.compile_fts5 import require_rankable
from sci_etl_core.search.filters import (
    RangeFilter,
    SearchFilter,
    validate_facet_keys,
    validate_filters,
)
from sci_etl_core.search.query import Node, normalize

Request = tuple[Node | None, tuple[SearchFilter, ...]]
"""A checked request: the normalized query, or ``None`` for every document, and the filters."""


def facet_key_set(facet_keys: Iterable[str]) -> frozenset[str]:
    """Return a store's ``facet_keys`` argument as a set of non-empty strings.

    Raises:
        TypeError: ``facet_keys`` is a lone string.
        ValueError: A key is not a string, or is empty.
    """
    if isinstance(facet_keys, str):
        raise TypeError(f"facet_keys must be a collection of strings, not {facet_keys!r}")
    keys = frozenset(facet_keys)
    for key in keys:
        if not isinstance(key, str) or not key:
            raise ValueError(f"facet key {key!r} must be a non-empty string")
    return keys


def check_record_ids(record_ids: Collection[str]) -> None:
    """Refuse a lone string where :meth:`AsyncTextSearchStore.get_documents` wants ids."""
    if isinstance(record_ids, str):
        raise TypeError(f"record_ids must be a collection of ids, not the string {record_ids!r}")


def check_search_request(
    query: Node, filters: Sequence[SearchFilter], facet_keys: Collection[str]
) -> tuple[Node, tuple[SearchFilter, ...]]:
    """Validate a :meth:`AsyncTextSearchStore.search` request before any I/O."""
    filters = tuple(filters)
    validate_filters(filters, facet_keys)
    node = normalize(query)
    require_rankable(node)
    return node, filters


def check_filter_request(
    query: Node | None, filters: Sequence[SearchFilter], facet_keys: Collection[str]
) -> Request:
    """Validate a :meth:`AsyncTextSearchStore.filter_ids` request before any I/O."""
    filters = tuple(filters)
    validate_filters(filters, facet_keys)
    return _normalized(query), filters


def check_range_request(
    ranges: Sequence[RangeFilter],
    query: Node | None,
    filters: Sequence[SearchFilter],
    facet_keys: Collection[str],
) -> Request:
    """Validate a :meth:`AsyncTextSearchStore.range_counts` request before any I/O."""
    filters = tuple(filters)
    validate_filters(filters, facet_keys)
    for position, item in enumerate(ranges):
        if not isinstance(item, RangeFilter):
            raise TypeError(f"range #{position} is a {type(item).__name__}, not a RangeFilter")
    validate_facet_keys((item.key for item in ranges), facet_keys)
    return _normalized(query), filters


def check_facet_request(
    keys: Sequence[str],
    query: Node | None,
    filters: Sequence[SearchFilter],
    facet_keys: Collection[str],
) -> Request:
    """Validate a :meth:`AsyncTextSearchStore.facet_counts` request before any I/O."""
    if isinstance(keys, str):
        raise TypeError(f"facet keys must be a sequence of strings, not the single string {keys!r}")
    filters = tuple(filters)
    validate_filters(filters, facet_keys)
    validate_facet_keys(keys, facet_keys)
    return _normalized(query), filters


def _normalized(query: Node | None) -> Node | None:
    return normalize(query) if query is not None else None


def sort_facet_counts(counts: dict[str, int]) -> tuple[tuple[str, int], ...]:
    """Order facet counts by count descending, then value ascending, dropping zeros."""
    return tuple(
        sorted(((v, c) for v, c in counts.items() if c > 0), key=lambda item: (-item[1], item[0]))
    )
