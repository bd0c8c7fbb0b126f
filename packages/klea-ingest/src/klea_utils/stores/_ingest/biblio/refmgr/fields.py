"""Small field conversions shared by the readers: years, lists, DOIs."""

from __future__ import annotations

import re
import unicodedata

from klea_utils.stores._ingest.biblio.refmgr.identifiers import normalize_doi

__all__ = ["clean_doi", "generated_key", "split_words_list", "year_of"]

_YEAR_RE = re.compile(r"(?<!\d)(1[5-9]\d{2}|2[01]\d{2})(?!\d)")
_DOI_PREFIX_RE = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)


def year_of(value: object) -> int | None:
    """The first plausible four-digit year in ``value`` (``2020``, ``2020-05-01``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = _YEAR_RE.search(str(value or ""))
    return int(match.group(1)) if match else None


def clean_doi(value: str) -> str:
    """The DOI in ``value`` as written (case kept) without a resolver prefix; ``""`` if none."""
    bare = _DOI_PREFIX_RE.sub("", value.strip())
    folded = normalize_doi(bare)
    if not folded:
        return ""
    start = bare.casefold().find(folded)
    return bare[start : start + len(folded)] if start >= 0 else folded


def split_words_list(value: str) -> tuple[str, ...]:
    """A ``keywords``-style value split on ``,`` or ``;`` (``;`` wins when present)."""
    separator = ";" if ";" in value else ","
    out: list[str] = []
    for part in value.split(separator):
        word = " ".join(part.split())
        if word and word not in out:
            out.append(word)
    return tuple(out)


_STOP_WORDS = {"a", "an", "the", "on", "of", "in", "and", "for", "to", "with"}


def _ascii_word(value: str) -> str:
    folded = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9_]", "", folded.casefold().replace(" ", "_"))


def generated_key(last_name: str, title: str, year: int | None) -> str:
    """The key Zotero's own BibTeX export gives an item: ``lastname_firstword_year``."""
    words = [w for w in (_ascii_word(t) for t in title.split()) if w and w not in _STOP_WORDS]
    parts = (_ascii_word(last_name), words[0] if words else "", str(year or ""))
    return "_".join(p for p in parts if p) or "item"
