"""Kinds of lines at the top of page one that are never a title.

Running-header boilerplate (:func:`is_banner`), a usual section heading, a field label and
a line of a table of contents; :func:`never_title` asks all of them at once.
"""

from __future__ import annotations

import re

TOP_LINES = 15
"""Non-empty lines treated as "the top of page one"."""
_BANNER_RE = re.compile(
    r"^(arxiv|preprint|journal|vol(ume)?\b|issue\b|page|doi|https?://|www\.|received|accepted|"
    r"published|copyright|\u00a9|proceedings|manuscript|submitted|downloaded|open access|"
    r"research article|original (article|research)|review|letter|article|contents lists|"
    r"available online|citation|licen[cs]e|key\s*words?\b|index terms\b|draft version\b|"
    r"typeset using\b|\d+$)",
    re.IGNORECASE,
)
# A field label opening a line ("Author(s): ...", "Website: ...") starts no title.
_LABEL_RE = re.compile(
    r"^(?:author\(s\)|authors?|by|websites?|web ?page|homepage|url|e-?mail|contact|"
    r"correspondence|corresponding authors?|affiliations?|address|date|orcid|phone|tel|"
    r"funding|editors?|note|version|status|cite (?:this|as)|how to cite|license|"
    r"key\s*words?|index terms|subjects?|categories|topics?|tags?)\s*:",
    re.IGNORECASE,
)
# The usual section headings of a paper: none is the paper's title.
_SECTION_RE = re.compile(
    r"^(?:(?:\d+(?:\.\d+)*|[ivx]+)[.)]?\s+)?(?:abstract|summary|introduction|background|"
    r"(?:materials and )?methods?|methodology|results(?: and discussion)?|discussion|"
    r"conclusions?|references|bibliography|acknowledge?ments?|appendix(?: [a-z])?|"
    r"related work|(?:table of )?contents|highlights|graphical abstract|preface|foreword|"
    r"supplementary (?:material|information)|key\s*words?|index terms)[.:]?$",
    re.IGNORECASE,
)


def is_section_heading(line: str) -> bool:
    """Whether ``line`` is a usual section heading (``Abstract``, ``1. Introduction``)."""
    return bool(_SECTION_RE.match(" ".join(line.lstrip("#").split())))


def is_label_line(line: str) -> bool:
    """Whether ``line`` opens with a field label (``Author(s):``, ``Website:``)."""
    return bool(_LABEL_RE.match(line.lstrip("#").strip()))


_DOT_LEADER_RE = re.compile(r"(?:\.\s?){4,}|\u2026")
# A notice behind a line number (a printed source listing: "2 Copyright 2018 The Authors").
_NUMBERED_NOTICE_RE = re.compile(r"^\d{1,5}\s+(?:copyright\b|\u00a9|\(c\)\s|licensed\b)", re.I)


def never_title(line: str) -> bool:
    """Whether ``line`` can never be a title.

    Boilerplate (:func:`is_banner`), a section heading, a field label, a line of a
    table of contents (a dot leader: ``MAIN GAME ........ 6``), or a copyright or licence
    notice behind a line number.
    """
    return (
        is_banner(line)
        or bool(_NUMBERED_NOTICE_RE.match(line.lstrip("#").strip()))
        or is_section_heading(line)
        or is_label_line(line)
        or bool(_DOT_LEADER_RE.search(line))
    )


def is_banner(line: str) -> bool:
    """Whether a line is running-header boilerplate rather than a title."""
    stripped = line.strip().lstrip("#").strip()
    return not stripped or bool(_BANNER_RE.match(stripped)) or len(stripped) < 4


def top_lines(text: str, limit: int = TOP_LINES) -> list[str]:
    """The first ``limit`` non-empty lines of ``text``, whitespace-collapsed."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return [line for line in lines if line][:limit]
