"""The names printed under the title, read from page one's text layer line by line.

The converted document joins lines into paragraphs: a slide's byline runs into the next
lines (``Rob Pike golang . org April 28, 2010``), an author line into its affiliations, a
label line into the next label (``Author : Johan van der Knijff Date : 20-10-2009``). The
text layer keeps the lines apart. :func:`authors_under_title` finds the title's lines there
and reads the first of the few lines below it that is a byline:

- a label line (``Author : Johan van der Knijff``, ``Authors: ...``, ``By ...``);
- a line whose items are all names once affiliation marks are dropped
  (``Ivan Rodriguez Montoya∗ † and Tonatiuh Matos Chassin∗ ‡``, ``Rob Pike``); a line in
  capitals only with initials (``R. K. ANDJUS``), since a heading in capitals reads as
  names (``LEGAL HISTORY AND TRADITIONS``);
- lines of one Han-script name each, family and given name apart by a space (``新山 祐介``);
  a title in a script written without spaces is found on the page letter by letter.

A line that opens the text (an abstract, a section heading, a sentence) ends the search: a
name further down is no byline. Nothing is returned rather than a guess.
"""

from __future__ import annotations

import re

from klea_utils.stores._ingest.biblio.author_lines import (
    AUTHORS_RE,
    find_authors,
    is_affiliation_word,
    looks_like_name,
)
from klea_utils.stores._ingest.biblio.bylines import author_names
from klea_utils.stores._ingest.biblio.head_fields import split_list
from klea_utils.stores._ingest.biblio.info_trust import fold_words, is_noise_author
from klea_utils.stores._ingest.biblio.line_kinds import is_section_heading

__all__ = ["authors_under_title"]

_TOP = 40
"""Lines of page one searched for the title."""
_BELOW = 4
"""Lines below the title searched for the byline (a slide's subtitle, a formula's debris)."""
_MARKS_RE = re.compile(r"[\d*+#$\u2217\u2020\u2021\u00a7]+|\(\s*\)")
_SENTENCE_RE = re.compile(r"[.!?]\s*$")
_HAN = "\u3005\u4e00-\u9fff"
_CJK_NAME_RE = re.compile(rf"^[{_HAN}]{{1,2}}\u3005?[ \u3000][{_HAN}\u3040-\u30ff]{{1,3}}$")
"""A family name of one or two Han glyphs (``佐々木``'s iteration mark allowed), a space,
a given name of one to three: longer runs either side are words, not a name."""


def _title_span(lines: list[str], title: str) -> tuple[int, int] | None:
    """``(first, end)``: the lines whose words, in order, are the title's."""
    want = fold_words(title)
    if not want:
        return None
    for first, line in enumerate(lines):
        words = fold_words(line)
        if not words or words != want[: len(words)]:
            continue
        got, end = len(words), first + 1
        while got < len(want) and end < len(lines):
            more = fold_words(lines[end])
            if not more or more != want[got : got + len(more)]:
                break
            got, end = got + len(more), end + 1
        if got == len(want) or (got >= 3 and end - first >= 1 and got >= 0.6 * len(want)):
            return first, end
    return _unspaced_title_span(lines, "".join(want))


def _unspaced_title_span(lines: list[str], flat: str) -> tuple[int, int] | None:
    """The title's lines compared letter by letter: a title in a script written without
    spaces is one word, broken anywhere over its lines (``コンパラブルな新聞記事からの`` /
    ``固有表現の発見``)."""
    for first in range(len(lines)):
        seen = ""
        for end in range(first, min(first + _BELOW, len(lines))):
            seen += "".join(fold_words(lines[end]))
            if not seen or not flat.startswith(seen):
                break
            if seen == flat:
                return first, end + 1
    return None


def _cjk_names(lines: list[str]) -> list[str]:
    """Names in Han script, one a line, family and given name apart by a space (``新山 祐介``
    / ``関根 聡``): the byline of a Japanese or Chinese page, which has no capitals to read."""
    names: list[str] = []
    for line in lines:
        bare = _MARKS_RE.sub("", line).strip()
        if not _CJK_NAME_RE.match(bare):
            break
        names.append(bare)
    return names


def _names(line: str) -> list[str]:
    """The names of a byline, or ``[]`` when names are not most of the line's items."""
    labelled = AUTHORS_RE.match(line)
    if labelled is not None:
        return find_authors(line)
    if re.search(r"[,;&]\s*$|\band\s*$", line):
        return []  # a phrase going on to the next line ("Sampling Program, Upper")
    if line.isupper() and not re.search(r"\b[A-Z]\.", line):
        return []  # capitals without initials: a heading ("LEGAL HISTORY AND TRADITIONS")
    names = author_names(line)
    items = [i for i in split_list(_MARKS_RE.sub(",", line)) if i]
    if not names or len(names) < len(items):
        return []  # every item a name: "Geologic Drilling & Aggregate Sampling Program"
    if not all(
        looks_like_name(n)
        and not is_noise_author(n)
        and not any(is_affiliation_word(w) for w in n.split())
        for n in names
    ):
        return []
    return names


def _opens_text(line: str) -> bool:
    """An abstract, a section heading or a sentence: the byline is above it or nowhere."""
    return is_section_heading(line) or (len(line.split()) >= 8 and bool(_SENTENCE_RE.search(line)))


def authors_under_title(page_text: str, title: str) -> list[str]:
    """The names on the first byline among the few lines below ``title`` in ``page_text``
    (page one's text layer, one printed line a line), or ``[]``."""
    lines = [" ".join(line.split()) for line in page_text.splitlines()]
    lines = [line for line in lines if line][:_TOP]
    span = _title_span(lines, title)
    if span is None:
        return []
    below = lines[span[1] : span[1] + _BELOW]
    for index, line in enumerate(below):
        if _opens_text(line):
            return []
        names = _names(line) or _cjk_names(below[index:])
        if names:
            return names
    return []
