"""Sentences and clauses of scholarly text, for cutting chunks where a reader would.

:func:`split_sentences` cuts after a full stop, question or exclamation mark or ellipsis
(and any closing quotes or brackets that follow it) when whitespace follows and the next
word does not start in lower case; a line break always ends a piece. It does not cut:

- inside a number (``3.5``, ``1e-3``) or a dotted name (``U.S.``, ``e.g.``): no
  whitespace follows the dot;
- after a known abbreviation (:data:`ABBREVIATIONS`: ``et al.``, ``e.g.``, ``i.e.``,
  ``Fig.``, ``Eq.``, ``Sec.``, ``Ref.``, ``Tab.``, ``vs.``, ``cf.``, titles, months,
  those of bibliographies: ``Proc.``, ``Phys. Rev. Lett.``...),
  and after ``No.``, ``p.``, ``pp.``, ``Vol.`` when a number or bracket follows;
- after an initial (``J. Smith``, ``A. B. Cohen``);
- after an enumeration label that opens the piece (``1. ``, ``(a) ``, ``iv. ``);
- before a word in lower case (``approx. three``, ``... and then``).

:func:`split_clauses` cuts one sentence after ``;``, ``:`` or ``,`` (and around dashes),
for a sentence longer than a chunk. Both return pieces that join back into the input
exactly, whitespace kept with the piece it follows.
"""

from __future__ import annotations

import re

__all__ = ["ABBREVIATIONS", "NUMBERED_ABBREVIATIONS", "split_clauses", "split_sentences"]

ABBREVIATIONS = frozenset(
    # SIM905 is silenced below: a list of words reads best as words
    """
    al e.g i.e cf vs viz approx resp ca esp incl
    fig figs eq eqs eqn eqns sec secs sect sects ref refs tab tabs tbl thm thms lem lemma
    prop props cor def defn defs rem ex exp alg app appx apps ch chap chaps
    dr mr mrs ms prof st jr sr inc ltd co corp dept univ inst
    jan feb mar apr jun jul aug sep sept oct nov dec
    proc conf symp trans phys rev lett comput natl acad intl ann appl eng soc stat theor
    """.split()  # noqa: SIM905
)
"""Words (lower case, without their final dot) after which a full stop never ends a sentence."""

NUMBERED_ABBREVIATIONS = frozenset({"no", "nos", "p", "pp", "vol", "vols", "art", "nr"})
"""Abbreviations that end a sentence unless a number or an opening bracket follows."""

_END = re.compile(r"""(?:\.{2,}|…|[.!?])[)\]}"'’”»]*(?=\s)""")
_WORD_BEFORE = re.compile(r"""(\S+?)$""")
_OPENERS = "([{\"'‘“«"
_LABEL = re.compile(r"^\s*(?:\(?(?:\d{1,3}|[A-Za-z]|[ivxlc]{1,6})[.)])$")
_INITIALS = re.compile(r"^(?:[^\W\d_]\.)+[^\W\d_]$")
_LINES = re.compile(r"(?<=\n)")
_CLAUSE = re.compile(r"""[;:,](?=\s)|\s[—–]\s|\s-{2,3}\s""")


def _bare_word(text: str) -> str:
    """The word before a terminator, opening brackets and quotes stripped."""
    match = _WORD_BEFORE.search(text)
    return match.group(1).lstrip(_OPENERS) if match else ""


def _next_char(text: str, start: int) -> str:
    stripped = text[start:].lstrip()
    return stripped[:1]


def _is_abbreviation(word: str, following: str) -> bool:
    lowered = word.lower()
    if lowered in ABBREVIATIONS:
        return True
    if lowered in NUMBERED_ABBREVIATIONS:
        return following.isdigit() or following in "(["
    if len(word) == 1 and word.isupper():
        return True  # an initial: J. Smith
    return "." in word and _INITIALS.match(word) is not None  # U.S, e.g, A.B


def _ends_sentence(text: str, start: int, match: re.Match[str]) -> bool:
    following = _next_char(text, match.end())
    if not following or following.islower():
        return False
    piece = text[start : match.end()]
    if _LABEL.match(piece):
        return False  # "1." or "(a)" opening a list item
    if match.group(0).startswith("."):
        if match.group(0).startswith(".."):
            return True
        word = _bare_word(text[start : match.start()])
        if word and _is_abbreviation(word, following):
            return False
    return True


def split_sentences(text: str) -> list[str]:
    """``text`` cut into sentences; each keeps the whitespace after it; they rejoin exactly.

    A line break always ends a piece (paragraphs and list items stay apart).
    """
    pieces: list[str] = []
    for line in (line for line in _LINES.split(text) if line):
        start = 0
        for match in _END.finditer(line):
            if match.start() < start or not _ends_sentence(line, start, match):
                continue
            end = match.end()
            while end < len(line) and line[end].isspace():
                end += 1
            pieces.append(line[start:end])
            start = end
        if start < len(line):
            pieces.append(line[start:])
    if pieces and not pieces[-1].strip() and len(pieces) > 1:
        tail = pieces.pop()  # trailing whitespace belongs to the last sentence
        pieces[-1] += tail
    return pieces


def split_clauses(sentence: str) -> list[str]:
    """``sentence`` cut after ``;``, ``:`` and ``,`` and before dashes; rejoins exactly.

    A comma inside a number (``1,000``) is not followed by whitespace and is kept.
    """
    pieces: list[str] = []
    start = 0
    for match in _CLAUSE.finditer(sentence):
        cut = match.end() if match.group(0)[0] in ";:," else match.start() + 1
        while cut < len(sentence) and sentence[cut].isspace():
            cut += 1
        if cut > start and sentence[start:cut].strip():
            pieces.append(sentence[start:cut])
            start = cut
    if start < len(sentence):
        if pieces and not sentence[start:].strip():
            pieces[-1] += sentence[start:]
        else:
            pieces.append(sentence[start:])
    return pieces
