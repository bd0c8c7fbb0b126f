"""Small field conversions shared by the readers: years, lists, DOIs."""

from __future__ import annotations

import re

from klea_utils.stores._ingest.biblio.refmgr.identifiers import normalize_doi

__all__ = ["clean_doi", "split_words_list", "year_of"]

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
