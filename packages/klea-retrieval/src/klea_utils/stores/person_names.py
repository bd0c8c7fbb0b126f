"""Person-name expansion for exact-membership filters, and its display-safe inverse.

Public: klea-ingest's metadata map expands names with it when chunks are stored, and
retrieval shows them with :func:`display_person_names`; ``klea_utils.stores.utils``
re-exports both under the seed's names.
"""

from __future__ import annotations

from typing import Any

__all__ = ["display_person_names", "expand_person_names"]


def expand_person_names(names: list[Any]) -> list[str]:
    """Return ``names`` with per-word and lowercase variants appended, order-preserving.

    Each full name is followed by its lowercase form, then its whitespace tokens, then
    their lowercase forms (per name, in order). Duplicates are dropped at their later
    occurrence, non-string and blank elements are skipped, so the expansion is idempotent.

    Example::

        expand_person_names(["Ankur Sinha"])
        -> ["Ankur Sinha", "ankur sinha", "Ankur", "Sinha", "ankur", "sinha"]
    """
    out: list[str] = []
    seen: set[str] = set()

    def add(value: str) -> None:
        if value not in seen:
            seen.add(value)
            out.append(value)

    for name in names:
        if not isinstance(name, str) or not name.strip():
            continue
        full = name.strip()
        tokens = full.split()
        add(full)
        add(full.lower())
        for token in tokens:
            add(token)
        for token in tokens:
            add(token.lower())
    return out


def display_person_names(names: list[Any]) -> list[str]:
    """Return the display-safe subset of an expanded person-name list.

    Whole-lowercase entries (``str.islower``) and single-word entries that are a token of
    a longer entry are dropped; a genuine single-name author (not a token of another
    entry) is kept. Order is preserved, duplicates and non-strings are dropped.

    Example::

        display_person_names(["Ankur Sinha", "Padraig Gleeson", "Sinha", "gleeson"])
        -> ["Ankur Sinha", "Padraig Gleeson"]
    """
    strings = [n.strip() for n in names if isinstance(n, str) and n.strip()]
    tokens_of_longer: set[str] = set()
    for name in strings:
        parts = name.split()
        if len(parts) > 1:
            tokens_of_longer.update(parts)
    out: list[str] = []
    for name in strings:
        if name.islower() or name in out:
            continue
        if len(name.split()) == 1 and name in tokens_of_longer:
            continue
        out.append(name)
    return out
