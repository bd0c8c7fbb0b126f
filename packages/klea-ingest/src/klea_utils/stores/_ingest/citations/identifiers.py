"""DOIs and arXiv ids in a reference entry, also when a converter spaced or broke them.

PDF text layers print ``10 . 1029/ 2011GL047666`` and ``arXiv: 1612 . 07250`` for what
the page shows as one token, and a line end can split an identifier (``10.1016/j.jhy-``
newline ``drol``). :func:`find_doi` and :func:`find_arxiv` rejoin those pieces before they
match; both return the identifier in its canonical form (DOI lower-cased, arXiv id without
a version) or ``None``.
"""

from __future__ import annotations

import re

__all__ = ["find_arxiv", "find_doi", "find_dois", "normalise_doi"]

_DOI_START = re.compile(r"\b10\s*\.\s*(\d{4,9})\s*/\s*")
_DOI_CHARS = re.compile(r"[^\s\"<>{}|\\^`,;]+")
_TRAILING = ".,;:)]}'\u201d"
_STARTS_WITH_PUNCT = re.compile(r"^[./\-_]")

_NEW_ARXIV = re.compile(
    r"(?:arxiv\s*[:.]?\s*(?:preprint\s*)?(?:arxiv\s*:\s*)?|abs\s*/\s*)"
    r"(\d{4})\s*\.\s*(\d{4,5})(?:v\d+)?",
    re.IGNORECASE,
)
_OLD_ARXIV = re.compile(
    r"\b((?:quant-ph|hep-th|hep-ph|hep-ex|hep-lat|gr-qc|cond-mat|astro-ph|nucl-th|"
    r"nucl-ex|math-ph|nlin|physics|math|cs|q-bio|q-fin|stat)(?:\.[A-Z]{2})?)"
    r"\s*/\s*(\d{7})(?:v\d+)?\b"
)
_ARXIV_DOI = "10.48550/arxiv."
_LANL_ARCHIVE = re.compile(r"\b(quant-ph|hep-th|gr-qc|cond-mat)\s+archive\s+(\d{7})\b")


def normalise_doi(doi: str) -> str:
    """``doi`` without a resolver prefix or trailing punctuation, lower-cased."""
    doi = re.sub(r"^(?:https?://)?(?:dx\.)?doi\.org/|^doi:\s*", "", doi.strip(), flags=re.I)
    return doi.rstrip(_TRAILING).lower()


def _rejoined(text: str) -> str:
    """``text`` with identifier pieces split by a line end joined again."""
    return re.sub(r"(?<=[-/.])\s*\n\s*", "", text)


def find_doi(text: str) -> str | None:
    """The first DOI in ``text``, rejoined when spaces or a line end split it.

    An entry often prints its DOI twice (``doi:`` and a resolver URL); when one reading is
    a truncated form of another (a space the converter put inside it), the longer wins.
    """
    found = find_dois(text)
    for doi in found:
        if not any(other != doi and other.startswith(doi) for other in found):
            return doi
    return None


def find_dois(text: str) -> list[str]:
    """Every DOI reading in ``text``, in order."""
    text = re.sub(r"(?i)\bar\s?x\s?iv\s*\.\s*", "arxiv.", _rejoined(text))
    found: list[str] = []
    for start in _DOI_START.finditer(text):
        suffix = _doi_suffix(text[start.end() :].split())
        if suffix:
            found.append(normalise_doi(f"10.{start.group(1)}/{suffix}"))
    return found


def _doi_suffix(tokens: list[str]) -> str:
    pieces: list[str] = []
    for token in tokens:
        match = _DOI_CHARS.match(token)
        if not match or (pieces and not _continues(pieces[-1], token)):
            break
        pieces.append(match.group(0))
        if match.end() != len(token):
            break  # a comma or quote inside the token ends the DOI
    suffix = "".join(pieces).rstrip(_TRAILING)
    # "06.017.Sheets": the next sentence glued on by the converter
    return re.sub(r"(?<=\d)\.[A-Z][a-z]{2,}.*$", "", suffix)


def _continues(last: str, token: str) -> bool:
    """Whether ``token`` is a spaced-out piece of the DOI that ``last`` ended."""
    if ":" in token:
        return False  # the next ``doi:`` or ``URL:``
    if _STARTS_WITH_PUNCT.match(token) or last[-1] in "/-_(" or last in {".", "/"}:
        return True
    if last[-1] == ")" and token[0].isdigit():
        return True  # 10.1016/S0022-1694(02) 00164-6
    if last[-1].isdigit() and re.fullmatch(r"\d{1,4}\.?", token):
        return True  # 10.48550/arXiv.2406.11 931.
    if last[-1] != ".":
        return False
    return bool(
        token[0].isdigit()
        or (token[0].islower() and (any(c.isdigit() or c == "." for c in token) or len(token) <= 2))
    )


def find_arxiv(text: str) -> str | None:
    """The first arXiv id in ``text``: ``2401.06066`` or ``quant-ph/0611234`` style.

    An arXiv DOI (``10.48550/arXiv.2401.06066``) counts too.
    """
    text = re.sub(r"(?i)\bar\s?x\s?iv\b", "arXiv", _rejoined(text))
    found: list[tuple[int, str]] = []
    new = _NEW_ARXIV.search(text)
    if new:
        found.append((new.start(), f"{new.group(1)}.{new.group(2)}"))
    old = _OLD_ARXIV.search(text)
    if old:
        found.append((old.start(), f"{old.group(1)}/{old.group(2)}"))
    lanl = _LANL_ARCHIVE.search(text)
    if lanl:
        found.append((lanl.start(), f"{lanl.group(1)}/{lanl.group(2)}"))
    if found:
        return min(found)[1]
    doi = find_doi(text)
    if doi and doi.startswith(_ARXIV_DOI):
        return doi[len(_ARXIV_DOI) :]
    return None
