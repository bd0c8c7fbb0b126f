"""Reading a collection's citation-links file for the services that answer from it.

``klea-stores-create build`` writes ``<source>/.klea-cache/<collection>.citations.json``
(see docs/guides/citations.md); this module reads the part a service answers: per paper,
its references (each with ``target``, the stored file it links to, or ``null``) and
``cited_by`` (the stored papers citing it, with their sentences). The links are taken as the
build resolved them; the reading side never imports klea-ingest. The format version is
:data:`~klea_utils.stores.layout.CITATIONS_FILE_VERSION`, shared with the writer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from klea_utils.stores.exceptions import CitationsFileError
from klea_utils.stores.layout import CITATIONS_FILE_VERSION

__all__ = ["REFERENCE_FIELDS", "LibraryCitations", "read_citations_file"]

REFERENCE_FIELDS = ("label", "text", "title", "authors", "year", "doi", "arxiv", "target")
"""The fields of each reference a service answers, in order."""

_EMPTY: dict[str, list[Any]] = {"references": [], "cited_by": []}


@dataclass(frozen=True)
class LibraryCitations:
    """The references and citing papers of every paper of a library, as served."""

    papers: Mapping[str, dict[str, list[Any]]] = field(default_factory=dict)

    def __contains__(self, file_name: object) -> bool:
        return file_name in self.papers

    def __len__(self) -> int:
        return len(self.papers)

    def of(self, file_name: str) -> dict[str, list[Any]]:
        """``{"references": [...], "cited_by": [...]}`` of ``file_name`` (empty if unknown)."""
        paper = self.papers.get(file_name, _EMPTY)
        return {
            "references": [dict(ref) for ref in paper["references"]],
            "cited_by": [dict(c, contexts=list(c["contexts"])) for c in paper["cited_by"]],
        }

    def merged(self, other: LibraryCitations) -> LibraryCitations:
        """Both libraries (a paper in both keeps ``self``'s record)."""
        return LibraryCitations({**other.papers, **self.papers})


def read_citations_file(path: Path) -> LibraryCitations:
    """The citations written at ``path``; an absent file is an empty library.

    Raises:
        CitationsFileError: The file is not a citation-links document; the message names
            the file (not its folder) and the field at fault.
    """
    if not path.is_file():
        return LibraryCitations()
    name = path.name
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        raise CitationsFileError(name, "(file)", f"not readable JSON ({reason})") from None
    if not isinstance(payload, dict) or payload.get("version") != CITATIONS_FILE_VERSION:
        raise CitationsFileError(name, "version", f"expected {CITATIONS_FILE_VERSION}")
    papers = payload.get("papers")
    if not isinstance(papers, dict):
        raise CitationsFileError(name, "papers", "expected an object")
    return LibraryCitations(
        {str(file): _paper(name, f"papers.{file}", record) for file, record in papers.items()}
    )


def _paper(name: str, where: str, record: Any) -> dict[str, list[Any]]:
    if not isinstance(record, dict):
        raise CitationsFileError(name, where, "expected an object")
    references = _list(name, f"{where}.references", record.get("references"))
    cited_by = _list(name, f"{where}.cited_by", record.get("cited_by"))
    return {
        "references": [
            _reference(name, f"{where}.references[{i}]", ref) for i, ref in enumerate(references)
        ],
        "cited_by": [_citing(name, f"{where}.cited_by[{i}]", c) for i, c in enumerate(cited_by)],
    }


def _list(name: str, where: str, value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise CitationsFileError(name, where, "expected a list")
    return value


def _reference(name: str, where: str, ref: Any) -> dict[str, Any]:
    if not isinstance(ref, dict):
        raise CitationsFileError(name, where, "expected an object")
    if not isinstance(ref.get("text"), str):
        raise CitationsFileError(name, f"{where}.text", "expected a string")
    year = ref.get("year")
    if year is not None and (isinstance(year, bool) or not isinstance(year, int)):
        raise CitationsFileError(name, f"{where}.year", "expected an integer or null")
    authors = _list(name, f"{where}.authors", ref.get("authors"))
    if not all(isinstance(a, str) for a in authors):
        raise CitationsFileError(name, f"{where}.authors", "expected a list of strings")
    out: dict[str, Any] = {
        "label": _text(ref.get("label")),
        "text": ref["text"],
        "title": _text(ref.get("title")),
        "authors": list(authors),
        "year": year,
    }
    for key in ("doi", "arxiv", "target"):
        value = ref.get(key)
        if value is not None and not isinstance(value, str):
            raise CitationsFileError(name, f"{where}.{key}", "expected a string or null")
        out[key] = value or None
    return out


def _citing(name: str, where: str, citing: Any) -> dict[str, Any]:
    if not isinstance(citing, dict) or not isinstance(citing.get("file_name"), str):
        raise CitationsFileError(name, f"{where}.file_name", "expected a string")
    contexts = _list(name, f"{where}.contexts", citing.get("contexts"))
    if not all(isinstance(c, str) for c in contexts):
        raise CitationsFileError(name, f"{where}.contexts", "expected a list of strings")
    return {
        "file_name": citing["file_name"],
        "title": _text(citing.get("title")),
        "contexts": list(contexts),
    }


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
