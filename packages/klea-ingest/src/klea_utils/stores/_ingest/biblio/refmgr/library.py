"""A reference library indexed for matching, and reading one from files and a Zotero folder.

:mod:`klea_utils.stores.references` offers both under its public name and documents the
order in which a file is matched.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from klea_utils.stores._ingest.biblio.refmgr.bibtex import read_bibtex
from klea_utils.stores._ingest.biblio.refmgr.csl_json import looks_like_json, read_csl_json
from klea_utils.stores._ingest.biblio.refmgr.entries import FileMatch, ReferenceEntry
from klea_utils.stores._ingest.biblio.refmgr.matching import EntryIndex
from klea_utils.stores._ingest.biblio.refmgr.zotero import read_zotero

__all__ = ["ReferenceLibrary", "load_reference_library"]


class ReferenceLibrary:
    """Reference entries indexed for matching source files to them."""

    def __init__(self, entries: Iterable[ReferenceEntry]) -> None:
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
        """The entry of ``file_path`` (in the order :mod:`klea_utils.stores.references` gives).

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
    entries: list[ReferenceEntry] = []
    for path in map(Path, bib_files):
        entries.extend(read_csl_json(path) if looks_like_json(path) else read_bibtex(path))
    if zotero_dir is not None:
        entries.extend(read_zotero(Path(zotero_dir)))
    return ReferenceLibrary(entries)
