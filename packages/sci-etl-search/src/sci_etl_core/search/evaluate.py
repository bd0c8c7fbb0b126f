"""Evaluate query ASTs against documents in Python, with the semantics FTS5 gives them.

The in-memory store matches, highlights, and scores with these functions, and the tests
check them against real FTS5, so the two stores agree on every query.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias

from sci_etl_core.search.query import FIELDS, And, Near, Node, Not, Or, Phrase, Term
from sci_etl_core.search.tokenize import Tokenizer, Unicode61Tokenizer

if TYPE_CHECKING:
    from sci_etl_core.search.store_base import SearchDocument

__all__ = [
    "Hits",
    "TokenizedDocument",
    "matches",
    "near_hits",
    "near_occurrences",
    "occurrences",
    "trim_near",
]

Hits: TypeAlias = dict[str, list[tuple[int, int]]]
"""Where something occurs: ``[start, stop)`` token ranges per field, fields without one omitted."""

_DEFAULT_TOKENIZER = Unicode61Tokenizer()
_EOF = 1 << 62  # FTS5_LOOKAHEAD_EOF: past every encoded position
_COLUMN = 1 << 32  # FTS5 encodes a position as (column << 32) + offset


class _HasFields(Protocol):
    @property
    def title(self) -> str: ...
    @property
    def abstract(self) -> str: ...
    @property
    def body(self) -> str: ...


def _words(tokenizer: Tokenizer, text: str) -> tuple[str, ...]:
    return tuple(token.text for token in tokenizer.tokens(text))


@dataclass(frozen=True)
class TokenizedDocument:
    """A document's fields as token texts, tokenized once to be matched many times.

    Raises:
        TypeError: A field is not a tuple of strings.
    """

    title: tuple[str, ...] = ()
    abstract: tuple[str, ...] = ()
    body: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in FIELDS:
            value = getattr(self, name)
            if isinstance(value, list):
                value = tuple(value)
                object.__setattr__(self, name, value)
            if not isinstance(value, tuple) or not all(isinstance(w, str) for w in value):
                raise TypeError(f"TokenizedDocument.{name} must be a tuple of token texts")

    @classmethod
    def from_document(
        cls, document: SearchDocument, tokenizer: Tokenizer | None = None
    ) -> TokenizedDocument:
        """Tokenize every field of ``document``, by default with :class:`Unicode61Tokenizer`."""
        return cls._from_fields(document, tokenizer or _DEFAULT_TOKENIZER)

    @classmethod
    def _from_fields(cls, document: _HasFields, tokenizer: Tokenizer) -> TokenizedDocument:
        return cls._trusted(
            _words(tokenizer, document.title),
            _words(tokenizer, document.abstract),
            _words(tokenizer, document.body),
        )

    @classmethod
    def _trusted(
        cls,
        title: tuple[str, ...] = (),
        abstract: tuple[str, ...] = (),
        body: tuple[str, ...] = (),
    ) -> TokenizedDocument:
        """Build from tuples a tokenizer just produced, skipping the per-token checks."""
        document = object.__new__(cls)
        object.__setattr__(document, "title", title)
        object.__setattr__(document, "abstract", abstract)
        object.__setattr__(document, "body", body)
        return document

    def field(self, name: str) -> tuple[str, ...]:
        """Return the tokens of the field ``name``, one of :data:`FIELDS`."""
        if name not in FIELDS:
            raise ValueError(f"unknown field {name!r}; fields are {', '.join(FIELDS)}")
        tokens: tuple[str, ...] = getattr(self, name)
        return tokens


def _leaf_tokens(leaf: Term | Phrase, tokenizer: Tokenizer) -> tuple[str, ...]:
    try:
        return _cached_leaf_tokens(leaf, tokenizer)  # type: ignore[arg-type]
    except TypeError:  # a tokenizer that cannot be hashed is asked every time
        return _split_leaf(leaf, tokenizer)


def _split_leaf(leaf: Term | Phrase, tokenizer: Tokenizer) -> tuple[str, ...]:
    if isinstance(leaf, Term):
        return _words(tokenizer, leaf.text)
    return _words(tokenizer, " ".join(leaf.words))


@functools.lru_cache(maxsize=4096)
def _cached_leaf_tokens(leaf: Term | Phrase, tokenizer: Tokenizer) -> tuple[str, ...]:
    # Leaves and the library's tokenizers are frozen, so a leaf's tokens never change;
    # snippets and the in-memory store ask for the same leaf once per document.
    return _split_leaf(leaf, tokenizer)


def _positions(tokens: tuple[str, ...], word: str, stop: int) -> list[int]:
    """Return every index ``i < stop`` with ``tokens[i] == word``, scanning in C."""
    found: list[int] = []
    index = -1
    try:
        while True:
            index = tokens.index(word, index + 1, stop)
            found.append(index)
    except ValueError:
        return found


def _find(tokens: tuple[str, ...], pattern: tuple[str, ...], prefix: bool) -> list[tuple[int, int]]:
    width = len(pattern)
    if width == 0 or width > len(tokens):
        return []
    last = pattern[-1]
    if width == 1:
        if prefix:
            return [(i, i + 1) for i, token in enumerate(tokens) if token.startswith(last)]
        return [(i, i + 1) for i in _positions(tokens, last, len(tokens))]
    head = pattern[:-1]
    found = []
    for start in _positions(tokens, pattern[0], len(tokens) - width + 1):
        if tokens[start : start + width - 1] != head:
            continue
        candidate = tokens[start + width - 1]
        if candidate == last or (prefix and candidate.startswith(last)):
            found.append((start, start + width))
    return found


def _tokenized(
    document: SearchDocument | TokenizedDocument, tokenizer: Tokenizer
) -> TokenizedDocument:
    if isinstance(document, TokenizedDocument):
        return document
    return TokenizedDocument._from_fields(document, tokenizer)


def _occurrences(
    leaf: Term | Phrase, document: TokenizedDocument, tokenizer: Tokenizer, fields: Sequence[str]
) -> Hits:
    pattern = _leaf_tokens(leaf, tokenizer)
    prefix = isinstance(leaf, Term) and leaf.prefix
    hits: Hits = {}
    for name in FIELDS:
        if fields and name not in fields:
            continue
        found = _find(document.field(name), pattern, prefix)
        if found:
            hits[name] = found
    return hits


def occurrences(
    leaf: Term | Phrase,
    document: TokenizedDocument,
    *,
    tokenizer: Tokenizer | None = None,
) -> dict[str, list[tuple[int, int]]]:
    """Return where ``leaf`` occurs in ``document``, as ``[start, stop)`` token ranges per field.

    Only the fields ``leaf`` searches are considered, with the same semantics as
    :func:`matches`, and a field without an occurrence is omitted. Overlapping
    occurrences are all reported: the phrase ``a a`` occurs twice in ``a a a``.
    """
    return _occurrences(leaf, document, tokenizer or _DEFAULT_TOKENIZER, leaf.fields)


def trim_near(hits: Sequence[Hits], distance: int) -> list[Hits]:
    """Keep the occurrences that FTS5 counts as part of a NEAR match, following its algorithm step for step.

    Occurrences in different fields are never near each other. A set of
    occurrences, one per operand, matches when every operand ends at most
    ``distance`` tokens before the start of the occurrence that starts last.
    FTS5 walks every operand's start positions together, and each time the
    current positions match it keeps them and advances the operand whose next
    position is smallest. The occurrences kept are exactly those it walks past
    in a match, which is what it scores and highlights, and every mapping is
    empty when no set matches.

    ``hits`` holds one mapping per operand, as :func:`occurrences` returns them;
    an operand's width is read from its ranges, which all span the same number
    of tokens.
    """  # noqa: E501
    if not hits:
        return []
    readers: list[list[int]] = []  # each operand's encoded start positions, then EOF
    widths: list[int] = []
    for operand in hits:
        positions = sorted(
            {
                FIELDS.index(name) * _COLUMN + start
                for name, ranges in operand.items()
                for start, _ in ranges
            }
        )
        if not positions:
            return [{} for _ in hits]
        readers.append([*positions, _EOF])
        widths.append(max(stop - start for ranges in operand.values() for start, stop in ranges))
    kept = _walk(readers, widths, distance)
    out: list[Hits] = []
    for operand, starts in zip(hits, kept, strict=True):
        trimmed: Hits = {}
        for name in FIELDS:
            column = FIELDS.index(name) * _COLUMN
            ranges = [(s, e) for s, e in operand.get(name, []) if column + s in starts]
            if ranges:
                trimmed[name] = ranges
        out.append(trimmed)
    return out


def _walk(readers: list[list[int]], widths: list[int], distance: int) -> list[set[int]]:
    """FTS5's ``fts5ExprNearIsMatch``: the start positions it keeps for each operand."""
    cursor = [0] * len(readers)
    kept: list[set[int]] = [set() for _ in readers]
    while True:
        maximum = readers[0][cursor[0]]
        matched = False
        while not matched:
            matched = True
            for i, reader in enumerate(readers):
                minimum = maximum - widths[i] - distance
                if reader[cursor[i]] < minimum or reader[cursor[i]] > maximum:
                    matched = False
                    while reader[cursor[i]] < minimum:
                        cursor[i] += 1
                        if reader[cursor[i]] == _EOF:
                            return kept
                    maximum = max(maximum, reader[cursor[i]])
        for i, reader in enumerate(readers):
            kept[i].add(reader[cursor[i]])
        advance = 0
        smallest = readers[0][cursor[0] + 1]
        for i, reader in enumerate(readers):
            if reader[cursor[i] + 1] < smallest:
                smallest = reader[cursor[i] + 1]
                advance = i
        cursor[advance] += 1
        if readers[advance][cursor[advance]] == _EOF:
            return kept


def near_hits(hits: Sequence[Hits], spans: Sequence[int], distance: int) -> list[Hits]:
    """Apply NEAR to each operand's occurrences, given how many tokens each operand spans.

    Operands spanning no token are dropped, as FTS5 drops them, and one left
    alone keeps all its occurrences. Otherwise the result is :func:`trim_near`.
    The result holds one mapping per operand of ``hits``, empty for a dropped one.

    Raises:
        ValueError: ``hits`` and ``spans`` differ in length.
    """
    if len(hits) != len(spans):
        raise ValueError(f"near_hits got {len(hits)} operands but {len(spans)} spans")
    live = [i for i, span in enumerate(spans) if span > 0]
    out: list[Hits] = [{} for _ in hits]
    if len(live) == 1:
        out[live[0]] = {name: list(ranges) for name, ranges in hits[live[0]].items()}
    elif live:
        for i, trimmed in zip(live, trim_near([hits[i] for i in live], distance), strict=True):
            out[i] = trimmed
    return out


def _near(near: Near, document: TokenizedDocument, tokenizer: Tokenizer) -> list[Hits]:
    hits = [_occurrences(op, document, tokenizer, near.fields) for op in near.operands]
    spans = [len(_leaf_tokens(op, tokenizer)) for op in near.operands]
    return near_hits(hits, spans, near.distance)


def near_occurrences(
    near: Near,
    document: TokenizedDocument,
    *,
    tokenizer: Tokenizer | None = None,
) -> list[Hits]:
    """Return where each operand of ``near`` occurs as part of a match, one mapping per operand.

    The mappings are those of :func:`occurrences`, trimmed by :func:`trim_near`
    to the occurrences FTS5 counts, and are all empty when the group does not
    match. An operand dropped for having no token gets an empty mapping.
    """
    return _near(near, document, tokenizer or _DEFAULT_TOKENIZER)


def _matches(node: Node, document: TokenizedDocument, tokenizer: Tokenizer) -> bool:
    if isinstance(node, Term | Phrase):
        return bool(_occurrences(node, document, tokenizer, node.fields))
    if isinstance(node, Near):
        return any(_near(node, document, tokenizer))
    if isinstance(node, And):
        return all(_matches(operand, document, tokenizer) for operand in node.operands)
    if isinstance(node, Or):
        return any(_matches(operand, document, tokenizer) for operand in node.operands)
    if isinstance(node, Not):
        return not _matches(node.operand, document, tokenizer)
    raise TypeError(f"not a query node: {node!r}")


def matches(
    node: Node,
    document: SearchDocument | TokenizedDocument,
    *,
    tokenizer: Tokenizer | None = None,
) -> bool:
    """Report whether ``document`` satisfies the Boolean query ``node``.

    The semantics are those FTS5 gives the expression that
    :func:`~sci_etl_core.search.compile_fts5.to_match_expression` builds:

    - The text of a :class:`Term` and the words of a
      :class:`~sci_etl_core.search.query.Phrase` are tokenized again, as FTS5
      tokenizes a quoted string. Text that splits into several tokens matches
      as a phrase, and text with no token matches nothing.
    - A phrase matches consecutive tokens within one field. With ``prefix``, a
      term's last token matches every token that starts with it.
    - A leaf without ``fields`` searches every field.
    - A :class:`~sci_etl_core.search.query.Near` group matches as
      :func:`trim_near` describes. An operand whose text has no token is dropped
      from the group, and a group left with one operand matches as that operand.

    Any query can be evaluated, including a pure negation such as ``NOT b``.
    ``node`` is interpreted exactly as given, without
    :func:`~sci_etl_core.search.query.normalize`, so evaluation stays an
    independent check on normalization.

    ``tokenizer`` defaults to :class:`Unicode61Tokenizer`. It splits the query's
    words, and ``document`` unless it is already a :class:`TokenizedDocument`,
    which must then come from the same tokenizer.
    """
    chosen = tokenizer or _DEFAULT_TOKENIZER
    return _matches(node, _tokenized(document, chosen), chosen)
