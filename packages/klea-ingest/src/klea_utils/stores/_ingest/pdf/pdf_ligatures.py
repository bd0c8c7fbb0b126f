"""F-ligatures that a font without a Unicode map puts in ASCII punctuation slots.

Some publisher fonts carry no ``ToUnicode`` map and draw ``ff``, ``fi``, ``fl``, ``ffi``
and ``ffl`` in slots that read as ASCII punctuation (``di#erent``, ``"gures``, ``$ip``,
``di!culties``). Which slot holds which ligature differs from font to font, so it is
learnt per font and page by voting: for each font and each punctuation character that
sits inside or at the start of a word, every ligature is tried, and a mapping is adopted
only when several distinct words become known words with it (the whole-word entries of
the packaged MiniLM tokenizer's vocabulary) and the character (almost) never reads as
punctuation in that font (``Yahoo!``, ``"quoted"``). Once a page shows such a font, a
slot met in a single word (``di!culties``) is adopted when only one ligature makes it a
known word (in another font: when every word with it reads so). Only glyphs in words
with a letter are rewritten, and a rewrite only ever adds letters.
"""

from __future__ import annotations

import string
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Protocol

from klea_utils.stores.packaged_minilm import packaged_minilm_path

__all__ = ["LIGATURES", "known_word", "repair_ligatures", "vote"]

LIGATURES = ("ff", "fi", "fl", "ffi", "ffl")
_PUNCT = frozenset(string.punctuation)
MIN_WORDS = 2
"""Distinct words that must become known words before a slot is read as a ligature."""
MAX_PUNCT_SHARE = 0.1
"""At most this share (of the words it repairs) of words where the slot reads as punctuation."""


class _Glyph(Protocol):
    text: str
    left: float
    right: float
    size: float
    font: int
    face: int


@lru_cache(maxsize=1)
def _vocabulary() -> frozenset[str]:
    try:
        lines = (packaged_minilm_path() / "vocab.txt").read_text(encoding="utf-8").split("\n")
    except (ImportError, OSError):
        return frozenset()
    return frozenset(w for w in lines if len(w) > 1 and w.isalpha() and w.islower())


def known_word(word: str) -> bool:
    """Whether ``word`` (any case) is a whole word of the packaged tokenizer's vocabulary."""
    return word.lower() in _vocabulary()


def _strip_other(word: str, slot: str) -> str:
    """``word`` without the punctuation around it, except ``slot`` itself."""
    start, end = 0, len(word)
    while start < end and word[start] in _PUNCT and word[start] != slot:
        start += 1
    while end > start and word[end - 1] in _PUNCT and word[end - 1] != slot:
        end -= 1
    return word[start:end]


def _readings(word: str, slot: str, known: Callable[[str], bool]) -> list[str]:
    """The ligatures that make ``word`` a known word with ``slot`` in it.

    The rest of the word must be two letters or more, lower case after the first (a
    ligature is lower case: ``(X`` is no ``fiX``, ``[LL`` no ``fiLL``).
    """
    rest = word.replace(slot, "")
    if len(rest) < 2 or not rest.isalpha() or not (word[1:].replace(slot, "") or "a").islower():
        return []
    return [lig for lig in LIGATURES if known(word.replace(slot, lig))]


def vote(
    words: Sequence[str],
    slot: str,
    known: Callable[[str], bool] = known_word,
    min_words: int = MIN_WORDS,
    unanimous: bool = False,
) -> str | None:
    """The ligature ``slot`` stands for in a font whose words are ``words``, or ``None``.

    A word votes for a ligature when putting it in every ``slot`` makes a known word; it
    counts against all ligatures when no ligature does and its pieces around ``slot`` are
    known words on their own (the slot is punctuation there). ``min_words`` distinct words
    must vote for the winner, and no other ligature may tie with it; ``unanimous`` asks
    every word with ``slot`` and a letter to vote for it.
    """
    good: dict[str, set[str]] = defaultdict(set)
    punct: set[str] = set()
    considered: set[str] = set()
    for raw in set(words):
        word = _strip_other(raw, slot)
        if slot not in word or not any(c.isalpha() for c in word):
            continue
        considered.add(word.lower())
        hits = _readings(word, slot, known)
        for lig in hits:
            good[lig].add(word.lower())
        if not hits:
            pieces = [p for p in word.split(slot) if p]
            if pieces and all(p.isalpha() and known(p) for p in pieces):
                punct.add(word.lower())
    if not good:
        return None
    ranked = sorted(good.items(), key=lambda item: -len(item[1]))
    best, votes = ranked[0]
    if len(votes) < min_words or (len(ranked) > 1 and len(ranked[1][1]) == len(votes)):
        return None
    if len(punct) > MAX_PUNCT_SHARE * len(votes) or (unanimous and votes != considered):
        return None
    return best


def _glyph(char: _Glyph | None) -> bool:
    return char is not None and char.font != -1 and bool(char.text.strip())


def _joined(left: _Glyph, right: _Glyph) -> bool:
    return right.left - left.right <= 0.25 * max(right.size, 1.0)


def _word_span(chars: Sequence[_Glyph | None], index: int) -> range:
    """The indices of the word (glyphs with no blank between) around ``index``."""
    start = index
    while start > 0:
        prev, here = chars[start - 1], chars[start]
        if not _glyph(prev) or not _joined(prev, here):  # type: ignore[arg-type]
            break
        start -= 1
    end = index + 1
    while end < len(chars):
        prev, here = chars[end - 1], chars[end]
        if not _glyph(here) or not _joined(prev, here):  # type: ignore[arg-type]
            break
        end += 1
    return range(start, end)


def _span_text(chars: Sequence[_Glyph | None], span: range) -> str:
    return "".join(chars[i].text for i in span)  # type: ignore[union-attr]


def repair_ligatures(chars: Sequence[_Glyph | None]) -> None:
    """Rewrite, in place, punctuation glyphs that a font uses for an f-ligature."""
    marks = [i for i, c in enumerate(chars) if c is not None and c.text in _PUNCT]
    if not marks:
        return
    # a slot right before a letter, in a word that some ligature makes a known word
    candidates: set[tuple[int, str]] = set()
    for i in marks:
        char, after = chars[i], chars[i + 1] if i + 1 < len(chars) else None
        if char is None or after is None or not after.text.isalpha():
            continue
        key = (char.face, char.text)
        if key not in candidates and _glyph(char):
            word = _strip_other(_span_text(chars, _word_span(chars, i)), char.text)
            if _readings(word, char.text, known_word):
                candidates.add(key)
    if not candidates:
        return
    spans: dict[int, range] = {}  # word start -> the word's indices
    keys_at: dict[int, set[tuple[int, str]]] = defaultdict(set)
    for i in marks:
        char = chars[i]
        assert char is not None
        key = (char.face, char.text)
        if key in candidates and _glyph(char):
            span = _word_span(chars, i)
            spans[span.start] = span
            keys_at[span.start].add(key)
    texts: dict[tuple[int, str], list[str]] = defaultdict(list)
    for start, span in spans.items():
        text = _span_text(chars, span)
        for key in keys_at[start]:
            texts[key].append(text)
    adopted: dict[tuple[int, str], str] = {}
    for (face, slot), found in texts.items():
        ligature = vote(found, slot)
        if ligature is not None:
            adopted[(face, slot)] = ligature
    if adopted:
        # The page uses ligature slots: a slot met in a single word that reads only with
        # one ligature (``di!culties``) is that ligature, in a font with other ligature
        # slots, or in another font when no word of that font reads otherwise.
        faces = {face for face, _ in adopted}
        for key, found in texts.items():
            if key in adopted:
                continue
            ligature = vote(found, key[1], min_words=1, unanimous=key[0] not in faces)
            if ligature is not None:
                adopted[key] = ligature
    if not adopted:
        return
    for span in spans.values():
        if not any(chars[i].text.isalpha() for i in span):  # type: ignore[union-attr]
            continue
        for i in span:
            char = chars[i]
            assert char is not None
            ligature = adopted.get((char.face, char.text))
            if ligature is not None:
                char.text = ligature
