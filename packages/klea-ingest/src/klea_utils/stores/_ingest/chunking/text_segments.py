"""Text cut into segments of at most a token budget, at sentence ends first.

:func:`segment_text` packs whole sentences (:func:`~klea_utils.stores._ingest.chunking.sentences.
split_sentences`) greedily into segments that fit ``room`` tokens. Only a sentence longer
than ``room`` is cut, at clauses (:func:`~klea_utils.stores._ingest.chunking.sentences.
split_clauses`), then between words, and a single word longer than ``room`` (a URL, a
formula without spaces) between characters. With ``overlap`` > 0, each segment after the
first starts with up to that many whole sentences that ended the segment before, as far as
they fit, so a sentence that needs the one before it is read with it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from klea_utils.stores._ingest.chunking.sentences import split_clauses, split_sentences

__all__ = ["segment_text"]

_WORD = re.compile(r"\S+\s*|\s+")


def _char_pieces(word: str, room: int, count: Callable[[str], int]) -> list[str]:
    """A word over ``room`` tokens cut into the longest character runs that fit."""
    pieces: list[str] = []
    rest = word
    while rest:
        low, high = 1, len(rest)
        while low < high:  # the longest prefix that fits (at least one character)
            middle = (low + high + 1) // 2
            if count(rest[:middle]) <= room:
                low = middle
            else:
                high = middle - 1
        pieces.append(rest[:low])
        rest = rest[low:]
    return pieces


def _units(text: str, room: int, count: Callable[[str], int]) -> list[tuple[str, bool]]:
    """``(unit, whole_sentence)`` pairs: sentences, or the pieces of one too long."""
    units: list[tuple[str, bool]] = []
    for sentence in split_sentences(text):
        if count(sentence) <= room:
            units.append((sentence, True))
            continue
        for clause in split_clauses(sentence):
            if count(clause) <= room:
                units.append((clause, False))
                continue
            for word in _WORD.findall(clause):
                if count(word) <= room:
                    units.append((word, False))
                else:
                    units.extend((piece, False) for piece in _char_pieces(word, room, count))
    return units


def segment_text(
    text: str, room: int, count: Callable[[str], int], *, overlap: int = 0
) -> list[str]:
    """``text`` cut into stripped segments of at most ``room`` tokens (by ``count``).

    Raises:
        ValueError: ``room`` is below 1 or ``overlap`` below 0.
    """
    if room < 1:
        raise ValueError(f"room must be >= 1 token, got {room}")
    if overlap < 0:
        raise ValueError(f"overlap must be >= 0 sentences, got {overlap}")
    units = _units(text, room, count)
    segments: list[str] = []
    current: list[tuple[str, bool]] = []
    fresh = 0  # units of ``current`` that no earlier segment holds
    for unit in units:
        if current and count("".join(u for u, _ in current) + unit[0]) > room:
            segments.append("".join(u for u, _ in current).strip())
            current = _carried(current, overlap, unit[0], room, count)
            fresh = 0
        current.append(unit)
        fresh += 1
    if current and fresh:
        segments.append("".join(u for u, _ in current).strip())
    return [s for s in segments if s]


def _carried(
    previous: list[tuple[str, bool]],
    overlap: int,
    following: str,
    room: int,
    count: Callable[[str], int],
) -> list[tuple[str, bool]]:
    """Up to ``overlap`` whole sentences ending ``previous`` that fit before ``following``."""
    carried: list[tuple[str, bool]] = []
    for unit in reversed(previous[1:]):  # never the whole previous segment
        if len(carried) == overlap or not unit[1]:
            break
        candidate = [unit, *carried]
        if count("".join(u for u, _ in candidate) + following) > room:
            break
        carried = candidate
    return carried
