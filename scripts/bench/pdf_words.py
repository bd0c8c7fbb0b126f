"""How the PDF benches turn text into words, and their word recall.

Two definitions share their steps here, each the one its bench documents:

- :func:`tokens` (``pdf_fidelity.py``, the normalisation of ``realpapers-dev/README.md``):
  NFKC, lower case, runs of letters and digits (``[^\\W_]+``); the PDF side first rejoins
  line-end hyphens (:func:`pdf_tokens`).
- :func:`words` (``pdf_wild.py``): NFKC, line-end hyphens rejoined, lower case, words of 3+
  letters, and 3-character shingles for scripts written without spaces.

Both rejoin a hyphenated line end the same way (:func:`join_line_end_hyphens`), though in
their own order: the fidelity bench before NFKC, the wild bench after it (a ligature such
as ``ﬁ`` after the hyphen counts as a lower-case letter only once NFKC has split it). Both
count recall as a bag of words (:func:`bag_recall`).

The benches import this module by name; as their folder also holds a ``tokenize.py`` that
would shadow the standard library's, they keep the folder on ``sys.path`` behind it.
"""

from __future__ import annotations

import collections
import re
import unicodedata

_LINE_END_HYPHEN = re.compile(r"[\u00ad\ufffe\-]\r?\n\s*(?=[a-z])")
_TOKEN = re.compile(r"[^\W_]+")
UNSPACED_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR")
"""Scripts written without spaces between words (prefixes of :func:`script_of`)."""


def join_line_end_hyphens(text: str) -> str:
    """Rejoin a word hyphenated at a line end; drop soft hyphens and pdfium's U+FFFE.

    A hyphen (``-``, soft hyphen, or U+FFFE) before a line break joins the two halves when
    the next line starts with a lower-case letter.
    """
    text = _LINE_END_HYPHEN.sub("", text)
    return text.replace("\ufffe", "").replace("\u00ad", "")


def bag_recall(reference: list[str], output: list[str]) -> float | None:
    """Share of ``reference``'s words (as a multiset) found in ``output``; ``None`` if empty."""
    if not reference:
        return None
    hits = collections.Counter(reference) & collections.Counter(output)
    return sum(hits.values()) / len(reference)


# -- the fidelity bench's tokens -----------------------------------------------------------


def tokens(text: str) -> list[str]:
    """NFKC, lower-case word tokens: runs of letters and digits."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).lower())


def pdf_tokens(text: str) -> list[str]:
    """:func:`tokens` of a PDF's text, line-end hyphens rejoined first."""
    return tokens(join_line_end_hyphens(text))


# -- the wild bench's words ----------------------------------------------------------------


def script_of(ch: str) -> str:
    """The script of a letter, from its Unicode name (``LATIN``, ``CYRILLIC``, ...)."""
    try:
        name = unicodedata.name(ch)
    except ValueError:
        return "UNKNOWN"
    first = name.split(" ", 1)[0]
    if first in ("CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL", "IDEOGRAPHIC"):
        return "CJK"
    if first in ("GREEK", "MODIFIER"):
        return "LATIN"
    return first


def unspaced(ch: str) -> bool:
    """Whether ``ch`` is a letter or mark of a script written without spaces."""
    return unicodedata.category(ch)[0] in "LM" and script_of(ch).startswith(UNSPACED_SCRIPTS)


def _run_key(ch: str) -> str:
    """Letters of one word share a key: the script when written without spaces."""
    return script_of(ch) if unspaced(ch) else ""


def _join_unspaced(text: str) -> str:
    """Drop whitespace between two characters of a script written without spaces."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace() and out and unspaced(out[-1]):
            j = i
            while j < n and text[j].isspace():
                j += 1
            if j < n and unspaced(text[j]) and script_of(text[j]) == script_of(out[-1]):
                i = j
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def words(text: str) -> list[str]:
    """3+ letter words and, for scripts written without spaces, 3-character shingles.

    A word is a maximal run of letters (and the combining marks after them) of one kind:
    a script written without spaces changes the run. Whitespace between two characters of
    such a script is dropped first (a line break inside a Chinese sentence is no word
    boundary).
    """
    text = join_line_end_hyphens(unicodedata.normalize("NFKC", text))
    text = _join_unspaced(text.lower())
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if not run:
            return
        if all(unspaced(c) or unicodedata.category(c)[0] == "M" for c in run):
            out.extend("".join(run[i : i + 3]) for i in range(max(0, len(run) - 2)))
        elif sum(unicodedata.category(c)[0] == "L" for c in run) >= 3:
            out.append("".join(run))
        run.clear()

    for ch in text:
        cat = unicodedata.category(ch)[0]
        if cat == "L" or (cat == "M" and run):
            if run and cat == "L" and _run_key(ch) != _run_key(run[-1]):
                flush()
            run.append(ch)
        else:
            flush()
    flush()
    return out
