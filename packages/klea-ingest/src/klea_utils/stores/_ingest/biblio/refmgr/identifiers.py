"""DOIs, arXiv ids and titles in the normal forms the matcher compares.

DOIs compare case-insensitively without their resolver prefix; arXiv ids without their
version (``2101.00001v2`` is ``2101.00001``); titles after Unicode folding (accents
dropped), case folding and punctuation removal.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "arxiv_in_name",
    "find_arxiv_ids",
    "find_dois",
    "normalize_arxiv",
    "normalize_doi",
    "normalize_title",
]

_DOI_RE = re.compile(r"\b10\.\d{4,9}/[^\s\"'<>{}]+", re.IGNORECASE)
_DOI_PREFIX_RE = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
_DOI_TRAILING = ".,;:)]}>"
_ARXIV_NEW = r"\d{4}\.\d{4,5}"
_ARXIV_OLD = r"[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7}"
_ARXIV_IN_TEXT_RE = re.compile(
    rf"(?:arxiv\s*[:.]?\s*|arxiv\.org/(?:abs|pdf)/|10\.48550/arxiv\.)({_ARXIV_NEW}|{_ARXIV_OLD})",
    re.IGNORECASE,
)
_ARXIV_ALONE_RE = re.compile(rf"^(?:arxiv:)?({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_NAME_RE = re.compile(rf"(?<![\d.])({_ARXIV_NEW})(?:v\d+)?(?![\d])")


def normalize_doi(value: str) -> str:
    """``value`` as a bare lower-case DOI (``10.1234/abc``), or ``""`` when it holds none."""
    value = _DOI_PREFIX_RE.sub("", value.strip())
    match = _DOI_RE.search(value)
    return match.group(0).rstrip(_DOI_TRAILING).casefold() if match else ""


def find_dois(text: str) -> list[str]:
    """The distinct DOIs in ``text``, normalised, in order of appearance."""
    found: list[str] = []
    for match in _DOI_RE.finditer(text):
        doi = match.group(0).rstrip(_DOI_TRAILING).casefold()
        if doi not in found:
            found.append(doi)
    return found


def normalize_arxiv(value: str) -> str:
    """An arXiv id (``arXiv:2101.00001v2``, a URL, a ``10.48550`` DOI) without its version."""
    value = value.strip()
    match = _ARXIV_ALONE_RE.match(value) or _ARXIV_IN_TEXT_RE.search(value)
    return match.group(1).casefold() if match else ""


def find_arxiv_ids(text: str) -> list[str]:
    """The distinct arXiv ids named as such (``arXiv:``, arxiv.org URLs) in ``text``."""
    found: list[str] = []
    for match in _ARXIV_IN_TEXT_RE.finditer(text):
        arxiv = match.group(1).casefold()
        if arxiv not in found:
            found.append(arxiv)
    return found


def arxiv_in_name(stem: str) -> str:
    """The arXiv id a file name carries (``2101.00001v2.pdf``, ``arXiv-2101.00001``)."""
    match = _ARXIV_NAME_RE.search(stem)
    return match.group(1) if match else ""


def normalize_title(value: str) -> str:
    """``value`` folded for comparison: no accents, case or punctuation, single spaces."""
    decomposed = unicodedata.normalize("NFKD", value)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return " ".join(re.sub(r"[^\w]+", " ", bare).replace("_", " ").split())
