"""Reference-manager libraries: the entries that fill a source file's metadata.

A researcher's library (BibTeX/BibLaTeX as Better BibTeX, JabRef or Mendeley export it,
CSL-JSON as Zotero or Pandoc export it, or a Zotero data folder) is read into
:class:`ReferenceEntry` values by :func:`load_reference_library`. Each source file is then
matched to an entry (:meth:`ReferenceLibrary.match`), in this order:

1. attachment: the entry's attached file is this file (same absolute path, or the same
   file name when only one entry in the library attaches a file of that name);
2. doi: the file's extracted DOI, or the first DOI at the top of its text, is the entry's;
3. arxiv: the arXiv id in the file's name, or the first one in its text, is the entry's;
4. title: the entry's title and the file's extracted title, or a run of words at the top
   of its text, are at least :data:`TITLE_MATCH_THRESHOLD` alike.

A matched file's metadata-map ``DEFAULT`` is the entry's record, marked complete
(``klea-stores-create chunk|build --bib FILE --zotero DIR``); see
docs/guides/reference-managers.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "ENTRY_SOURCES",
    "TITLE_MATCH_THRESHOLD",
    "FileMatch",
    "ReferenceEntry",
    "ReferenceLibrary",
    "load_reference_library",
]

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


class ReferenceLibrary:
    """Reference entries indexed for matching source files to them."""

    def __init__(self, entries: Iterable[ReferenceEntry]) -> None:
        from klea_utils.stores._ingest.biblio.refmgr.matching import EntryIndex

        self.entries: tuple[ReferenceEntry, ...] = tuple(entries)
        self._index = EntryIndex(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def match(
        self,
        file_path: Path,
        *,
        head_text: str = "",
        dois: Iterable[str] = (),
        title: str = "",
    ) -> FileMatch:
        """The entry of ``file_path`` (see the module docstring for the order of tests).

        Args:
            file_path: The source file.
            head_text: The top of the file's text (DOIs, arXiv ids and the title are
                looked for there).
            dois: DOIs the file's metadata names, most trusted first.
            title: The file's extracted title.
        """
        return self._index.match(Path(file_path), head_text=head_text, dois=dois, title=title)


def load_reference_library(
    bib_files: Iterable[Path | str] = (), zotero_dir: Path | str | None = None
) -> ReferenceLibrary:
    """Read ``.bib`` and CSL-JSON files (by content: JSON or BibTeX) and a Zotero folder.

    Raises:
        ReferenceLibraryError: A file or the Zotero folder cannot be read or parsed; the
            message names it (and the entry or line at fault).
    """
    from klea_utils.stores._ingest.biblio.refmgr.bibtex import read_bibtex
    from klea_utils.stores._ingest.biblio.refmgr.csl_json import looks_like_json, read_csl_json
    from klea_utils.stores._ingest.biblio.refmgr.zotero import read_zotero

    entries: list[ReferenceEntry] = []
    for path in map(Path, bib_files):
        entries.extend(read_csl_json(path) if looks_like_json(path) else read_bibtex(path))
    if zotero_dir is not None:
        entries.extend(read_zotero(Path(zotero_dir)))
    return ReferenceLibrary(entries)
