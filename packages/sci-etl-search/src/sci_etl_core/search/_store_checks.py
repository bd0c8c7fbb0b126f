"""Request checks and result shaping shared by every text search store (internal)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sci_etl_core.search.filters import (
    RangeFilter,
    SearchFilter,
    validate_facet_keys,
    validate_filters,
)


def check_range_request(
    ranges: Sequence[RangeFilter], filters: Sequence[SearchFilter], facet_keys: Collection[str]
) -> None:
    """Validate a :meth:`AsyncTextSearchStore.range_counts` request before any I/O."""
    validate_filters(filters, facet_keys)
    for position, item in enumerate(ranges):
        if not isinstance(item, RangeFilter):
            raise TypeError(f"range #{position} is a {type(item).__name__}, not a RangeFilter")
    validate_facet_keys((item.key for item in ranges), facet_keys)


def check_facet_request(
    keys: Sequence[str], filters: Sequence[SearchFilter], facet_keys: Collection[str]
) -> None:
    """Validate a :meth:`AsyncTextSearchStore.facet_counts` request before any I/O."""
    if isinstance(keys, str):
        raise TypeError(f"facet keys must be a sequence of strings, not the single string {keys!r}")
    validate_filters(filters, facet_keys)
    validate_facet_keys(keys, facet_keys)


def sort_facet_counts(counts: dict[str, int]) -> tuple[tuple[str, int], ...]:
    """Order facet counts by count descending, then value ascending, dropping zeros."""
    return tuple(
        sorted(((v, c) for v, c in counts.items() if c > 0), key=lambda item: (-item[1], item[0]))
    )
