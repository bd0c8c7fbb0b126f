"""Vector store utilities: store URIs, fusion, re-ranking, reference serialization, text.

File: klea_utils/stores/utils.py
"""

from __future__ import annotations

import re
import unicodedata

CACHE_DIR_NAME = ".klea-cache"
"""Name of the chunk-cache directory created inside a source directory by ingestion."""

TEMPLATE_FILE_NAME = "metadata-map.template.json"
"""Name of the metadata-map template ``chunk`` writes into the cache directory."""

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
