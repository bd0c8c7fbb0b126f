"""Cut a field's text to a short window around its matches, with the matched words marked."""

from __future__ import annotations

from collections.abc import Sequence

from sci_etl_core.search.evaluate import TokenizedDocument, occurrences
from sci_etl_core.search.filters import SNIPPET_ELLIPSIS, SNIPPET_TOKENS
from sci_etl_core.search.query import FIELDS, And, Near, Node, Not, Or, Phrase, Term, normalize
from sci_etl_core.search.store_base import Snippet
from sci_etl_core.search.tokenize import Token, Tokenizer, Unicode61Tokenizer

__all__ = ["passage_snippet", "snippet_window"]

_DEFAULT_TOKENIZER = Unicode61Tokenizer()


def snippet_window(
    text: str,
    tokens: Sequence[Token],
    ranges: Sequence[tuple[int, int]],
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Cut ``text`` to a window of at most :data:`SNIPPET_TOKENS` tokens around its first highlight.

    ``tokens`` are the tokens of ``text``, and ``ranges`` are ``[start, stop)``
    token ranges to highlight, in any order and possibly overlapping. The window
    starts at the first range, or earlier when that range is near the end, and
    :data:`SNIPPET_ELLIPSIS` marks text left out before or after it. Returns the
    window's text and its highlights as ``[start, end)`` character offsets into
    that text, with overlapping ranges merged into one span.

    Raises:
        ValueError: A range is empty or lies outside ``tokens``.
    """
    count = len(tokens)
    for start, stop in ranges:
        if not 0 <= start < stop <= count:
            raise ValueError(f"token range ({start}, {stop}) is not inside the {count} tokens")
    if count == 0:
        return text, ()
    first = min((start for start, _ in ranges), default=0)
    begin = max(0, min(first, count - SNIPPET_TOKENS))
    end = min(count, begin + SNIPPET_TOKENS)
    char_begin = 0 if begin == 0 else tokens[begin].start
    char_end = len(text) if end == count else tokens[end - 1].end
    prefix = SNIPPET_ELLIPSIS if begin > 0 else ""
    suffix = SNIPPET_ELLIPSIS if end < count else ""
    body = text[char_begin:char_end]
    shift = len(prefix) - char_begin
    spans: list[tuple[int, int]] = []
    for start, stop in sorted(ranges):
        start, stop = max(start, begin), min(stop, end)
        if start >= stop:
            continue
        span = (tokens[start].start + shift, tokens[stop - 1].end + shift)
        if spans and span[0] <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], span[1]))
        else:
            spans.append(span)
    return prefix + body + suffix, tuple(spans)


def _highlight_leaves(node: Node, field: str) -> list[Term | Phrase]:
    """Return every leaf of ``node`` that is not negated and may match in ``field``."""
    if isinstance(node, Not):
        return []
    if isinstance(node, And | Or):
        return [leaf for child in node.operands for leaf in _highlight_leaves(child, field)]
    if isinstance(node, Near):
        if node.fields and field not in node.fields:
            return []
        return list(node.operands)
    if node.fields and field not in node.fields:
        return []
    return [node]


def passage_snippet(
    query: Node,
    text: str,
    field: str = "body",
    *,
    tokenizer: Tokenizer | None = None,
) -> Snippet:
    """Return a snippet of ``text``, read as ``field``, highlighting the words of ``query`` in it.

    Unlike a store's snippet, which highlights only the parts of the query a
    document satisfies, every term and phrase that is not negated is
    highlighted wherever it occurs, whether or not ``text`` matches the whole
    query. That suits text found another way, such as the passage a semantic
    search ranked best. A term or phrase scoped to other fields is not
    highlighted, and the terms of a ``NEAR`` group are highlighted wherever they
    occur. Without a highlight, the snippet is the start of ``text``.

    Raises:
        ValueError: ``field`` is not one of :data:`~sci_etl_core.search.query.FIELDS`.
    """
    if field not in FIELDS:
        raise ValueError(f"field must be one of {FIELDS}, not {field!r}")
    splitter = tokenizer or _DEFAULT_TOKENIZER
    tokens = splitter.tokens(text)
    document = TokenizedDocument._trusted(**{field: tuple(token.text for token in tokens)})
    ranges: list[tuple[int, int]] = []
    for leaf in _highlight_leaves(normalize(query), field):
        unscoped = leaf if not leaf.fields else _unscoped(leaf)
        for found in occurrences(unscoped, document, tokenizer=splitter).values():
            ranges.extend(found)
    window, highlights = snippet_window(text, tokens, ranges)
    return Snippet(field, window, highlights)


def _unscoped(leaf: Term | Phrase) -> Term | Phrase:
    if isinstance(leaf, Term):
        return Term(leaf.text, prefix=leaf.prefix)
    return Phrase(leaf.words)
