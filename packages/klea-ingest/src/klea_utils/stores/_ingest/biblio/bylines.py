"""Bylines and title lines at the top of page one.

The top-of-page pass knows the common byline under a title (:func:`parse_byline`)::

    Ana Ortiz, Liam Chen. Journal of Galactic Studies, 2021. doi:10.5555/jgs.2021.014
    Ana Ortiz and Liam Chen. Journal of Galactic Studies, 2021.

Every item before the first ``". "`` must look like a person's name (2-4 capitalized
words, not starting with a word such as "The" or "We"), and what follows must be a
capitalized journal name, a comma and a year, then the end of the line, a ``.``/``;`` or
a DOI. OCR often joins the title and the byline into one line; only on the first line of
the page is a byline also looked for after a title-like prefix, which then becomes the
title.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from klea_utils.stores._ingest.biblio.author_lines import (
    AFFILIATION_WORDS,
    NOT_NAME_STARTS,
    is_affiliation_word,
    looks_like_name,
    name_list,
    names_in_line,
)
from klea_utils.stores._ingest.biblio.head_fields import DOI_RE, URL_RE
from klea_utils.stores._ingest.biblio.line_kinds import never_title, top_lines

# Words a title does not end with (a sentence cut before a name: "... confirmed by").
_DANGLING_WORDS = "a an and as at by for from in into is of on or than that the to was were with"
_DANGLING = frozenset(_DANGLING_WORDS.split())
_BYLINE_MAX_CHARS = 500  # longer lines are paragraphs, not bylines
_JOURNAL_WORD = r"(?:[A-Z][\w'\u2019.&\-]*|[a-z]+[A-Z][\w'\u2019.\-]*)"
_JOURNAL_LINK = r"(?:of|the|and|for|in|on|de|du|des|la|le|et|und|f\u00fcr|&)"
_VENUE_RE = re.compile(
    rf"^(?P<journal>{_JOURNAL_WORD}(?:\s+(?:{_JOURNAL_WORD}|{_JOURNAL_LINK})){{0,9}}),\s*"
    r"(?P<year>(?:1[89]|20)\d{2})(?=$|[.;]|\s+(?:doi\b|https?://))"
)


def author_names(line: str) -> list[str]:
    """The person names in an author line (affiliations and markers dropped), or ``[]``.

    Separators are commas, semicolons, ``and``/``&`` and footnote markers; affiliation
    marks (superscript digits, daggers, stars) and stray glyphs are removed. Items that do
    not look like a person's name (an affiliation such as ``University of Calgary``) are
    left out; at least one name must remain. A byline (:func:`parse_byline`) gives its
    names only: the list stops at the venue (``Tom Becker. Genome Methods, 2023.``).
    """
    byline = parse_byline(line)
    if byline is not None:
        return byline.authors
    return [
        n
        for n in names_in_line(line)
        if looks_like_name(n)
        and n.split()[0].casefold() not in NOT_NAME_STARTS
        and not any(w.casefold() in AFFILIATION_WORDS for w in n.split())
    ]


def find_title_and_authors(text: str) -> tuple[str | None, list[str]]:
    """From the top of page one: the first non-banner line, and a name line right below it.

    A byline (:func:`parse_byline`) is never the title; one right below the title gives
    the authors, and a first line joining title and byline gives both. A line in capitals
    without initials below the title is no byline (a heading, a picture's caption: ``THEY
    TIP-TOED ALONG``), as under :mod:`.under_title`.
    """
    lines = top_lines(text)
    for index, line in enumerate(lines):
        byline = parse_byline(line, allow_title=index == 0)
        if byline is not None and byline.title:
            return byline.title, byline.authors
        if byline is not None or never_title(line) or DOI_RE.search(line):
            continue
        title = line.lstrip("#").strip()
        if index + 1 < len(lines) and _continues_title(title, lines[index + 1]):
            title, index = f"{title} {lines[index + 1]}", index + 1
        authors: list[str] = []
        for follow in lines[index + 1 : index + 3]:
            if follow.isupper() and not re.search(r"\b[A-Z]\.", follow):
                continue  # capitals without initials: a heading or a caption ("THEY TIP-TOED")
            below = parse_byline(follow)
            names = below.authors if below is not None else names_in_line(follow)
            if names and all(
                looks_like_name(n) and not any(is_affiliation_word(w) for w in n.split())
                for n in names
            ):
                authors = names  # "Hebrew University" under a title is no author
                break
        return title, authors
    return None, []


_LINK_WORDS = _DANGLING | frozenset(["upon", "about", "over", "under", "between", "through"])
_TITLE_WORD_RE = re.compile(r"[^\W\d_]{4,}")


def _title_case(line: str) -> bool:
    words = [w for w in line.split() if _TITLE_WORD_RE.match(w)]
    return len(words) >= 2 and all(w[:1].isupper() for w in words)


def _continues_title(title: str, line: str) -> bool:
    """Whether ``line`` is the second line of a title in title case broken over two items
    (``Exact Solitary-wave Solutions for the General`` / ``Fifth-order Shallow Water-wave
    Models``): both in title case, the first ending no sentence, the second no byline,
    label, heading, affiliation or list of names; in capitals, where names cannot be told
    apart, only when a linking word joins the two (``... BASED`` / ``UPON EXISTING SOURCES``)."""
    if len(title.split()) < 4 or re.search(r"[.!?:;,]$", title) or len(line.split()) < 3:
        return False
    if never_title(line) or DOI_RE.search(line) or parse_byline(line) is not None:
        return False
    if re.search(r"[.!?;:]|\b(?:1[89]|20)\d{2}\b", line):
        return False  # a sentence, a venue or a date ("The Smith Lab. Annual Report, 2020.")
    if len(line.split()) > 12 or any(is_affiliation_word(w) for w in line.split()):
        return False
    names = name_list(line)
    if names and line.isupper():
        joined = {title.split()[-1].casefold(), line.split()[0].casefold()}
        return title.isupper() and bool(joined & _LINK_WORDS)  # "BASED" / "UPON EXISTING ..."
    if names and not any(re.search(r"\b[A-Z][a-z]+-[a-z]", n) for n in names):
        return False  # "Woo-Pyo Hong and Young-Dae Jung"; "Fifth-order ..." is no name
    return _title_case(title) and _title_case(line)


@dataclass(frozen=True)
class Byline:
    """A byline found at the top of page one.

    Attributes:
        authors: The names, in order.
        journal: The journal name.
        year: The publication year.
        title: The text before the byline when OCR joined title and byline into one
            line; ``None`` for a byline on its own line.
    """

    authors: list[str]
    journal: str
    year: int
    title: str | None = None


def _venue(text: str) -> tuple[str, int] | None:
    match = _VENUE_RE.match(text)
    if match is None:
        return None
    return match.group("journal"), int(match.group("year"))


def _split_title_name(item: str) -> tuple[str, str] | None:
    """Split ``"<end of title> <name>"``: the name is the capitalized words at the end.

    Three of them at most, and two when the word before them is capitalized too (a title
    in title case leaves no way to tell where the name begins).
    """
    words = item.split()
    run = 0
    while run < len(words) and words[len(words) - 1 - run][:1].isupper():
        run += 1
    take = run if 2 <= run <= 3 and run < len(words) else 2
    if len(words) <= take:
        return None
    return " ".join(words[:-take]), " ".join(words[-take:])


def _embedded_names(head: str) -> tuple[str, list[str]] | None:
    """Split ``"<title> <names>"`` (a title and its author list on one line).

    The names after the first are whole items of the list; only the first runs into the
    title. The title must look like one: three words or more, not a sentence ("We thank
    ...", "... reported by").
    """
    parts = re.split(r"(\s*(?:,|;|\band\b|&)\s*)", head)
    index = len(parts) - 1  # items at even indices, separators between them
    while index > 0 and name_list(parts[index]):
        index -= 2
    if index < 0 or name_list(parts[index]):
        return None
    split = _split_title_name(parts[index])
    if split is None:
        return None
    title = ("".join(parts[:index]) + split[0]).strip().rstrip(",;:-\u2013\u2014 ")
    words = title.split()
    if (
        len(words) < 3
        or words[0].casefold() in {"i", "we", "our", "they", "it", "he", "she", "here", "this"}
        or words[-1].casefold() in _DANGLING
        or title.endswith(".")
    ):
        return None
    names = name_list(split[1] + "".join(parts[index + 1 :]))
    return (title, names) if names else None


def parse_byline(line: str, *, allow_title: bool = False) -> Byline | None:
    """The byline ``"Name Name, Name Name. Journal Name, YEAR."`` in ``line``, or ``None``.

    Args:
        line: One line of text.
        allow_title: Also accept a byline after a title on the same line (OCR joins the
            two); the text before the names is returned as :attr:`Byline.title`.
    """
    line = " ".join(line.split())
    if len(line) > _BYLINE_MAX_CHARS:
        return None
    for split in re.finditer(r"\.\s+", line):
        venue = _venue(line[split.end() :])
        if venue is None:
            continue
        head = line[: split.start() + 1]  # the dot may be an initial's ("Doe, K.")
        names = name_list(head)
        if names:
            return Byline(names, *venue)
        embedded = _embedded_names(head) if allow_title else None
        if embedded is not None:
            return Byline(embedded[1], *venue, title=embedded[0])
    return None


def find_byline(text: str) -> Byline | None:
    """The first byline among the top lines of ``text`` (see :func:`parse_byline`)."""
    for index, line in enumerate(top_lines(text)):
        byline = parse_byline(line, allow_title=index == 0)
        if byline is not None:
            return byline
    return None


def first_text_line(text: str) -> str | None:
    """The first substantial line at the top of ``text``: the fallback title.

    Substantial: not running-header boilerplate (:func:`is_banner`), no DOI or URL, not a
    byline or a line of names, at least three words and twelve letters, at most 250
    characters. A first line that joins a title and its byline gives the title part.
    """
    for index, line in enumerate(top_lines(text)):
        byline = parse_byline(line, allow_title=index == 0)
        if byline is not None:
            line = byline.title or ""
        if never_title(line) or DOI_RE.search(line) or URL_RE.search(line) or name_list(line):
            continue
        line = line.lstrip("#").strip()
        if len(line.split()) >= 3 and sum(c.isalpha() for c in line) >= 12 and len(line) <= 250:
            return line
    return None
