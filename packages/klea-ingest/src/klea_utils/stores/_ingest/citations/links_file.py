"""The citation-links file: a library's references and links, written atomically.

One JSON document per collection (see docs/guides/citations.md)::

    {"version": 1,
     "papers": {"a.pdf": {"title": ..., "authors": [...], "year": 2020, "doi": ...,
                          "arxiv": ..., "references": [{"label", "text", "title",
                          "authors", "year", "venue", "doi", "arxiv", "target"}],
                          "contexts": [{"entry": 0, "callout": "[1]", "sentence": ...}],
                          "cited_by": [{"file_name", "title", "contexts": [...]}]}}}

``target`` and ``cited_by`` are written for readers that only serve them; reading the file
back resolves the links again from the stored references, so a file written by an older
build is linked by today's rules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.atomic import atomic_write_json
from klea_utils.stores._ingest.citations.callouts import CitationContext
from klea_utils.stores._ingest.citations.library_links import CitationLibrary, PaperIdentity
from klea_utils.stores._ingest.citations.paper_citations import PaperCitations
from klea_utils.stores._ingest.citations.parse import ParsedReference
from klea_utils.stores.ingest_exceptions import CitationLinksError
from klea_utils.stores.layout import CITATIONS_FILE_VERSION

__all__ = ["LINKS_VERSION", "library_payload", "read_links", "write_links"]

LINKS_VERSION = CITATIONS_FILE_VERSION
"""Format version of the citation-links file (defined once, in klea-retrieval's layout)."""


def library_payload(library: CitationLibrary) -> dict[str, Any]:
    """The JSON document of ``library``."""
    papers: dict[str, Any] = {}
    for name in library.files():
        identity = library.identity(name)
        paper = library.citations(name)
        targets = library.targets(name)
        papers[name] = {
            "title": identity.title,
            "authors": list(identity.authors),
            "year": identity.year,
            "doi": identity.doi,
            "arxiv": identity.arxiv,
            "references": [
                {**ref.as_dict(), "target": target}
                for ref, target in zip(paper.references, targets, strict=True)
            ],
            "contexts": [
                {"entry": c.entry, "callout": c.callout, "sentence": c.sentence}
                for c in paper.contexts
            ],
            "cited_by": [
                {"file_name": c.file_name, "title": c.title, "contexts": list(c.contexts)}
                for c in library.cited_by(name)
            ],
        }
    return {"version": LINKS_VERSION, "papers": papers}


def write_links(path: Path, library: CitationLibrary) -> None:
    """Write ``library`` to ``path`` atomically (a crash leaves the previous file whole)."""
    atomic_write_json(path, library_payload(library))


def read_links(path: Path) -> CitationLibrary:
    """The library written at ``path``; an absent file is an empty library.

    Raises:
        CitationLinksError: The file is not a citation-links document; the message names
            the file (not its folder) and the field at fault.
    """
    import json

    library = CitationLibrary()
    if not path.is_file():
        return library
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CitationLinksError(path.name, "(file)", f"not readable JSON ({exc})") from None
    if not isinstance(payload, dict) or payload.get("version") != LINKS_VERSION:
        raise CitationLinksError(path.name, "version", f"expected {LINKS_VERSION}")
    papers = payload.get("papers")
    if not isinstance(papers, dict):
        raise CitationLinksError(path.name, "papers", "expected an object")
    for name, record in papers.items():
        library.add(*_paper(path.name, str(name), record))
    return library


def _paper(source: str, name: str, record: Any) -> tuple[PaperIdentity, PaperCitations]:
    where = f"papers.{name}"
    if not isinstance(record, dict):
        raise CitationLinksError(source, where, "expected an object")
    try:
        identity = PaperIdentity(
            file_name=name,
            title=str(record.get("title") or ""),
            authors=tuple(str(a) for a in record.get("authors") or ()),
            year=_year(record.get("year")),
            doi=record.get("doi") or None,
            arxiv=record.get("arxiv") or None,
        )
        references = tuple(
            ParsedReference(
                label=str(ref.get("label") or ""),
                text=str(ref["text"]),
                title=str(ref.get("title") or ""),
                authors=tuple(str(a) for a in ref.get("authors") or ()),
                year=_year(ref.get("year")),
                venue=str(ref.get("venue") or ""),
                doi=ref.get("doi") or None,
                arxiv=ref.get("arxiv") or None,
            )
            for ref in record.get("references") or ()
        )
        contexts = tuple(
            CitationContext(int(c["entry"]), str(c["callout"]), str(c["sentence"]))
            for c in record.get("contexts") or ()
        )
        return identity, PaperCitations(references=references, contexts=contexts)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CitationLinksError(source, where, f"malformed ({exc})") from None


def _year(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"year must be an integer, got {value!r}")
    return value
