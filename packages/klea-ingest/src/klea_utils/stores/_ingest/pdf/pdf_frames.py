"""Reading frames of a PDF page: boxes turned so that the text runs left to right.

pdfium gives every character's box in the page's user space (bottom-left origin, before
``/Rotate``). Text is read along its baseline, which may point up, left or down in that
space: a landscape table on a portrait page (``/Rotate 90``, or a rotated text matrix), a
slide deck stored sideways, a vertical label. A :class:`Frame` turns user space by a
quarter turn (the text's direction, counter-clockwise) so that the baseline runs along
``+x``, and measures from the top-left corner of the turned page box: lines are then built
the same way whatever the page's ``/Rotate`` or the text matrix say.

The page's reading frame is the direction most of its characters run in
(:func:`dominant_quarter`); characters in another direction are read in their own frame
and their lines are marked rotated (margin stamps, axis labels).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["OFF_AXIS_RAD", "Frame", "dominant_quarter", "quarter_of"]

OFF_AXIS_RAD = 0.05
"""A baseline more than this many radians (about 3 degrees) away from a quarter turn is
drawn at a slant (a watermark, a stamp): its characters count as rotated in any frame."""


def quarter_of(clockwise_angle: float) -> tuple[int, bool]:
    """The quarter turn (0-3, counter-clockwise) nearest a baseline, and whether it is off
    that quarter by more than :data:`OFF_AXIS_RAD`.

    ``clockwise_angle`` is what pdfium's ``FPDFText_GetCharAngle`` returns: radians,
    clockwise from the ``+x`` axis of user space.
    """
    ccw = (-clockwise_angle) % (2 * math.pi)
    quarter = round(ccw / (math.pi / 2))
    off = abs(ccw - quarter * math.pi / 2) > OFF_AXIS_RAD
    return quarter % 4, off


def dominant_quarter(quarters: Iterable[int]) -> int:
    """The quarter most characters run in (ties go to the lower quarter; none: upright)."""
    counts = [0, 0, 0, 0]
    for quarter in quarters:
        counts[quarter] += 1
    return max(range(4), key=lambda q: (counts[q], -q))


@dataclass(frozen=True)
class Frame:
    """User space turned by ``quarter`` counter-clockwise quarter turns, top-left origin.

    ``x0, y0, x1, y1`` is the page box in user space (pdfium's page bounding box).
    """

    quarter: int
    x0: float
    y0: float
    x1: float
    y1: float

    def __post_init__(self) -> None:
        if self.quarter not in (0, 1, 2, 3):
            raise ValueError(f"a frame turns by 0-3 quarter turns, not {self.quarter}")

    @property
    def width(self) -> float:
        return self.x1 - self.x0 if self.quarter % 2 == 0 else self.y1 - self.y0

    @property
    def height(self) -> float:
        return self.y1 - self.y0 if self.quarter % 2 == 0 else self.x1 - self.x0

    def point(self, x: float, y: float) -> tuple[float, float]:
        """``(left, top)`` of the user-space point ``(x, y)`` in this frame."""
        q = self.quarter
        if q == 0:
            return x - self.x0, self.y1 - y
        if q == 1:  # baseline up the page: glyphs' tops face -x
            return y - self.y0, x - self.x0
        if q == 2:  # upside down
            return self.x1 - x, y - self.y0
        return self.y1 - y, self.x1 - x  # baseline down the page

    def user(self, left: float, top: float) -> tuple[float, float]:
        """The user-space point at ``(left, top)`` of this frame (inverse of :meth:`point`)."""
        q = self.quarter
        if q == 0:
            return left + self.x0, self.y1 - top
        if q == 1:
            return top + self.x0, left + self.y0
        if q == 2:
            return self.x1 - left, top + self.y0
        return self.x1 - top, self.y1 - left

    def box(
        self, left: float, right: float, bottom: float, top: float
    ) -> tuple[float, float, float, float]:
        """A user-space box as ``(left, right, top, bottom)`` in this frame (top-left origin)."""
        ax, ay = self.point(left, bottom)
        bx, by = self.point(right, top)
        return min(ax, bx), max(ax, bx), min(ay, by), max(ay, by)

    def from_frame(
        self, other: Frame, left: float, top: float, right: float, bottom: float
    ) -> tuple[float, float, float, float]:
        """A box of ``other`` frame as ``(left, top, right, bottom)`` in this one."""
        ux0, uy0 = other.user(left, top)
        ux1, uy1 = other.user(right, bottom)
        x0, x1, y0, y1 = self.box(min(ux0, ux1), max(ux0, ux1), min(uy0, uy1), max(uy0, uy1))
        return x0, y0, x1, y1
