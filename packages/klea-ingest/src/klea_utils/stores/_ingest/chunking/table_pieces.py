"""A table over the chunk budget cut into pieces that each still read as the table.

A question names a cell by its row and its column ("the moisture of K2-1901", "grade 3 in
the fall term"), and the caption says what the table is about. A table cut between its
lines leaves the column heads and the caption in the first piece only, so the piece that
holds the cell holds neither. Here every piece opens with the table's *lead*: its caption
(printed above or below the rows) and its header row, then as many of the rows as fit.

Two table forms reach the chunker:

- the model-free PDF path writes a table as one text item, one row per line with ``|``
  between cells, and the caption on its own line before, among (when the page sets it
  inside the table's frame) or after the rows (a paragraph item is always one line, so
  several lines mark a table); a caption of several sentences leads with its first; a
  header set in stacked lines (model names over ``Base``) leads with all of them;
- Docling's tables are serialized as the caption, then one line of ``row, column = value``
  triplets, which name their row and column already: the lead is the caption.

The lead is left out where it would take more than a third of the room (a caption of a
paragraph, a header of dozens of cells): the caption first, then the header row.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from klea_utils.stores._ingest.chunking.sentences import split_sentences

__all__ = ["CAPTION_LINE", "is_row_table", "table_segments"]

CAPTION_LINE = re.compile(
    r"^(?:table|tab\.)\s*(?:[A-Z]{1,2}[.\-])?[\dIVX]+(?:[.\-]\d+)*[a-z]?\s*[.:|\u2013\u2014-]",
    re.IGNORECASE,
)
"""A ``Table 3:`` / ``Tab. IV.`` caption line, also numbered within an annex or chapter
(``Table K.6 \u2013``, ``Table 4-1:``, ``Table 2.3.``)."""
_DIGIT = re.compile(r"\d")

_CELL_SEPARATOR = " | "
_NUMBER_CELL = re.compile(r"^[-+\u2212\u2013\u00b1$\u20ac\u00a3(]*[\d.,]+\s*[%)*\u2020\u2021]*$")
"""A cell that is a figure (``90.7``, ``-3``, ``12%``, ``(4)``, ``$1,200``): data, not a head."""
_STACKED_HEADS = 2
_HEAD_WORDS = 4
"""A column head's cell in a stacked header's later line has at most this many words."""
"""A header may run over at most this many lines after its first (stacked column heads)."""
_TRIPLET_END = re.compile(r"(?<=\S)\. (?=\S)")
"""Between two ``row, column = value`` triplets (``table_triplets`` joins them so)."""
_CAPTION_SEARCH = 3
"""A caption is looked for among this many first lines of a table."""
_LEAD_SHARE = 3
"""The lead may take at most ``room // _LEAD_SHARE`` tokens of a piece."""

Count = Callable[[str], int]
Cut = Callable[[str, int], list[str]]
"""Cuts one line over the room into pieces that fit (``segment_text``)."""


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.split("\n") if line.strip()]


def is_row_table(text: str) -> bool:
    """Whether ``text`` is a table of the model-free path: lines, two or more with cells."""
    lines = _lines(text)
    return len(lines) >= 2 and sum(_CELL_SEPARATOR in line for line in lines) >= 2


def _caption_at(lines: list[str]) -> int | None:
    """Where the caption line is: among the first lines (a ``Table N`` above the rows, or
    read inside them when the page sets it within the table's frame), else the last."""
    for index, line in enumerate(lines[:_CAPTION_SEARCH]):
        if CAPTION_LINE.match(line):
            return index
    return len(lines) - 1 if len(lines) > 1 and CAPTION_LINE.match(lines[-1]) else None


def _lead_and_rows(lines: list[str], triplets: bool) -> tuple[list[str], list[str]]:
    """The caption and header lines every piece repeats, and the rest in reading order.

    A caption of several sentences leads with its first (``Table 3: Comparison of base
    models.``); the rest stays where the caption stood, so no text is lost.
    """
    if triplets:  # caption paragraph(s), then the line of triplets, one row each
        return lines[:-1], _TRIPLET_END.split(lines[-1]) if lines else []
    rows = list(lines)
    caption: list[str] = []
    at = _caption_at(rows)
    if at is not None:
        sentences = [t.strip() for t in split_sentences(rows[at].replace(_CELL_SEPARATOR, " ", 1))]
        taken = 1  # "Table 3." alone names no subject: read on to the next sentence
        while taken < len(sentences) and len(" ".join(sentences[:taken]).split()) < 4:
            taken += 1
        caption = [" ".join(sentences[:taken])]
        rest = " ".join(sentences[taken:])
        if rest:
            rows[at] = rest
        else:
            del rows[at]
    header = [rows.pop(0)] if len(rows) > 1 and _names_columns(rows[0]) else []
    while header and len(header) <= _STACKED_HEADS and len(rows) > 1:
        if not _continues_header(header[0], rows[0]):
            break
        header.append(rows.pop(0))
    return caption + header, rows


def _continues_header(header: str, line: str) -> bool:
    """Whether ``line`` is a second line of a stacked header (``DeepSeek-V2 | Qwen2.5``
    over ``Base | 72B Base``): fewer cells than the header, two or more, none a number,
    each a few words.

    A data row fills the table's columns or holds a figure; a lone label (``Math``) heads
    a group of rows, not the columns; cells of many words are prose (columns of text read
    as a table), not heads.
    """
    cells = [cell.strip() for cell in line.split(_CELL_SEPARATOR)]
    width = len(header.split(_CELL_SEPARATOR))
    return (
        2 <= len(cells) < width
        and not any(_NUMBER_CELL.match(cell) for cell in cells)
        and all(len(cell.split()) <= _HEAD_WORDS for cell in cells)
    )


def _names_columns(line: str) -> bool:
    """Whether a table's first line reads as its header row: cells, one without a digit.

    A first line whose every cell holds a digit is a row of data (a table continued from
    the page before, whose header stayed there): repeated in every piece it would only
    add one row's numbers to each.
    """
    cells = [cell.strip() for cell in line.split(_CELL_SEPARATOR)]
    return len(cells) > 1 and any(cell and not _DIGIT.search(cell) for cell in cells)


def _fitting_lead(lead: list[str], room: int, count: Count) -> tuple[int, int]:
    """Where the lead that fits starts and ends: less its caption, then its header's later
    lines, then its first, until it takes a third of the room (the caption is the lead's
    first line where there is one)."""
    start, end = 0, len(lead)

    def too_long() -> bool:
        return start < end and count("\n".join(lead[start:end])) > room // _LEAD_SHARE

    if too_long():
        start = 1
    while too_long():
        end -= 1
    return start, end


def table_segments(text: str, room: int, count: Count, cut: Cut, *, triplets: bool) -> list[str]:
    """``text`` (a table over ``room`` tokens) as pieces that each open with its lead.

    Lines are kept whole where they fit; a line longer than a piece's room is cut with
    ``cut`` (sentences, then words). Every piece fits ``room`` tokens as counted by
    ``count``; every row is in exactly one piece, in order.
    """
    whole_lead, rows = _lead_and_rows(_lines(text), triplets)
    start, end = _fitting_lead(whole_lead, room, count)
    lead = whole_lead[start:end]
    rows = whole_lead[:start] + whole_lead[end:] + rows  # a lead too long is read once
    prefix = "\n".join(lead)
    body_room = room - count(prefix + "\n") if prefix else room
    joiner = ". " if triplets else "\n"
    pieces: list[str] = []
    current = ""
    for line in rows:
        joined = f"{current}{joiner}{line}" if current else line
        if count(joined) <= body_room:
            current = joined
            continue
        if current:
            pieces.append(current)
        if count(line) <= body_room:
            current = line
        else:
            pieces.extend(cut(line, body_room))
            current = ""
    if current:
        pieces.append(current)
    return [f"{prefix}\n{piece}" if prefix else piece for piece in pieces]
