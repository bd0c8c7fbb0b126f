"""Text normalization shared by retrieval and ingestion (public, standard library only).

Chunks are normalized with :func:`normalize_text` when they are indexed (klea-ingest) and
queries when they are searched (klea-retrieval), so both sides share one plain-text form;
``klea_utils.stores.utils`` re-exports it under the seed's name.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["ARABIC_SCRIPT_LETTERS", "INVISIBLE_RANGES", "normalize_text"]

INVISIBLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),  # soft hyphen
    (0x0600, 0x0605),  # Arabic number signs
    (0x061C, 0x061C),  # Arabic letter mark
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),  # Mongolian vowel separator
    (0x200B, 0x200F),  # zero-width space, non-joiner, joiner; LRM, RLM
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0x2066, 0x206F),  # bidi isolates, deprecated format controls
    (0xFE00, 0xFE0F),  # variation selectors (category Mn: they draw nothing either)
    (0xFEFF, 0xFEFF),  # zero-width no-break space (BOM)
    (0xFFF9, 0xFFFB),  # interlinear annotation
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),  # Egyptian hieroglyph format controls
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol formatting
    (0xE0001, 0xE0001),  # language tag
    (0xE0020, 0xE007F),  # tag characters
    (0xE0100, 0xE01EF),  # variation selectors supplement
)
"""Code points that carry no text: every format character (Unicode category ``Cf``) and
the variation selectors. A test checks the ranges against the running ``unicodedata``."""

_INVISIBLE = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in INVISIBLE_RANGES) + "]")

ARABIC_SCRIPT_LETTERS = "\u0620-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufefc"
"""The Arabic-script letters and marks, as a regex character-class body (the Arabic blocks,
their supplement and extended-A, presentation forms A and B)."""

_PERSIAN_WORD_BREAK = re.compile(f"(?<=[{ARABIC_SCRIPT_LETTERS}])\u200c")
"""A zero-width non-joiner after an Arabic-script letter (or its mark): in Persian it ends
the first word of a compound (``کتاب\u200cها``, ``می\u200cخواهم``) without a visible
space, and Lucene's Persian analysis reads it as a space. In other scripts (Devanagari,
Bengali, Malayalam) it sits inside a word and is removed with the other format
characters."""


def normalize_text(text: str) -> str:
    """Normalise free text for consistent indexing and retrieval.

    Characters that draw nothing are removed: soft hyphens, zero-width spaces and joiners,
    direction marks (U+200E, U+200F) and the other format characters (Unicode category
    ``Cf``), and variation selectors (U+FE0F), so no word is split at one. The one
    exception is the zero-width non-joiner (U+200C) after an Arabic-script letter, which
    becomes a space: in Persian it separates the parts of a compound (``کتاب\u200cها``
    -> ``کتاب ها``, as Lucene's Persian analysis and SQLite FTS5's ``unicode61`` split
    it). Then NFKC
    compatibility composition folds ligatures (``\\ufb01`` -> ``fi``), full-width forms,
    superscripts, no-break and typographic spaces, and the non-breaking hyphen. Em and en
    dashes are kept unchanged.
    """
    text = _PERSIAN_WORD_BREAK.sub(" ", text)
    return unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))
