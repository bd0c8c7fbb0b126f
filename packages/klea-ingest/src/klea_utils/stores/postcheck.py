"""LLM-free linting of a stored BM25/vector corpus (post-store check)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from langchain_core.documents import Document

__all__ = [
    "MAX_LISTED",
    "MIN_CHUNK_CHARS",
    "PER_ANCHOR_SAMPLES",
    "REQUIRED_METADATA_KEYS",
    "SAMPLE_TEXT_WIDTH",
    "format_chunk_sample",
    "format_store_lint_report",
    "lint_store",
    "select_sample_windows",
]

MAX_LISTED = 20
"""How many short chunks / missing-metadata files to list before truncating the report."""

MIN_CHUNK_CHARS = 20
"""A chunk with fewer characters than this is suspicious (failed conversion, OCR miss)."""

PER_ANCHOR_SAMPLES = 3
"""Contiguous chunks shown at each sampling location."""

REQUIRED_METADATA_KEYS = ("file_name", "title", "year", "doi")
"""Keys whose absence suggests the file's DEFAULT entry did not apply or extraction failed."""

SAMPLE_TEXT_WIDTH = 200
"""Maximum characters of ``page_content`` shown per sample chunk."""

_UNKNOWN_FILE = "<no file_name>"


def lint_store(docs: list[Document]) -> dict[str, Any]:
    """Return a structured report of issues in a stored chunk corpus.

    Args:
        docs: Stored chunk documents (e.g. the unpickled BM25 corpus).

    Returns:
        A dict with ``total``, ``files``, ``chunks_per_file``, ``total_chars``, ``empty``
        (list of ``(file_name, chars)``), ``missing_metadata`` (``{file_name: [keys]}``),
        ``no_file_name``, ``invalid_content`` and ``invalid_year`` (counts).
    """
    per_file: Counter[str] = Counter()
    empty: list[tuple[str, int]] = []
    missing: dict[str, list[str]] = {}
    total_chars = no_file_name = invalid_content = invalid_year = 0
    for doc in docs:
        meta = doc.metadata if isinstance(doc.metadata, dict) else {}
        name = meta.get("file_name")
        if not isinstance(name, str) or not name:
            no_file_name += 1
            name = _UNKNOWN_FILE
        per_file[name] += 1
        content = doc.page_content
        if not isinstance(content, str):
            invalid_content += 1
            content = ""
        total_chars += len(content)
        if len(content.strip()) < MIN_CHUNK_CHARS:
            empty.append((name, len(content.strip())))
        year = meta.get("year")
        if year is not None and (isinstance(year, bool) or not isinstance(year, int)):
            invalid_year += 1
        absent = [k for k in REQUIRED_METADATA_KEYS if meta.get(k) in (None, "", [])]
        if absent and name != _UNKNOWN_FILE:
            known = missing.setdefault(name, [])
            known.extend(k for k in absent if k not in known)
    return {
        "total": len(docs),
        "files": len(per_file),
        "chunks_per_file": dict(per_file),
        "total_chars": total_chars,
        "empty": empty,
        "missing_metadata": {k: sorted(v) for k, v in missing.items()},
        "no_file_name": no_file_name,
        "invalid_content": invalid_content,
        "invalid_year": invalid_year,
    }


def select_sample_windows(
    docs: list[Document], anchors: int, per_anchor: int = PER_ANCHOR_SAMPLES
) -> list[list[Document]]:
    """Pick ``anchors`` evenly spaced windows of ``per_anchor`` contiguous chunks.

    Each window is ``per_anchor`` consecutive chunks starting at an anchor position. The
    anchors are spread evenly across the corpus avoiding the very first and last chunk
    (about 25/50/75% for three anchors); a window that would run past the end starts
    early enough to fit. A corpus smaller than one window gives a single window of
    everything. Deterministic: re-runs show the same samples.

    Returns:
        The windows; empty when ``anchors <= 0`` or the corpus is empty.
    """
    if anchors <= 0 or not docs:
        return []
    if per_anchor < 1:
        raise ValueError(f"per_anchor must be >= 1, got {per_anchor}")
    n = len(docs)
    if n <= per_anchor:
        return [list(docs)]
    last_start = n - per_anchor
    starts: list[int] = []
    for i in range(1, anchors + 1):
        start = min(last_start, round(i * n / (anchors + 1)))
        if start not in starts:
            starts.append(start)
    return [list(docs[s : s + per_anchor]) for s in starts]


def format_chunk_sample(doc: Document, width: int = SAMPLE_TEXT_WIDTH) -> str:
    """Render one chunk for human review: truncated text and a metadata line."""
    meta = doc.metadata if isinstance(doc.metadata, dict) else {}
    text = " ".join(str(doc.page_content).split())
    if len(text) > width:
        text = text[: max(0, width - 3)] + "..."
    headings = meta.get("headings") or []
    chain = " > ".join(str(h) for h in headings) if isinstance(headings, list) else str(headings)
    shown = {k: meta[k] for k in ("title", "year", "doi") if k in meta}
    details = ", ".join(f"{k}={v!r}" for k, v in shown.items())
    header = f"[{meta.get('file_name', _UNKNOWN_FILE)}]"
    if chain:
        header += f" {chain}"
    return f"{header}\n  {text}\n  ({details or 'no title/year/doi'})"


def format_store_lint_report(report: dict[str, Any], samples: list[list[Document]]) -> str:
    """Render a :func:`lint_store` report, with the given sample windows, as compact text."""
    total = report.get("total", 0)
    files = report.get("files", 0)
    lines = [
        f"Store corpus: {total} chunk(s) from {files} file(s), "
        f"{report.get('total_chars', 0)} characters"
    ]
    if files:
        lines.append(f"  average {total / files:.1f} chunk(s) per file")
    empty: list[tuple[str, int]] = report.get("empty", [])
    if empty:
        lines.append(f"{len(empty)} chunk(s) shorter than {MIN_CHUNK_CHARS} characters:")
        lines.extend(f"  - {name} ({chars} chars)" for name, chars in empty[:MAX_LISTED])
        if len(empty) > MAX_LISTED:
            lines.append(f"  ... and {len(empty) - MAX_LISTED} more")
    missing: dict[str, list[str]] = report.get("missing_metadata", {})
    if missing:
        lines.append(f"{len(missing)} file(s) with chunks missing metadata:")
        for name in sorted(missing)[:MAX_LISTED]:
            lines.append(f"  - {name}: {', '.join(missing[name])}")
        if len(missing) > MAX_LISTED:
            lines.append(f"  ... and {len(missing) - MAX_LISTED} more")
    for key, label in (
        ("no_file_name", "chunk(s) without a file_name"),
        ("invalid_content", "chunk(s) whose content is not text"),
        ("invalid_year", "chunk(s) whose year is not an integer"),
    ):
        if report.get(key):
            lines.append(f"{report[key]} {label}")
    problems = (
        empty
        or missing
        or any(report.get(k) for k in ("no_file_name", "invalid_content", "invalid_year"))
    )
    if not problems:
        lines.append("OK: no issues found")
    for index, window in enumerate(samples, 1):
        lines.append(f"--- sample {index}/{len(samples)} ---")
        lines.extend(format_chunk_sample(doc) for doc in window)
    return "\n".join(lines)
