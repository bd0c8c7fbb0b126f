"""Line-end hyphens: a hyphenated word to join, or a compound to keep, decided per document.

A hyphen at the end of a line is either TeX's (or a typesetter's) hyphenation, to drop
(``neigh-`` + ``boring``), or the hyphen of a compound that happened to fall at the line
end, to keep (``cross-`` + ``correlation``, ``J_n-`` + ``holomorphic``). pdfium marks both
the same way, and OCR sees a plain ``-``. The document itself tells them apart, as a
careful reader would:

1. the compound written with its hyphen inside a line elsewhere (``cross-correlation``)
   keeps the hyphen;
2. the joined word written inside a line elsewhere (``DeepSeek`` for ``Deep-`` + ``Seek``)
   drops it;
3. a right part that starts with a capital or a digit (``DeepSeek-`` + ``V3``), or a left
   part that ends in a digit (``FP8-`` + ``training``), is a compound: hyphenation splits
   words of letters;
4. otherwise the hyphen is dropped (``neighboring``): most line-end hyphens are
   hyphenation. Parts seen in other compounds are no evidence (``multi-line`` says
   nothing about ``base-`` + ``line``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["Hyphenation"]

_COMPOUND = re.compile(r"([^\W\d_]+)-([^\W\d_]+)")
_WORD = re.compile(r"[^\W_]+")
_LEFT = re.compile(r"([^\W_]+)$")
_RIGHT = re.compile(r"^([^\W_]+)")


class Hyphenation:
    """What one document's text says about its hyphenated words."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.compounds: set[str] = set()
        self.words: set[str] = set()
        for line in lines:
            # a line's last character may be the hyphen in question: not evidence
            body = line.rstrip("\ufffe-").casefold()
            self.compounds.update(f"{m.group(1)}-{m.group(2)}" for m in _COMPOUND.finditer(body))
            self.words.update(_WORD.findall(body))

    def keep(self, before: str, after: str) -> bool:
        """Whether the hyphen between ``before`` (a line's end) and ``after`` stays."""
        left_match, right_match = _LEFT.search(before), _RIGHT.search(after)
        if left_match is None or right_match is None:
            return False
        left, right = left_match.group(1), right_match.group(1)
        folded = f"{left.casefold()}-{right.casefold()}"
        if folded in self.compounds:
            return True
        if folded.replace("-", "") in self.words:
            return False
        return right[:1].isupper() or right[:1].isdigit() or left[-1:].isdigit()
