"""The values a reference-manager library is read into: entries, and how a file matched one.

The readers (:mod:`.bibtex`, :mod:`.csl_json`, :mod:`.zotero`) make
:class:`ReferenceEntry` values and :mod:`.matching` makes :class:`FileMatch` values; both
are offered under :mod:`klea_utils.stores.references`, which depends on this package, never
the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ENTRY_SOURCES", "TITLE_MATCH_THRESHOLD", "FileMatch", "ReferenceEntry"]

ENTRY_SOURCES = frozenset({"bibtex", "csl_json", "zotero"})
"""Where an entry was read; the value its record's ``_sources`` names."""

TITLE_MATCH_THRESHOLD = 0.9
"""Least similarity (difflib ratio of the folded titles, 0-1) for a match by title.

0.9 accepts a title that lost a subtitle word, a hyphen or an OCR slip in a long title
and refuses two different papers that share most of a short title."""


@dataclass(frozen=True)
class ReferenceEntry:
    """One entry of a reference-manager library, its text fields already in Unicode.

    Attributes:
        citekey: The citation key (``smith2020``) a Pandoc or LaTeX citation uses.
        source: ``bibtex``, ``csl_json`` or ``zotero``.
        origin: Where the entry was read (``library.bib`` line or Zotero item key).
        authors: Display names (``First von Last Jr``), corporate names whole.
        journal: The venue: journal, proceedings (booktitle) or institution.
        keywords: The entry's keywords (in a Zotero library, its tags).
        tags: Zotero tags, Mendeley tags or BibTeX keywords.
        collections: Zotero collections or JabRef groups holding the entry.
        attachments: Attached files, absolute where the library says where they are.
        arxiv: The arXiv id, without a version.
    """

    citekey: str
    source: str
    origin: str
    title: str = ""
    authors: tuple[str, ...] = ()
    year: int | None = None
    journal: str = ""
    volume: str = ""
    pages: str = ""
    doi: str = ""
    url: str = ""
    abstract: str = ""
    keywords: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    collections: tuple[str, ...] = ()
    attachments: tuple[str, ...] = field(default=(), repr=False)
    arxiv: str = ""

    def __post_init__(self) -> None:
        if self.source not in ENTRY_SOURCES:
            raise ValueError(f"{self.origin}: source must be one of {sorted(ENTRY_SOURCES)}")
        if not self.citekey.strip():
            raise ValueError(f"{self.origin}: an entry needs a citation key")


@dataclass(frozen=True)
class FileMatch:
    """How a source file was matched: ``how`` is ``attachment``, ``doi``, ``arxiv``,
    ``title`` or ``None`` (unmatched); ``score`` the title similarity."""

    entry: ReferenceEntry | None = None
    how: str | None = None
    score: float | None = None

    def __post_init__(self) -> None:
        if (self.entry is None) != (self.how is None):
            raise ValueError("a match has both an entry and how it was found, or neither")

    @property
    def report(self) -> str:
        """The match report line: ``matched by doi (bibtex smith2020)`` or ``unmatched``."""
        if self.entry is None:
            return "unmatched"
        how = f"title {self.score:.2f}" if self.how == "title" and self.score else self.how
        return f"matched by {how} ({self.entry.source} {self.entry.citekey})"
