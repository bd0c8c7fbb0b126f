"""Read a scanned page the right way up: tesseract's orientation detection, only when needed.

A page is rendered with its ``/Rotate`` applied, which puts most scans upright. Some scans
are themselves sideways or upside down (a sheet fed the wrong way); tesseract's default
page segmentation reads text turned by a quarter, but upside-down text comes out as
confident-looking gibberish with low word confidences. So the page is read once as
rendered; only when that reading is poor (:data:`POOR_CONFIDENCE`) does tesseract's
orientation and script detection (``--psm 0``, the ``osd`` language data Debian's
``tesseract-ocr`` package depends on) run on a half-resolution copy, and when it names a
turn with some confidence (:data:`MIN_OSD_CONFIDENCE`) the turned image is read again and
the better of the two readings kept. Where OSD already ran on the page to find its script
(:mod:`klea_utils.stores._ingest.pdf.ocr_osd`), its report is used instead of a second run.
Without the ``osd`` data the first reading stands.

The images go to tesseract as binary PGM (:data:`IMAGE_SUFFIX`), not PNG: the same pixels
(so the same reading), without the zlib compression that cost this process about 0.16
CPU-s per 300-dpi page and tesseract the inflating of it (issue 40).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.pdf.ocr_osd import OsdReport, detect, known_report

__all__ = [
    "IMAGE_SUFFIX",
    "MIN_OSD_CONFIDENCE",
    "POOR_CONFIDENCE",
    "osd_turn",
    "read_upright",
    "tsv_score",
]

IMAGE_SUFFIX = ".pgm"
"""How a page image is written for tesseract: binary PGM, uncompressed greyscale."""

POOR_CONFIDENCE = 60.0
"""A reading whose mean word confidence (weighted by word length) is below this is poor.
Upright print reads at 85-96; upside-down print at 20-50."""

MIN_OSD_CONFIDENCE = 1.5
"""The least orientation confidence tesseract's OSD must give before the page is read again
turned (sideways and upside-down pages of the real set score 2.5-4.5 at 150 dpi; the
second reading is kept only when it scores better, so a wrong turn costs time, not text)."""


def _words(tsv: str) -> list[tuple[str, float]]:
    out = []
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) >= 12 and cols[0] == "5" and cols[11].strip():
            try:
                out.append((cols[11].strip(), float(cols[10])))
            except ValueError:
                continue
    return out


def tsv_score(tsv: str) -> tuple[float, float]:
    """``(mean confidence, confident letters)`` of a tesseract TSV reading.

    The mean is weighted by word length; confident letters count the letters of words read
    at :data:`POOR_CONFIDENCE` or better (what a second reading must beat).
    """
    words = _words(tsv)
    letters = sum(len(w) for w, _ in words)
    if not letters:
        return 0.0, 0.0
    mean = sum(len(w) * max(conf, 0.0) for w, conf in words) / letters
    good = sum(sum(c.isalpha() for c in w) for w, conf in words if conf >= POOR_CONFIDENCE)
    return mean, float(good)


def osd_turn(image_path: Path) -> int:
    """Clockwise degrees (0, 90, 180, 270) that make the image upright, per tesseract's OSD.

    0 when OSD cannot tell (too little text, no ``osd`` language data, tesseract fails) or
    is less sure than :data:`MIN_OSD_CONFIDENCE`.
    """
    return _turn(detect(image_path))


def _turn(report: OsdReport | None) -> int:
    if report is None or report.turn is None or report.orientation_confidence is None:
        return 0
    if report.orientation_confidence < MIN_OSD_CONFIDENCE:
        return 0
    return report.turn if report.turn in (90, 180, 270) else 0


def read_upright(image: Any, folder: Path, read: Callable[[Path], str]) -> tuple[str, Any, int]:
    """Read the page ``image`` (PIL, greyscale) with ``read`` (image path -> TSV), turned
    upright when the first reading is poor; return the TSV kept, the image it was read on
    and the clockwise degrees (0, 90, 180, 270) that image is turned from ``image``.
    """
    first_path = folder / f"page{IMAGE_SUFFIX}"
    image.save(first_path)
    tsv = read(first_path)
    mean, good = tsv_score(tsv)
    if mean >= POOR_CONFIDENCE:
        return tsv, image, 0
    known = known_report(first_path)  # OSD already ran on it to find the script
    if known is not None:
        turn = _turn(known)
    else:
        small_path = folder / f"page-osd{IMAGE_SUFFIX}"
        image.reduce(2).save(small_path)
        turn = osd_turn(small_path)
    if not turn:
        return tsv, image, 0
    # PIL turns counter-clockwise; OSD's "Rotate" is clockwise
    turned = image.rotate(-turn, expand=True)
    turned_path = folder / f"page-turned{IMAGE_SUFFIX}"
    turned.save(turned_path)
    second = read(turned_path)
    if tsv_score(second)[1] > good:
        return second, turned, turn
    return tsv, image, 0
