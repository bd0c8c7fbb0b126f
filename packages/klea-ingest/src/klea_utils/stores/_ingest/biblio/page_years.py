"""The year a document is from: read from page one, its arXiv id, never from body prose.

Page one states its year in a few places a reader trusts, in this order:

1. ``published``, a journal line (``Clinical Science (2014) 126``, ``Vol. 29 No. 2, 2007``,
   ``Volume 2010, Article ID``), a copyright line, an edition statement near the top or
   the foot (``（2020 年版）``, ``2019 Edition``);
2. a date on its own near the top or at the foot of the page (``November 1, 2000``,
   ``July 2006``, ``20 décembre 2022``, ``Date : 20-10-2009``, ``KDD '22, August 14-18, 2022``,
   a standard's issue date ``(09/92)``), never one on a line saying an earlier document is
   superseded or replaced (``IRM 2.3.59, dated December 20, 2021, is superseded.``), nor
   one after a standard the line cites (``nach DIN 2470, Blatt 2; Ausgabe Sept. 1967``);
3. ``accepted``, ``received``, ``submitted``;
   then a year printed alone on a line at the top or foot (a cover's ``2010``), when it is
   the only one;
4. where none of these is printed, a year the title itself names (``2012 BETTER VARIETIES
   Harvest Report``, ``... Copyright Act of 1998``, ``الانتخابات التشريعية 2014``): the
   title says which year the document is of (:func:`title_year`; never a year to come, as
   a plan's ``Vision 2030``).

A year in body prose (``introduced by IBM in 1935``, ``(Riloff, 1996)``, a footnote's
``examples are Sutton (1991)``) is never taken, nor the date of a rule a regulation's
source note cites (``[36 FR 7778, Apr. 24, 1971``) or of a printer's stamp (``VerDate``).
The arXiv id (new style ``2101.01234``, old style ``hep-th/9901001``; from the page's stamp
or the file name) dates the first version: a page year from it to two years later (the
journal version) is kept, any other (the date LaTeX printed when the file was built again)
gives way to the id's year.
"""

from __future__ import annotations

import datetime
import re

__all__ = ["arxiv_id", "arxiv_year", "page_year", "title_year"]

_MONTHS = (
    r"jan(?:uary|vier|uar)?|feb(?:ruary|braio)?|f[eé]vrier|mar(?:ch|s|zo)?|m[aä]rz|"
    r"apr(?:il|ile)?|avril|abril|may|mai|maggio|mayo|jun(?:e|i)?|juin|giugno|junio|"
    r"jul(?:y|i)?|juillet|luglio|julio|aug(?:ust)?|ao[uû]t|agosto|sep(?:t(?:ember)?)?|"
    r"septembre|settembre|septiembre|oct(?:ober)?|octobre|ottobre|octubre|okt(?:ober)?|"
    r"nov(?:ember)?|novembre|noviembre|dec(?:ember)?|d[eé]cembre|dicembre|diciembre|"
    r"dez(?:ember)?|gennaio|enero|febrero|marzo|aprile|janvier|juni"
)
_YEAR = r"((?:1[89]|20)\d{2})"
_DATE_RE = re.compile(
    rf"(?:\b(?:{_MONTHS})\.?\s+(?:\d{{1,2}}(?:st|nd|rd|th)?(?:\s*[-\u2013]\s*\d{{1,2}})?,?\s+)?"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?(?:\s*[-\u2013]\s*\d{{1,2}})?\.?\s+(?:{_MONTHS})\.?,?\s+)"
    rf"{_YEAR}\b",
    re.IGNORECASE,
)
_LABELLED_DATE_RE = re.compile(
    rf"\b(?:date|dated|report date|data|fecha|datum)(?:\s+[A-Z]{{1,3}})?\s*:\s*"
    rf"(?:\d{{1,2}}[-/.]\d{{1,2}}[-/.]){_YEAR}\b",
    re.IGNORECASE,
)
"""A labelled date, also in Portuguese, Spanish and German (``Data SE: 30/05/2019``, the
date of a purchase order's request)."""
_LONE_YEAR_RE = re.compile(rf"^\s*{_YEAR}\.?\s*$", re.MULTILINE)
"""A year printed on a line of its own (a thesis cover's ``2010`` under its university)."""
_PUBLISHED_RE = re.compile(rf"\bpublished\b[^\n]{{0,25}}?\b{_YEAR}\b", re.IGNORECASE)
_COPYRIGHT_RE = re.compile(rf"(?:\u00a9|\(c\)|\bcopyright\b)\D{{0,20}}{_YEAR}\b", re.IGNORECASE)
_EDITION_RE = re.compile(
    rf"{_YEAR}\s*(?:\u5e74\u7248|\u5e74\u5ea6\u7248|edition\b|\u00e9dition\b|edici\u00f3n\b)"
    rf"|\b(?:edition|\u00e9dition|edici\u00f3n)\s+{_YEAR}\b",
    re.IGNORECASE,
)
"""An edition statement: ``（2020 年版）`` (the 2020 edition), ``2019 Edition``, ``Edition
2021``: the year of the edition printed."""
_ISSUE_DATE_RE = re.compile(r"(?<![\w/])\((0[1-9]|1[0-2])/(\d{2})\)(?![\w/])")
"""A standard's issue date beside its designation, month and two-digit year in brackets
(ITU's ``(09/92)``: September 1992)."""
_LATER_RE = re.compile(
    rf"\b(?:accepted|received|submitted)\b[^\n]{{0,30}}?\b{_YEAR}\b", re.IGNORECASE
)
# "Clinical Science (2014) 126, 305", "272-273 (1999);", "J. Physiol. (I955) I28" (OCR'd I for 1)
_JOURNAL_RE = re.compile(
    r"(?:[A-Z][\w.]*\.?\s+|\d\s*)\(([1I][89][0-9IOlo]{2}|20[0-9IOlo]{2})\)\s*(?=[\dI;,]|$)",
    re.MULTILINE,
)
_VOLUME_RE = re.compile(
    rf"\b(?:vol(?:ume)?\.?\s*\d+[^\n]{{0,20}}?,\s*{_YEAR}\b|volume\s+{_YEAR},)", re.IGNORECASE
)
_NEW_ARXIV = r"(\d{2})(0[1-9]|1[0-2])\.\d{4,5}"
_OLD_ARCHIVE = (
    r"(?:hep-(?:th|ph|ex|lat)|astro-ph|gr-qc|nucl-(?:th|ex)|quant-ph|cond-mat|math-ph|nlin|"
    r"physics|math|cs|q-bio|q-fin|stat|chao-dyn|solv-int|alg-geom|dg-ga|funct-an|q-alg)"
)
_OLD_ARXIV = rf"{_OLD_ARCHIVE}(?:\.[A-Z]{{2}})?[/_]?(\d{{2}})(0[1-9]|1[0-2])\d{{3}}"
_ARXIV_TEXT_RE = re.compile(rf"\barxiv\s*:\s*(?:{_NEW_ARXIV}|{_OLD_ARXIV})(?:v\d+)?", re.IGNORECASE)
_ARXIV_NAME_RE = re.compile(rf"(?<![\d.])(?:{_NEW_ARXIV}|{_OLD_ARXIV})(?:v\d+)?(?!\d)")
_TOP_LINES = 25
_FOOT_LINES = 6
_MAX_LINE = 130


def _century(two: str, new_style: bool) -> int:
    value = int(two)
    if new_style:
        return 2000 + value
    return 1900 + value if value >= 91 else 2000 + value


def arxiv_id(text: str, file_name: str = "") -> tuple[str, int] | None:
    """``(id, year)`` of the arXiv stamp on the page, else of an id in the file name."""
    match = _ARXIV_TEXT_RE.search(text) or _ARXIV_NAME_RE.search(file_name)
    if match is None:
        return None
    new_year, old_year = match.group(1), match.group(3)
    year = _century(new_year, True) if new_year else _century(old_year, False)
    identifier = match.group(0).split(":")[-1].strip()
    return identifier, year


def arxiv_year(text: str, file_name: str = "") -> int | None:
    found = arxiv_id(text, file_name)
    return found[1] if found else None


def _plausible(year: int) -> bool:
    return 1800 <= year <= datetime.date.today().year + 1


_PROSE_WORD_RE = re.compile(r"(?<![\w.])[a-z]{2,}(?![\w.])")
_PROSE_WORDS = 4
"""A line with this many lower-case words is prose: ``examples are Sutton (1991) and``."""
_RULE_CITATION_RE = re.compile(r"\b\d+\s+FR\s+\d+,\s*$")
"""A regulation's source note (``[36 FR 7778, Apr. 24, 1971``): the date of a rule it cites."""


_PRINT_STAMP_RE = re.compile(r"\bVerDate\b|\bJkt\s+\d+\b")
"""A printer's stamp at the foot of a government page (``VerDate ... Apr 28, 2000 Jkt``):
the day the page was typeset, not the year of what it prints."""


def _prose_line(text: str, at: int) -> bool:
    return len(_PROSE_WORD_RE.findall(_line_at(text, at))) >= _PROSE_WORDS


def _journal_year(text: str) -> int | None:
    for match in _JOURNAL_RE.finditer(text):
        if _prose_line(text, match.start()):
            continue
        digits = match.group(1).translate(str.maketrans("IlOo", "1100"))
        if digits.isdigit() and _plausible(int(digits)):
            return int(digits)
    return None


_SUPERSEDED_RE = re.compile(
    r"\b(?:supersed(?:es|ed|ing)|replac(?:es|ed|ing)|rescind(?:s|ed)|obsolete[sd]?|"
    r"annul(?:s|e|é|ée)|remplac(?:e|é|ée)|ersetzt)\b",
    re.IGNORECASE,
)
"""A line that says an earlier document is superseded (``IRM 2.3.59, dated December 20,
2021, is superseded.``): its date is that earlier document's, not this one's."""


_CITED_STANDARD_RE = re.compile(r"\b(?:DIN|ISO|EN|ANSI|ASTM|IEC|BS|NF|UNI|DVGW)\s?\d{3,}")
"""A standard cited on the line before a date (``nach DIN 2470, Blatt 2; Ausgabe Sept.
1967``): the date is that standard's edition, not the document's."""


def _line_at(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start : end if end >= 0 else len(text)]


def _first(pattern: re.Pattern[str], text: str) -> int | None:
    for match in pattern.finditer(text):
        if _RULE_CITATION_RE.search(text[max(0, match.start() - 20) : match.start()]):
            continue
        line = _line_at(text, match.start())
        if _SUPERSEDED_RE.search(line):
            continue
        if pattern is _DATE_RE and _CITED_STANDARD_RE.search(line[: line.find(match.group(0))]):
            continue
        year = int(next(g for g in match.groups() if g))
        if _plausible(year):
            return year
    return None


def _near_edges(text: str) -> str:
    """The top and foot lines of a page, short ones only (a date line, a running line)."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    lines = [line for line in lines if line and not _PRINT_STAMP_RE.search(line)]
    edges = lines[:_TOP_LINES] + lines[_TOP_LINES:][-_FOOT_LINES:]
    return "\n".join(line for line in edges if len(line) <= _MAX_LINE)


def _page_year(text: str) -> int | None:
    edges = _near_edges(text)
    found = (
        _first(_PUBLISHED_RE, text)
        or _journal_year(edges)
        or _first(_VOLUME_RE, edges)
        or _first(_COPYRIGHT_RE, text)
        or _first(_EDITION_RE, edges)
        or _first(_DATE_RE, edges)
        or _issue_date(edges)
        or _first(_LABELLED_DATE_RE, text)
        or _first(_LATER_RE, text)
        or _lone_year(edges)
    )
    return found


def _issue_date(edges: str) -> int | None:
    """The year of the first ``(MM/YY)`` issue date at the top or foot of the page (a two-
    digit year past the current one is of the last century)."""
    match = _ISSUE_DATE_RE.search(edges)
    if match is None:
        return None
    two = int(match.group(2))
    this_year = datetime.date.today().year
    year = 2000 + two if 2000 + two <= this_year else 1900 + two
    return year if _plausible(year) else None


def _lone_year(edges: str) -> int | None:
    """The one year printed on a line of its own at the top or foot of the page, when no
    other is (a column of years in a table names none), and it is past."""
    years = {int(y) for y in _LONE_YEAR_RE.findall(edges)}
    if len(years) != 1:
        return None
    year = years.pop()
    return year if 1800 <= year <= datetime.date.today().year else None


def page_year(text: str, file_name: str = "") -> int | None:
    """The year page one states (see the module's order), checked against the arXiv id."""
    year = _page_year(text)
    first_version = arxiv_year(text, file_name)
    if first_version is None:
        return year
    if year is not None and first_version <= year <= first_version + 2:
        return year
    return first_version


_TITLE_YEAR_RE = re.compile(rf"(?<![\w.\-/]){_YEAR}(?![\w.\-/])")


def title_year(title: str) -> int | None:
    """The one year ``title`` names as a word of its own, if it names one and it is past."""
    years = {int(y) for y in _TITLE_YEAR_RE.findall(title)}
    if len(years) != 1:
        return None
    year = years.pop()
    return year if 1800 <= year <= datetime.date.today().year else None
