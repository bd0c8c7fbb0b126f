"""The reference list of a converted paper: where it starts and where it ends.

A heading named References, Bibliography, Literature Cited, Works Cited or Reference List
(Markdown ``#`` headings, or a short line of its own in plain text) opens a section; the
section runs to the next heading whose text does not read like a reference list (an
appendix after the references ends it, a false heading inside the list does not).
Several such sections (per chapter, or a heading printed twice) are joined in order.
Markdown escapes and HTML entities are undone, so what follows reads the printed text.
"""

from __future__ import annotations

import html
import re

__all__ = [
    "REFERENCE_HEADINGS",
    "body_before_references",
    "find_reference_section",
    "looks_like_references",
]

REFERENCE_HEADINGS = re.compile(
    r"^\s*(?:#{1,6}\s*)?(?:[\dIVXA-Z]{1,4}\.?\s+)?\**\s*"
    r"(?:references(?:\s+and\s+notes)?|bibliography|literature\s+cited|works\s+cited|"
    r"reference\s+list|cited\s+literature|literatur|références|referencias)"
    r"\s*\**\s*:?\s*$",
    re.IGNORECASE,
)
"""A line that opens a reference section."""

_HEADING = re.compile(r"^\s*#{1,6}\s+\S")
_YEAR = re.compile(r"(?<!\d)(?:1[89]|20)\d{2}(?!\d)")
_MIN_YEARS_PER_100_WORDS = 1.5


def looks_like_references(text: str) -> bool:
    """Whether ``text`` reads like a run of reference entries (years in every few lines)."""
    words = len(text.split())
    if words < 8:
        return False
    return len(_YEAR.findall(text)) * 100 / words >= _MIN_YEARS_PER_100_WORDS


def _unescaped(text: str) -> str:
    return html.unescape(re.sub(r"\\([_*\[\]#`&\\<>~|-])", r"\1", text))


def find_reference_section(text: str) -> str:
    """The reference list of ``text`` (Markdown or plain), or ``""`` when it has none."""
    lines = _unescaped(text).splitlines()
    blocks: list[str] = []
    index = 0
    while index < len(lines):
        if not REFERENCE_HEADINGS.match(lines[index]):
            index += 1
            continue
        block, index = _section_from(lines, index + 1)
        if looks_like_references(block):
            blocks.append(block)
    return "\n\n".join(blocks)


def _section_from(lines: list[str], start: int) -> tuple[str, int]:
    """The section's lines from ``start`` to the heading that ends it, and where it ended."""
    kept: list[str] = []
    index = start
    while index < len(lines):
        line = lines[index]
        if REFERENCE_HEADINGS.match(line):
            index += 1  # the same heading printed twice, or a sub-heading
            continue
        if _HEADING.match(line):
            following = _until_next_heading(lines, index + 1)
            if not looks_like_references(following):
                break
            kept.append(re.sub(r"^\s*#{1,6}\s+", "", line))  # a false heading in the list
        else:
            kept.append(line)
        index += 1
    return "\n".join(kept).strip(), index


def _until_next_heading(lines: list[str], start: int) -> str:
    out: list[str] = []
    for line in lines[start:]:
        if _HEADING.match(line):
            break
        out.append(line)
    return "\n".join(out)


def body_before_references(text: str) -> str:
    """``text`` up to its first reference section (all of it when it has none), unescaped."""
    lines = _unescaped(text).splitlines()
    for index, line in enumerate(lines):
        if REFERENCE_HEADINGS.match(line):
            block, _ = _section_from(lines, index + 1)
            if looks_like_references(block):
                return "\n".join(lines[:index])
    return "\n".join(lines)
