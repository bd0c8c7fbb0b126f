"""Whether a library's embedder reads the script a question is written in.

The packaged embedder, all-MiniLM-L6-v2, reads English: its WordPiece vocabulary (the
uncased BERT one, 30,522 pieces) holds 26,482 pieces of two letters or more in the Latin
script, 8 in Cyrillic, 4 in Greek and none in any other script; Han, kana, Hangul,
Arabic, Thai, Cyrillic and Greek letters reach the model one character a piece (or as
``[UNK]``), so a question written in them becomes a vector of single letters that ranks
passages at random. Asked ``宇宙塵をたべて何を呼吸するの`` (issue 37), its list held
three passages of a Japanese slide deck and not the poem that both lexical lists put
first by far, and those three, found by all three lists, outvoted the poem.

:func:`embedder_reads_question` is the cheap rule the pipeline applies per question: an
embedder known to read only the Latin script (:func:`latin_only`: the packaged MiniLM) reads a
question when at least half of its letters (``str.isalpha``) are Latin. A question
without letters (numbers, symbols) counts as read; every other embedder (multilingual,
Ollama, a user's model) is taken to read every question, since nothing here knows its
vocabulary. An English question is all Latin letters, so it is read by construction and
nothing changes for it.
"""

from __future__ import annotations

import unicodedata

from klea_utils.stores.packaged_minilm import is_packaged_minilm

__all__ = ["READ_SHARE", "embedder_reads_question", "latin_only", "latin_share"]

READ_SHARE = 0.5
"""The share of a question's letters that must be Latin for a Latin-only embedder to
read it."""

_LATIN = ("LATIN ", "FULLWIDTH LATIN ")


def latin_only(embedder: str | None) -> bool:
    """Whether the embedding model spec ``embedder`` names the packaged MiniLM (under any
    name that resolves to it, ``huggingface:all-MiniLM-L6-v2`` the default), whose
    vocabulary reads the Latin script only."""
    if embedder is None or not embedder.startswith("huggingface:"):
        return False
    model = embedder.removeprefix("huggingface:").removesuffix(":local")
    return is_packaged_minilm(model)


def latin_share(text: str) -> float | None:
    """The share of ``text``'s letters (``str.isalpha``) that are Latin, ``None`` when it
    holds no letter. Marks and digits are not letters; a letter is Latin when its Unicode
    name says so (``LATIN SMALL LETTER E WITH ACUTE``, fullwidth ``Ａ`` too)."""
    letters = [char for char in text if char.isalpha()]
    if not letters:
        return None
    latin = sum(unicodedata.name(char, "").startswith(_LATIN) for char in letters)
    return latin / len(letters)


def embedder_reads_question(embedder: str | None, question: str) -> bool:
    """Whether the embedder of spec ``embedder`` (``None`` when unknown) reads ``question``:
    ``False`` only for a Latin-only embedder (:func:`latin_only`) and a question whose
    letters are less than :data:`READ_SHARE` Latin."""
    if not latin_only(embedder):
        return True
    share = latin_share(question)
    return share is None or share >= READ_SHARE
