"""BibTeX field values as written, resolved: ``{...}`` and ``"..."`` literals, numbers,
``@string`` macros, the month macros, and ``#`` concatenation of any of these.

bibtexparser 2 splits a file into entries and fields but leaves a ``#`` concatenation
(``journal = ir # " Letters"``) unresolved; its values are read here, with the file's
``@string`` definitions, so a braced literal holding ``#`` (``{C# in practice}``) stays
what it is.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["MONTHS", "resolve_strings", "resolve_value"]

MONTHS = {
    "jan": "January", "feb": "February", "mar": "March", "apr": "April", "may": "May",
    "jun": "June", "jul": "July", "aug": "August", "sep": "September", "oct": "October",
    "nov": "November", "dec": "December",
}  # fmt: skip
"""BibTeX's predefined month macros."""


def _parts(raw: str) -> list[str]:
    """``raw`` split on the ``#`` that stand outside braces and quotes."""
    parts: list[str] = []
    depth, quoted, start = 0, False, 0
    for index, char in enumerate(raw):
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        elif char == '"' and depth == 0:
            quoted = not quoted
        elif char == "#" and depth == 0 and not quoted:
            parts.append(raw[start:index])
            start = index + 1
    parts.append(raw[start:])
    return [p.strip() for p in parts]


def _enclosed(part: str) -> bool:
    if len(part) < 2 or (part[0], part[-1]) not in (("{", "}"), ('"', '"')):
        return False
    depth = 0
    for char in part[1:-1]:  # "{a} and {b}" is not one braced literal
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def resolve_value(raw: str, strings: Mapping[str, str]) -> str:
    """The text of a raw field value (macros from ``strings``, keys lower-case)."""
    out: list[str] = []
    for part in _parts(raw.strip()):
        if _enclosed(part):
            out.append(part[1:-1])
        elif part.casefold() in strings:
            out.append(strings[part.casefold()])
        elif part.casefold() in MONTHS:
            out.append(MONTHS[part.casefold()])
        else:
            out.append(part)  # a number, or an undefined macro kept by name
    return "".join(out)


def resolve_strings(definitions: list[tuple[str, str]]) -> dict[str, str]:
    """``@string`` definitions in file order, each resolved against the earlier ones."""
    strings: dict[str, str] = {}
    for key, raw in definitions:
        strings[key.casefold()] = resolve_value(raw, strings)
    return strings
