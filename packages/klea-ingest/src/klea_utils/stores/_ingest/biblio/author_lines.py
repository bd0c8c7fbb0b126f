"""Person names in the author lines of a document's text.

An author line in a PDF carries more than names: affiliation marks (superscript digits,
daggers, stars), glyphs of symbol fonts, spacing accents, and in an author grid the
neighbour's affiliation. :func:`names_in_line` splits such a line into names,
:func:`looks_like_name` says whether an item is a person's name, :func:`organisation_name`
reads a company or collaboration author, and :func:`find_authors` reads an ``Authors:`` field.
"""

from __future__ import annotations

import re

from klea_utils.stores._ingest.biblio.head_fields import TRAILING, URL_RE
from klea_utils.stores._ingest.biblio.line_kinds import is_banner
from klea_utils.stores._ingest.biblio.name_parsing import (
    ends_with_initial,
    is_initials,
    is_suffix,
    join_name_parts,
    split_people,
)

AUTHORS_RE = re.compile(
    r"^\s*(?:author\(s\)|authors?|by)\s*[:\-]?\s+(.+)$", re.IGNORECASE | re.MULTILINE
)
_NAME_RE = re.compile(
    r"^[A-Z\u00c0-\u00de][\w'\u2019.\-]*(?:\s+(?:[A-Z\u00c0-\u00de][\w'\u2019.\-]*|"
    r"van|von|der|de|da|di|du|le|la|del|dos|ten|ter|bin)){1,3}$"
)
# Capitalized words that start sentences, titles and affiliations, never a person's name.
_NOT_NAME_START_WORDS = """
    a an and as at by for from in into of on or our the their these this those to we with
    abstract introduction results methods discussion conclusion figure table section chapter
    department university institute school faculty laboratory center centre
"""
NOT_NAME_STARTS = frozenset(_NOT_NAME_START_WORDS.split())


_MARKERS = "*\u2217\u2020\u2021\u00a7\u00b6\u2016\u22c6\u2605\u2606\u00aa\u00ba"
_JUNK = re.compile(r"[\ufeff\u200b-\u200d\u2060]")
# Glyphs from symbol fonts without a Unicode map stand where a footnote marker was.
_MARKER_GLYPHS = re.compile(r"[\u2c00-\u2c5f\ue000-\uf8ff\ufffd]")
_SPACING_ACCENTS = {
    "\u00b4": "\u0301", "`": "\u0300", "\u00a8": "\u0308", "^": "\u0302", "\u02dc": "\u0303",
    "~": "\u0303", "\u02c7": "\u030c", "\u02d8": "\u0306", "\u02da": "\u030a",
}  # fmt: skip
AFFILIATION_WORDS = frozenset(
    [
        "university",
        "universität",
        "universidad",
        "université",
        "institute",
        "institut",
        "department",
        "college",
        "laboratory",
        "laboratories",
        "school",
        "center",
        "centre",
        "inc",
        "ltd",
        "corporation",
        "research",
        "academy",
        "hospital",
        "foundation",
        "group",
    ]
)


def clean_name_text(text: str) -> str:
    """Repair a name line from a PDF: stray glyphs and U+FEFF dropped, accents composed."""
    import unicodedata

    text = _MARKER_GLYPHS.sub(";", _JUNK.sub("", text))
    text = re.sub(
        r"([A-Za-z])\u00b8", lambda m: unicodedata.normalize("NFC", m.group(1) + "\u0327"), text
    )
    for spacing, combining in _SPACING_ACCENTS.items():
        pattern = re.compile(rf"{re.escape(spacing)}\s?([A-Za-z])")
        parts = pattern.split(text)  # even: text between, odd: the accented letter
        text = "".join(
            unicodedata.normalize("NFC", part + combining) if i % 2 else part
            for i, part in enumerate(parts)
        ).replace(spacing, "")
    return " ".join(text.split())


def _name_items(line: str) -> list[str]:
    """:func:`split_list` keeping the dot of initials (``Smith, J. R.``)."""
    parts = re.split(r"\s*(?:[;,\u00b7\u2022|]|\band\b|&)\s*", line.strip())
    items = []
    for part in parts:
        item = " ".join(part.split()).strip(TRAILING.replace(".", "") + " ")
        if item.endswith(".") and not ends_with_initial(item) and not is_suffix(item):
            item = item.rstrip(".")  # a full stop, not an initial's dot
        if item.strip("."):
            items.append(item)
    return items


def names_in_line(line: str) -> list[str]:
    """Items of an author line with affiliation markers (digits, daggers, stars) removed."""
    line = re.sub(r"\(\s*\)", "", clean_name_text(line))  # an envelope icon: "Shen1 ( ),"
    line = re.sub(rf"(?<=[^\W\d_])[\d{_MARKERS},]*[{_MARKERS}][\d{_MARKERS},]*", ";", line)
    # OCR reads a dagger after a name as "!" or "?" ("Richard Cleve! CWI"): no name ends so
    line = re.sub(r"(?<=[a-z])[!?](?=\s|$)", ";", line)
    line = re.sub(r"(?<=[^\W\d_])\d+(?:\s*,\s*\d+)*(?=\s*(?:[,;&]|\band\b|$))", "", line)
    items = [re.sub(rf"[\d{_MARKERS}]+$", "", n).strip() for n in _name_items(line)]
    names = iter(join_name_parts([n for n in items if n], pair_words=False))
    # An acronym before a name is an affiliation of the previous author ("CWI Richard Cleve").
    names = (re.sub(r"^(?:[A-Z]{2,}\b\s+)+(?=[A-Z](?:[a-z]|\.))", "", n) for n in names)
    return [_name_beside_affiliation(n) for n in names if n]


_INITIAL = re.compile(r"^[A-Z\u00c0-\u00de]\.(?:-?[A-Z\u00c0-\u00de]\.)*$")
_PARTICLES = frozenset(
    ["van", "von", "der", "de", "da", "di", "du", "le", "la", "del", "dos", "ten", "ter", "bin"]
)


def is_affiliation_word(word: str) -> bool:
    return word.strip(",.;:()").casefold() in AFFILIATION_WORDS


_LINKS = frozenset(["of", "for", "and", "the", "at", "in"])


def _is_word(token: str) -> bool:
    return token[:1].isupper() and token[1:2].islower()


def _is_initial(token: str) -> bool:
    return bool(_INITIAL.match(token)) or token.casefold() in _PARTICLES


def _name_words(words: list[str], *, from_end: bool) -> list[str]:
    """A person's name at one end of ``words``, or ``[]``.

    From the end: the surname, the initials and particles before it, then one given name
    ("Alina G. Meresescu", "J. R. Smith", "Avi Wigderson"); a capitalized word after two
    initials, or after a linking word (``of Physics J. Smith``), is no given name. From the
    start, the same read forwards.
    """
    seq = list(reversed(words)) if from_end else list(words)
    first = _is_word if from_end else (lambda t: _is_word(t) or bool(_INITIAL.match(t)))
    if not seq or not first(seq[0]):
        return []
    take = 1
    while take < min(len(seq), 4) and _is_initial(seq[take]):
        take += 1
    initials = take - 1
    linked = take + 1 < len(seq) and seq[take + 1].casefold() in _LINKS
    if take < len(seq) and _is_word(seq[take]) and initials < 2 and not (initials and linked):
        take += 1  # the given name; not one that ends an affiliation ("of Physics J. Smith")
    name = seq[:take]
    if len(name) < 2:
        return []
    return list(reversed(name)) if from_end else name


def _name_beside_affiliation(item: str) -> str:
    """The name in an item that also holds its neighbour's affiliation, else ``item``.

    An author grid (names on one row, affiliations under them) reaches the text layer as
    ``University of Calgary Avi Wigderson`` or ``Avi Wigderson Hebrew University``: the
    affiliation words (:data:`AFFILIATION_WORDS`) sit at one end and the person's name at
    the other. The name is the two capitalized words at the far end, with any initials and
    name particles next to them; the item is returned unchanged when no such name stands
    clear of the affiliation words.
    """
    words = item.split()
    marks = [i for i, w in enumerate(words) if is_affiliation_word(w)]
    if not marks or len(words) < 3:
        return item
    tail = _name_words(words[marks[-1] + 1 :], from_end=True)
    if tail and not any(is_affiliation_word(w) for w in tail):
        return " ".join(tail)
    head = _name_words(words[: marks[0]], from_end=False)
    if head and not any(is_affiliation_word(w) for w in head):
        return " ".join(head)
    return item


_ORGANISATION_WORDS = frozenset(
    [
        "team",
        "collaboration",
        "consortium",
        "ai",
        "labs",
        "lab",
        "project",
        "initiative",
        "committee",
        "council",
        "association",
        "society",
        "organization",
        "organisation",
        "group",
        "inc",
        "ltd",
        "corporation",
        "foundation",
        "research",
    ]
)
_ORGANISATION_TOKEN = re.compile(r"^[A-Z][\w&.,\-]*$")
_CAMEL_OR_ACRONYM = re.compile(r"[a-z][A-Z]|-[A-Z]|^[A-Z]{2,}\b")


def organisation_name(line: str) -> str | None:
    """The line as an organisation author ("DeepSeek-AI", "Gemini Team"), or ``None``.

    Reports by a company or a collaboration name it where a paper names its people.
    Accepted: one to five capitalized words, footnote markers stripped, no digits-only
    word, no sentence, e-mail or URL, none of the words of a university affiliation; and
    either a word that marks an organisation (Team, Collaboration, Consortium, AI, Lab,
    Research, Inc, ...) or a single coined name (``DeepSeek-AI``, ``OpenAI``, ``CERN``).
    """
    text = re.sub(rf"[{_MARKERS}\d]+$", "", clean_name_text(line)).strip(" ,;")
    words = text.split()
    if not 1 <= len(words) <= 5 or len(text) > 60 or "@" in text or URL_RE.search(text):
        return None
    if is_banner(text) or (text.endswith(".") and not text.endswith(("Inc.", "Ltd."))):
        return None
    if not all(
        _ORGANISATION_TOKEN.match(w)
        or w.casefold() in _PARTICLES | {"of", "for", "and", "&", "the"}
        for w in words
    ):
        return None
    folded = [w.strip(".,").casefold() for w in words]
    if folded[0] in NOT_NAME_STARTS - {"the"} or any(
        w in AFFILIATION_WORDS - _ORGANISATION_WORDS for w in folded
    ):
        return None
    if any(w in _ORGANISATION_WORDS for w in folded):
        return text
    if len(words) == 1 and _CAMEL_OR_ACRONYM.search(text):
        return text
    return None


def looks_like_name(value: str) -> bool:
    """Whether ``value`` looks like a person's name (2-4 capitalized words, not all initials)."""
    value = value.strip()
    return bool(_NAME_RE.match(value)) and len(value) <= 60 and not is_initials(value)


def find_authors(text: str) -> list[str]:
    """Return names from the first ``Authors:``/``By`` line whose items all look like names.

    The line is read as a byline first (names with affiliation markers), then as an
    author field in ``Last, First`` order (``Authors: Sinha, Ankur; van der Berg, Jan``).
    """
    for match in AUTHORS_RE.finditer(text):
        for names in (names_in_line(match.group(1)), split_people(clean_name_text(match.group(1)))):
            if names and all(looks_like_name(n) for n in names):
                return names
    return []


def name_list(text: str) -> list[str]:
    """The names of an author list, or ``[]`` unless every item looks like a name."""
    names = names_in_line(text)
    ok = names and all(
        looks_like_name(n) and n.split()[0].casefold() not in NOT_NAME_STARTS for n in names
    )
    return names if ok else []
