"""Metadata filters, tags, and the text hygiene every text search store shares.

A store tags each document by the metadata keys it was built for (:func:`tag_rows`),
and a :class:`MetadataFilter` or :class:`RangeFilter` selects records by those tags.
Both stores run the same functions here, so they filter and count alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any

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

SNIPPET_OPEN = "\x02"
"""Marks where a highlighted span starts in a raw snippet; :func:`sanitize_text` keeps it out of stored text."""  # noqa: E501

SNIPPET_CLOSE = "\x03"
"""Marks where a highlighted span ends in a raw snippet; :func:`sanitize_text` keeps it out of stored text."""  # noqa: E501

SNIPPET_ELLIPSIS = "…"
"""Stands for the text a snippet leaves out before or after it."""

SNIPPET_TOKENS = 32
"""The most tokens a snippet holds (FTS5's ``snippet()`` accepts at most 64)."""

_INTEGER_TAG = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_MARKERS = re.compile(f"([{SNIPPET_OPEN}{SNIPPET_CLOSE}])")


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
            bound is empty, or ``key`` is empty.
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


def _json_default(value: object) -> object:
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray):
        return repr(value)
    if isinstance(value, set | frozenset):
        try:
            return sorted(value)
        except TypeError:
            return [str(item) for item in value]
    return str(value)


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def encode_metadata(metadata: Mapping[str, Any]) -> str:
    """Encode ``metadata`` as the JSON text a text search store keeps.

    Non-ASCII text stays readable UTF-8. A value JSON cannot hold never fails the
    encoding: a ``date``, ``datetime``, or ``time`` becomes its ISO 8601 text, a
    ``bytes`` or ``bytearray`` its ``repr``, and anything else its ``str``. The
    encoding is one-way, so a ``datetime`` reads back as a string. A lone
    surrogate is written as a JSON escape, so the text can always be stored.
    """
    if not metadata:
        return "{}"
    try:
        text = json.dumps(dict(metadata), ensure_ascii=False, default=_json_default, allow_nan=True)
    except (TypeError, ValueError):
        # Non-string keys that JSON refuses, or a circular structure.
        text = json.dumps(
            {
                str(key): _json_default(value) if not _plain(value) else value
                for key, value in metadata.items()
            },
            ensure_ascii=False,
            default=str,
        )
    return _SURROGATE.sub(_escape_surrogate, text)


def _plain(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def sanitize_text(text: str) -> str:
    """Replace control characters other than tab and line breaks, and lone surrogates, with spaces.

    The FTS5 tokenizer already treats every replaced character as a separator,
    so what matches is unchanged. The replacement guarantees that the snippet
    markers :data:`SNIPPET_OPEN` and :data:`SNIPPET_CLOSE` never occur in stored
    text, and that SQLite can always receive it.
    """
    if text.isprintable():  # no control character and no surrogate: the common case
        return text
    return _CONTROL.sub(" ", text)


def split_markers(raw: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Strip snippet markers from ``raw``, returning the plain text and the highlighted spans.

    Each span is a half-open ``[start, end)`` character range of the plain text.
    :data:`SNIPPET_OPEN` opens a span and :data:`SNIPPET_CLOSE` closes it. The
    function never raises: a second opening marker inside a span and a closing
    marker outside one are ignored, a span still open at the end closes there,
    and an empty span is dropped.
    """
    if SNIPPET_OPEN not in raw and SNIPPET_CLOSE not in raw:
        return raw, ()
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    length = 0
    start: int | None = None
    for part in _MARKERS.split(raw):
        if part == SNIPPET_OPEN:
            if start is None:
                start = length
        elif part == SNIPPET_CLOSE:
            if start is not None:
                if length > start:
                    spans.append((start, length))
                start = None
        elif part:
            out.append(part)
            length += len(part)
    if start is not None and length > start:
        spans.append((start, length))
    return "".join(out), tuple(spans)
