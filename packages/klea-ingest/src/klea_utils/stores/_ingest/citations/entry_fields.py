"""The fields of one reference entry read from its text: authors, title, year, venue.

Three layouts cover most styles: a quoted title (``A. Author, “Title,” Venue``), an
author-year entry (``Author, A. (2020). Title. Venue``) and a sentence layout
(``A. Author and B. Author. Title. Venue, 2020``). Each field is left empty rather than
guessed when the layout does not say it.
"""

from __future__ import annotations

import re

from klea_utils.stores._ingest.citations.identifiers import find_arxiv, find_doi

__all__ = ["EntryFields", "read_fields"]

_YEAR = re.compile(r"(?<![\d\u2013\-/.])((?:1[89]|20)\d{2})[a-z]?(?![\d\u2013\-])")
_PAREN_YEAR = re.compile(r"\(((?:1[89]|20)\d{2})[a-z]?\)")
_QUOTED = re.compile(r"[\u201c\"]\s*(.{3,}?)[,.]?\s*[\u201d\"]")
_URLISH = re.compile(
    r"(?:https?\s*:\s*//|doi\s*:|URL|www\.)\S*(?:\s[./]\S*)*|\b10\s*\.\s*\d{4,9}\s*/\S*"
    r"|arxiv\s*:?\s*[\w./-]+(?:\s*\.\s*\d+)?|abs/\S+",
    re.IGNORECASE,
)
# A sentence end: a period after two or more letters/digits (not an initial, not "et al."
# inside a name list), then a space.
_SENTENCE_END = re.compile(r"(?<=[^\s.]{2})[.?]\s+|(?<=[\u201d\"])\s*[.,]?\s+")
_INITIAL = re.compile(r"\b[A-Z\u00c0-\u024f]\.")

EntryFields = dict[str, object]


def read_fields(text: str) -> EntryFields:
    """``{"title", "authors", "year", "venue", "doi", "arxiv"}`` of one entry's text."""
    authors_text, title, rest = _layout(text)
    return {
        "title": _clean_title(title),
        "authors": _authors(authors_text),
        "year": _year(text),
        "venue": _venue(rest),
        "doi": find_doi(text),
        "arxiv": find_arxiv(text),
    }


def _layout(text: str) -> tuple[str, str, str]:
    quoted = _QUOTED.search(text)
    if quoted and quoted.start() < len(text) // 2 + 40:
        return text[: quoted.start()].rstrip(" ,"), quoted.group(1), text[quoted.end() :]
    paren = _PAREN_YEAR.search(text)
    if paren and paren.start() < 400:
        after = text[paren.end() :].lstrip(" .,")
        title, rest = _first_sentence(after)
        return text[: paren.start()], title, rest
    authors, rest = _author_part(text)
    title, rest = _first_sentence(rest)
    return authors, title, rest


def _first_sentence(text: str) -> tuple[str, str]:
    match = _SENTENCE_END.search(text)
    if match is None:
        return text, ""
    return text[: match.start()], text[match.end() :]


def _author_part(text: str) -> tuple[str, str]:
    """The names before the title: up to the first sentence end that is not an initial."""
    head, rest = _first_sentence(text)
    pieces = [p.strip() for p in re.split(r",\s*", head)]
    while len(pieces) > 1 and not _INITIAL.search(pieces[-1]) and "et al" not in pieces[-1]:
        rest = pieces.pop() + ". " + rest  # "J. Pearl, Causality." - the title follows a comma
    return ", ".join(pieces), rest


def _authors(text: str) -> list[str]:
    text = re.sub(r"\s*(?:&|\band\b)\s*", ", ", text.replace("&amp;", "&"))
    text = re.sub(r",?\s*\bet\s+al\.?", "", text).strip(" ,")
    if not text or len(text) > 600:
        return []
    surname_first = re.findall(
        r"([A-Z\u00c0-\u024f][\w'\u2019\- ]*?),\s*((?:[A-Z\u00c0-\u024f]\.\s?-?)+)", text
    )
    if surname_first and re.match(r"[A-Z\u00c0-\u024f][\w'\u2019\- ]*?,\s*[A-Z]\.", text):
        return [f"{initials.strip()} {surname.strip()}" for surname, initials in surname_first]
    names = [" ".join(piece.split()).strip(" .") for piece in text.split(",")]
    return [name for name in names if name and any(c.isalpha() for c in name)]


def _clean_title(title: str) -> str:
    title = " ".join(title.split()).strip(' ,.;:\u201c\u201d"')
    return title if len(title.split()) >= 1 and len(title) >= 3 else ""


def _year(text: str) -> int | None:
    paren = _PAREN_YEAR.search(text)
    if paren:
        return int(paren.group(1))
    bare = _URLISH.sub(" ", text)
    found = _YEAR.search(bare)
    return int(found.group(1)) if found else None


def _venue(rest: str) -> str:
    rest = _URLISH.sub(" ", rest).strip(" ,.")
    rest = re.sub(r"^In\s+", "", rest)
    venue = re.split(r",?\s*(?:\(|\b(?:vol|pp|pages|no)\b\.?\s*\d|\d)", rest, maxsplit=1)[0]
    venue = venue.strip(" ,.;:")
    return venue if len(venue) >= 2 else ""
