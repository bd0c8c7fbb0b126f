"""The contract of AsyncTextSearchStore, run against every implementation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sci_etl_core.exceptions import SearchQueryError
from sci_etl_core.search.filters import (
    SNIPPET_CLOSE,
    SNIPPET_ELLIPSIS,
    SNIPPET_OPEN,
    SNIPPET_TOKENS,
    MetadataFilter,
    RangeFilter,
)
from sci_etl_core.search.query import FIELDS, And, Near, Not, Or, Phrase, Term
from sci_etl_core.search.store_base import AsyncTextSearchStore, SearchDocument, TextHit
from sci_etl_core.search.tokenize import Unicode61Tokenizer
from search_store_support import CORPUS, STORE_KINDS, ids, make_store

TOKENIZER = Unicode61Tokenizer()


@pytest.fixture(params=STORE_KINDS)
async def store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[AsyncTextSearchStore]:
    instance = make_store(request.param, tmp_path)
    await instance.index(list(CORPUS))
    yield instance
    await instance.aclose()


def highlighted_words(text: str, highlights: tuple[tuple[int, int], ...]) -> list[str]:
    return [word for start, end in highlights for word in TOKENIZER.words(text[start:end])]


async def test_count_and_get_documents(store: AsyncTextSearchStore) -> None:
    assert await store.count() == len(CORPUS)
    found = await store.get_documents(["r1", "r3", "missing"])
    assert set(found) == {"r1", "r3"}
    assert found["r1"].title == CORPUS[0].title
    assert found["r3"].metadata == {
        "year": "2021",
        "categories": "q-bio",
        "authors": ["Kim", "Lee"],
    }
    assert await store.get_documents([]) == {}


async def test_index_replaces_rather_than_appends(store: AsyncTextSearchStore) -> None:
    await store.index([SearchDocument("r1", title="Totally new", metadata={"year": 1999})])
    assert await store.count() == len(CORPUS)
    assert await store.filter_ids(Term("dwarf")) == {"r2"}
    assert await store.filter_ids(Term("totally")) == {"r1"}
    assert await store.filter_ids(None, [RangeFilter("year", high=2000)]) == {"r1"}


async def test_last_duplicate_wins(store: AsyncTextSearchStore) -> None:
    await store.index(
        [SearchDocument("n", title="first version"), SearchDocument("n", title="second version")]
    )
    assert await store.filter_ids(Term("first")) == frozenset()
    assert await store.filter_ids(Term("second")) == {"n"}
    assert await store.count() == len(CORPUS) + 1


async def test_delete_and_replace(store: AsyncTextSearchStore) -> None:
    await store.delete_record("r1")
    await store.delete_record("never-there")
    assert "r1" not in await store.filter_ids()
    await store.replace_record(SearchDocument("r2", title="nebula", metadata={"year": 2001}))
    assert await store.filter_ids(Term("quasar")) == frozenset()
    assert await store.filter_ids(Term("nebula")) == {"r2"}
    assert await store.count() == len(CORPUS) - 1


async def test_search_ranks_best_first_with_positive_scores(store: AsyncTextSearchStore) -> None:
    hits = await store.search(Term("dwarf"))
    assert set(ids(hits)) == {"r1", "r2"}  # "dwarfs" in r5 is another word
    assert all(hit.score > 0 for hit in hits)
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert hits[0].record_id == "r1"
    assert hits[0].title == CORPUS[0].title
    assert hits[0].metadata["categories"] == ["astro-ph.GA", "astro-ph.CO"]


async def test_ties_are_ordered_by_record_id(store: AsyncTextSearchStore) -> None:
    twins = [SearchDocument(rid, title="zebra crossing") for rid in ("t3", "t1", "t2")]
    await store.index(twins)
    hits = await store.search(Term("zebra"))
    assert ids(hits) == ["t1", "t2", "t3"]
    assert hits[0].score == hits[1].score == hits[2].score
    # A tie crossing the limit is still broken by record_id.
    assert ids(await store.search(Term("zebra"), limit=2)) == ["t1", "t2"]
    assert ids(await store.search(Term("zebra"), limit=1)) == ["t1"]


async def test_limit_and_exclude(store: AsyncTextSearchStore) -> None:
    everything = await store.search(Or((Term("dark"), Term("dwarf"))))
    assert len(everything) == 3
    assert (
        ids(await store.search(Or((Term("dark"), Term("dwarf"))), limit=2)) == ids(everything)[:2]
    )
    assert await store.search(Term("dark"), limit=0) == []
    assert await store.search(Term("dark"), limit=-3) == []
    excluded = await store.search(Or((Term("dark"), Term("dwarf"))), exclude_record_id="r1")
    assert ids(excluded) == [rid for rid in ids(everything) if rid != "r1"]


async def test_filters_apply_before_limit(store: AsyncTextSearchStore) -> None:
    query = Or((Term("dark"), Term("dwarf"), Term("emission")))
    ranking = ids(await store.search(query))
    last = ranking[-1]
    year = str((await store.get_documents([last]))[last].metadata["year"])
    hits = await store.search(query, limit=1, filters=[MetadataFilter("year", [year])])
    assert len(ranking) == 4
    assert ids(hits) == [last]


async def test_pure_negation_is_refused_by_search_but_not_filter_ids(
    store: AsyncTextSearchStore,
) -> None:
    with pytest.raises(SearchQueryError):
        await store.search(Not(Term("dwarf")))
    assert await store.filter_ids(Not(Term("dwarf"))) == {"r3", "r4", "r5"}
    assert await store.filter_ids(Or((Not(Term("dwarf")), Term("quasar")))) == {
        "r2",
        "r3",
        "r4",
        "r5",
    }


async def test_errors_come_before_io_even_with_limit_zero(store: AsyncTextSearchStore) -> None:
    with pytest.raises(ValueError, match="'colour'"):
        await store.search(Term("dark"), limit=0, filters=[MetadataFilter("colour", ["red"])])
    with pytest.raises(SearchQueryError):
        await store.search(Not(Term("dark")), limit=0)
    with pytest.raises(ValueError, match="second filter on key 'year'"):
        await store.filter_ids(
            None, [MetadataFilter("year", ["2020"]), RangeFilter("year", low=2021)]
        )
    with pytest.raises(ValueError, match="facet key 'colour'"):
        await store.facet_counts(["colour"])
    with pytest.raises(ValueError, match="facet key 'colour'"):
        await store.range_counts([RangeFilter("colour", low=1)])


async def test_metadata_filters_and_negation(store: AsyncTextSearchStore) -> None:
    ga = MetadataFilter("categories", ["astro-ph.GA"])
    assert await store.filter_ids(None, [ga]) == {"r1", "r2", "r5"}
    not_ga = MetadataFilter("categories", ["astro-ph.GA"], negated=True)
    assert await store.filter_ids(None, [not_ga]) == {"r3", "r4"}
    # An integer year matches its text form, and a text year matches too.
    assert await store.filter_ids(None, [MetadataFilter("year", {"2020", "2021"})]) == {"r1", "r3"}
    assert await store.filter_ids(None, [MetadataFilter("authors", ["Lee"])]) == {"r1", "r3"}
    # Records without the key pass a negated filter.
    assert await store.filter_ids(None, [MetadataFilter("date", ["x"], negated=True)]) == {
        "r1",
        "r2",
        "r3",
        "r4",
        "r5",
    }


async def test_range_filters_integer_and_text(store: AsyncTextSearchStore) -> None:
    assert await store.filter_ids(None, [RangeFilter("year", low=2021, high=2022)]) == {"r2", "r3"}
    assert await store.filter_ids(None, [RangeFilter("year", low=2021, negated=True)]) == {
        "r1",
        "r5",
    }
    assert await store.filter_ids(None, [RangeFilter("date", high="2024-06")]) == {"r2", "r4"}
    assert await store.filter_ids(None, [RangeFilter("date", low="2023")]) == {"r4"}
    assert await store.filter_ids(Term("dark"), [RangeFilter("year", low=2021)]) == {"r4"}


async def test_facets_ignore_their_own_key_filter(store: AsyncTextSearchStore) -> None:
    filters = [MetadataFilter("categories", ["astro-ph.CO"]), RangeFilter("year", low=2020)]
    counts = await store.facet_counts(["categories", "year"], filters=filters)
    # categories: counted over year >= 2020 only (own filter ignored): r1 r2 r3 r4.
    assert counts["categories"] == (
        ("astro-ph.CO", 2),
        ("astro-ph.GA", 2),
        ("q-bio", 1),
    )
    # year: counted over astro-ph.CO only (own range ignored): r1 (2020), r4 (2024).
    assert counts["year"] == (("2020", 1), ("2024", 1))
    empty = await store.facet_counts(["authors"], query=Term("quasar"))
    assert empty == {"authors": ()}


async def test_facets_with_query(store: AsyncTextSearchStore) -> None:
    counts = await store.facet_counts(["authors"], query=Or((Term("dwarf"), Term("plants"))))
    assert counts == {"authors": (("Lee", 2), ("Kim", 1))}
    negated = await store.facet_counts(["categories"], query=Not(Term("dwarf")))
    assert negated == {"categories": (("astro-ph.CO", 1), ("astro-ph.GA", 1), ("q-bio", 1))}


async def test_range_counts(store: AsyncTextSearchStore) -> None:
    ranges = [
        RangeFilter("year", low=2020, high=2021),
        RangeFilter("year", low=2021),
        RangeFilter("year", low=2021, negated=True),
        RangeFilter("date", low="2022"),
    ]
    counts = await store.range_counts(ranges, filters=[MetadataFilter("year", ["2024"])])
    # year ranges ignore the year filter; the date range keeps it (r4 only).
    assert counts == (2, 3, 2, 1)
    assert await store.range_counts(ranges[:1], query=Term("dwarf")) == (1,)


async def test_snippets_highlight_exactly_the_query_words(store: AsyncTextSearchStore) -> None:
    hits = await store.search(And((Term("dark"), Term("matter"))))
    by_id = {hit.record_id: hit for hit in hits}
    assert set(by_id) == {"r1", "r4"}
    for hit in hits:
        assert hit.highlights
        assert set(highlighted_words(hit.snippet, hit.highlights)) <= {"dark", "matter"}
        for snippet in hit.snippets:
            assert snippet.highlights
            assert set(highlighted_words(snippet.text, snippet.highlights)) <= {"dark", "matter"}
            assert SNIPPET_OPEN not in snippet.text
            assert SNIPPET_CLOSE not in snippet.text
        assert [s.field for s in hit.snippets] == sorted(
            (s.field for s in hit.snippets), key=FIELDS.index
        )
    assert [s.field for s in by_id["r1"].snippets] == ["abstract", "body"]
    assert [s.field for s in by_id["r4"].snippets] == ["title", "abstract", "body"]


async def test_snippet_per_field_and_phrase(store: AsyncTextSearchStore) -> None:
    hits = await store.search(Phrase(("dark", "matter")))
    assert ids(hits) == ["r1", "r4"] or set(ids(hits)) == {"r1", "r4"}
    r4 = next(hit for hit in hits if hit.record_id == "r4")
    assert [s.field for s in r4.snippets] == ["abstract"]
    (start, end), *_ = r4.snippets[0].highlights
    assert r4.snippets[0].text[start:end].lower() == "dark matter"


async def test_negated_words_are_never_highlighted(store: AsyncTextSearchStore) -> None:
    hits = await store.search(And((Term("dark"), Not(Term("quasar")), Not(Term("energy")))))
    assert ids(hits) == ["r1"]
    for snippet in hits[0].snippets:
        assert set(highlighted_words(snippet.text, snippet.highlights)) == {"dark"}


async def test_field_scope_and_prefix_and_near(store: AsyncTextSearchStore) -> None:
    assert await store.filter_ids(Term("dark", fields=("title",))) == {"r4"}
    assert await store.filter_ids(Term("photosynth", prefix=True)) == {"r3"}
    assert await store.filter_ids(Near((Term("dwarf"), Term("halos")), distance=5)) == {"r1"}
    assert await store.filter_ids(Near((Term("dwarf"), Term("halos")), distance=2)) == frozenset()
    hits = await store.search(Term("muller"))
    assert ids(hits) == ["r5"]
    assert highlighted_words(hits[0].snippet, hits[0].highlights) == ["muller"]


async def test_long_field_snippet_is_a_window(store: AsyncTextSearchStore) -> None:
    words = [f"w{i}" for i in range(200)]
    words[150] = "needle"
    await store.index([SearchDocument("long", body=" ".join(words))])
    (hit,) = await store.search(Term("needle"))
    assert hit.snippet.startswith(SNIPPET_ELLIPSIS)
    assert hit.snippet.endswith(SNIPPET_ELLIPSIS)
    assert len(TOKENIZER.words(hit.snippet)) <= SNIPPET_TOKENS
    assert highlighted_words(hit.snippet, hit.highlights) == ["needle"]


async def test_control_characters_are_stored_as_spaces(store: AsyncTextSearchStore) -> None:
    raw = f"alpha{SNIPPET_OPEN}beta{SNIPPET_CLOSE}\x00gamma\ud800delta\ttab\nline"
    await store.index([SearchDocument("ctl", title=raw, metadata={"note": "\ud800x"})])
    stored = (await store.get_documents(["ctl"]))["ctl"]
    assert stored.title == "alpha beta  gamma delta\ttab\nline"
    assert stored.metadata == {"note": "\ud800x"}
    (hit,) = await store.search(Term("beta"))
    assert hit.snippet == stored.title
    assert highlighted_words(hit.snippet, hit.highlights) == ["beta"]


async def test_metadata_reads_back_as_json(store: AsyncTextSearchStore) -> None:
    moment = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    await store.index([SearchDocument("m", title="meta", metadata={"when": moment, "n": (1, 2)})])
    stored = (await store.get_documents(["m"]))["m"]
    assert stored.metadata == {"when": "2024-05-01T12:30:00+00:00", "n": [1, 2]}


async def test_aclose_is_not_terminal(store: AsyncTextSearchStore) -> None:
    await store.aclose()
    await store.aclose()
    assert await store.count() == len(CORPUS)
    assert ids(await store.search(Term("quasar"))) == ["r2"]


async def test_hit_values(store: AsyncTextSearchStore) -> None:
    (hit,) = await store.search(Term("quasar", fields=("title",)))
    assert isinstance(hit, TextHit)
    assert hit.snippets[0].field == "title"
    assert hit.snippet == "Quasar variability"
    assert hit.highlights == ((0, 6),)


async def test_unknown_and_odd_ids_read_as_absent(store: AsyncTextSearchStore) -> None:
    with pytest.raises(ValueError, match="lone surrogate"):
        SearchDocument("bad\ud800id")
    await store.delete_record("never\x00there")
    assert await store.get_documents(["never\x00there", "r1"]) == {
        "r1": (await store.get_documents(["r1"]))["r1"]
    }


async def test_snippets_survive_a_near_group_repeating_a_term(store: AsyncTextSearchStore) -> None:
    # FTS5's snippet() reports "malformed" for this query; the store cuts snippets itself.
    await store.index(
        [
            SearchDocument("f1", title="zeta zeta", metadata={"year": 2001}),
            SearchDocument("f2", abstract="zeta", metadata={"year": 2002}),
        ]
    )
    near = Near((Term("zeta"), Term("zeta")), distance=0, fields=("title",))
    hits = await store.search(Or((Term("zeta"), near)))
    assert ids(hits) == ["f1", "f2"]
    assert [s.field for s in hits[0].snippets] == ["title"]
    assert highlighted_words(hits[0].snippet, hits[0].highlights) == ["zeta", "zeta"]
    filtered = await store.search(Or((Term("zeta"), near)), filters=[RangeFilter("year", low=2002)])
    assert ids(filtered) == ["f2"]
    assert highlighted_words(filtered[0].snippet, filtered[0].highlights) == ["zeta"]


@pytest.mark.parametrize("kind", STORE_KINDS)
@pytest.mark.parametrize("keys", [[""], ["year", 3], "year"])
def test_bad_facet_keys_are_refused_at_construction(
    kind: str, keys: object, tmp_path: Path
) -> None:
    error = TypeError if isinstance(keys, str) else ValueError
    with pytest.raises(error, match="facet"):
        make_store(kind, tmp_path, facet_keys=keys)
