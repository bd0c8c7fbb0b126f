"""Bounding and serializing reference material for the answer LLM's context."""

from __future__ import annotations

from typing import Any

from klea_utils.stores._retrieval.fusion import document_key
from klea_utils.stores.metadata import PERSON_NAME_FILTER_FIELDS
from klea_utils.stores.person_names import display_person_names
from langchain_core.documents import Document

__all__ = [
    "REF_DOC_OVERHEAD",
    "page_label",
    "printed_label",
    "serialize_reference_material",
    "truncate_reference_material",
]

REF_DOC_OVERHEAD = 200
"""Per-document character overhead counted by :func:`truncate_reference_material`."""

# Keys never shown: the file name is the header, headings label each chunk, the pages and
# the page label make the page reference, regions are boxes for a viewer, the hash is
# machine state, and ``_``-prefixed keys (scores, backend ids) are internal.
_HIDDEN_KEYS = frozenset(
    {"file_name", "file_hash", "headings", "page_start", "page_end", "regions", "page_label"}
)
_SHARED_ORDER = ("title", "authors", "year", "journal", "doi", "keywords")

RefMaterial = dict[str, list[tuple[Document, float]]]


def truncate_reference_material(reference_material: RefMaterial, max_chars: int) -> RefMaterial:
    """Truncate reference material to a global character budget.

    Documents are consumed in order per domain (domains in dict order), each costing
    ``len(page_content) + REF_DOC_OVERHEAD``, while the running total is below
    ``max_chars``; the document that crosses the budget is still included, and so is the
    first document even when the budget is 0, so the context is never silently empty
    when there was something to give. Every domain key is kept (with an empty list once
    the budget is spent). The input is not mutated.

    Raises:
        ValueError: When ``max_chars`` is negative.
    """
    if max_chars < 0:
        raise ValueError(f"max_chars must be >= 0, got {max_chars}")
    used = 0
    taken = 0
    out: RefMaterial = {}
    for domain, docs in reference_material.items():
        kept: list[tuple[Document, float]] = []
        for doc, score in docs:
            if taken and used >= max_chars:
                break
            taken += 1
            kept.append((doc, score))
            used += len(doc.page_content) + REF_DOC_OVERHEAD
        out[domain] = kept
    return out


def page_label(metadata: dict[str, Any]) -> str:
    """``p. 7`` or ``pp. 7-8`` from a chunk's ``page_start``/``page_end``, else ``""``;
    with the number printed on the page where it differs (the chunk's ``page_label``):
    ``p. 7 (printed 1234)``."""
    start, end = metadata.get("page_start"), metadata.get("page_end")
    if isinstance(start, bool) or not isinstance(start, int):
        return ""
    if isinstance(end, bool) or not isinstance(end, int) or end <= start:
        pages = f"p. {start}"
    else:
        pages = f"pp. {start}-{end}"
    printed = printed_label(metadata)
    return f"{pages} (printed {printed})" if printed else pages


def printed_label(metadata: dict[str, Any]) -> str:
    """The chunk's ``page_label`` when it says more than its page numbers, else ``""``."""
    label = metadata.get("page_label")
    if not isinstance(label, str) or not label.strip():
        return ""
    label = " ".join(label.split())[:40]
    start, end = metadata.get("page_start"), metadata.get("page_end")
    physical = {str(start), f"{start}-{end}"}
    return "" if label in physical else label


def _display_value(key: str, value: Any) -> str:
    if isinstance(value, list | tuple):
        items = [str(v) for v in value]
        if key in PERSON_NAME_FILTER_FIELDS:
            items = display_person_names(items)
        return "; ".join(items)
    return str(value)


def _shown_keys(doc: Document) -> list[str]:
    return [k for k in doc.metadata if k not in _HIDDEN_KEYS and not k.startswith("_")]


def _ordered(keys: set[str]) -> list[str]:
    first = [k for k in _SHARED_ORDER if k in keys]
    return first + sorted(keys - set(first))


def _best_scored(reference_material: RefMaterial) -> list[tuple[Document, float]]:
    """Each chunk once (first seen order), with the best score any domain gave it."""
    best: dict[str, tuple[Document, float]] = {}
    for docs in reference_material.values():
        for doc, score in docs:
            key = document_key(doc)
            seen = best.get(key)
            if seen is None:
                best[key] = (doc, score)
            elif score > seen[1]:
                best[key] = (seen[0], score)
    return list(best.values())


def _file_groups(reference_material: RefMaterial) -> list[tuple[str, list[tuple[Document, float]]]]:
    groups: dict[str, list[tuple[Document, float]]] = {}
    for doc, score in _best_scored(reference_material):
        file_name = doc.metadata.get("file_name")
        groups.setdefault(str(file_name) if file_name else "unknown source", []).append(
            (doc, score)
        )
    ordered = sorted(groups.items(), key=lambda item: -max(s for _, s in item[1]))
    return [(name, sorted(chunks, key=lambda c: -c[1])) for name, chunks in ordered]


def _header_keys(chunks: list[tuple[Document, float]]) -> set[str]:
    """Keys whose value is identical on every chunk of the file: hoisted to its header."""
    common = set(_shown_keys(chunks[0][0]))
    for doc, _ in chunks[1:]:
        common &= set(_shown_keys(doc))
    first = chunks[0][0].metadata
    return {k for k in common if all(doc.metadata[k] == first[k] for doc, _ in chunks)}


def _citation_key(chunks: list[tuple[Document, float]]) -> str | None:
    """The ``citekey`` every chunk of a file shares (a non-empty string), else ``None``."""
    keys = {doc.metadata.get("citekey") for doc, _ in chunks}
    if len(keys) != 1:
        return None
    key = keys.pop()
    return key.strip() if isinstance(key, str) and key.strip() else None


def _line(metadata: dict[str, Any], keys: list[str]) -> str:
    parts = [f"{k}: {_display_value(k, metadata[k])}" for k in keys]
    return " | ".join(p for p in parts if not p.endswith(": "))


def serialize_reference_material(reference_material: RefMaterial) -> str:
    """Serialize reference material into text for the prompt context.

    Documents are grouped by ``file_name`` (duplicates across domains shown once), files
    ordered by their best chunk's score and chunks by score. Each file gets a header
    ``### Source document N/M: [file]`` followed by one metadata line of the fields that
    every chunk of the file shares (bibliographic fields, ``url*`` keys, map keys); a
    ``citekey`` (from a reference manager) the file's chunks share is written on the
    header as ``[@key]``, Pandoc's citation form, instead of on that line
    (``### Source document 1/2: [smith.pdf] [@smith2020]``);
    metadata that differs between chunks is written inline above the chunk it belongs
    to. Person-name fields show display names only (see ``display_person_names``);
    ``headings`` and the pages (``[p. 7]``, ``[pp. 7-8]`` from ``page_start``/``page_end``,
    ``[p. 7 (printed 1234)]`` where the page prints another number) label each chunk;
    scores and ``_``-prefixed keys are never included.
    An empty input gives ``""``.
    """
    groups = _file_groups(reference_material)
    blocks: list[str] = []
    for n, (file_name, chunks) in enumerate(groups, start=1):
        header_keys = _header_keys(chunks)
        lines = [f"### Source document {n}/{len(groups)}: [{file_name}]"]
        citekey = _citation_key(chunks)
        if citekey is not None:
            lines[0] += f" [@{citekey}]"
            header_keys.discard("citekey")
        header = _line(chunks[0][0].metadata, _ordered(header_keys))
        if header:
            lines.append(header)
        for i, (doc, _) in enumerate(chunks, start=1):
            headings = doc.metadata.get("headings")
            label = f"#### Excerpt {i}/{len(chunks)}"
            if isinstance(headings, list | tuple) and headings:
                label += f" ({' > '.join(str(h) for h in headings)})"
            pages = page_label(doc.metadata)
            if pages:
                label += f" [{pages}]"
            lines.append("")
            lines.append(label)
            inline_keys = set(_shown_keys(doc)) - header_keys - ({"citekey"} if citekey else set())
            inline = _line(doc.metadata, _ordered(inline_keys))
            if inline:
                lines.append(inline)
            lines.append(doc.page_content)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
