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

A facade under the public names: the values are defined in the private
``_ingest/biblio/refmgr/entries.py`` and the library in ``_ingest/biblio/refmgr/library.py``,
so the readers and the matcher never import this module (an import-linter contract keeps it
so).
"""

from __future__ import annotations

from klea_utils.stores._ingest.biblio.refmgr.entries import (
    ENTRY_SOURCES,
    TITLE_MATCH_THRESHOLD,
    FileMatch,
    ReferenceEntry,
)
from klea_utils.stores._ingest.biblio.refmgr.library import (
    ReferenceLibrary,
    load_reference_library,
)

__all__ = [
    "ENTRY_SOURCES",
    "TITLE_MATCH_THRESHOLD",
    "FileMatch",
    "ReferenceEntry",
    "ReferenceLibrary",
    "load_reference_library",
]
