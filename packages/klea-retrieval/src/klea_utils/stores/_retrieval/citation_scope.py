"""Restricting a question to a paper's citation neighbourhood, for ``klea-retrieve``.

``--references-of FILE`` keeps the papers FILE cites that the library holds;
``--citing FILE`` keeps the library's papers that cite FILE. Both read the citation-links
files the stores configuration names (each domain's ``citations``) and become a
``file_name`` filter, joined to any ``--filter`` with ``$and``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from klea_utils.stores._retrieval.citations_file import LibraryCitations, read_citations_file
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.exceptions import StoreConfigError

__all__ = ["Direction", "citation_scope", "scoped_filter"]

Direction = Literal["references-of", "citing"]


def _library(config: RetrieverConfig, option: str) -> LibraryCitations:
    paths = [Path(d.citations) for d in config.domains.values() if d.citations]
    if not paths:
        raise StoreConfigError(
            f"--{option}: the stores configuration names no citation-links file "
            "(a domain's 'citations'; klea-stores-create build --write-stores-config "
            "writes it)"
        )
    library = LibraryCitations()
    for path in paths:
        library = library.merged(read_citations_file(path))
    return library


def citation_scope(config: RetrieverConfig, paper: str, direction: Direction) -> list[str]:
    """The file names the question is restricted to, sorted (maybe none).

    Raises:
        StoreConfigError: No citation-links file is configured, or ``paper`` is in none.
        CitationsFileError: A links file is malformed.
    """
    library = _library(config, direction)
    if paper not in library:
        raise StoreConfigError(f"--{direction}: no paper {paper!r} in the citation links")
    found = library.of(paper)
    if direction == "references-of":
        names = {r["target"] for r in found["references"] if r["target"]}
    else:
        names = {c["file_name"] for c in found["cited_by"]}
    return sorted(names)


def scoped_filter(base: dict[str, Any] | None, files: list[str]) -> dict[str, Any]:
    """``base`` (if any) and ``file_name`` in ``files``."""
    scope = {"file_name": {"$in": files}}
    return scope if not base else {"$and": [base, scope]}
