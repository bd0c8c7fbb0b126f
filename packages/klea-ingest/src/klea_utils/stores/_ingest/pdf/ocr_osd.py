"""tesseract's orientation and script detection (OSD) of a page image, run once per image.

OCR asks OSD (``tesseract --psm 0``, the ``osd`` language data) two questions: which
script a page shows (:mod:`klea_utils.stores._ingest.pdf.ocr_languages`) and which way up
a scan is (:mod:`klea_utils.stores._ingest.pdf.ocr_orientation`). One run answers both, so
its report is kept by the image's content: a page whose script was asked for is not
detected again when its reading turns out poor.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

__all__ = ["OsdReport", "detect", "known_report", "parse_report"]

_TIMEOUT_S = 120
_KEEP = 8
"""Reports kept per process (the pages of the document being read)."""

_ROTATE = re.compile(r"^Rotate:\s*(\d+)", re.MULTILINE)
_ORIENTATION_CONFIDENCE = re.compile(r"^Orientation confidence:\s*([\d.]+)", re.MULTILINE)
_SCRIPT = re.compile(r"^Script:\s*(\S+)", re.MULTILINE)
_SCRIPT_CONFIDENCE = re.compile(r"^Script confidence:\s*([\d.]+)", re.MULTILINE)

_reports: OrderedDict[str, OsdReport | None] = OrderedDict()


@dataclass(frozen=True)
class OsdReport:
    """What OSD saw on one image; a field OSD did not report is ``None``."""

    turn: int | None
    """Clockwise degrees (0, 90, 180, 270) that make the image upright."""
    orientation_confidence: float | None
    script: str | None
    """OSD's own name of the script (``Cyrillic``, ``Han``...)."""
    script_confidence: float | None


def _digest(image_path: Path) -> str | None:
    try:
        return hashlib.sha1(Path(image_path).read_bytes(), usedforsecurity=False).hexdigest()
    except OSError:
        return None


def _number(pattern: re.Pattern[str], text: str) -> float | None:
    found = pattern.search(text)
    return float(found.group(1)) if found else None


def parse_report(stdout: str) -> OsdReport:
    """The :class:`OsdReport` of ``tesseract IMAGE stdout --psm 0`` output."""
    rotate = _number(_ROTATE, stdout)
    script = _SCRIPT.search(stdout)
    return OsdReport(
        turn=int(rotate) % 360 if rotate is not None else None,
        orientation_confidence=_number(_ORIENTATION_CONFIDENCE, stdout),
        script=script.group(1) if script else None,
        script_confidence=_number(_SCRIPT_CONFIDENCE, stdout),
    )


def known_report(image_path: Path) -> OsdReport | None:
    """The report of an earlier :func:`detect` on this image's content, else ``None``."""
    key = _digest(image_path)
    return _reports.get(key) if key else None


def detect(image_path: Path, dpi: int | None = None) -> OsdReport | None:
    """Run OSD on ``image_path`` (or reuse its report); ``None`` when tesseract cannot tell
    (too little text, no ``osd`` data, tesseract missing or failing, a time-out)."""
    key = _digest(image_path)
    if key is not None and key in _reports:
        _reports.move_to_end(key)
        return _reports[key]
    cmd = ["tesseract", str(image_path), "stdout", "--psm", "0"]
    if dpi:
        cmd += ["--dpi", str(dpi)]
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    report = parse_report(done.stdout) if done.returncode == 0 else None
    if key is not None:
        _reports[key] = report
        while len(_reports) > _KEEP:
            _reports.popitem(last=False)
    return report
