"""Whether a title's text reads as words, and its letter-spaced runs closed up.

OCR of a scanned form reads specks, stamps and handwriting as letters (``JUN ey ee``,
``LAE MQKRWAE) ZEFR, ARAER)``); such a line is no title, whatever its size on the page. No
dictionary is used, so that every language written in Latin letters is judged alike:

- a word of Latin letters with five consonants or more in a row (``MQKRWAE``; ``y`` counts
  as a vowel and ``ch``, ``gh``, ``ng``, ``ph``, ``sh``, ``th`` as one consonant, so that
  ``strengths`` is a word), or with its case mixed inside it (``MQkRW``; ``McDonald`` and
  ``iPhone`` are words), is an odd word;
- a closing bracket with no opening one before it, or an opening one never closed, is
  OCR's reading of a stroke (``{FRMTTREB``, OCR of a Chinese title read as Latin);
- a line of three words or more whose words are mostly one- or two-letter lower-case
  fragments and none of four letters or more (``JUN ey ee``), or of two words, both in
  lower case and neither of four letters (``ae ike``, OCR of a calligraphy specimen), is
  specks read as letters.

A title does not read as words when it is such specks, when it holds an odd word and an
unmatched bracket, or when two or more of its words, and half of them, are odd
(``Knightsbridge`` among five other words is a word).

In a script written without spaces (Han, kana), a title is a phrase, not a sentence: text
that holds a sentence's stop (``。``, ``！``, ``？``) or brackets that do not pair is a
paragraph's line or run of lines (a poem's middle: ``みんなのおのおののなかのすべてですから）``),
no title.

A title printed letter-spaced (``A N E X O``, a form's head spaced out for show) is closed
up (``ANEXO``): a run of three or more single letters, each apart by one blank.

A section number of three parts or more at a title's end (``MANUAL TRANSMITTAL 2.3.59``,
the manual's number printed beside its cover's title) is the document's number, not part of
its title, and is dropped; ``Web 2.0`` keeps its version.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["close_letter_spacing", "reads_as_words", "without_document_number"]

_LATIN_WORD_RE = re.compile(r"[A-Za-z\u00c0-\u024f]+")
_VOWELS = frozenset("aeiouy")
_MAX_CONSONANTS = 4
_CAMEL_RE = re.compile(r"^(?:[a-z]+[A-Z][a-z]+|M(?:a)?c[A-Z][a-z]+)$")
_DOCUMENT_NUMBER_RE = re.compile(r"(?<=\S)\s+\d+(?:\.\d+){2,}$")
_SPACED_RUN_RE = re.compile(r"(?<!\S)(?:[^\W\d_] ){2,}[^\W\d_](?!\w)")


def _plain(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


_DIGRAPH_RE = re.compile(r"ch|gh|ng|ph|sh|th")


def _consonant_run(word: str) -> int:
    longest = run = 0
    for char in _DIGRAPH_RE.sub("c", _plain(word).casefold()):
        run = 0 if char in _VOWELS or not char.isalpha() else run + 1
        longest = max(longest, run)
    return longest


def _mixed_case(word: str) -> bool:
    rest = word[1:]
    if word.islower() or word.isupper() or (word[:1].isupper() and rest.islower()):
        return False
    return not _CAMEL_RE.match(word)


def _unmatched_brackets(text: str, openers: str = "([{", closers: str = ")]}") -> int:
    """Closing brackets with no opening one before them, plus opening ones never closed."""
    unmatched = depth = 0
    for char in text:
        if char in openers:
            depth += 1
        elif char in closers:
            if depth:
                depth -= 1
            else:
                unmatched += 1
    return unmatched + depth


def _specks(words: list[str]) -> bool:
    letters = [w for w in (re.sub(r"[^\w]", "", w) for w in words) if w]
    if len(letters) < 2 or any(len(w) >= 4 for w in letters):
        return False
    if len(letters) == 2:
        return all(w.isalpha() and w.islower() for w in letters)
    fragments = sum(len(w) <= 2 and w.islower() for w in letters)
    return fragments * 2 >= len(letters)


_UNSPACED_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
_SENTENCE_STOP_RE = re.compile(r"[\u3002\uff01\uff1f]")


def _unspaced_sentence(title: str) -> bool:
    """Whether ``title``, in a script written without spaces, reads as running text."""
    if len(_UNSPACED_RE.findall(title)) < 0.5 * len(title.replace(" ", "")):
        return False
    if _SENTENCE_STOP_RE.search(title):
        return True
    return _unmatched_brackets(title, "(\uff08\u300c", ")\uff09\u300d") > 0


def reads_as_words(title: str) -> bool:
    """Whether ``title`` reads as words, not as OCR's reading of specks (module docstring).

    Words in other scripts than Latin are not judged as words; a title in a script written
    without spaces is judged as a phrase (module docstring)."""
    words = title.split()
    if _specks(words) or _unspaced_sentence(title):
        return False
    latin = _LATIN_WORD_RE.findall(title)
    odd = sum(_consonant_run(w) > _MAX_CONSONANTS or _mixed_case(w) for w in latin)
    if odd and _unmatched_brackets(title):
        return False
    return not (odd >= 2 and 2 * odd >= len(latin))


def close_letter_spacing(title: str) -> str:
    """``title`` with each run of three or more single letters apart by one blank closed up
    (``A N E X O`` -> ``ANEXO``)."""
    return _SPACED_RUN_RE.sub(lambda m: m.group(0).replace(" ", ""), title)


def without_document_number(title: str) -> str:
    """``title`` less a section number of three parts or more at its end (module
    docstring); a title that is only such a number is kept as it is."""
    return _DOCUMENT_NUMBER_RE.sub("", title)
