"""Read a BibTeX / BibLaTeX file (Better BibTeX, JabRef, Mendeley, Zotero exports).

bibtexparser 2 splits the file into entries and fields; :mod:`.values` resolves each raw
value (``@string`` and month macros, ``#`` concatenation, enclosing braces or quotes) and
every text field is then decoded from LaTeX to Unicode (:mod:`.latex`). A block the parser
refuses is logged with its line and skipped; a file with no readable entry at all is an
error.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.biblio.refmgr.entries import ReferenceEntry
from klea_utils.stores._ingest.biblio.refmgr.fields import clean_doi, split_words_list, year_of
from klea_utils.stores._ingest.biblio.refmgr.file_field import attachment_paths
from klea_utils.stores._ingest.biblio.refmgr.identifiers import normalize_arxiv
from klea_utils.stores._ingest.biblio.refmgr.latex import decode_latex, split_bibtex_names
from klea_utils.stores._ingest.biblio.refmgr.values import resolve_strings, resolve_value
from klea_utils.stores.ingest_exceptions import ReferenceLibraryError

__all__ = ["VENUE_FIELDS", "entry_from_fields", "read_bibtex"]

VENUE_FIELDS = ("journal", "journaltitle", "booktitle", "institution", "school")
"""BibTeX fields that name the venue, most specific first; the first present fills
``journal``."""

_ATTACHMENT_FIELDS = ("file", "pdf", "local-url")
_log = logging.getLogger(__name__)


def _text(fields: dict[str, str], *names: str) -> str:
    for name in names:
        value = fields.get(name, "").strip()
        if value:
            return decode_latex(value)
    return ""


def _arxiv(fields: dict[str, str]) -> str:
    prefix = (fields.get("archiveprefix") or fields.get("eprinttype") or "").casefold()
    eprint = fields.get("eprint", "")
    if eprint and prefix in ("", "arxiv"):
        found = normalize_arxiv(eprint)
        if found:
            return found
    for name in ("doi", "url", "journal", "note"):
        found = normalize_arxiv(fields.get(name, ""))
        if found:
            return found
    return ""


def entry_from_fields(
    key: str, fields: dict[str, str], origin: str, base_dir: Path
) -> ReferenceEntry:
    """The entry of one parsed BibTeX record (field names lower-case, values raw LaTeX)."""
    authors = split_bibtex_names(fields.get("author", "")) or split_bibtex_names(
        fields.get("editor", "")
    )
    keywords = tuple(decode_latex(k) for k in split_words_list(fields.get("keywords", "")))
    mendeley = tuple(decode_latex(k) for k in split_words_list(fields.get("mendeley-tags", "")))
    attachments: list[str] = []
    for name in _ATTACHMENT_FIELDS:
        attachments.extend(attachment_paths(fields.get(name, ""), base_dir))
    url = fields.get("url", "").strip()
    return ReferenceEntry(
        citekey=key,
        source="bibtex",
        origin=origin,
        title=_text(fields, "title"),
        authors=tuple(authors),
        year=year_of(fields.get("year") or fields.get("date")),
        journal=_text(fields, *VENUE_FIELDS),
        volume=_text(fields, "volume"),
        pages=_text(fields, "pages"),
        doi=clean_doi(fields.get("doi", "")),
        url=url,
        abstract=_text(fields, "abstract"),
        keywords=keywords,
        tags=tuple(dict.fromkeys([*keywords, *mendeley])),
        collections=tuple(
            decode_latex(group)
            for name in ("groups", "mendeley-groups")
            for group in split_words_list(fields.get(name, ""))
        ),
        attachments=tuple(attachments),
        arxiv=_arxiv(fields),
    )


def _field_values(entry: Any, strings: dict[str, str]) -> dict[str, str]:
    return {str(f.key).casefold(): resolve_value(str(f.value), strings) for f in entry.fields}


def read_bibtex(path: Path) -> list[ReferenceEntry]:
    """Every entry of the BibTeX / BibLaTeX file ``path``.

    Raises:
        ReferenceLibraryError: The file cannot be read, or holds no entry it can parse.
    """
    from bibtexparser.entrypoint import parse_string
    from bibtexparser.model import DuplicateFieldKeyBlock, Entry

    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        text = path.read_text(encoding="latin-1")  # old exports are Latin-1
    except OSError as exc:
        reason = f"cannot read the BibTeX file ({exc.strerror or exc})"
        raise ReferenceLibraryError(path, reason) from exc
    library = parse_string(text, parse_stack=[])  # values raw: resolved by .values
    strings = resolve_strings([(str(s.key), str(s.value)) for s in library.strings])
    blocks = list(library.entries)
    for failed in library.failed_blocks:
        line = (failed.start_line or 0) + 1
        ignored = getattr(failed, "ignore_error_block", None)
        if isinstance(failed, DuplicateFieldKeyBlock) and isinstance(ignored, Entry):
            _log.warning("%s line %d: %s; the first value is used", path, line, failed.error)
            blocks.append(ignored)
        else:
            _log.warning("%s line %d: entry skipped, not valid BibTeX there", path, line)
    if not blocks and text.strip():
        raise ReferenceLibraryError(path, "no BibTeX entry could be read (is it a .bib file?)")
    base_dir = path.resolve().parent
    blocks.sort(key=lambda b: b.start_line or 0)
    values = {str(b.key).casefold(): _field_values(b, strings) for b in blocks}
    entries = []
    for block in blocks:
        origin = f"{path} line {(block.start_line or 0) + 1} ({block.key})"
        fields = _with_crossref(values[str(block.key).casefold()], values)
        entries.append(entry_from_fields(block.key, fields, origin, base_dir))
    return entries


def _with_crossref(fields: dict[str, str], values: dict[str, dict[str, str]]) -> dict[str, str]:
    """``fields`` with what its ``crossref`` entry adds (BibTeX's inheritance: every field
    the entry lacks, and the parent's title as ``booktitle``)."""
    parent = values.get(fields.get("crossref", "").strip().casefold())
    if parent is None:
        return fields
    inherited = {k: v for k, v in parent.items() if k not in ("crossref", "file")}
    if "title" in parent:
        inherited.setdefault("booktitle", parent["title"])
        del inherited["title"]
    return {**inherited, **fields}
