"""The build's citation step: every stored file's references read from its cached chunks.

After the store phase, :func:`write_collection_links` streams the cached chunks once more
(no conversion: the cache holds them), puts each file's text back together in reading
order (a chunk's heading chain becomes a Markdown heading where it changes), parses its
references and callouts, takes what the paper is from its metadata (title, authors, year,
DOI, arXiv id from the file name or the DOI), and writes the collection's links file
(:func:`citations_path`) atomically. Files gone from the source are gone from the file, so
their links go with them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.citations.library_links import CitationLibrary, PaperIdentity
from klea_utils.stores._ingest.citations.links_file import write_links
from klea_utils.stores._ingest.citations.paper_citations import parse_citations
from klea_utils.stores._ingest.store.manifest import manifest_path
from klea_utils.stores.layout import CITATIONS_FILE_SUFFIX

__all__ = [
    "citations_path",
    "identity_from_chunks",
    "paper_text",
    "write_collection_links",
]

_NEW_ARXIV_NAME = re.compile(r"(?<!\d)(\d{4}\.\d{4,5})(?:v\d+)?(?!\d)")


def citations_path(source_dir: Path, collection_name: str) -> Path:
    """``<source>/.klea-cache/<collection>.citations.json``, beside the collection manifest."""
    manifest = manifest_path(source_dir, collection_name)
    return manifest.with_name(f"{collection_name}{CITATIONS_FILE_SUFFIX}")


def paper_text(chunks: Sequence[Any]) -> str:
    """A file's text from its chunks in reading order, headings as Markdown headings."""
    ordered = sorted(chunks, key=lambda d: int(d.metadata.get("chunk_index", 0)))
    lines: list[str] = []
    chain: list[str] | None = None
    for doc in ordered:
        headings = [str(h) for h in doc.metadata.get("headings") or ()]
        text = str(doc.page_content)
        for heading in headings:  # the contextualised text repeats the chain first
            if text.startswith(heading):
                text = text[len(heading) :].lstrip("\n")
        if headings != chain:
            chain = headings
            if headings:
                lines.append(f"## {headings[-1]}")
        lines.append(text)
    return "\n\n".join(lines)


def identity_from_chunks(file_name: str, chunks: Sequence[Any]) -> PaperIdentity:
    """What the paper is, from its (metadata-map folded) chunk metadata and its name."""
    metadata: dict[str, Any] = dict(chunks[0].metadata) if chunks else {}
    authors = metadata.get("authors") or ()
    if isinstance(authors, str):
        authors = [a for a in re.split(r"\s*;\s*|\s+and\s+", authors) if a]
    year = metadata.get("year")
    try:
        year = int(year) if year not in (None, "") else None
    except (TypeError, ValueError):
        year = None
    doi = metadata.get("doi") or None
    arxiv = metadata.get("arxiv") or None
    if not arxiv:
        named = _NEW_ARXIV_NAME.search(file_name)
        arxiv = named.group(1) if named else None
    return PaperIdentity(
        file_name=file_name,
        title=str(metadata.get("title") or ""),
        authors=tuple(str(a) for a in authors),
        year=year,
        doi=str(doi) if doi else None,
        arxiv=str(arxiv) if arxiv else None,
    )


def collection_library(results: Iterable[tuple[str, list[Any], Path]]) -> CitationLibrary:
    """The library of every file ``results`` streams (``(file_hash, chunks, path)``)."""
    library = CitationLibrary()
    for _hash, chunks, path in results:
        if not chunks:
            continue
        name = str(chunks[0].metadata.get("file_name") or Path(path).name)
        library.add(identity_from_chunks(name, chunks), parse_citations(paper_text(chunks)))
    return library


def write_collection_links(
    results: Iterable[tuple[str, list[Any], Path]], source_dir: Path, collection_name: str
) -> CitationLibrary:
    """Build the collection's library from ``results`` and write its links file."""
    library = collection_library(results)
    write_links(citations_path(source_dir, collection_name), library)
    return library
