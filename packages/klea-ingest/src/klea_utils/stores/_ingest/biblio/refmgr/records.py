"""A matched entry as a file's metadata-map ``DEFAULT``, and what it disagrees with.

The entry's fields win; the extracted ``doi`` and ``keywords`` fill only what the entry
lacks (its ``url*`` links too, when the entry has no ``url``). ``_sources`` names where each
field came from (``bibtex``, ``csl_json``, ``zotero`` or the extraction's source),
``_metadata_complete`` is true, ``_match`` is the match report line and ``_conflicts``
lists what the file itself says otherwise (a different DOI on its first page).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from klea_utils.stores._ingest.biblio.refmgr.entries import FileMatch, ReferenceEntry
from klea_utils.stores._ingest.biblio.refmgr.identifiers import normalize_doi

__all__ = ["CONFLICTS_KEY", "MATCH_KEY", "entry_record", "matched_default", "unmatched_default"]

MATCH_KEY = "_match"
"""``DEFAULT`` key of the match report line (``matched by doi (bibtex smith2020)``)."""

CONFLICTS_KEY = "_conflicts"
"""``DEFAULT`` key of the disagreements between the entry and the file (a list of lines)."""

_FILLED_FROM_FILE = ("doi", "keywords")


def entry_record(entry: ReferenceEntry) -> dict[str, Any]:
    """The entry's stored fields, empty ones left out."""
    record: dict[str, Any] = {
        "title": entry.title,
        "authors": list(entry.authors),
        "year": entry.year,
        "journal": entry.journal,
        "volume": entry.volume,
        "pages": entry.pages,
        "doi": entry.doi,
        "url": entry.url,
        "abstract": entry.abstract,
        "keywords": list(entry.keywords),
        "tags": list(entry.tags),
        "collections": list(entry.collections),
        "citekey": entry.citekey,
    }
    return {k: v for k, v in record.items() if v not in (None, "", [])}


def _conflicts(entry: ReferenceEntry, extracted: Mapping[str, Any]) -> list[str]:
    found = extracted.get("doi")
    if not isinstance(found, str) or not entry.doi:
        return []
    if normalize_doi(found) == normalize_doi(entry.doi):
        return []
    where = (extracted.get("_sources") or {}).get("doi", "the file")
    return [f"doi: the file says {found} ({where}), the {entry.source} entry {entry.doi}"]


def matched_default(match: FileMatch, extracted: Mapping[str, Any]) -> dict[str, Any]:
    """The ``DEFAULT`` of a file matched to ``match.entry``, given its extracted one."""
    entry = match.entry
    if entry is None:
        raise ValueError("matched_default needs a match with an entry")
    record = entry_record(entry)
    extracted_sources = extracted.get("_sources") or {}
    sources = dict.fromkeys(record, entry.source)
    for field in _FILLED_FROM_FILE:
        if field not in record and extracted.get(field):
            record[field] = extracted[field]
            sources[field] = str(extracted_sources.get(field, "extracted"))
    if "url" not in record:
        for key, value in extracted.items():
            if key.startswith("url") and key != "url_doi":
                record[key] = value
                sources[key] = str(extracted_sources.get(key, "extracted"))
    if "doi" in record:
        record["url_doi"] = f"https://doi.org/{record['doi']}"
        sources["url_doi"] = sources["doi"]
    record["_metadata_complete"] = True
    record["_sources"] = sources
    record[MATCH_KEY] = match.report
    conflicts = _conflicts(entry, extracted)
    if conflicts:
        record[CONFLICTS_KEY] = conflicts
    return record


def unmatched_default(extracted: Mapping[str, Any]) -> dict[str, Any]:
    """The extracted ``DEFAULT`` of a file no entry matched, marked so."""
    return {**extracted, MATCH_KEY: FileMatch().report}
