"""People's names as written in an author field, turned into display names.

An author field comes in many forms: ``Ankur Sinha; Padraig Gleeson`` (a PDF Info
``Author``), ``Sinha, Ankur and Gleeson, Padraig`` (BibTeX order), ``Smith, J. R., Doe, K.``
(a reference-style byline), ``van der Berg, Jan`` (a particle), ``Smith, Jr., John`` (a
suffix). :func:`split_people` splits such a field into people and :func:`display_name`
writes each one as ``First Middle Last Suffix`` (``Jan van der Berg``, ``John Smith Jr.``).
The ``Last, First`` order is read with ``nameparser``'s ``HumanName``, which knows the name
particles (van, de, von, da, ...) and suffixes (Jr., III, PhD, ...); a comma is only taken for
the ``Last, First`` order when what follows it is a given name or initials, so a list of
whole names separated by commas stays a list.
"""

from __future__ import annotations

import re

__all__ = [
    "display_name",
    "ends_with_initial",
    "is_initials",
    "is_suffix",
    "join_name_parts",
    "split_people",
]

_TITLES = frozenset(["dr", "prof", "professor", "mr", "mrs", "ms", "mx", "sir", "dame"])
_SUFFIXES = frozenset(
    ["jr", "sr", "ii", "iii", "iv", "phd", "md", "msc", "bsc", "mba", "jnr", "snr"]
)
_PARTICLE_WORDS = "van von der den de da di du del della dos das le la ten ter bin ibn al el zu y"
_PARTICLES = frozenset(_PARTICLE_WORDS.split())
_INITIALS_RE = re.compile(r"^(?:[^\W\d_]{1,2}\.-?\s*)+$")  # J. / J.R. / J.-P. / Th.
_LIST_SPLIT = re.compile(r"\s*(?:\band\b|&|\u00b7|\u2022|\|)\s*", re.IGNORECASE)


_LAST_INITIAL_RE = re.compile(r"(?:^|[\s.\-])[^\W\d_]\.$")


def ends_with_initial(text: str) -> bool:
    """Whether ``text`` ends with an initial and its dot (``Doe, K.``), not a full stop."""
    return bool(_LAST_INITIAL_RE.search(text))


def _words(text: str) -> list[str]:
    return text.split()


def _fold(word: str) -> str:
    return word.strip(",.").casefold()


def is_suffix(text: str) -> bool:
    """Whether ``text`` is a name suffix (``Jr.``, ``III``, ``PhD``), not a name."""
    words = _words(text)
    return bool(words) and all(_fold(w) in _SUFFIXES for w in words)


def is_initials(text: str) -> bool:
    """Whether ``text`` is only dotted initials (``J.``, ``J. R.``, ``J.-P.``).

    The dot is required: ``Li`` or ``Wu`` is a name, ``UK`` a country; ``Jr.`` is a suffix.
    """
    return bool(_INITIALS_RE.match(text.strip())) and not is_suffix(text)


def _is_given(text: str) -> bool:
    """A given-name part after a comma: initials, or one or two capitalized words."""
    if is_initials(text):
        return True
    words = _words(text)
    return 1 <= len(words) <= 3 and all(
        w[:1].isupper() or _fold(w) in _PARTICLES or is_initials(w) for w in words
    )


def _is_surname(text: str) -> bool:
    """A surname before a comma: one capitalized word, maybe after particles."""
    words = _words(text)
    if not words or len(words) > 4:
        return False
    core = [w for w in words if _fold(w) not in _PARTICLES]
    return len(core) == 1 and core[0][:1].isupper() and not is_initials(core[0])


def _drop_titles(words: list[str]) -> list[str]:
    while len(words) > 1 and _fold(words[0]) in _TITLES:
        words = words[1:]
    return words


def display_name(raw: str) -> str:
    """One person's name in display order, ``First Middle Last Suffix``.

    ``Last, First``, ``Last, Suffix, First`` (BibTeX's ``von Last, Jr, First``) and
    ``Last, First, Suffix`` are reordered; particles stay with the surname; a leading
    title (Dr., Prof.) is dropped; a name already in display order is returned with its
    whitespace collapsed.
    """
    text = " ".join(raw.split()).strip(" ,;")
    last_word = text.rsplit(" ", 1)[-1]
    if text.endswith(".") and not ends_with_initial(text) and not is_suffix(last_word):
        text = text[:-1]  # a sentence's full stop after the name ("J. Smith.")
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if len(parts) == 3 and is_suffix(parts[1]) and _is_surname(parts[0]):
        return " ".join(_drop_titles(_words(parts[2])) + _words(parts[0]) + _words(parts[1]))
    if len(parts) in (2, 3) and _is_surname(parts[0]) and _is_given(parts[1]):
        if len(parts) == 3 and not is_suffix(parts[2]):
            return " ".join(_drop_titles(_words(text)))
        from nameparser import HumanName

        name = HumanName(", ".join(parts[:2]))
        given = " ".join(x for x in (name.first, name.middle) if x)
        last = name.last or parts[0]
        suffix = parts[2] if len(parts) == 3 else name.suffix
        return " ".join(_drop_titles(_words(f"{given} {last} {suffix}")))
    if len(parts) == 2 and is_suffix(parts[1]):
        return " ".join(_drop_titles(_words(parts[0])) + _words(parts[1]))
    return " ".join(_drop_titles(_words(text)))


def join_name_parts(parts: list[str], *, pair_words: bool = True) -> list[str]:
    """Join the comma items of an author list that are parts of one name.

    A surname followed by initials (``Smith``, ``J. R.``) becomes ``J. R. Smith``; a suffix
    (``Jr.``) joins the name before it. With ``pair_words``, a list of single words in
    pairs (``Smith, John, Doe, Jane``) is read as surnames and given names; a line from a
    page (where ``Cambridge, UK`` may stand) leaves that out.
    """
    out: list[str] = []
    index = 0
    all_single = pair_words and len(parts) % 2 == 0 and all(len(_words(p)) == 1 for p in parts)
    while index < len(parts):
        part = parts[index]
        follow = parts[index + 1] if index + 1 < len(parts) else None
        if is_suffix(part) and out:
            out[-1] = f"{out[-1]} {part}"
        elif follow is not None and _is_surname(part) and (is_initials(follow) or all_single):
            out.append(display_name(f"{part}, {follow}"))
            index += 1
        else:
            out.append(display_name(part))
        index += 1
    return out


def _split_commas(item: str) -> list[str]:
    parts = [p.strip() for p in item.split(",") if p.strip()]
    if len(parts) == 2 and _is_surname(parts[0]) and _is_given(parts[1]):
        return [display_name(item)]  # "Sinha, Ankur", "van der Berg, Jan"
    if (
        len(parts) == 3
        and _is_surname(parts[0])
        and (is_suffix(parts[1]) or (_is_given(parts[1]) and is_suffix(parts[2])))
    ):
        return [display_name(item)]  # "Smith, Jr., John", "Smith, John, Jr."
    return join_name_parts(parts)


def split_people(value: str) -> list[str]:
    """The people of an author field, each as a display name (see the module docstring).

    Separators are ``;``, ``and``, ``&``, ``\u00b7``, ``\u2022`` and ``|``; commas separate
    people too, except where a comma inverts one name (``Sinha, Ankur``) or is followed by
    initials (``Smith, J. R.``) or a suffix (``John Smith, Jr.``). Empty items are dropped.
    """
    text = " ".join(value.split()).strip(" ,;")
    if not text:
        return []
    if ";" in text:
        items = [i for i in (s.strip(" ,") for s in text.split(";")) if i]
        return [name for i in items for name in _split_commas(i)]
    out: list[str] = []
    for item in _LIST_SPLIT.split(text):
        item = item.strip(" ,")
        if item:
            out.extend(_split_commas(item))
    return [name for name in out if name]
