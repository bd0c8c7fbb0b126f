"""Where a line of a rebuilt PDF item sits: its box in user space and its span of the text.

The structure builder (:mod:`klea_utils.stores._ingest.pdf.pdf_structure`) gives every item
one provenance per line it was built from, so a chunk can name the boxes its text comes
from (the chunk's ``regions``). Line boxes are measured in the page's reading frame
(:mod:`klea_utils.stores._ingest.pdf.pdf_frames`, top-left origin, the page turned so its
text runs left to right); :func:`line_box` maps one back to the page's user space as
pdfium reports character boxes (bottom-left origin, before ``/Rotate``), and
:func:`visible_box` keeps the part of it inside the page box: text placed beyond the crop
box, or a table wider than its page, is not on the page a reader sees (and Docling would
clamp such a box itself, with a warning per box).
:func:`line_spans` finds each line's characters in the item's joined text, so a chunk
that holds only part of a long paragraph can keep only the lines of its part;
:func:`row_spans` does the same for a table, whose rows are known as written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from klea_utils.stores._ingest.pdf.pdf_frames import Frame
    from klea_utils.stores._ingest.pdf.pdf_lines import Line

__all__ = ["line_box", "line_spans", "row_spans", "visible_box"]


def line_box(frame: Frame, line: Line) -> tuple[float, float, float, float]:
    """``(left, bottom, right, top)`` of ``line`` in user space (points, bottom-left origin)."""
    ax, ay = frame.user(line.x0, line.top)
    bx, by = frame.user(line.x1, line.bottom)
    return min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)


def visible_box(
    frame: Frame, box: tuple[float, float, float, float]
) -> tuple[float, float, float, float] | None:
    """The part of ``box`` (``(left, bottom, right, top)``, user space) inside ``frame``'s
    page box; ``None`` when none of it is (a line printed wholly off the page)."""
    left, bottom = max(box[0], frame.x0), max(box[1], frame.y0)
    right, top = min(box[2], frame.x1), min(box[3], frame.y1)
    if right <= left or top <= bottom:
        return None
    return left, bottom, right, top


def line_spans(lines: list[str], text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each of ``lines`` in ``text``, the text joined from them.

    Joining drops hyphenation marks, collapses blanks and may rewrite a line (a run-in
    heading cut off its first line), so each line is found by its first word at or after
    the end of the line before; a line not found starts where the one before ended. Spans
    are in order, never overlap, and the last one ends at the end of ``text``.
    """
    starts: list[int] = []
    cursor = 0
    for line in lines:
        words = line.split()
        at = text.find(words[0].rstrip("\u00ad-"), cursor) if words else -1
        if at < 0 or (starts and at - cursor > len(line) + 8):
            at = cursor
        starts.append(at)
        cursor = min(len(text), at + max(1, len(" ".join(words)) - 2))
    spans = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        spans.append((start, max(start, end)))
    return spans


def row_spans(rows: list[str], lines: list[str], text: str) -> list[tuple[int, int]]:
    """Spans of a table's ``rows`` in ``text`` (which opens with them, one per line, as
    written: cells joined by `` | ``, so a row is longer than its line), then of ``lines``
    (a caption printed under the rows) in the rest, as :func:`line_spans` finds them.

    A row's first word is often a short code (``C``, ``GT``) found again in the row above:
    searching for it would slide every later box down the table.
    """
    spans: list[tuple[int, int]] = []
    at = 0
    for row in rows:
        spans.append((at, min(len(text), at + len(row))))
        at = min(len(text), at + len(row) + 1)
    if lines:
        spans += [(at + a, at + b) for a, b in line_spans(lines, text[at:])]
    elif spans:
        spans[-1] = (spans[-1][0], len(text))
    return spans
