"""Regular-expression extraction of bibliographic fields from plain text.

Two passes use these: one over the top of page one (title, authors, journal, year) and one
over the first :data:`HEAD_CHARS` characters of the document (DOI, keywords, authors, URLs).

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

from klea_utils.stores._ingest.biblio.name_parsing import (
    ends_with_initial,
    is_initials,
    is_suffix,
    join_name_parts,
    split_people,
)

HEAD_CHARS = 3000
"""Characters from the start of a document scanned for DOI, keywords, authors and URLs."""

TOP_LINES = 15
"""Non-empty lines treated as "the top of page one"."""

DOI_RE = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)", re.IGNORECASE)
URL_RE = re.compile(r"https?://[^\s<>\"'\[\]{}]+", re.IGNORECASE)
KEYWORDS_RE = re.compile(
    r"^\s*(?:key\s*words?|index terms)\s*[:\u2014\u2013.\-]\s*(.+)$", re.IGNORECASE | re.MULTILINE
)
AUTHORS_RE = re.compile(
    r"^\s*(?:author\(s\)|authors?|by)\s*[:\-]?\s+(.+)$", re.IGNORECASE | re.MULTILINE
)
YEAR_RE = re.compile(
    r"(?:\u00a9|\(c\)|copyright|published|received|accepted)\D{0,20}((?:1[89]|20)\d{2})",
    re.IGNORECASE,
)
_TRAILING = ".,;:)]}>'\""
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
_NOT_NAME_STARTS = frozenset(_NOT_NAME_START_WORDS.split())
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


def _trim_url(url: str) -> str:
    """Drop trailing punctuation, keeping a ``)`` that closes a ``(`` inside the URL."""
    while url and url[-1] in _TRAILING:
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
    cleaned = (" ".join(p.split()).strip(_TRAILING + " ") for p in parts)
    return [p for p in cleaned if p]


def find_keywords(text: str) -> list[str]:
    """Return the items of the first ``Keywords:`` line in ``text``."""
    match = KEYWORDS_RE.search(text)
    return split_list(match.group(1)) if match else []


_MARKERS = "*\u2217\u2020\u2021\u00a7\u00b6\u2016\u22c6\u2605\u2606\u00aa\u00ba"
_JUNK = re.compile(r"[\ufeff\u200b-\u200d\u2060]")
# Glyphs from symbol fonts without a Unicode map stand where a footnote marker was.
_MARKER_GLYPHS = re.compile(r"[\u2c00-\u2c5f\ue000-\uf8ff\ufffd]")
_SPACING_ACCENTS = {
    "\u00b4": "\u0301", "`": "\u0300", "\u00a8": "\u0308", "^": "\u0302", "\u02dc": "\u0303",
    "~": "\u0303", "\u02c7": "\u030c", "\u02d8": "\u0306", "\u02da": "\u030a",
}  # fmt: skip
_AFFILIATION_WORDS = frozenset(
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
        item = " ".join(part.split()).strip(_TRAILING.replace(".", "") + " ")
        if item.endswith(".") and not ends_with_initial(item) and not is_suffix(item):
            item = item.rstrip(".")  # a full stop, not an initial's dot
        if item.strip("."):
            items.append(item)
    return items


def _names(line: str) -> list[str]:
    """Items of an author line with affiliation markers (digits, daggers, stars) removed."""
    line = clean_name_text(line)
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


def _is_affiliation_word(word: str) -> bool:
    return word.strip(",.;:()").casefold() in _AFFILIATION_WORDS


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
    affiliation words (:data:`_AFFILIATION_WORDS`) sit at one end and the person's name at
    the other. The name is the two capitalized words at the far end, with any initials and
    name particles next to them; the item is returned unchanged when no such name stands
    clear of the affiliation words.
    """
    words = item.split()
    marks = [i for i, w in enumerate(words) if _is_affiliation_word(w)]
    if not marks or len(words) < 3:
        return item
    tail = _name_words(words[marks[-1] + 1 :], from_end=True)
    if tail and not any(_is_affiliation_word(w) for w in tail):
        return " ".join(tail)
    head = _name_words(words[: marks[0]], from_end=False)
    if head and not any(_is_affiliation_word(w) for w in head):
        return " ".join(head)
    return item


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
        for n in _names(line)
        if looks_like_name(n)
        and n.split()[0].casefold() not in _NOT_NAME_STARTS
        and not any(w.casefold() in _AFFILIATION_WORDS for w in n.split())
    ]


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
    if folded[0] in _NOT_NAME_STARTS - {"the"} or any(
        w in _AFFILIATION_WORDS - _ORGANISATION_WORDS for w in folded
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
        for names in (_names(match.group(1)), split_people(clean_name_text(match.group(1)))):
            if names and all(looks_like_name(n) for n in names):
                return names
    return []


def find_year(text: str) -> int | None:
    """Return a publication year next to a copyright/published/received marker, or ``None``."""
    match = YEAR_RE.search(text)
    return int(match.group(1)) if match else None


def is_section_heading(line: str) -> bool:
    """Whether ``line`` is a usual section heading (``Abstract``, ``1. Introduction``)."""
    return bool(_SECTION_RE.match(" ".join(line.lstrip("#").split())))


def is_label_line(line: str) -> bool:
    """Whether ``line`` opens with a field label (``Author(s):``, ``Website:``)."""
    return bool(_LABEL_RE.match(line.lstrip("#").strip()))


_DOT_LEADER_RE = re.compile(r"(?:\.\s?){4,}|\u2026")


def never_title(line: str) -> bool:
    """Whether ``line`` can never be a title.

    Boilerplate (:func:`is_banner`), a section heading, a field label, or a line of a
    table of contents (a dot leader: ``MAIN GAME ........ 6``).
    """
    return (
        is_banner(line)
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


def find_title_and_authors(text: str) -> tuple[str | None, list[str]]:
    """From the top of page one: the first non-banner line, and a name line right below it.

    A byline (:func:`parse_byline`) is never the title; one right below the title gives
    the authors, and a first line joining title and byline gives both.
    """
    lines = top_lines(text)
    for index, line in enumerate(lines):
        byline = parse_byline(line, allow_title=index == 0)
        if byline is not None and byline.title:
            return byline.title, byline.authors
        if byline is not None or never_title(line) or DOI_RE.search(line):
            continue
        title = line.lstrip("#").strip()
        authors: list[str] = []
        for follow in lines[index + 1 : index + 3]:
            below = parse_byline(follow)
            names = below.authors if below is not None else _names(follow)
            if names and all(
                looks_like_name(n) and not any(_is_affiliation_word(w) for w in n.split())
                for n in names
            ):
                authors = names  # "Hebrew University" under a title is no author
                break
        return title, authors
    return None, []


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


def _name_list(text: str) -> list[str]:
    """The names of an author list, or ``[]`` unless every item looks like a name."""
    names = _names(text)
    ok = names and all(
        looks_like_name(n) and n.split()[0].casefold() not in _NOT_NAME_STARTS for n in names
    )
    return names if ok else []


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
    while index > 0 and _name_list(parts[index]):
        index -= 2
    if index < 0 or _name_list(parts[index]):
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
    names = _name_list(split[1] + "".join(parts[index + 1 :]))
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
        names = _name_list(head)
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
        if never_title(line) or DOI_RE.search(line) or URL_RE.search(line) or _name_list(line):
            continue
        line = line.lstrip("#").strip()
        if len(line.split()) >= 3 and sum(c.isalpha() for c in line) >= 12 and len(line) <= 250:
            return line
    return None
