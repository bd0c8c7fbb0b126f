"""Parse the filter, range and facet options of the command line into search values.

Pure functions: they read strings and return
:class:`~sci_etl_core.search.filters.MetadataFilter` and
:class:`~sci_etl_core.search.filters.RangeFilter` values, and raise :class:`ValueError`
with a message naming the option and the text at fault.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sci_etl_core.search.filters import MetadataFilter, RangeFilter, SearchFilter

__all__ = ["parse_facet_keys", "parse_filters", "parse_range", "parse_search_filters"]

_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_RANGE_SEPARATOR = ".."


def _split_assignment(option: str, text: str, shape: str) -> tuple[str, str, bool]:
    """Split ``KEY=VALUE`` or ``KEY!=VALUE`` into key, value and negation."""
    if "=" not in text:
        raise ValueError(f"{option} {text!r}: expected {shape}")
    key, _, value = text.partition("=")
    negated = key.endswith("!")
    if negated:
        key = key[:-1]
    key = key.strip()
    if not key:
        raise ValueError(f"{option} {text!r}: the key before '=' is empty")
    return key, value, negated


def parse_filters(texts: Sequence[str]) -> list[MetadataFilter]:
    """Turn ``--filter`` values into one :class:`MetadataFilter` per key.

    Each text is ``KEY=VALUE`` (keep records tagged ``VALUE``) or ``KEY!=VALUE`` (drop
    them). Several values of one key merge into one filter, kept in the order the keys
    first appear, so ``year=2023 year=2024`` keeps either year. One key cannot be both
    kept and dropped.

    Raises:
        ValueError: A text has no ``=``, an empty key or an empty value, or a key is
            given with both ``=`` and ``!=``.
    """
    values: dict[str, list[str]] = {}
    negation: dict[str, bool] = {}
    for text in texts:
        key, value, negated = _split_assignment("--filter", text, "KEY=VALUE or KEY!=VALUE")
        if not value:
            raise ValueError(f"--filter {text!r}: the value after '=' is empty")
        if key in negation and negation[key] != negated:
            raise ValueError(
                f"--filter {text!r}: key {key!r} is both kept (=) and dropped (!=); "
                "use one form per key"
            )
        negation[key] = negated
        values.setdefault(key, [])
        if value not in values[key]:
            values[key].append(value)
    return [
        MetadataFilter(key, frozenset(kept), negated=negation[key]) for key, kept in values.items()
    ]


def _bound(text: str) -> int | str | None:
    return None if text == "" else text


def parse_range(text: str) -> RangeFilter:
    """Turn one ``--range`` value, ``KEY=LOW..HIGH`` or ``KEY!=LOW..HIGH``, into a filter.

    Either bound may be left out for an open end (``year=2020..``, ``year=..2019``) but
    not both. When every bound given is written as an integer (``2020``, ``-3``, not
    ``07`` or ``+3``) the range compares tags as integers; otherwise both bounds are
    text, which orders ISO 8601 dates correctly. ``!=`` keeps the records outside the
    range.

    Raises:
        ValueError: The text is not of that form, both bounds are empty, the value holds
            ``..`` more than once, or the low bound is above the high bound.
    """
    shape = "KEY=LOW..HIGH (either bound may be empty)"
    key, value, negated = _split_assignment("--range", text, shape)
    if value.count(_RANGE_SEPARATOR) != 1:
        raise ValueError(f"--range {text!r}: expected {shape}, with '..' exactly once")
    low_text, _, high_text = value.partition(_RANGE_SEPARATOR)
    low: int | str | None = _bound(low_text)
    high: int | str | None = _bound(high_text)
    if low is None and high is None:
        raise ValueError(f"--range {text!r}: give a low bound, a high bound, or both")
    given = [bound for bound in (low, high) if bound is not None]
    if all(isinstance(bound, str) and _INTEGER.match(bound) for bound in given):
        low = None if low is None else int(low)
        high = None if high is None else int(high)
    try:
        return RangeFilter(key, low=low, high=high, negated=negated)
    except (TypeError, ValueError) as error:
        raise ValueError(f"--range {text!r}: {error}") from None


def parse_search_filters(filters: Sequence[str], ranges: Sequence[str]) -> list[SearchFilter]:
    """Parse ``--filter`` and ``--range`` values together, at most one filter per key.

    Raises:
        ValueError: A value is malformed, or one key has both a ``--filter`` and a
            ``--range``, or two ``--range`` values.
    """
    result: list[SearchFilter] = list(parse_filters(filters))
    seen = {item.key: "--filter" for item in result}
    for text in ranges:
        item = parse_range(text)
        if item.key in seen:
            raise ValueError(
                f"--range {text!r}: key {item.key!r} already has a {seen[item.key]}; "
                "give each key one filter or one range"
            )
        seen[item.key] = "--range"
        result.append(item)
    return result


def parse_facet_keys(text: str | None, option: str = "--facets") -> list[str]:
    """Split a comma-separated list of metadata keys, dropping repeats, keeping order.

    ``None`` gives no keys. Spaces around each key are ignored.

    Raises:
        ValueError: The list holds an empty key, as in ``year,,authors``.
    """
    if text is None:
        return []
    keys: list[str] = []
    for position, raw in enumerate(text.split(","), start=1):
        key = raw.strip()
        if not key:
            raise ValueError(f"{option} {text!r}: key #{position} is empty")
        if key not in keys:
            keys.append(key)
    return keys
