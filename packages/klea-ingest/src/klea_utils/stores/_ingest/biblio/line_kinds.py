"""Kinds of lines at the top of page one that are never a title.

Running-header boilerplate (:func:`is_banner`), a usual section heading, a field label, a
line of a table of contents and a print header with its page count; :func:`never_title`
asks all of them at once.
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


_PRINT_HEADER_RE = re.compile(
    r"\b(?:page|seite|p\u00e1gina|pagina|p\u00e1g\.?|pag\.?|blatt)\s*\d+\s*"
    r"(?:of|sur|von|de|di|/)\s*\d+\b",
    re.IGNORECASE,
)
"""A browser's or a printer's header or foot (``Fichier : Document 1 sans titre Page 1 sur
1``, ``Page 3 of 12``): the printout's file name and page count, never its title."""
_DOT_LEADER_RE = re.compile(r"(?:\.\s?){4,}|\u2026")
# A notice behind a line number (a printed source listing: "2 Copyright 2018 The Authors").
_NUMBERED_NOTICE_RE = re.compile(r"^\d{1,5}\s+(?:copyright\b|\u00a9|\(c\)\s|licensed\b)", re.I)


def never_title(line: str) -> bool:
    """Whether ``line`` can never be a title.

    Boilerplate (:func:`is_banner`), a section heading, a field label, a line of a
    table of contents (a dot leader: ``MAIN GAME ........ 6``), a copyright or licence
    notice behind a line number, or a print header naming the page count (``Page 1 of 3``).
    """
    return (
        is_banner(line)
        or bool(_PRINT_HEADER_RE.search(line))
        or bool(_NUMBERED_NOTICE_RE.match(line.lstrip("#").strip()))
        or is_section_heading(line)
        or is_label_line(line)
        or bool(_DOT_LEADER_RE.search(line))
    )


_DESIGNATION_RE = re.compile(
    r"^[A-Z]{2,6}(?:-[A-Z]{1,3})?(?:\s+[A-Z]{2,6})?\s+"
    r"(?:[A-Z]{1,2}\.?\s?\d+(?:[.:\-]\d+)*|\d+(?:[.:]\d+)+)$"
)
"""A standard's designation: an issuing body's acronym and a number with a letter or a
separator in it (``CCITT T.81``, ``ISO 9001:2015``, ``ITU-T H.264``, ``IEEE 802.11``)."""


def is_designation(line: str) -> bool:
    """Whether ``line`` is only a standard's designation, the banner a standards body sets
    largest over the document's title (``CCITT T.81`` over ``INFORMATION TECHNOLOGY ...``)."""
    return bool(_DESIGNATION_RE.match(" ".join(line.split())))


def is_banner(line: str) -> bool:
    """Whether a line is running-header boilerplate rather than a title."""
    stripped = line.strip().lstrip("#").strip()
    return not stripped or bool(_BANNER_RE.match(stripped)) or len(stripped) < 4


def top_lines(text: str, limit: int = TOP_LINES) -> list[str]:
    """The first ``limit`` non-empty lines of ``text``, whitespace-collapsed."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return [line for line in lines if line][:limit]
