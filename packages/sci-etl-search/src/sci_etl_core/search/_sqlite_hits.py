"""Turn the FTS5 store's ranked rows into hits with snippets (internal).

Once the ranking statement has chosen the hits, one statement reads their per-field
snippets, made by FTS5's ``snippet()``, with their records; where ``snippet()`` itself
fails on the query, the snippets are cut in Python from the stored text.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from sci_etl_core.exceptions import SearchStoreError
from sci_etl_core.search import _sqlite_sql as sql
from sci_etl_core.search._store_plan import compile_plan
from sci_etl_core.search._store_snippets import plan_snippets
from sci_etl_core.search.filters import (
    SNIPPET_CLOSE,
    SNIPPET_ELLIPSIS,
    SNIPPET_OPEN,
    SNIPPET_TOKENS,
    split_markers,
)
from sci_etl_core.search.query import FIELDS, Node
from sci_etl_core.search.store_base import Snippet, TextHit
from sci_etl_core.search.tokenize import Tokenizer

__all__ = ["MARKS", "decode_metadata", "read_hits", "snippet_fault", "split_snippet"]

MARKS = (SNIPPET_OPEN, SNIPPET_CLOSE, SNIPPET_ELLIPSIS)
"""The markers FTS5's ``snippet()`` is asked to put around matches and cut ends."""


def snippet_fault(exc: sqlite3.DatabaseError) -> bool:
    """Whether ``exc`` is FTS5's ``snippet()`` failing on the query, not a damaged file.

    FTS5 reports "database disk image is malformed" from ``snippet()`` for some NEAR
    groups that repeat a phrase, such as ``NEAR(alpha alpha, 0)``, on a sound file.
    """
    return "malformed" in str(exc)


def decode_metadata(path: str, record_id: str, text: str) -> dict[str, Any]:
    """Return a stored document's metadata, raising unless it is a JSON object.

    Raises:
        SearchStoreError: ``text`` is not JSON, or not a JSON object.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SearchStoreError(
            f"{path}: cannot read the metadata of record {record_id!r}: not JSON ({exc})"
        ) from exc
    if not isinstance(value, dict):
        raise SearchStoreError(
            f"{path}: cannot read the metadata of record {record_id!r}: "
            f"a JSON {type(value).__name__}, not an object"
        )
    return value


def read_hits(
    connection: sqlite3.Connection,
    path: str,
    node: Node,
    match: str,
    ranked: list[tuple[int, float]],
    tokenizer: Tokenizer,
    *,
    shadow: bool = False,
) -> list[TextHit]:
    """Return the hits of the ``ranked`` ``(doc_id, score)`` pairs, best first.

    One statement reads every hit's per-field snippets and record; where FTS5's
    ``snippet()`` fails on the query, the snippets are cut in Python with
    ``tokenizer``, the twin of the index's tokenizer, from the stored text. An index
    of ``shadow`` text always has them cut in Python: FTS5 would highlight the shadow
    text, not the original.
    """
    if not ranked:
        return []
    if shadow:
        return _hits_cut_in_python(connection, path, node, ranked, tokenizer)
    doc_ids = [doc_id for doc_id, _ in ranked]
    statement, params = sql.hits_sql(match, doc_ids, MARKS, SNIPPET_TOKENS)
    try:
        rows = {row[0]: row for row in connection.execute(statement, params)}
    except sqlite3.DatabaseError as exc:
        if not snippet_fault(exc):
            raise
        return _hits_cut_in_python(connection, path, node, ranked, tokenizer)
    hits: list[TextHit] = []
    for doc_id, score in ranked:
        row = rows.get(doc_id)
        if row is None:
            continue
        per_field: list[Snippet] = []
        for name, raw in zip(FIELDS, row[1:4], strict=True):
            if raw:
                field_text, field_highlights = split_snippet(raw)
                if field_highlights:
                    per_field.append(Snippet(name, field_text, field_highlights))
        hits.append(_hit(path, row[4], score, row[5], row[6], per_field))
    hits.sort(key=lambda hit: (-hit.score, hit.record_id))
    return hits


def _hits_cut_in_python(
    connection: sqlite3.Connection,
    path: str,
    node: Node,
    ranked: list[tuple[int, float]],
    tokenizer: Tokenizer,
) -> list[TextHit]:
    """Return the hits of ``ranked`` with snippets cut in Python from the stored text."""
    plan = compile_plan(node, tokenizer)[0]
    statement, params = sql.documents_sql([doc_id for doc_id, _ in ranked], full=True)
    stored = {row[0]: row for row in connection.execute(statement, params)}
    hits: list[TextHit] = []
    for doc_id, score in ranked:
        row = stored.get(doc_id)
        if row is None:
            continue
        texts = {"title": row[2], "abstract": row[4], "body": row[5]}
        per_field = list(plan_snippets(plan, texts, tokenizer)[0])
        hits.append(_hit(path, row[1], score, row[2], row[3], per_field))
    hits.sort(key=lambda hit: (-hit.score, hit.record_id))
    return hits


def _hit(
    path: str, record_id: str, score: float, title: str, metadata: str, per_field: list[Snippet]
) -> TextHit:
    best = max(per_field, key=_snippet_weight, default=None)
    text, highlights = (best.text, best.highlights) if best else ("", ())
    return TextHit(
        record_id=record_id,
        score=float(score),
        snippet=text,
        highlights=highlights,
        metadata=decode_metadata(path, record_id, metadata),
        title=title,
        snippets=tuple(per_field),
    )


def split_snippet(raw: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Return what :func:`~sci_etl_core.search.filters.split_markers` does, faster on FTS5 output.

    FTS5's ``snippet()`` closes every span it opens and never nests them, since stored
    text holds no markers; such a string is split with ``str`` methods alone. Anything
    else goes to :func:`~sci_etl_core.search.filters.split_markers`.
    """
    pieces = raw.split(SNIPPET_OPEN)
    head = pieces[0]
    if len(pieces) == 1 or SNIPPET_CLOSE in head:
        return split_markers(raw)
    out = [head]
    length = len(head)
    spans: list[tuple[int, int]] = []
    for piece in pieces[1:]:
        inner, closed, tail = piece.partition(SNIPPET_CLOSE)
        if not closed or SNIPPET_CLOSE in tail:
            return split_markers(raw)
        if inner:
            spans.append((length, length + len(inner)))
        out += (inner, tail)
        length += len(inner) + len(tail)
    return "".join(out), tuple(spans)


def _snippet_weight(snippet: Snippet) -> tuple[int, int]:
    """Rank a field's snippet as FTS5's ``snippet()`` ranks columns, earlier fields first.

    FTS5 scores a window 1000 for each distinct phrase it shows and 1 for each
    further match; the column with the best window wins, the first on a tie.
    """
    text = snippet.text
    distinct = len({text[start:end].casefold() for start, end in snippet.highlights})
    return (999 * distinct + len(snippet.highlights), -FIELDS.index(snippet.field))
