"""Metadata filters and tags every text search store shares.

A store tags each document by the metadata keys it was built for (:func:`tag_rows`),
and a :class:`MetadataFilter` or :class:`RangeFilter` selects records by those tags.
Both stores run the same functions here, so they filter and count alike. The text
hygiene the stores share (:func:`sanitize_text`, :func:`split_markers`,
:func:`encode_metadata` and the snippet markers) lives in ``_text_hygiene`` and is
exported from here, its documented home.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sci_etl_core.search._text_hygiene import (
    SNIPPET_CLOSE,
    SNIPPET_ELLIPSIS,
    SNIPPET_OPEN,
    SNIPPET_TOKENS,
    encode_metadata,
    sanitize_text,
    split_markers,
)

__all__ = [
    "SNIPPET_CLOSE",
    "SNIPPET_ELLIPSIS",
    "SNIPPET_OPEN",
    "SNIPPET_TOKENS",
    "MetadataFilter",
    "RangeFilter",
    "SearchFilter",
    "encode_metadata",
    "matches_filters",
    "sanitize_text",
    "split_markers",
    "tag_in_range",
    "tag_rows",
    "validate_facet_keys",
    "validate_filters",
]

_INTEGER_TAG = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_key(key: object, owner: str) -> None:
    if not isinstance(key, str):
        raise TypeError(f"{owner}.key must be a string, not {type(key).__name__}")
    if not key:
        raise ValueError(f"{owner}.key must not be empty")


@dataclass(frozen=True)
class MetadataFilter:
    """Keep the records tagged with any of ``values`` under ``key``, or with ``negated``, drop them.

    A record's tags under ``key`` are the values :func:`tag_rows` derives from
    its metadata, so ``2024`` stored as an integer matches the value ``"2024"``.
    ``values`` may be any collection of strings; it is stored as a
    :class:`frozenset`.

    Raises:
        TypeError: ``key`` or a value is not a string, or ``values`` is a single string.
        ValueError: ``key`` is empty, ``values`` is empty, or a value holds a lone surrogate.
    """

    key: str
    values: frozenset[str]
    negated: bool = False

    def __post_init__(self) -> None:
        _check_key(self.key, "MetadataFilter")
        raw: Any = self.values
        if isinstance(raw, str | bytes):
            raise TypeError(
                f"MetadataFilter.values for key {self.key!r} must be a collection of strings, "
                f"not a single {type(raw).__name__}; wrap it as ({raw!r},)"
            )
        if not isinstance(raw, Iterable):
            raise TypeError(
                f"MetadataFilter.values for key {self.key!r} must be a collection of strings"
            )
        values = frozenset(raw)
        for value in values:
            if not isinstance(value, str):
                raise TypeError(
                    f"MetadataFilter.values for key {self.key!r} holds {value!r}, "
                    f"a {type(value).__name__}; every value must be a string"
                )
            if _SURROGATE.search(value):
                raise ValueError(
                    f"MetadataFilter.values for key {self.key!r} holds {value!r}, "
                    "with a lone surrogate no tag can hold"
                )
        if not values:
            raise ValueError(f"MetadataFilter.values for key {self.key!r} must not be empty")
        object.__setattr__(self, "values", values)
        if not isinstance(self.negated, bool):
            raise TypeError("MetadataFilter.negated must be a bool")


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class RangeFilter:
    """Keep the records with a tag under ``key`` between ``low`` and ``high``, or drop them.

    With ``negated``, the records in range are dropped instead.

    Both bounds are inclusive, and a bound left as ``None`` is open, so
    ``RangeFilter("year", low="2020")`` keeps 2020 and later. A record passes
    when any of its tags under ``key`` is in range, as a record passes a
    :class:`MetadataFilter` when any of its tags is among the values.

    The type of the bounds decides how tags compare:

    - Integer bounds compare tags numerically. Only a tag written as Python
      writes an integer, such as ``2024``, ``0``, or ``-3``, can be in range; a
      tag such as ``"2024-05-01"``, ``"07"``, or ``"+3"`` never is.
    - Text bounds compare tags as text, character by character. ``high`` is
      compared with as many leading characters of the tag as it has, so
      ``high="2024-06"`` keeps ``"2024-06-30T23:59:59Z"``. ISO 8601 dates and
      years of four digits order correctly this way.

    Raises:
        TypeError: A bound is neither an integer nor text, such as a ``bool`` or a
            ``float``, or the two bounds differ in type.
        ValueError: Both bounds are ``None``, ``low`` is above ``high``, a text
            bound is empty, an integer bound is outside the 64-bit integers (SQLite's),
            or ``key`` is empty.
    """

    key: str
    low: int | str | None = None
    high: int | str | None = None
    negated: bool = False

    def __post_init__(self) -> None:
        _check_key(self.key, "RangeFilter")
        for name in ("low", "high"):
            bound = getattr(self, name)
            if bound is None:
                continue
            if isinstance(bound, bool) or not isinstance(bound, int | str):
                raise TypeError(
                    f"RangeFilter.{name} for key {self.key!r} must be an int, a str or None, "
                    f"not {type(bound).__name__}"
                )
            if isinstance(bound, str) and not bound:
                raise ValueError(f"RangeFilter.{name} for key {self.key!r} must not be empty text")
            if isinstance(bound, str) and _SURROGATE.search(bound):
                raise ValueError(f"RangeFilter.{name} for key {self.key!r} holds a lone surrogate")
            if isinstance(bound, int) and not _INT64_MIN <= bound <= _INT64_MAX:
                raise ValueError(
                    f"RangeFilter.{name} for key {self.key!r} is {bound}, outside the "
                    "64-bit integers a tag can hold"
                )
        if self.low is None and self.high is None:
            raise ValueError(f"RangeFilter for key {self.key!r} needs a low or a high bound")
        if self.low is not None and self.high is not None:
            if type(self.low) is not type(self.high):
                raise TypeError(
                    f"RangeFilter bounds for key {self.key!r} must both be int or both be str, "
                    f"got {type(self.low).__name__} and {type(self.high).__name__}"
                )
            if not tag_in_range(_as_tag(self.low), self.low, self.high):
                raise ValueError(
                    f"RangeFilter for key {self.key!r}: "
                    f"low {self.low!r} is above high {self.high!r}"
                )
        if not isinstance(self.negated, bool):
            raise TypeError("RangeFilter.negated must be a bool")


def _as_tag(bound: int | str) -> str:
    return str(bound)


SearchFilter = MetadataFilter | RangeFilter
"""A filter a text search store accepts beside a query."""


def tag_in_range(value: str, low: int | str | None, high: int | str | None) -> bool:
    """Report whether the tag ``value`` lies between ``low`` and ``high``.

    In range means as :class:`RangeFilter` defines it.

    The bounds are those of a valid :class:`RangeFilter`. The SQLite store
    registers this function with its connection, so both stores compare tags
    with the same code.
    """
    if isinstance(low, int) or isinstance(high, int):
        if not isinstance(value, str) or _INTEGER_TAG.match(value) is None:
            return False
        number = int(value)
        if low is not None and number < int(low):
            return False
        return not (high is not None and number > int(high))
    if low is not None and value < low:
        return False
    return not (high is not None and value[: len(high)] > high)


def validate_filters(
    filters: Iterable[SearchFilter], allowed_keys: Collection[str] | None = None
) -> None:
    """Raise unless ``filters`` holds at most one filter per key, each on an allowed key.

    Several values of one key belong in a single filter's ``values``, whatever
    the filters' ``negated`` flags, and a :class:`MetadataFilter` and a
    :class:`RangeFilter` on one key are two filters too. ``allowed_keys`` is
    ``None`` when any key is allowed.

    Raises:
        ValueError: Two filters share a key, or a key is not in ``allowed_keys``.
        TypeError: An item is not a :class:`MetadataFilter` or :class:`RangeFilter`.
    """
    seen: set[str] = set()
    for position, item in enumerate(filters):
        if not isinstance(item, MetadataFilter | RangeFilter):
            raise TypeError(
                f"filter #{position} is a {type(item).__name__}, "
                "not a MetadataFilter or RangeFilter"
            )
        if item.key in seen:
            raise ValueError(
                f"filter #{position}: a second filter on key {item.key!r}; "
                "put every value of one key in a single filter"
            )
        seen.add(item.key)
        if allowed_keys is not None and item.key not in allowed_keys:
            raise ValueError(
                f"filter #{position}: key {item.key!r} is not a facet key of this store "
                f"(facet keys: {sorted(allowed_keys)})"
            )


def validate_facet_keys(keys: Iterable[str], allowed_keys: Collection[str]) -> None:
    """Raise unless every key in ``keys`` is one of ``allowed_keys``.

    Raises:
        ValueError: A key is not in ``allowed_keys``.
    """
    for key in keys:
        if key not in allowed_keys:
            raise ValueError(
                f"facet key {key!r} is not a facet key of this store "
                f"(facet keys: {sorted(allowed_keys)})"
            )


def _tag_values(raw: object) -> list[str]:
    items: Iterable[object] = raw if isinstance(raw, list | tuple) else (raw,)
    values: list[str] = []
    for item in items:
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            values.append(str(item))
        elif isinstance(item, str) and item and _SURROGATE.search(item) is None:
            values.append(item)
    return values


def tag_rows(metadata: Mapping[str, Any], facet_keys: Iterable[str]) -> list[tuple[str, str]]:
    """Return the distinct ``(key, value)`` tags of ``metadata`` under ``facet_keys``.

    A string, or an integer that is not a bool, gives one tag, and a list or
    tuple of them gives one tag per element. Empty strings and every other type
    are skipped, and so is a string holding a lone surrogate, which SQLite cannot
    store. Keys are in sorted order, and the values of each key are sorted and
    never repeat, so the rows can never collide with each other.
    """
    rows: list[tuple[str, str]] = []
    for key in sorted(set(facet_keys)):
        if key in metadata:
            rows.extend((key, value) for value in sorted(set(_tag_values(metadata[key]))))
    return rows


def matches_filters(metadata: Mapping[str, Any], filters: Iterable[SearchFilter]) -> bool:
    """Report whether a record with ``metadata`` passes every filter in ``filters``."""
    for item in filters:
        tags = _tag_values(metadata.get(item.key))
        if isinstance(item, MetadataFilter):
            hit = any(tag in item.values for tag in tags)
        else:
            hit = any(tag_in_range(tag, item.low, item.high) for tag in tags)
        if hit == item.negated:
            return False
    return True
