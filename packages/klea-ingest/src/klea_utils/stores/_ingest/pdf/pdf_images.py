"""How much of a PDF page its images cover, at any depth of the page's content.

A scan is an image drawn over most of the page. Many producers draw it through a Form
XObject (``/Fm0 Do`` wrapping ``/Im0 Do``), sometimes forms nested in forms, or as an inline
image (``BI ... ID ... EI``); pdfium lists a form as one object holding its own objects,
and an inline image as an image object. :func:`image_cover` walks the page's objects and
every form's, places each image in page space through the matrices of the forms around
it, and returns the share of the page box the images cover.

:data:`MIN_SCAN_COVER` is the share above which a page without a text layer is taken for
a scan and read by OCR (see ``docs/decisions.md``).
"""

from __future__ import annotations

import ctypes
from typing import Any

__all__ = ["MAX_FORM_DEPTH", "MIN_SCAN_COVER", "image_cover"]

MIN_SCAN_COVER = 0.2
"""Images covering at least this share of a page with no text layer make it a scan.

A scanned page's image covers 60-100% of the page (the margins a copier leaves, two book
pages per sheet, a strip of JBIG2 bands all count); a logo, a signature or an icon covers a
few per cent. A fifth of the page leaves room for a small scan (a receipt, a clipping) on a
large page while a page holding only decorations is not sent to OCR."""

MAX_FORM_DEPTH = 12
"""Forms nested deeper than this are not entered (a guard against self-referring forms)."""

_Matrix = tuple[float, float, float, float, float, float]
_IDENTITY: _Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def _compose(outer: _Matrix, inner: _Matrix) -> _Matrix:
    """The matrix applying ``inner`` first, then ``outer`` (PDF's row-vector convention)."""
    a, b, c, d, e, f = inner
    oa, ob, oc, od, oe, of = outer
    return (
        a * oa + b * oc,
        a * ob + b * od,
        c * oa + d * oc,
        c * ob + d * od,
        e * oa + f * oc + oe,
        e * ob + f * od + of,
    )


def _matrix(raw: Any, obj: Any) -> _Matrix:
    m = raw.FS_MATRIX()
    if not raw.FPDFPageObj_GetMatrix(obj, m):
        return _IDENTITY
    return (m.a, m.b, m.c, m.d, m.e, m.f)


def _placed_area(matrix: _Matrix, box: tuple[float, float, float, float]) -> float:
    """Area of the page box covered by the unit square under ``matrix`` (its bounding box)."""
    a, b, c, d, e, f = matrix
    xs = (e, a + e, c + e, a + c + e)
    ys = (f, b + f, d + f, b + d + f)
    x0, y0, x1, y1 = box
    width = min(max(xs), x1) - max(min(xs), x0)
    height = min(max(ys), y1) - max(min(ys), y0)
    return max(width, 0.0) * max(height, 0.0)


def image_cover(raw: Any, page: Any, box: tuple[float, float, float, float]) -> float:
    """Share (0-1) of the page ``box`` (user space) covered by images, forms included.

    ``raw`` is ``pypdfium2.raw`` and ``page`` a raw ``FPDF_PAGE``. Overlapping images are
    counted once each, so the share is capped at 1.
    """
    page_area = (box[2] - box[0]) * (box[3] - box[1])
    if page_area <= 0:
        return 0.0
    covered = 0.0
    # (container, is_form, matrix of the container in page space, depth)
    stack: list[tuple[Any, bool, _Matrix, int]] = [(page, False, _IDENTITY, 0)]
    seen: set[int] = set()
    while stack and covered < page_area:
        container, is_form, placed, depth = stack.pop()
        count = (raw.FPDFFormObj_CountObjects if is_form else raw.FPDFPage_CountObjects)(container)
        get = raw.FPDFFormObj_GetObject if is_form else raw.FPDFPage_GetObject
        for i in range(max(count, 0)):
            obj = get(container, i)
            kind = raw.FPDFPageObj_GetType(obj)
            if kind == raw.FPDF_PAGEOBJ_IMAGE:
                covered += _placed_area(_compose(placed, _matrix(raw, obj)), box)
            elif kind == raw.FPDF_PAGEOBJ_FORM and depth < MAX_FORM_DEPTH:
                key = ctypes.cast(obj, ctypes.c_void_p).value or 0
                if key not in seen:
                    seen.add(key)
                    stack.append((obj, True, _compose(placed, _matrix(raw, obj)), depth + 1))
    return min(covered / page_area, 1.0)
