"""Filters, tags, metadata encoding and snippet markers."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sci_etl_core.search.filters import (
    SNIPPET_CLOSE,
    SNIPPET_OPEN,
    MetadataFilter,
    RangeFilter,
    encode_metadata,
    matches_filters,
    sanitize_text,
    split_markers,
    tag_in_range,
    tag_rows,
    validate_facet_keys,
    validate_filters,
)
from sci_etl_core.search.tokenize import Unicode61Tokenizer


def test_metadata_filter_stores_a_frozenset() -> None:
    item = MetadataFilter("year", ["2020", "2021", "2020"])
    assert item.values == frozenset({"2020", "2021"})
    assert not item.negated


@pytest.mark.parametrize(
    ("values", "error", "message"),
    [
        ("2020", TypeError, "single str"),
        ([], ValueError, "must not be empty"),
        ([2020], TypeError, "holds 2020"),
        (None, TypeError, "collection of strings"),
    ],
)
def test_metadata_filter_rejects_bad_values(
    values: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        MetadataFilter("year", values)  # type: ignore[arg-type]


def test_filters_reject_bad_keys() -> None:
    with pytest.raises(ValueError, match="key must not be empty"):
        MetadataFilter("", ["x"])
    with pytest.raises(TypeError, match="key must be a string"):
        RangeFilter(3, low=1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("low", "high", "error", "message"),
    [
        (None, None, ValueError, "needs a low or a high"),
        (True, None, TypeError, "not bool"),
        (1.5, None, TypeError, "not float"),
        (2020, "2021", TypeError, "both be int or both be str"),
        (2022, 2020, ValueError, "above high"),
        ("2022", "2021-12", ValueError, "above high"),
        ("", None, ValueError, "must not be empty"),
        (2**63, None, ValueError, "outside the 64-bit integers"),
        (None, -(2**63) - 1, ValueError, "outside the 64-bit integers"),
    ],
)
def test_range_filter_rejects_bad_bounds(
    low: object, high: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        RangeFilter("year", low=low, high=high)  # type: ignore[arg-type]


async def test_the_widest_integer_bounds_are_searched_in_both_stores(tmp_path) -> None:
    from sci_etl_core.search.query import Term
    from sci_etl_core.search.store_base import SearchDocument
    from sci_etl_core.search.store_memory import InMemoryTextSearchStore
    from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

    doc = SearchDocument("r1", "Heat shock", "", "chaperones", {"year": 2020})
    widest = RangeFilter("year", low=-(2**63), high=2**63 - 1)
    for store in (
        InMemoryTextSearchStore(facet_keys=("year",)),
        AsyncSqliteFts5Store(tmp_path / "s.sqlite", facet_keys=("year",)),
    ):
        await store.index([doc])
        hits = await store.search(Term("chaperones"), filters=[widest])
        assert [hit.record_id for hit in hits] == ["r1"]
        await store.aclose()


def test_range_filter_accepts_a_prefix_high_at_low() -> None:
    assert RangeFilter("date", low="2024-06-15", high="2024-06").high == "2024-06"


@pytest.mark.parametrize(
    ("value", "low", "high", "expected"),
    [
        ("2024", 2020, 2024, True),
        ("2025", 2020, 2024, False),
        ("-3", -5, 0, True),
        ("0", 0, None, True),
        ("07", 0, 10, False),
        ("+3", 0, 10, False),
        ("2024-05-01", 2000, 3000, False),
        ("2024-06-30T23:59:59Z", None, "2024-06", True),
        ("2024-07-01", None, "2024-06", False),
        ("2020", "2020", None, True),
        ("2019-12-31", "2020", None, False),
        ("abc", "2020", None, True),
    ],
)
def test_tag_in_range(
    value: str, low: int | str | None, high: int | str | None, expected: bool
) -> None:
    assert tag_in_range(value, low, high) is expected


@given(st.integers(-10_000, 10_000), st.integers(-10_000, 10_000), st.integers(0, 5_000))
def test_integer_ranges_compare_numerically(value: int, low: int, span: int) -> None:
    assert tag_in_range(str(value), low, low + span) == (low <= value <= low + span)


@given(st.dates(), st.dates(), st.dates())
def test_text_ranges_order_iso_dates(value: date, a: date, b: date) -> None:
    low, high = min(a, b), max(a, b)
    assert tag_in_range(value.isoformat(), low.isoformat(), high.isoformat()) == (
        low <= value <= high
    )
    # A month as high keeps every day of that month.
    assert tag_in_range(value.isoformat(), None, value.isoformat()[:7])


def test_validate_filters() -> None:
    validate_filters([MetadataFilter("a", ["x"]), RangeFilter("b", low=1)], {"a", "b"})
    validate_filters([MetadataFilter("zzz", ["x"])])
    with pytest.raises(ValueError, match="filter #1: a second filter on key 'a'"):
        validate_filters([MetadataFilter("a", ["x"]), MetadataFilter("a", ["y"], negated=True)])
    with pytest.raises(ValueError, match="filter #1: a second filter on key 'a'"):
        validate_filters([MetadataFilter("a", ["x"]), RangeFilter("a", low=1)])
    with pytest.raises(ValueError, match="filter #0: key 'c' is not a facet key"):
        validate_filters([MetadataFilter("c", ["x"])], {"a"})
    with pytest.raises(TypeError, match="filter #0 is a str"):
        validate_filters(["a"], None)  # type: ignore[list-item]


def test_validate_facet_keys() -> None:
    validate_facet_keys(["a"], {"a", "b"})
    with pytest.raises(ValueError, match="facet key 'c'"):
        validate_facet_keys(["a", "c"], {"a"})


def test_tag_rows() -> None:
    metadata = {
        "year": 2024,
        "flag": True,
        "authors": ["Lee", "Kim", "Lee", "", 3, None, 2.5],
        "score": 0.5,
        "empty": "",
        "nested": {"a": 1},
        "tuple": ("b", "a"),
    }
    rows = tag_rows(metadata, ["year", "flag", "authors", "score", "empty", "nested", "tuple", "x"])
    assert rows == [
        ("authors", "3"),
        ("authors", "Kim"),
        ("authors", "Lee"),
        ("tuple", "a"),
        ("tuple", "b"),
        ("year", "2024"),
    ]


@given(
    st.dictionaries(
        st.sampled_from("abc"),
        st.one_of(st.integers(), st.text(max_size=3), st.lists(st.text(max_size=2), max_size=3)),
    )
)
def test_tag_rows_never_collide(metadata: dict[str, object]) -> None:
    rows = tag_rows(metadata, "abc")
    assert len(rows) == len(set(rows))
    assert rows == sorted(rows)


def test_matches_filters() -> None:
    metadata = {"year": 2020, "cats": ["a", "b"]}
    assert matches_filters(metadata, [MetadataFilter("year", ["2020"])])
    assert not matches_filters(metadata, [MetadataFilter("cats", ["c"])])
    assert matches_filters(metadata, [MetadataFilter("cats", ["c"], negated=True)])
    assert matches_filters(metadata, [RangeFilter("year", low=2019, high=2021)])
    assert not matches_filters(metadata, [RangeFilter("year", low=2019, negated=True)])
    assert matches_filters({}, [MetadataFilter("year", ["2020"], negated=True)])
    assert not matches_filters({}, [RangeFilter("year", low=0)])
    assert matches_filters(metadata, [])


def test_encode_metadata_never_fails() -> None:
    class Odd:
        def __str__(self) -> str:
            return "odd!"

    metadata = {
        "when": datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
        "day": date(2024, 1, 2),
        "at": time(3, 4),
        "raw": b"\x00\xff",
        "other": Odd(),
        "name": "Müller",
        "lone": "a\udc80b",
        "nan": float("nan"),
    }
    text = encode_metadata(metadata)
    assert "Müller" in text
    text.encode("utf-8")
    decoded = json.loads(text)
    assert decoded["when"] == "2024-01-02T03:04:05+00:00"
    assert decoded["day"] == "2024-01-02"
    assert decoded["at"] == "03:04:00"
    assert decoded["raw"] == repr(b"\x00\xff")
    assert decoded["other"] == "odd!"
    assert decoded["lone"] == "a\udc80b"
    assert encode_metadata({1: "x", (1, 2): "y"}).startswith("{")


@given(st.dictionaries(st.text(), st.one_of(st.text(), st.integers(), st.none(), st.booleans())))
def test_encode_metadata_round_trips_json_values(metadata: dict[str, object]) -> None:
    text = encode_metadata(metadata)
    text.encode("utf-8")
    assert json.loads(text) == metadata


@given(st.text())
def test_sanitize_text_keeps_matching_and_removes_markers(text: str) -> None:
    clean = sanitize_text(text)
    assert len(clean) == len(text)
    assert SNIPPET_OPEN not in clean
    assert SNIPPET_CLOSE not in clean
    clean.encode("utf-8")
    tokenizer = Unicode61Tokenizer()
    assert tokenizer.words(clean) == tokenizer.words(text)
    assert sanitize_text("a\tb\nc\r\x00") == "a\tb\nc\r "


def test_split_markers() -> None:
    o, c = SNIPPET_OPEN, SNIPPET_CLOSE
    assert split_markers(f"a {o}bc{c} d") == ("a bc d", ((2, 4),))
    assert split_markers(f"{o}a{o}b{c}c{c}") == ("abc", ((0, 2),))
    assert split_markers(f"{o}{c}x{o}yz") == ("xyz", ((1, 3),))
    assert split_markers("plain") == ("plain", ())


@given(st.text(alphabet=st.sampled_from(["a", " ", SNIPPET_OPEN, SNIPPET_CLOSE]), max_size=30))
def test_split_markers_never_raises(raw: str) -> None:
    text, spans = split_markers(raw)
    assert text == raw.replace(SNIPPET_OPEN, "").replace(SNIPPET_CLOSE, "")
    previous = 0
    for start, end in spans:
        assert previous <= start < end <= len(text)
        previous = end


def test_filters_refuse_lone_surrogates() -> None:
    with pytest.raises(ValueError, match="lone surrogate"):
        MetadataFilter("authors", ["Lee\ud800"])
    with pytest.raises(ValueError, match="lone surrogate"):
        RangeFilter("date", low="2020\udfff")
