"""Text normalization shared by retrieval and ingestion (standard library only)."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize_text"]

# Characters that carry no text: soft hyphen, zero-width space/joiners, word joiner, BOM.
_INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff]")


def normalize_text(text: str) -> str:
    """Normalise free text for consistent indexing and retrieval.

    Soft hyphens and zero-width characters are removed, then NFKC compatibility
    composition folds ligatures (``\\ufb01`` -> ``fi``), full-width forms, superscripts,
    no-break and typographic spaces, and the non-breaking hyphen. Em and en dashes are
    kept unchanged.
    """
    return unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))
