"""Where the real-paper development set is, for the tests that read real pages.

CI always has ``shared/`` beside the clone: there a missing data set fails the tests (the
fixtures assert ``DATA``); elsewhere (a bare checkout of this repository alone) they skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _data_dir() -> Path | None:
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data" / "realpapers-dev" / "pdf"
        if candidate.is_dir():
            return candidate
    return None


DATA = _data_dir()
"""The folder of real PDFs (``shared/data/realpapers-dev/pdf``), ``None`` when absent."""

needs_data = pytest.mark.skipif(
    DATA is None and not os.environ.get("CI"), reason="shared/data/realpapers-dev not found"
)


def _wild_dir() -> Path | None:
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data" / "realpapers-wild" / "pdf"
        if candidate.is_dir():
            return candidate
    return None


WILD = _wild_dir()
"""The real-world PDFs (``shared/data/realpapers-wild/pdf``), ``None`` when absent."""

needs_wild = pytest.mark.skipif(
    WILD is None and not os.environ.get("CI"), reason="shared/data/realpapers-wild not found"
)
