"""Cut a hit's snippets in Python from the words its query counts (internal).

The in-memory store cuts every snippet this way; the FTS5 store falls back to it when
FTS5's own ``snippet()`` fails on a query.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from sci_etl_core.search._store_plan import Counted, Entry, Plan, collect
from sci_etl_core.search.evaluate import TokenizedDocument
from sci_etl_core.search.query import FIELDS
from sci_etl_core.search.snippets import snippet_window
from sci_etl_core.search.store_base import Snippet
from sci_etl_core.search.tokenize import Tokenizer

__all__ = ["cut_snippets", "make_entry", "plan_snippets"]


def make_entry(texts: Mapping[str, str], tokenizer: Tokenizer) -> Entry:
    """Tokenize a document's fields into the entry the query plans read."""
    fields = {name: tuple(t.text for t in tokenizer.tokens(texts.get(name, ""))) for name in FIELDS}
    return Entry(
        tokens=TokenizedDocument._trusted(**fields),
        counts={name: Counter(words) for name, words in fields.items()},
        length=sum(len(words) for words in fields.values()),
    )


def cut_snippets(
    entry: Entry,
    texts: Mapping[str, str],
    counted: Counted,
    tokenizer: Tokenizer,
) -> tuple[tuple[Snippet, ...], Snippet | None]:
    """Return a snippet of every field with a counted match, and the best of them.

    The best is the field with the most counted matches, ties going to the earlier field.
    """
    ranges: dict[str, list[tuple[int, int]]] = {name: [] for name in FIELDS}
    for leaf, hits in counted:
        found = hits if hits is not None else leaf.hits(entry, tokenizer)
        for name, spans in found.items():
            if name in leaf.fields:
                ranges[name].extend(spans)
    snippets: list[Snippet] = []
    for name in FIELDS:
        if ranges[name]:
            text = texts.get(name, "")
            window, highlights = snippet_window(text, tokenizer.tokens(text), ranges[name])
            snippets.append(Snippet(name, window, highlights))
    best = max(FIELDS, key=lambda name: (len(set(ranges[name])), -FIELDS.index(name)))
    chosen = next((s for s in snippets if s.field == best), None)
    return tuple(snippets), chosen


def plan_snippets(
    plan: Plan, texts: Mapping[str, str], tokenizer: Tokenizer
) -> tuple[tuple[Snippet, ...], Snippet | None]:
    """Tokenize ``texts``, find what ``plan`` counts in them, and cut the snippets."""
    entry = make_entry(texts, tokenizer)
    counted: Counted = []
    collect(plan, entry, tokenizer, counted)
    return cut_snippets(entry, texts, counted, tokenizer)
