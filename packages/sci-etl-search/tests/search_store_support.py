"""Support for the text store tests: store factories, a small corpus, and hypothesis strategies."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from sci_etl_core.search.filters import MetadataFilter, RangeFilter, SearchFilter
from sci_etl_core.search.query import And, Near, Node, Not, Or, Phrase, Term
from sci_etl_core.search.store_base import AsyncTextSearchStore, SearchDocument, TextHit
from sci_etl_core.search.store_memory import InMemoryTextSearchStore
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

FACET_KEYS = ("year", "categories", "authors", "date")
STORE_KINDS = ("memory", "sqlite")

StoreFactory = Callable[..., Awaitable[AsyncTextSearchStore]]


def make_store(kind: str, directory: Path, **options: Any) -> AsyncTextSearchStore:
    """Build an empty store of ``kind`` (``"memory"`` or ``"sqlite"``) under ``directory``."""
    options.setdefault("facet_keys", FACET_KEYS)
    if kind == "memory":
        return InMemoryTextSearchStore(**options)
    return AsyncSqliteFts5Store(directory / "index.sqlite", **options)


CORPUS = (
    SearchDocument(
        "r1",
        title="Dwarf galaxies in the Local Group",
        abstract="We survey dwarf galaxies and their dark matter halos.",
        body="Dwarf spheroidal galaxies are dark matter dominated. Dwarf dwarf.",
        metadata={"year": 2020, "categories": ["astro-ph.GA", "astro-ph.CO"], "authors": "Lee"},
    ),
    SearchDocument(
        "r2",
        title="Quasar variability",
        abstract="Quasars vary on long timescales; a dwarf companion is ruled out.",
        metadata={"year": 2022, "categories": ["astro-ph.GA"], "date": "2022-05-01"},
    ),
    SearchDocument(
        "r3",
        title="Photosynthesis under stress",
        abstract="Plants adapt their photosynthesis to drought.",
        metadata={"year": "2021", "categories": "q-bio", "authors": ["Kim", "Lee"]},
    ),
    SearchDocument(
        "r4",
        title="Dark energy surveys",
        abstract="Dark energy and dark matter from galaxy surveys.",
        body="A galaxy survey of dark energy.",
        metadata={"year": 2024, "categories": ["astro-ph.CO"], "date": "2024-06-30T10:00:00Z"},
    ),
    SearchDocument(
        "r5",
        title="Müller's H-alpha emission",
        abstract="H-alpha emission lines of star-forming dwarfs.",
        metadata={"year": 2019, "categories": ["astro-ph.GA"], "authors": "Müller"},
    ),
)


def ids(hits: list[TextHit]) -> list[str]:
    """Return the record ids of ``hits`` in order."""
    return [hit.record_id for hit in hits]


def close(a: float, b: float) -> bool:
    """Compare two scores with the parity tolerance."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


# -- hypothesis strategies ------------------------------------------------------------------

WORDS = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "dwarf",
    "galaxy",
    "galaxies",
    "dark",
    "matter",
    "matters",
    "müller",
    "x",
)
"""Corpus and query words; ``galaxies`` and ``matters`` share a Porter stem with others."""
word = st.sampled_from(WORDS)
text = st.lists(
    st.one_of(word, st.sampled_from(("Alpha", "DARK", "H-alpha", ",", "\x01"))), max_size=12
).map(" ".join)
FIELD_SCOPES = ((), ("title",), ("abstract",), ("body",), ("title", "body"))
scope = st.sampled_from(FIELD_SCOPES)

metadata = st.fixed_dictionaries(
    {},
    optional={
        "year": st.one_of(st.integers(2018, 2024), st.sampled_from(["2020", "2021-03", "07", ""])),
        "categories": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
        "authors": st.sampled_from(["Lee", "Kim", ["Lee", "Kim"], True, 3.5]),
    },
)


@st.composite
def documents(draw: st.DrawFn, min_size: int = 1, max_size: int = 8) -> list[SearchDocument]:
    """Draw a small corpus with distinct record ids."""
    count = draw(st.integers(min_size, max_size))
    return [
        SearchDocument(
            f"d{index}",
            title=draw(text),
            abstract=draw(text),
            body=draw(st.one_of(st.just(""), text)),
            metadata=draw(metadata),
        )
        for index in range(count)
    ]


def leaf(prefix_ok: bool = True) -> st.SearchStrategy[Term | Phrase]:
    """Draw a term, prefix term, or phrase over the corpus words."""
    terms = st.builds(Term, word, fields=scope)
    prefixes = st.builds(lambda w, f: Term(w[:2], fields=f, prefix=True), word, scope)
    phrases = st.builds(
        lambda ws, f: Phrase(tuple(ws), fields=f), st.lists(word, min_size=2, max_size=3), scope
    )
    return st.one_of(terms, phrases, prefixes) if prefix_ok else st.one_of(terms, phrases)


near = st.builds(
    lambda ops, d, f: Near(tuple(ops), distance=d, fields=f),
    st.lists(st.builds(Term, word), min_size=2, max_size=3),
    st.integers(0, 4),
    scope,
)

any_query: st.SearchStrategy[Node] = st.recursive(
    st.one_of(leaf(), near),
    lambda children: st.one_of(
        st.builds(Not, children),
        st.builds(lambda ops: And(tuple(ops)), st.lists(children, min_size=2, max_size=3)),
        st.builds(lambda ops: Or(tuple(ops)), st.lists(children, min_size=2, max_size=3)),
    ),
    max_leaves=6,
)

# Shapes on which FTS5's scores are determined: no leaf inside an OR branch that can
# fail while its own iterator still sits on the row, and nothing negated. An OR
# alternative is a term or phrase, never a NEAR group: FTS5 counts the operands of a
# NEAR group that fails on a row where its phrases occur.
_disjunction = st.one_of(
    leaf(), near, st.builds(lambda ops: Or(tuple(ops)), st.lists(leaf(), min_size=2, max_size=3))
)
determined_query: st.SearchStrategy[Node] = st.one_of(
    _disjunction,
    st.builds(lambda ops: And(tuple(ops)), st.lists(_disjunction, min_size=2, max_size=3)),
)

metadata_filter = st.builds(
    MetadataFilter,
    st.sampled_from(("year", "categories", "authors")),
    st.lists(st.sampled_from(["2020", "2021", "a", "b", "Lee", "07"]), min_size=1, max_size=2),
    negated=st.booleans(),
)
range_filter = st.one_of(
    st.builds(
        lambda lo, span, neg: RangeFilter("year", low=lo, high=lo + span, negated=neg),
        st.integers(2017, 2024),
        st.integers(0, 3),
        st.booleans(),
    ),
    st.builds(
        lambda lo, neg: RangeFilter("year", low=lo, negated=neg),
        st.sampled_from(["2019", "2020", "2021-01"]),
        st.booleans(),
    ),
    st.builds(lambda hi: RangeFilter("year", high=hi), st.sampled_from(["2020", "2021-03"])),
)


@st.composite
def filter_sets(draw: st.DrawFn) -> list[SearchFilter]:
    """Draw filters with at most one per key."""
    chosen = draw(st.lists(st.one_of(metadata_filter, range_filter), max_size=3))
    seen: dict[str, SearchFilter] = {}
    for item in chosen:
        seen.setdefault(item.key, item)
    return list(seen.values())
