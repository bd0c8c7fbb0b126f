"""In-text callouts linked to the reference entries they name, with the citing sentence.

Bracketed callouts name numbers or labels: ``[3]``, ``[3-5, 9]``, ``[BBCMW98, CB97]``;
raised callouts name numbers of a numbered list in superscript digits (``before³``,
``space¹,²``, ``fields⁴⁻⁶``), and are read only in a paper whose text links no bracketed
or author-year callout (there, raised digits are footnote marks), only when every number
of the run is an entry of the list, and only after a word or a closing mark (the line
reader leaves an exponent after a letter or a digit as it is);
author-year callouts name a first author and a year, in parentheses
(``(Smith et al., 2020; Lee, 2019a)``) or in the sentence (``Smith and Lee (2020a)``). A
callout is linked only to an entry of this paper's list that it names unambiguously; the
sentence around it is kept as the citation's context.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from klea_utils.stores._ingest.chunking.sentences import split_sentences
from klea_utils.stores._ingest.citations.parse import ParsedReference

__all__ = ["CitationContext", "find_callouts"]

_MAX_RANGE = 60


@dataclass(frozen=True)
class CitationContext:
    """A callout of entry ``entry`` (an index into the paper's references) in ``sentence``."""

    entry: int
    callout: str
    sentence: str

    def __post_init__(self) -> None:
        if self.entry < 0:
            raise ValueError(f"callout {self.callout!r}: negative entry index {self.entry}")


_BRACKETS = re.compile(r"\[([^\[\]\n]{1,120})\]")
_SUP = "\u2070\u00b9\u00b2\u00b3\u2074-\u2079"
_RAISED = re.compile(
    rf"(?:(?<=[^\W\d_]{{2}})|(?<=[.,;:)\u201d\u2019]))([{_SUP}]+(?:[,\u207b][{_SUP}]+)*)"
)
"""A run of superscript digits after a word or a closing mark, as the PDF line reader
writes a raised run (:mod:`klea_utils.stores._ingest.pdf.raised_digits`)."""
_PLAIN = str.maketrans(
    "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b", "0123456789-"
)
_MIN_RAISED_LIST = 3
"""A list this long at least: a footnote mark in a paper with one or two entries is no call."""
_RANGE = re.compile(r"^(\d{1,4})\s*[\-\u2013\u2014]\s*(\d{1,4})$")
_PARTICLE = r"(?:[Dd]e|[Vv]an|[Vv]on|[Dd]er|[Dd]a|[Dd]i|[Ll]e|[Ll]a|[Dd]u)\s"
_SURNAME = rf"(?:{_PARTICLE})*[A-Z\u00c0-\u024f][\w'\u2019\-]+"
_AUTHORS = rf"{_SURNAME}(?:\s+et\s+al\.?|\s+(?:and|&)\s+{_SURNAME})?"
_YEAR = r"(?:19|20)\d{2}[a-z]?"
_PAREN_GROUP = re.compile(r"\(([^()]{4,300})\)")
_PAREN_ITEM = re.compile(rf"({_AUTHORS}),?\s+({_YEAR}(?:\s*,\s*{_YEAR})*)")
_NARRATIVE = re.compile(rf"({_AUTHORS})\s+\(({_YEAR}(?:\s*,\s*{_YEAR})*)\)")


def _fold(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text)
    return "".join(c for c in folded if c.isalpha()).lower()


def find_callouts(body: str, references: Sequence[ParsedReference]) -> list[CitationContext]:
    """Every callout in ``body`` (the paper's text before its reference list) linked."""
    by_label = {r.label: index for index, r in enumerate(references) if r.label}
    by_author_year = _author_year_index(references)
    contexts: list[CitationContext] = []
    sentences = [
        sentence
        for paragraph in re.split(r"\n\s*\n", body)
        for sentence in split_sentences(" ".join(paragraph.split()))
    ]
    for sentence in sentences:
        if by_label:
            contexts.extend(_bracketed(sentence, by_label))
        if by_author_year:
            contexts.extend(_author_year(sentence, by_author_year))
    if not contexts and _numbered(by_label):
        for sentence in sentences:
            contexts.extend(_raised(sentence, by_label))
    return contexts


def _numbered(by_label: dict[str, int]) -> bool:
    """Whether the list is numbered 1, 2, 3, ... (the labels a raised callout can name)."""
    return len(by_label) >= _MIN_RAISED_LIST and all(label.isdigit() for label in by_label)


def _raised(sentence: str, by_label: dict[str, int]) -> list[CitationContext]:
    """Raised-digit callouts (``before³``, ``space¹,²``, ``fields⁴⁻⁶``) whose every number
    is an entry of the numbered list."""
    found: list[CitationContext] = []
    for match in _RAISED.finditer(sentence):
        plain = match.group(1).translate(_PLAIN)
        labels = _labels(plain.replace("-", "\u2013"), by_label)
        for label in labels:
            found.append(CitationContext(by_label[label], match.group(0), sentence))
    return found


def _bracketed(sentence: str, by_label: dict[str, int]) -> list[CitationContext]:
    found: list[CitationContext] = []
    for match in _BRACKETS.finditer(sentence):
        labels = _labels(match.group(1), by_label)
        for label in labels:
            found.append(CitationContext(by_label[label], match.group(0), sentence))
    return found


def _labels(inside: str, by_label: dict[str, int]) -> list[str]:
    """The labels a bracket names, or none when any part of it is not a label of the list."""
    out: list[str] = []
    for part in re.split(r"\s*[,;]\s*", inside.strip()):
        part = re.sub(r",?\s*(?:p|pp|Thm|Sec|Ch|Lemma|Prop)\.?\s*[\w.\-]+$", "", part).strip()
        span = _RANGE.match(part)
        if span and int(span.group(1)) < int(span.group(2)):
            first, last = int(span.group(1)), int(span.group(2))
            if last - first > _MAX_RANGE:
                return []
            names = [str(n) for n in range(first, last + 1)]
        else:
            names = [part]
        if not all(name in by_label for name in names):
            return []
        out.extend(names)
    return out


def _author_year_index(references: Sequence[ParsedReference]) -> dict[tuple[str, str], int]:
    """``(folded first-author surname, year with suffix)`` -> entry, unambiguous keys only."""
    index: dict[tuple[str, str], int] = {}
    seen: dict[tuple[str, str], int] = {}
    for number, ref in enumerate(references):
        if not ref.authors or ref.year is None:
            continue
        surname = _fold(ref.authors[0].split()[-1]) if ref.authors[0].split() else ""
        suffix = re.search(rf"(?<!\d){ref.year}([a-z])\b", ref.text)
        year = f"{ref.year}{suffix.group(1) if suffix else ''}"
        for key in {(surname, year), (surname, str(ref.year))}:
            seen[key] = seen.get(key, 0) + 1
            index[key] = number
    return {key: number for key, number in index.items() if seen[key] == 1}


def _author_year(sentence: str, index: dict[tuple[str, str], int]) -> list[CitationContext]:
    found: list[CitationContext] = []
    for group in _PAREN_GROUP.finditer(sentence):
        for item in _PAREN_ITEM.finditer(group.group(1)):
            found.extend(_linked(item.group(1), item.group(2), group.group(0), sentence, index))
    for match in _NARRATIVE.finditer(sentence):
        found.extend(_linked(match.group(1), match.group(2), match.group(0), sentence, index))
    return found


def _linked(
    authors: str, years: str, callout: str, sentence: str, index: dict[tuple[str, str], int]
) -> list[CitationContext]:
    surname = _fold(re.split(r"\s+(?:et\s+al\b|and\b|&)", authors)[0].split()[-1])
    out: list[CitationContext] = []
    for year in re.split(r"\s*,\s*", years):
        entry = index.get((surname, year))
        if entry is not None:
            out.append(CitationContext(entry, callout, sentence))
    return out
