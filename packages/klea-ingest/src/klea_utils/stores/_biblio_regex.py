"""Regular-expression extraction of bibliographic fields from plain text.

Two passes use these: one over the top of page one (title, authors, year) and one over the
first :data:`HEAD_CHARS` characters of the document (DOI, keywords, authors, URLs).
"""

from __future__ import annotations

import re

HEAD_CHARS = 3000
"""Characters from the start of a document scanned for DOI, keywords, authors and URLs."""

TOP_LINES = 15
"""Non-empty lines treated as "the top of page one"."""

DOI_RE = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)", re.IGNORECASE)
URL_RE = re.compile(r"https?://[^\s<>\"'()\[\]{}]+", re.IGNORECASE)
KEYWORDS_RE = re.compile(
    r"^\s*(?:key\s*words?|index terms)\s*[:\u2014\u2013.\-]\s*(.+)$", re.IGNORECASE | re.MULTILINE
)
AUTHORS_RE = re.compile(r"^\s*(?:authors?|by)\s*[:\-]?\s+(.+)$", re.IGNORECASE | re.MULTILINE)
YEAR_RE = re.compile(
    r"(?:\u00a9|\(c\)|copyright|published|received|accepted)\D{0,20}((?:1[89]|20)\d{2})",
    re.IGNORECASE,
)
_TRAILING = ".,;:)]}>'\""
_BANNER_RE = re.compile(
    r"^(arxiv|preprint|journal|vol(ume)?\b|issue\b|page|doi|https?://|www\.|received|accepted|"
    r"published|copyright|\u00a9|proceedings|manuscript|submitted|downloaded|open access|"
    r"research article|original (article|research)|review|letter|article|contents lists|"
    r"available online|citation|licen[cs]e|\d+$)",
    re.IGNORECASE,
)
_NAME_RE = re.compile(r"^[A-Z][\w'\u2019.\-]*(?:\s+[A-Z][\w'\u2019.\-]*){1,3}$")


def strip_doi(raw: str) -> str:
    """Normalize a DOI: drop a ``doi:``/resolver prefix and trailing punctuation."""
    doi = raw.strip()
    doi = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", "", doi, flags=re.IGNORECASE)
    while doi and doi[-1] in _TRAILING:
        if doi[-1] == ")" and doi.count("(") >= doi.count(")"):
            break
        doi = doi[:-1]
    return doi


def find_doi(text: str) -> str | None:
    """Return the first DOI in ``text``, normalized, or ``None``."""
    match = DOI_RE.search(text)
    return strip_doi(match.group(1)) if match else None


def find_urls(text: str) -> list[str]:
    """Return the distinct http(s) URLs in ``text`` in order, trailing punctuation removed."""
    seen: dict[str, None] = {}
    for match in URL_RE.finditer(text):
        url = match.group(0).rstrip(_TRAILING)
        if len(url) > len("https://"):
            seen.setdefault(url, None)
    return list(seen)


def split_list(value: str) -> list[str]:
    """Split a keyword or author line on ``;``, ``,``, ``\u00b7``, ``\u2022`` and `` and ``."""
    parts = re.split(r"\s*(?:[;,\u00b7\u2022|]|\band\b|&)\s*", value.strip())
    cleaned = (" ".join(p.split()).strip(_TRAILING + " ") for p in parts)
    return [p for p in cleaned if p]


def find_keywords(text: str) -> list[str]:
    """Return the items of the first ``Keywords:`` line in ``text``."""
    match = KEYWORDS_RE.search(text)
    return split_list(match.group(1)) if match else []


def _names(line: str) -> list[str]:
    """Items of an author line with affiliation markers (digits, daggers, stars) removed."""
    names = (re.sub(r"[\d*\u2020\u2021\u00a7]+$", "", n).strip() for n in split_list(line))
    return [n for n in names if n]


def looks_like_name(value: str) -> bool:
    """Whether ``value`` looks like a person's name (2-4 capitalized words)."""
    return bool(_NAME_RE.match(value.strip())) and len(value) <= 60


def find_authors(text: str) -> list[str]:
    """Return names from the first ``Authors:``/``By`` line whose items all look like names."""
    for match in AUTHORS_RE.finditer(text):
        names = _names(match.group(1))
        if names and all(looks_like_name(n) for n in names):
            return names
    return []


def find_year(text: str) -> int | None:
    """Return a publication year next to a copyright/published/received marker, or ``None``."""
    match = YEAR_RE.search(text)
    return int(match.group(1)) if match else None


def is_banner(line: str) -> bool:
    """Whether a line is running-header boilerplate rather than a title."""
    stripped = line.strip().lstrip("#").strip()
    return not stripped or bool(_BANNER_RE.match(stripped)) or len(stripped) < 4


def top_lines(text: str, limit: int = TOP_LINES) -> list[str]:
    """The first ``limit`` non-empty lines of ``text``, whitespace-collapsed."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return [line for line in lines if line][:limit]


def find_title_and_authors(text: str) -> tuple[str | None, list[str]]:
    """From the top of page one: the first non-banner line, and a name line right below it."""
    lines = top_lines(text)
    for index, line in enumerate(lines):
        if is_banner(line) or DOI_RE.search(line):
            continue
        title = line.lstrip("#").strip()
        authors: list[str] = []
        for follow in lines[index + 1 : index + 3]:
            names = _names(follow)
            if names and all(looks_like_name(n) for n in names):
                authors = names
                break
        return title, authors
    return None, []
