"""A reference section split into its entries, for the common styles.

Converted text often runs several entries into one paragraph and breaks one entry over
paragraphs (columns, pages), so entries are found by their openings, not by lines:

- ``numbered``: ``[1]``, ``[2]``, ... in sequence (a ``[quant-ph]`` inside an entry is
  no label because it breaks the sequence);
- ``label``: ``[BBCMW98]``, ``[A+85]``: a bracketed label followed by a name;
- ``dotted``: ``1.``, ``2.``, ... in sequence, each at a paragraph or sentence start;
- ``superscript``: ``1``, ``2``, ... glued to the next name, as superscripts extract;
- ``author-year``: no labels; an entry opens where a paragraph or sentence starts with a
  name (``Smith, J.``, ``J. Smith,``) after text that already holds a year or reads like
  a whole entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["RawEntry", "split_entries"]

# Entries a labelled style needs before it is believed: "[1]" opening the section is
# plain, a lone "1 Smith" could be anything.
_MIN_LABELLED = {"numbered": 1, "label": 2, "dotted": 2, "superscript": 3}
_MAX_LEAD = 300  # characters before the first label that may be dropped (debris)


@dataclass(frozen=True)
class RawEntry:
    """One entry's text as printed, and its number or label (``""`` when unlabelled)."""

    label: str
    text: str
    style: str


def _flat(section: str) -> str:
    """One line per paragraph, line breaks inside a paragraph joined (hyphens kept)."""
    paragraphs = re.split(r"\n\s*\n", section)
    return "\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


def split_entries(section: str) -> list[RawEntry]:
    """The entries of ``section`` (see :func:`find_reference_section`), in printed order."""
    text = _flat(section)
    if not text:
        return []
    for style, finder in (
        ("numbered", _numbered_brackets),
        ("label", _bracket_labels),
        ("dotted", _dotted_numbers),
        ("superscript", _superscripts),
    ):
        starts = finder(text)
        if len(starts) >= _MIN_LABELLED[style] and starts[0][0] <= _MAX_LEAD:
            return _cut(text, starts, style)
    return _cut(text, _author_year_starts(text), "author-year")


def _cut(text: str, starts: list[tuple[int, int, str]], style: str) -> list[RawEntry]:
    entries: list[RawEntry] = []
    for number, (_begin, body, label) in enumerate(starts):
        end = starts[number + 1][0] if number + 1 < len(starts) else len(text)
        body_text = " ".join(text[body:end].split())
        if body_text:
            entries.append(RawEntry(label=label, text=body_text, style=style))
    return entries


def _sequence(text: str, pattern: str) -> list[tuple[int, int, str]]:
    """Starts of ``1``, ``2``, ... where ``pattern`` (with ``{n}``) matches, in order."""
    starts: list[tuple[int, int, str]] = []
    position = 0
    number = 1
    while True:
        match = re.compile(pattern.format(n=number)).search(text, position)
        if match is None:
            break
        starts.append((match.start(), match.end(), str(number)))
        position = match.end()
        number += 1
    return starts


def _numbered_brackets(text: str) -> list[tuple[int, int, str]]:
    return _sequence(text, r"(?:^|(?<=\s))\[\s*{n}\s*\]\s*")


def _dotted_numbers(text: str) -> list[tuple[int, int, str]]:
    # a text layer can put a blank after a narrow "1" glyph ("1 . Smith, J.")
    return _sequence(text, r"(?:^|(?<=[.\n]\s)|(?<=\n))\(?{n} ?[.)]\s+(?=[^\d\s])")


def _superscripts(text: str) -> list[tuple[int, int, str]]:
    return _sequence(text, r"(?:^|(?<=\.\s)|(?<=\n)){n}\s?(?=[A-Z][a-z]*[.,\s])")


_LABEL = re.compile(
    r"(?:^|(?<=\s))\[([A-Z][A-Za-z+\-'.:]{0,15}\d{0,4}[a-z]?)\]\s*(?=[A-Z\u00c0-\u024f])"
)


def _bracket_labels(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group(1)) for m in _LABEL.finditer(text)]


_NAME = r"[A-Z\u00c0-\u024f][\w'\u2019\-]+"
_INITIALS = r"(?:[A-Z\u00c0-\u024f]\.\s?-?)+"
_ENTRY_OPENING = re.compile(
    rf"(?:{_NAME}(?:\s(?:[a-z]{{1,3}}\s)?{_NAME})?,\s{_INITIALS}"  # Smith, J. / Van de Ven, A.
    rf"|{_INITIALS}\s?{_NAME}(?:,|\.\s|\sand\s|\set\sal)"  # J. Smith, / J. Smith and
    rf"|{_NAME}(?:\s{_NAME})?\s\((?:19|20)\d{{2}}[a-z]?\)"  # Irstea (2017)
    rf"|(?!(?:In|The|On|Of|For|An|To|At|By|And|With|From)\s){_NAME}\s[A-Z]{{1,3}}[,.]\s"
    # Altschul SF, Madden TL (Vancouver); "In K. Inui, editor" is no opening
    rf"|[A-Z][\w@\-]*(?:@|-AI\b)[\w\-]*\.\s)"  # AI@Meta. / DeepSeek-AI.
)
# "Anthropic. Claude 3.5 sonnet, 2024." opens an entry only after one that ended with
# its year or a link, since "Springer. " can end a sentence inside an entry too.
# "Eugene Charniak. 2000." / "Takaaki Hasegawa, Satoshi Sekine, and": full given names.
# A title also reads so ("Extracting Patterns and Relations"), and in these styles the
# title follows the year: such an opening never directly follows a year.
_FULL_NAMES = re.compile(
    rf"{_NAME}\s(?:[A-Z]\.\s)?{_NAME}(?:,\s{_NAME}|\s(?:and|&)\s{_NAME}|\.\s(?:19|20)\d{{2}})"
)
_ENDS_ON_YEAR = re.compile(r"(?<!\d)(?:1[89]|20)\d{2}[a-z]?\.\s*$")
_ORGANISATION = re.compile(r"[A-Z][A-Za-z@\-]{2,}\.\s(?=[A-Z0-9])")
_ENDS_ENTRY = re.compile(r"(?:(?<!\d)(?:1[89]|20)\d{2}[a-z]?|/\S*)\.\s*$")
_BOUNDARY = re.compile(r"(?:^|\n|(?<=[^\s]{2}[.?]\s)|(?<=\d[a-z][.]\s))")
_YEAR = re.compile(r"(?<!\d)(?:1[89]|20)\d{2}(?!\d)")
_WHOLE_ENTRY_WORDS = 15
_PARAGRAPH_ENTRY_WORDS = 8


def _author_year_starts(text: str) -> list[tuple[int, int, str]]:
    starts: list[tuple[int, int, str]] = [(0, 0, "")]
    for boundary in _BOUNDARY.finditer(text):
        position = boundary.end()
        if position == 0 or position >= len(text):
            continue
        new_paragraph = boundary.group(0) == "\n" or text[position] == "\n"
        if text[position] == "\n":
            position += 1
        previous = text[starts[-1][0] : position]
        if not (
            _ENTRY_OPENING.match(text, position)
            or (_ORGANISATION.match(text, position) and _ENDS_ENTRY.search(previous))
            or (_FULL_NAMES.match(text, position) and not _ENDS_ON_YEAR.search(previous))
        ):
            continue
        whole = _YEAR.search(previous) or _reads_whole(previous, new_paragraph)
        if whole and position > starts[-1][0]:
            starts.append((position, position, ""))
    return starts


def _reads_whole(segment: str, new_paragraph: bool) -> bool:
    """A long segment that does not stop inside a name list: a whole entry.

    Mid-paragraph it must end a sentence; at a paragraph break (a converter may have lost
    the end of the entry) it must only not end on an initial, a comma or ``and``.
    """
    segment = segment.rstrip()
    if re.search(r"(?:(?:^|[\s.\-])[A-Z]\.|,|\band|&)$", segment):
        return False
    if new_paragraph:
        return len(segment.split()) >= _PARAGRAPH_ENTRY_WORDS
    return len(segment.split()) >= _WHOLE_ENTRY_WORDS and segment.endswith((".", "?"))
