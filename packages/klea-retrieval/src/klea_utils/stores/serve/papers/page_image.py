"""A page of a library PDF as a PNG, with a passage's regions drawn on it.

pdfium renders the page as a viewer shows it (its ``/Rotate`` applied) at ``dpi``
(:data:`MIN_DPI`-:data:`MAX_DPI`); each region (``{"page", "bbox": [left, bottom, right,
top]}`` in PDF user space, as ingestion stores it) is mapped to the image with pdfium's
own ``FPDF_PageToDevice`` and framed in :data:`HIGHLIGHT` (the text inside stays
readable). The PNG is written with the standard library (``zlib``), so rendering needs
only ``pypdfium2`` (the ``serve`` extra).
"""

from __future__ import annotations

import ctypes
import struct
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from klea_utils.stores._retrieval.extras import import_extra

__all__ = ["DEFAULT_DPI", "HIGHLIGHT", "MAX_DPI", "MIN_DPI", "PageOutOfRangeError", "page_png"]

DEFAULT_DPI = 150
MIN_DPI = 36
MAX_DPI = 300
"""Largest resolution served: a letter page at 300 dpi is about 25 megabytes of pixels."""

HIGHLIGHT = (255, 140, 0)
"""Frame colour of a passage's regions (RGB)."""

_FRAME_PX = 2
_PNG_LEVEL = 1
"""zlib level: pages are mostly white, level 1 is a few times faster than 6 for 10% more."""


class PageOutOfRangeError(LookupError):
    """The paper has no such page (404)."""


def _png(width: int, height: int, stride: int, pixels: bytes) -> bytes:
    """An 8-bit RGB PNG of rows of ``stride`` bytes (``width * 3`` of them pixels)."""
    row = width * 3
    raw = b"".join(b"\x00" + pixels[y * stride : y * stride + row] for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, _PNG_LEVEL))
        + chunk(b"IEND", b"")
    )


def _device_box(
    raw: Any, page: Any, size: tuple[int, int], bbox: list[float]
) -> tuple[int, int, int, int]:
    xs, ys = [], []
    for x, y in ((bbox[0], bbox[1]), (bbox[2], bbox[3])):
        dx, dy = ctypes.c_int(), ctypes.c_int()
        raw.FPDF_PageToDevice(page, 0, 0, size[0], size[1], 0, x, y, dx, dy)
        xs.append(dx.value)
        ys.append(dy.value)
    return min(xs), min(ys), max(xs), max(ys)


def _frame(raw: Any, bitmap: Any, box: tuple[int, int, int, int], size: tuple[int, int]) -> None:
    """Draw a frame round ``box`` (device pixels) a little outside the glyphs."""
    red, green, blue = HIGHLIGHT
    # the bitmap holds RGB (reversed byte order): FillRect writes B, G, R in that order
    colour = (0xFF << 24) | (blue << 16) | (green << 8) | red
    pad = _FRAME_PX + 1
    left, top = max(0, box[0] - pad), max(0, box[1] - pad)
    right, bottom = min(size[0], box[2] + pad), min(size[1], box[3] + pad)
    if right <= left or bottom <= top:
        return
    width, height = right - left, bottom - top
    for x, y, w, h in (
        (left, top, width, _FRAME_PX),
        (left, bottom - _FRAME_PX, width, _FRAME_PX),
        (left, top, _FRAME_PX, height),
        (right - _FRAME_PX, top, _FRAME_PX, height),
    ):
        raw.FPDFBitmap_FillRect(bitmap, x, y, w, h, colour)


def page_png(
    path: Path,
    page_no: int,
    *,
    dpi: int = DEFAULT_DPI,
    regions: Iterable[Mapping[str, Any]] = (),
) -> bytes:
    """Page ``page_no`` (1-based) of the PDF at ``path`` as PNG bytes, ``regions`` on it
    framed (those of other pages are left out).

    Raises:
        ValueError: ``dpi`` outside :data:`MIN_DPI`-:data:`MAX_DPI`.
        PageOutOfRangeError: The PDF has no page ``page_no``.
    """
    if not MIN_DPI <= dpi <= MAX_DPI:
        raise ValueError(f"dpi must be {MIN_DPI}-{MAX_DPI}, got {dpi}")
    pdfium = import_extra("pypdfium2", feature="page images", extra="serve")
    raw = import_extra("pypdfium2.raw", feature="page images", extra="serve")
    pdf = pdfium.PdfDocument(str(path))
    try:
        if not 1 <= page_no <= len(pdf):
            raise PageOutOfRangeError(f"the paper has pages 1-{len(pdf)}, not {page_no}")
        page = pdf[page_no - 1]
        try:
            bitmap = page.render(scale=dpi / 72, rev_byteorder=True, may_draw_forms=True)
            size = (bitmap.width, bitmap.height)
            for region in regions:
                if region.get("page") == page_no:
                    box = _device_box(raw, page.raw, size, list(region["bbox"]))
                    _frame(raw, bitmap.raw, box, size)
            channels = bitmap.n_channels
            pixels = bytes(bitmap.buffer)
            if channels == 4:  # RGBx: drop the fourth byte of each pixel
                pixels = b"".join(pixels[i : i + 3] for i in range(0, len(pixels), 4))
                stride = size[0] * 3
            else:
                stride = bitmap.stride
            return _png(size[0], size[1], stride, pixels)
        finally:
            page.close()
    finally:
        pdf.close()
