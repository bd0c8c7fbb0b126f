"""Hypothesis strategies for the search core: query trees, documents, and tricky text.

Import them from any test of the workspace (the tests folder is on ``pythonpath``)::

    from search_strategies import documents, query_nodes, tricky_text

The query trees and documents draw their words from one small vocabulary,
:data:`VOCABULARY`, so random queries match random documents often: a parity test
between two implementations then compares interesting answers, not empty sets. The
vocabulary holds words sharing prefixes (``dwarf``, ``dwarfs``) so prefix terms
matter, and folding cases (``Müller``/``muller``, ``Straße``).
"""

from __future__ import annotations

from hypothesis import strategies as st
from sci_etl_core.search.query import FIELDS, And, Near, Node, Not, Or, Phrase, Term
from sci_etl_core.search.store_base import SearchDocument

__all__ = [
    "MULTISCRIPT_CHARACTERS",
    "MULTISCRIPT_WORDS",
    "PREFIXES",
    "TRICKY_CHARACTERS",
    "VOCABULARY",
    "documents",
    "field_scopes",
    "field_text",
    "leaves",
    "multiscript_documents",
    "multiscript_queries",
    "multiscript_text",
    "near_groups",
    "query_nodes",
    "query_text",
    "record_ids",
    "tricky_text",
    "words",
]

VOCABULARY: tuple[str, ...] = ("dwarf", "dwarfs", "galaxy", "halo", "quasar", "muller", "x")
"""The folded words every generated document and query is made of."""

PREFIXES: tuple[str, ...] = ("dwar", "gal", "q", "x", "halo")
"""Prefixes of :data:`VOCABULARY` words, for prefix terms."""

_SPELLINGS: dict[str, tuple[str, ...]] = {
    "dwarf": ("dwarf", "Dwarf", "DWARF"),
    "muller": ("muller", "Müller", "MÜLLER"),
    "galaxy": ("galaxy", "Galaxy"),
}

TRICKY_CHARACTERS: tuple[str, ...] = (
    "ß", "ẞ", "İ", "ı", "Σ", "σ", "ς", "é", "e\u0301", "\u0301", "\u0300", "\x00",
    "\x01", "\x1f", "\u200b", "\u00a0", "-", "'", '"', "*", ":", "(", ")", "ǅ", "Ⅻ",
    "①", "½", "\ue000", "\U00010400", "\U0001f600", "\ufffe", "\u0378", "ﬁ", "Å", "\u212b",
)  # fmt: skip
"""Characters on which case folding, diacritic removal or token splitting is easy to get wrong."""


def words() -> st.SearchStrategy[str]:
    """A vocabulary word, in one of its spellings (case, diacritics)."""
    return st.sampled_from(VOCABULARY).flatmap(
        lambda word: st.sampled_from(_SPELLINGS.get(word, (word,)))
    )


def field_text(max_words: int = 8) -> st.SearchStrategy[str]:
    """Field text: vocabulary words joined by assorted separators."""
    separators = st.sampled_from((" ", " ", " ", ", ", "-", ". ", "\n", " (", ") "))
    return st.lists(st.tuples(words(), separators), max_size=max_words).map(
        lambda pairs: "".join(word + sep for word, sep in pairs).strip()
    )


def record_ids() -> st.SearchStrategy[str]:
    """Short non-empty record ids."""
    return st.text(alphabet="abcdefghij0123456789", min_size=1, max_size=6)


def documents(max_words: int = 8) -> st.SearchStrategy[SearchDocument]:
    """A :class:`SearchDocument` whose three fields are :func:`field_text`."""
    return st.builds(
        SearchDocument,
        record_id=record_ids(),
        title=field_text(max_words // 2 or 1),
        abstract=field_text(max_words),
        body=field_text(max_words),
    )


def field_scopes() -> st.SearchStrategy[tuple[str, ...]]:
    """A field scope: empty (every field) or one or two distinct fields."""
    return st.one_of(
        st.just(()),
        st.lists(st.sampled_from(FIELDS), min_size=1, max_size=2, unique=True).map(tuple),
    )


def _terms(scoped: bool) -> st.SearchStrategy[Term]:
    fields = field_scopes() if scoped else st.just(())
    return st.one_of(
        st.builds(Term, st.sampled_from(VOCABULARY), fields),
        st.builds(Term, st.sampled_from(PREFIXES), fields, st.just(True)),
    )


def _phrases(scoped: bool) -> st.SearchStrategy[Phrase]:
    fields = field_scopes() if scoped else st.just(())
    return st.builds(
        Phrase, st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=3).map(tuple), fields
    )


def near_groups() -> st.SearchStrategy[Near]:
    """A :class:`Near` of two or three unscoped terms and phrases, with a small distance."""
    operand = st.one_of(_terms(False), _phrases(False))
    return st.builds(
        Near,
        st.lists(operand, min_size=2, max_size=3).map(tuple),
        st.integers(min_value=0, max_value=4),
        field_scopes(),
    )


def leaves() -> st.SearchStrategy[Node]:
    """A term (plain or prefix), phrase, or NEAR group over :data:`VOCABULARY`."""
    return st.one_of(_terms(True), _phrases(True), near_groups())


def query_nodes(max_leaves: int = 8) -> st.SearchStrategy[Node]:
    """A random, not necessarily normalized, query tree over :data:`VOCABULARY`.

    Trees nest ``And``, ``Or`` and ``Not`` freely (double negations, single-operand
    groups, nested groups of one kind), so they exercise normalization too.
    """
    return st.recursive(
        leaves(),
        lambda children: st.one_of(
            st.builds(Not, children),
            st.lists(children, min_size=1, max_size=3).map(lambda ops: And(tuple(ops))),
            st.lists(children, min_size=1, max_size=3).map(lambda ops: Or(tuple(ops))),
        ),
        max_leaves=max_leaves,
    )


def tricky_text(max_size: int = 24) -> st.SearchStrategy[str]:
    """Text mixing :data:`TRICKY_CHARACTERS`, ASCII letters and arbitrary code points.

    Surrogates are excluded: SQLite cannot receive them.
    """
    char = st.one_of(
        st.sampled_from(TRICKY_CHARACTERS),
        st.sampled_from("abcXYZ019 "),
        st.characters(exclude_categories=("Cs",)),
    )
    return st.lists(char, max_size=max_size).map("".join)


MULTISCRIPT_CHARACTERS: tuple[str, ...] = (
    "研", "究", "方", "法", "の", "は", "カ", "ー", "ｶ", "\uff9e", "が", "\u3099", "𠀀", "豈",
    "연", "구", "는", "에", "서", "과", "들", "ᄀ", "\u1161", "ㄱ",
    "ภ", "า", "\u0e48", "\u0e31", "ໄ", "\u0ec8",
    "ك", "ک", "ي", "ی", "ى", "أ", "ة", "\u0640", "\u064e", "\u0670", "ﻻ", "۱", "٢", "\u200c",
    "Ａ", "ａ", "１", "。", "，", "、",
)  # fmt: skip
"""Characters of the scripts the multiscript tokenizer segments or normalises, with their marks."""


def multiscript_text(max_size: int = 24) -> st.SearchStrategy[str]:
    """Text mixing :data:`MULTISCRIPT_CHARACTERS` with tricky and arbitrary characters.

    Surrogates are excluded: SQLite cannot receive them.
    """
    char = st.one_of(
        st.sampled_from(MULTISCRIPT_CHARACTERS),
        st.sampled_from(MULTISCRIPT_CHARACTERS),
        st.sampled_from(TRICKY_CHARACTERS),
        st.sampled_from("abX1 "),
        st.characters(exclude_categories=("Cs",)),
    )
    return st.lists(char, max_size=max_size).map("".join)


MULTISCRIPT_WORDS: tuple[str, ...] = (
    "研究方法", "方法", "研究", "東京大学の", "研究者たちは", "연구는", "연구", "연구에서",
    "결과를", "كتاب", "کتاب", "مدرسة", "مدرسه", "ภาษาไทย", "ภาษา", "dwarf", "Müller",
)  # fmt: skip
"""Words in the scripts the multiscript tokenizer handles, several spellings of one word."""


def multiscript_documents() -> st.SearchStrategy[SearchDocument]:
    """A :class:`SearchDocument` of :data:`MULTISCRIPT_WORDS`, joined with and without spaces."""
    glue = st.sampled_from(("", " ", "，", "。", " - "))
    text = st.lists(st.tuples(st.sampled_from(MULTISCRIPT_WORDS), glue), max_size=6).map(
        lambda pairs: "".join(word + sep for word, sep in pairs)
    )
    return st.builds(SearchDocument, record_id=record_ids(), title=text, body=text)


def multiscript_queries() -> st.SearchStrategy[Node]:
    """Queries of :data:`MULTISCRIPT_WORDS`: terms, prefixes, phrases, AND, OR, NOT."""
    term = st.one_of(
        st.builds(Term, st.sampled_from(MULTISCRIPT_WORDS), field_scopes()),
        st.builds(Term, st.sampled_from(("研", "연구", "كت", "ภา")), st.just(()), st.just(True)),
        st.builds(
            Phrase, st.lists(st.sampled_from(MULTISCRIPT_WORDS), min_size=1, max_size=2).map(tuple)
        ),
    )
    return st.recursive(
        term,
        lambda inner: st.one_of(
            st.builds(And, st.lists(inner, min_size=2, max_size=3).map(tuple)),
            st.builds(Or, st.lists(inner, min_size=2, max_size=3).map(tuple)),
            st.builds(lambda a, b: And((a, Not(b))), inner, inner),
        ),
        max_leaves=4,
    )


def query_text(max_size: int = 30) -> st.SearchStrategy[str]:
    """Query-like text: operators, quotes, parentheses, scopes and words, in any order."""
    piece = st.one_of(
        st.sampled_from(
            (
                "AND", "OR", "NOT", "&&", "||", "-", "(", ")", '"', "*", ":", ",", "NEAR(",
                "title:", "Abstract,body:", "and", " ", " ", "5", "dwarf", "Müller", "H-alpha",
            )
        ),
        words(),
        st.sampled_from(TRICKY_CHARACTERS),
    )  # fmt: skip
    return st.lists(piece, max_size=max_size).map("".join)
