"""Put the reference library into the metadata-map template of a chunked folder.

For each chunked file, the top of its cached text and its extracted metadata go to
:meth:`~klea_utils.stores.references.ReferenceLibrary.match`; the ``DEFAULT`` becomes the
entry's record (:mod:`.records`) or keeps the extracted one, marked unmatched.
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.biblio.refmgr.library import ReferenceLibrary
from klea_utils.stores._ingest.biblio.refmgr.records import matched_default, unmatched_default
from klea_utils.stores.chunk_cache import ChunkCache

__all__ = ["HEAD_CHARS", "apply_reference_library"]

HEAD_CHARS = 6000
"""Characters at the start of a file's cached text searched for DOIs, arXiv ids, titles."""


def _head_text(cache: ChunkCache, path: Path, file_hash: str | None) -> str:
    cached = cache.load(path, file_hash) if file_hash else None
    if cached is None:
        return ""
    parts: list[str] = []
    size = 0
    for doc in cached.docs:
        parts.append(doc.page_content)
        size += len(doc.page_content)
        if size >= HEAD_CHARS:
            break
    return "\n".join(parts)[:HEAD_CHARS]


def apply_reference_library(
    library: ReferenceLibrary,
    file_headings: dict[str, dict[str, Any]],
    files: list[Path],
    cache: ChunkCache,
    hashes: dict[Path, str],
    logger: logging.Logger,
) -> dict[str, dict[str, Any]]:
    """``file_headings`` with every file's ``DEFAULT`` filled from its matched entry."""
    out: dict[str, dict[str, Any]] = {}
    counts: Counter[str] = Counter()
    by_name = {p.name: p for p in files}
    for name, entry in file_headings.items():
        extracted = dict(entry.get("DEFAULT") or {})
        path = by_name.get(name)
        if path is None:
            out[name] = entry
            continue
        doi = extracted.get("doi")
        match = library.match(
            path,
            head_text=_head_text(cache, path, hashes.get(path)),
            dois=[doi] if isinstance(doi, str) else [],
            title=str(extracted.get("title") or ""),
        )
        counts[match.how or "unmatched"] += 1
        default = matched_default(match, extracted) if match.entry else unmatched_default(extracted)
        out[name] = {**entry, "DEFAULT": default}
        logger.debug("%s: %s", name, default["_match"])
    summary = ", ".join(f"{how} {n}" for how, n in sorted(counts.items()))
    logger.info(
        "Reference library (%d entries): %d of %d file(s) matched (%s)",
        len(library),
        sum(n for how, n in counts.items() if how != "unmatched"),
        sum(counts.values()),
        summary or "none",
    )
    return out
