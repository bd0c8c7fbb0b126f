"""The FTS5 store's hits against one plain FTS5 statement over the same file.

The store ranks with one statement and makes snippets and reads records for the kept
rows with a second (``ranked_rowids_sql``, then ``hits_sql``). On random corpora,
queries and limits, what it returns must be exactly what a single statement ranking,
snipping and joining every row gives: the same records in the same order, the same
scores, and the same snippet of every field.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sci_etl_core.exceptions import SearchQueryError
from sci_etl_core.search._sqlite_hits import split_snippet
from sci_etl_core.search.compile_fts5 import to_match_expression
from sci_etl_core.search.filters import (
    SNIPPET_CLOSE,
    SNIPPET_ELLIPSIS,
    SNIPPET_OPEN,
    SNIPPET_TOKENS,
    split_markers,
)
from sci_etl_core.search.query import FIELDS, Node, normalize
from sci_etl_core.search.store_base import BM25Weights, TextHit
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store
from search_store_support import FACET_KEYS, any_query, documents

WEIGHTS = BM25Weights(title=2.0, abstract=1.0, body=0.5)

Expected = list[tuple[str, float, tuple[tuple[str, str, tuple[tuple[int, int], ...]], ...]]]


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp(prefix="search-hits-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def one_statement(path: Path, match: str, limit: int) -> Expected | None:
    """Rank, snip and join in one statement; ``None`` where FTS5's ``snippet()`` fails."""
    marks = (SNIPPET_OPEN, SNIPPET_CLOSE, SNIPPET_ELLIPSIS, SNIPPET_TOKENS)
    snippets = ", ".join(f'snippet("documents_fts", {column}, ?, ?, ?, ?)' for column in (0, 1, 2))
    statement = (
        f'SELECT d."record_id", -bm25("documents_fts", ?, ?, ?) AS "score", {snippets} '
        'FROM "documents_fts" JOIN "documents" d ON d."doc_id" = "documents_fts"."rowid" '
        'WHERE "documents_fts" MATCH ? ORDER BY "score" DESC, d."record_id" LIMIT ?'
    )
    connection = sqlite3.connect(path)
    try:
        rows = connection.execute(
            statement, (*WEIGHTS.as_tuple(), *(marks * 3), match, limit)
        ).fetchall()
    except sqlite3.DatabaseError as exc:
        if "malformed" in str(exc):
            return None
        raise
    finally:
        connection.close()
    expected: Expected = []
    for record_id, score, *raw in rows:
        fields = []
        for name, text in zip(FIELDS, raw, strict=True):
            plain, highlights = split_markers(text or "")
            if highlights:
                fields.append((name, plain, highlights))
        expected.append((record_id, score, tuple(fields)))
    return expected


def found(hits: list[TextHit]) -> Expected:
    return [
        (hit.record_id, hit.score, tuple((s.field, s.text, s.highlights) for s in hit.snippets))
        for hit in hits
    ]


@pytest.mark.parametrize("stemming", [False, True], ids=["unicode61", "porter"])
@settings(max_examples=100, deadline=None)
@given(corpus=documents(), query=any_query, limit=st.integers(min_value=1, max_value=6))
def test_hits_are_those_of_one_statement(
    workdir: Path, stemming: bool, corpus: list, query: Node, limit: int
) -> None:
    try:
        match = to_match_expression(normalize(query))
    except SearchQueryError:
        assume(False)
        return
    path = workdir / f"hits-{len(list(workdir.iterdir()))}.sqlite"

    async def search() -> list[TextHit] | None:
        store = AsyncSqliteFts5Store(
            path, facet_keys=FACET_KEYS, weights=WEIGHTS, stemming=stemming
        )
        try:
            await store.index(corpus)
            return await store.search(query, limit=limit)
        except SearchQueryError:
            return None
        finally:
            await store.aclose()

    hits = asyncio.run(search())
    assume(hits is not None)
    assert hits is not None
    expected = one_statement(path, match, limit)
    assume(expected is not None)
    assert found(hits) == expected


@given(
    st.lists(
        st.one_of(st.sampled_from([SNIPPET_OPEN, SNIPPET_CLOSE]), st.text(max_size=4)), max_size=12
    )
)
def test_split_snippet_is_split_markers(parts: list[str]) -> None:
    raw = "".join(parts)
    assert split_snippet(raw) == split_markers(raw)


def test_split_snippet_reads_fts5_output() -> None:
    o, c = SNIPPET_OPEN, SNIPPET_CLOSE
    assert split_snippet(f"{o}Dark{c} matter in {o}dark{c} halos") == (
        "Dark matter in dark halos",
        ((0, 4), (15, 19)),
    )
    assert split_snippet(f"a {o}{c}b") == ("a b", ())
