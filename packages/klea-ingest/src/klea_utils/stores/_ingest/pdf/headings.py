"""Is a line a section heading? The cues a reader uses, not font size alone.

A heading is a short line that starts a block, is followed by body text, and has at least
one of: section numbering (``2.3``, ``II.``, ``A.``), a usual section name (Abstract,
Introduction, Methods, Results, Discussion, References, Appendix, ...), a bold or small-caps
run over the whole line, all capitals, or type clearly larger than the body. Whatever the
cues, a line is never a heading when it reads as part of a sentence (it ends with a comma
or a hyphen, or the next line continues it in lower case), is mostly not words (formulas,
axis labels, numbers), has table cells, or is a figure/table caption or a theorem label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from klea_utils.stores._ingest.pdf.pdf_chars import HYPHEN_MARK
from klea_utils.stores._ingest.pdf.pdf_lines import Line, PageLines
from klea_utils.stores._ingest.pdf.text_scripts import word_count

__all__ = [
    "MAX_HEADING_WORDS",
    "SECTION_NAMES",
    "contents_entries",
    "heading_level",
    "looks_like_words",
    "name_match",
    "numbering_depth",
]

MAX_HEADING_WORDS = 14
"""A line with more words than this is never a heading."""

LARGE_RATIO = 1.15
"""Type at least this many times the body size counts as larger."""

SECTION_NAMES = frozenset(
    [
        "abstract",
        "introduction",
        "background",
        "related",
        "work",
        "methods",
        "method",
        "methodology",
        "materials",
        "and",
        "methods",
        "materials",
        "results",
        "discussion",
        "conclusion",
        "conclusions",
        "summary",
        "references",
        "bibliography",
        "acknowledgments",
        "acknowledgements",
        "acknowledgment",
        "acknowledgement",
        "appendix",
        "appendices",
        "experiments",
        "experimental",
        "setup",
        "evaluation",
        "preliminaries",
        "notation",
        "limitations",
        "future",
        "work",
        "outlook",
        "supplementary",
        "material",
        "contents",
        "keywords",
    ]
)
_MULTI_NAMES = (
    "related work",
    "materials and methods",
    "experimental setup",
    "future work",
    "supplementary material",
    "results and discussion",
    "conclusions and future work",
    "concluding remarks",
)
_NUMBERED = re.compile(
    r"^(?P<num>(?:\d{1,2}(?:\.\d{1,2}){0,3}|[IVX]{1,5}|[A-H])(?:\.\d{1,2}){0,2})[.)]?\s+(?P<rest>\S.*)$"
)
_APPENDIX = re.compile(r"^(?:appendix|annex)\s+[A-Z\d]+\b", re.IGNORECASE)
_NOT_HEADING = re.compile(
    r"^(?:fig(?:ure)?s?\.?|tab(?:le)?s?\.?|algorithm|listing|eq(?:uation)?\.?|theorem|lemma|"
    r"proposition|corollary|definition|remark|example|proof|claim|conjecture|assumption|"
    r"step|case|note|hypothesis|exercise|problem)\s*[\dIVX(:.]",
    re.IGNORECASE,
)
_LEADERS = re.compile(r"(?:\.\s*){3,}\d{1,4}$")
_PAGE_AT_END = re.compile(r"\s\d{1,4}$")
CONTENTS_MIN_LEADERS = 5
"""Lines ending in dot leaders and a page number that make a page a table of contents."""
_FULL_STOPS = (".", "\u3002", "\uff0e", "\u0964", "\u06d4")
"""A sentence's last character: the Latin, ideographic, fullwidth, Devanagari and Urdu stops."""
_MATHY = re.compile(r"[=<>≤≥∈∉⊂⊆∑∏∫√±×·→←↔⇒⇔∀∃∞∂∇≠≈∼∝|{}^_\\]")


@dataclass(frozen=True)
class Context:
    """What the heading test needs about the document: body size and column width."""

    body_size: float
    column_width: float


def looks_like_words(text: str) -> bool:
    """Whether ``text`` is mostly letters with at least one real word (not a formula)."""
    compact = text.replace(" ", "")
    if not compact:
        return False
    letters = sum(c.isalpha() for c in compact)
    return letters >= 0.6 * len(compact) and re.search(r"[^\W\d_]{3,}", text) is not None


def name_match(text: str) -> bool:
    clean = re.sub(r"[.:\s]+$", "", text).casefold()
    return clean in SECTION_NAMES or clean in _MULTI_NAMES or bool(_APPENDIX.match(text))


def numbering_depth(text: str) -> int | None:
    """The depth of a heading's section number (``2.3`` -> 2, ``II.`` -> 1), else ``None``."""
    match = _NUMBERED.match(text)
    if match is None:
        return None
    rest = match.group("rest")
    if not rest[:1].isupper():
        return None
    return match.group("num").count(".") + 1


def heading_level(line: Line, following: Line | None, ctx: Context) -> int | None:
    """Return the heading level (1 = top) of ``line``, or ``None`` when it is body text."""
    text = line.text.strip()
    count = word_count(text)  # a line of Chinese holds more words than blanks
    if not count or count > MAX_HEADING_WORDS or len(line.cells) > 2:
        return None
    if text.endswith((",", ";", "-", HYPHEN_MARK, "\u2013")) or text[:1].islower():
        return None
    if _NOT_HEADING.match(text) or _MATHY.search(text) or not looks_like_words(text):
        return None
    if (
        following is not None
        and following.text[:1].islower()
        and not text.endswith((".", ":"))
        and following.page_no == line.page_no
        and following.top - line.bottom < ctx.body_size
    ):
        return None  # the sentence goes on below: not a heading
    depth = numbering_depth(text)
    name = name_match(_NUMBERED.sub(r"\g<rest>", text) if depth else text)
    large = line.size >= LARGE_RATIO * ctx.body_size
    caps = sum(c.isupper() for c in text) >= 0.8 * sum(c.isalpha() for c in text) and count <= 8
    styled = line.bold or line.smallcaps or caps or large
    if not (styled or depth) and line.width > 0.9 * ctx.column_width and count > 6:
        return None  # a full-width plain line is body text that happens to be short of words
    if text.endswith(_FULL_STOPS) and not (depth or name) and count > 4:
        return None  # a sentence set in bold (a lemma, a caption) rather than a heading
    # a numbered line set in italics is a heading too (elsarticle's subsections)
    if depth is not None and (
        styled or line.italic or name or (count <= 8 and not text.endswith(_FULL_STOPS))
    ):
        return min(depth, 4)
    if name and (styled or count <= 3):
        return 1
    if not _body_follows(following, ctx):
        return None  # a label inside a figure or a table, not a section
    if large:
        return 1
    if styled and count <= 10:
        return 2
    return None


def _body_follows(following: Line | None, ctx: Context) -> bool:
    """An unnumbered heading is followed by body text: body-size type over much of a column."""
    if following is None:
        return False
    body_type = abs(following.size - ctx.body_size) <= 0.15 * ctx.body_size
    return body_type and following.width >= 0.4 * ctx.column_width


def contents_entries(pages: list[PageLines]) -> set[int]:
    """Ids of the lines that are entries of a table of contents, never headings.

    A page with at least :data:`CONTENTS_MIN_LEADERS` lines ending in dot leaders and a
    page number is a contents page; on it, every line that ends in a page number is an
    entry, bold chapter lines without leaders included (``6 Conclusion ... 35``).
    """
    ids: set[int] = set()
    for page in pages:
        if sum(bool(_LEADERS.search(ln.text)) for ln in page.lines) >= CONTENTS_MIN_LEADERS:
            ids.update(id(ln) for ln in page.lines if _PAGE_AT_END.search(ln.text))
    return ids


def heading_wraps(line: Line, following: Line, body_size: float) -> bool:
    """Whether ``following`` is the second line of a heading that starts with ``line``.

    Same page, same size and weight (bold, or larger than the body), set closer than half
    a body line below it, not to its left, not numbered itself, and the two together
    short enough to be a heading (``C. Expert Specialization ... Aux-Loss-`` / ``Free
    Models``). The pair is only taken as a heading when the joined text passes
    :func:`heading_level`.
    """
    styled = (line.bold and following.bold) or min(line.size, following.size) >= (
        LARGE_RATIO * body_size
    )
    return (
        styled
        and following.page_no == line.page_no
        and abs(following.size - line.size) < 0.3
        and 0 <= following.top - line.bottom < 0.5 * body_size
        and following.x0 >= line.x0 - 1
        and not line.text.rstrip().endswith((".", ":", ";"))
        and numbering_depth(following.text) is None
        and word_count(line.text) + word_count(following.text) <= MAX_HEADING_WORDS
    )
