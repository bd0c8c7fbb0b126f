"""The CLI's option parsers and highlight rendering, without a subprocess."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.text import Text
from sci_etl_core.cli._options import (
    parse_facet_keys,
    parse_filters,
    parse_range,
    parse_search_filters,
)
from sci_etl_core.cli._render import HIGHLIGHT_STYLE, highlight_markup
from sci_etl_core.search.filters import MetadataFilter, RangeFilter

KEYS = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True)
VALUES = st.text(min_size=1, max_size=12).filter(lambda v: "\x00" not in v)
INTS = st.integers(min_value=-10_000, max_value=10_000)


# -- --filter ---------------------------------------------------------------------------


def test_filter_values_of_one_key_merge_into_one_filter() -> None:
    assert parse_filters(["year=2023", "category=astro", "year=2024"]) == [
        MetadataFilter("year", frozenset({"2023", "2024"})),
        MetadataFilter("category", frozenset({"astro"})),
    ]


def test_filter_with_bang_equals_drops_the_value() -> None:
    assert parse_filters(["category!=astro"]) == [
        MetadataFilter("category", frozenset({"astro"}), negated=True)
    ]


def test_filter_value_may_hold_equals_signs() -> None:
    assert parse_filters(["doi=a=b"]) == [MetadataFilter("doi", frozenset({"a=b"}))]


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        (["year"], "--filter 'year': expected KEY=VALUE"),
        (["=2024"], "--filter '=2024': the key before '=' is empty"),
        (["year="], "--filter 'year=': the value after '=' is empty"),
        (["year=1", "year!=2"], "key 'year' is both kept (=) and dropped (!=)"),
    ],
)
def test_malformed_filter_names_the_option_and_the_text(texts: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_filters(texts)


@given(st.lists(st.tuples(KEYS, VALUES, st.booleans()), max_size=8))
def test_filters_keep_every_value_once_per_key(items: list[tuple[str, str, bool]]) -> None:
    negation: dict[str, bool] = {}
    for key, _, negated in items:
        negation.setdefault(key, negated)
    consistent = [(k, v, n) for k, v, n in items if negation[k] == n]
    texts = [f"{key}{'!' if negated else ''}={value}" for key, value, negated in consistent]
    parsed = parse_filters(texts)
    assert [f.key for f in parsed] == list(dict.fromkeys(k for k, _, _ in consistent))
    for item in parsed:
        assert item.values == {v for k, v, _ in consistent if k == item.key}
        assert item.negated == negation[item.key]


# -- --range ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("year=2020..2024", RangeFilter("year", 2020, 2024)),
        ("year=2020..", RangeFilter("year", low=2020)),
        ("year=..2019", RangeFilter("year", high=2019)),
        ("year!=2000..2009", RangeFilter("year", 2000, 2009, negated=True)),
        ("t=-5..5", RangeFilter("t", -5, 5)),
        ("date=2024-01-01..2024-06", RangeFilter("date", "2024-01-01", "2024-06")),
        ("date=2024-01-01..", RangeFilter("date", low="2024-01-01")),
        ("code=07..10", RangeFilter("code", "07", "10")),
        ("code=+3..9", RangeFilter("code", "+3", "9")),
    ],
)
def test_range_bounds_are_integers_only_when_every_bound_is_one(
    text: str, expected: RangeFilter
) -> None:
    assert parse_range(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("year", "expected KEY=LOW..HIGH"),
        ("year=2020", "with '..' exactly once"),
        ("year=1..2..3", "with '..' exactly once"),
        ("year=..", "give a low bound, a high bound, or both"),
        ("=1..2", "the key before '=' is empty"),
        ("year=2024..2020", "low 2024 is above high 2020"),
    ],
)
def test_malformed_range_names_the_option_and_the_text(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"--range {text!r}")) as caught:
        parse_range(text)
    assert message in str(caught.value)


@given(KEYS, st.one_of(st.none(), INTS), st.one_of(st.none(), INTS))
def test_integer_ranges_round_trip(key: str, low: int | None, high: int | None) -> None:
    if low is None and high is None:
        return
    if low is not None and high is not None and low > high:
        low, high = high, low
    text = f"{key}={'' if low is None else low}..{'' if high is None else high}"
    assert parse_range(text) == RangeFilter(key, low=low, high=high)


def test_one_key_cannot_have_a_filter_and_a_range() -> None:
    with pytest.raises(ValueError, match="key 'year' already has a --filter"):
        parse_search_filters(["year=2020"], ["year=2020..2024"])
    with pytest.raises(ValueError, match="key 'year' already has a --range"):
        parse_search_filters([], ["year=2020..", "year=..2024"])


def test_filters_and_ranges_combine_in_order() -> None:
    assert parse_search_filters(["c=x"], ["year=..2020"]) == [
        MetadataFilter("c", frozenset({"x"})),
        RangeFilter("year", high=2020),
    ]


# -- --facets ---------------------------------------------------------------------------


def test_facet_keys_split_on_commas_dropping_repeats_and_spaces() -> None:
    assert parse_facet_keys(" year, categories ,year") == ["year", "categories"]
    assert parse_facet_keys(None) == []


@pytest.mark.parametrize("text", ["", "year,,authors", "year,"])
def test_empty_facet_key_is_an_error_naming_its_position(text: str) -> None:
    with pytest.raises(ValueError, match=r"--facets .*: key #\d+ is empty"):
        parse_facet_keys(text)


# -- highlight markup -------------------------------------------------------------------


def _styled(text: Text) -> set[int]:
    return {i for span in text.spans for i in range(span.start, span.end)}


SPANS = st.lists(st.tuples(st.integers(-3, 40), st.integers(-3, 40)), max_size=6)


@given(st.text(max_size=40), SPANS)
def test_markup_renders_the_text_exactly_with_the_highlights_styled(
    text: str, spans: list[tuple[int, int]]
) -> None:
    rendered = Text.from_markup(highlight_markup(text, spans))
    assert rendered.plain == re.sub("[\x00-\x1f\x7f-\x9f]", " ", text)
    expected = {i for start, end in spans for i in range(max(0, start), min(len(text), end))}
    assert _styled(rendered) == expected
    assert all(span.style == HIGHLIGHT_STYLE for span in rendered.spans)


def test_markup_puts_line_breaks_and_controls_on_one_line() -> None:
    assert (
        highlight_markup("a\nb\r\x07c", [(2, 3)])
        == f"a [{HIGHLIGHT_STYLE}]b[/{HIGHLIGHT_STYLE}]  c"
    )


def test_markup_escapes_brackets_in_the_text() -> None:
    rendered = Text.from_markup(highlight_markup("[bold]x[/bold] y", [(15, 16)]))
    assert rendered.plain == "[bold]x[/bold] y"
    assert [(s.start, s.end) for s in rendered.spans] == [(15, 16)]
