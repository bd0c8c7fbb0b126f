"""LaTeX to Unicode for BibTeX field values, and person names in display form.

Field values are decoded with pylatexenc (accents such as ``{\\"u}``, protective braces such
as ``{{DNA}}``, ``--`` dashes, ``\\&``); names are split by bibtexparser's name splitter
(``Last, First``, ``First von Last``, ``von Last, Jr, First``) and joined as
``First von Last Jr``; a braced corporate name (``{World Health Organization}``) stays whole.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bibtexparser.middlewares import NameParts
    from pylatexenc.latex2text import LatexNodes2Text

__all__ = ["OTHERS", "decode_latex", "display_name", "split_bibtex_names"]

OTHERS = "others"
"""BibTeX's ``and others``: the list is longer than written; dropped from the display list."""


@lru_cache(maxsize=1)
def _decoder() -> LatexNodes2Text:
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text", strict_latex_spaces=True)


def decode_latex(value: str) -> str:
    """``value`` with its LaTeX markup decoded to Unicode and whitespace collapsed."""
    if not any(c in value for c in "\\{}$~-"):
        return " ".join(value.split())
    try:
        text = _decoder().latex_to_text(value)
    except Exception:  # pylatexenc is tolerant; a value it still refuses is kept as written
        text = value.replace("{", "").replace("}", "")
    return " ".join(text.split())


def display_name(parts: NameParts) -> str:
    """One split BibTeX name as ``First von Last Jr`` in Unicode."""
    words = [*parts.first, *parts.von, *parts.last, *parts.jr]
    return decode_latex(" ".join(words))


def split_bibtex_names(value: str) -> list[str]:
    """The display names of a BibTeX ``author`` value (``A and B and others``)."""
    from bibtexparser.middlewares.names import (
        parse_single_name_into_parts,
        split_multiple_persons_names,
    )

    names: list[str] = []
    for raw in split_multiple_persons_names(value):
        if raw.strip().casefold() == OTHERS:
            continue
        name = display_name(parse_single_name_into_parts(raw, strict=False))
        if name:
            names.append(name)
    return names
