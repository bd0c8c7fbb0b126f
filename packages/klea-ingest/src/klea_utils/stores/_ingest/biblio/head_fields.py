"""Fields found anywhere in the head of a document: DOI, URLs, keywords and year.

The pass over the first :data:`HEAD_CHARS` characters reads these; a field label (``Keywords:``)
or a marker (``Copyright 2021``, ``Received ...``) says where each one is.
"""

from __future__ import annotations

import re

HEAD_CHARS = 3000
"""Characters from the start of a document scanned for DOI, keywords, authors and URLs."""

DOI_RE = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)", re.IGNORECASE)
URL_RE = re.compile(r"https?://[^\s<>\"'\[\]{}]+", re.IGNORECASE)
KEYWORDS_RE = re.compile(
    r"^\s*(?:key\s*words?|index terms)\s*[:\u2014\u2013.\-]\s*(.+)$", re.IGNORECASE | re.MULTILINE
)
YEAR_RE = re.compile(
    r"(?:\u00a9|\(c\)|copyright|published|received|accepted)\D{0,20}((?:1[89]|20)\d{2})",
    re.IGNORECASE,
)
TRAILING = ".,;:)]}>'\""


def strip_doi(raw: str) -> str:
    """Normalize a DOI: drop a ``doi:``/resolver prefix and trailing punctuation."""
    doi = raw.strip()
    doi = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", "", doi, flags=re.IGNORECASE)
    while doi and doi[-1] in TRAILING:
        if doi[-1] == ")" and doi.count("(") >= doi.count(")"):
            break
        doi = doi[:-1]
    return doi


def find_doi(text: str) -> str | None:
    """Return the first DOI in ``text``, normalized, or ``None``."""
    match = DOI_RE.search(text)
    return strip_doi(match.group(1)) if match else None


def _trim_url(url: str) -> str:
    """Drop trailing punctuation, keeping a ``)`` that closes a ``(`` inside the URL."""
    while url and url[-1] in TRAILING:
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        url = url[:-1]
    cut = url.find(")")
    while cut != -1 and url[:cut].count("(") < url[: cut + 1].count(")"):
        url = url[:cut]  # "(see http://x.org/a)" : the paren closes the sentence's
        cut = url.find(")")
    return url


def find_urls(text: str) -> list[str]:
    """Return the distinct http(s) URLs in ``text`` in order, trailing punctuation removed."""
    seen: dict[str, None] = {}
    for match in URL_RE.finditer(text):
        url = _trim_url(match.group(0))
        if len(url) > len("https://"):
            seen.setdefault(url, None)
    return list(seen)


def split_list(value: str) -> list[str]:
    """Split a keyword or author line on ``;``, ``,``, ``\u00b7``, ``\u2022`` and `` and ``."""
    parts = re.split(r"\s*(?:[;,\u00b7\u2022|]|\band\b|&)\s*", value.strip())
    cleaned = (" ".join(p.split()).strip(TRAILING + " ") for p in parts)
    return [p for p in cleaned if p]


def find_keywords(text: str) -> list[str]:
    """Return the items of the first ``Keywords:`` line in ``text``."""
    match = KEYWORDS_RE.search(text)
    return split_list(match.group(1)) if match else []


def find_year(text: str) -> int | None:
    """Return a publication year next to a copyright/published/received marker, or ``None``."""
    match = YEAR_RE.search(text)
    return int(match.group(1)) if match else None
