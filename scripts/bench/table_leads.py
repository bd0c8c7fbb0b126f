"""How many pieces of cut tables carry their column heads and caption, in one or two builds.

Run with ``uv run --frozen python scripts/bench/table_leads.py --fts5 BEFORE.sqlite
[--fts5 AFTER.sqlite ...]`` over the ``fts5.sqlite`` of builds made by ``real_questions.py
--out DIR`` (the same files built with the code before and after a change). It reads the
stored chunks only: no model, no conversion. A *table piece* is a chunk with two or more
lines of cells (`` | `` between them, as the model-free PDF path writes a table row); it
*carries heads* when a line of cells with a cell that holds no digit (a header row, by the
chunker's own rule) stands before its first row of figures; it *carries a caption* when a
``Table N`` line stands in it. Printed per build: table pieces, pieces with heads,
pieces with a caption, and the files whose pieces gained or lost heads.
"""

from __future__ import annotations

import argparse
import itertools
import re
import sqlite3
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

_CELL = " | "
_DIGIT = re.compile(r"\d")


def _row_lines(body: str) -> list[str]:
    return [line for line in body.split("\n") if _CELL in line]


def carries_heads(body: str) -> bool:
    """Whether a header row (a line of cells, one without a digit) opens the piece's rows."""
    rows = _row_lines(body)
    if not rows:
        return False
    cells = [cell.strip() for cell in rows[0].split(_CELL)]
    return any(cell and not _DIGIT.search(cell) for cell in cells) and len(rows) > 1


_CAPTION = re.compile(r"^(?:table|tab\.)\s*(?:[A-Z]{1,2}[.\-])?[\dIVX]+\b", re.IGNORECASE)
"""A ``Table N`` line, with or without the mark after the number (``Table 3 Comparison``,
``Table 1 | Training costs``: the chunker's rule wants the mark, a reader does not)."""


def carries_caption(body: str) -> bool:
    return any(_CAPTION.match(line) for line in body.split("\n"))


def table_pieces(path: Path) -> dict[str, list[str]]:
    """Each file's table pieces, in chunk order."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT record_id, body FROM documents").fetchall()
    finally:
        con.close()
    pieces: dict[str, list[tuple[int, str]]] = {}
    for record_id, body in rows:
        name, _, index = str(record_id).rpartition(":")
        if len(_row_lines(body)) >= 2:
            pieces.setdefault(name, []).append((int(index) if index.isdigit() else 0, body))
    return {name: [body for _, body in sorted(found)] for name, found in pieces.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fts5", type=Path, action="append", required=True)
    args = parser.parse_args(argv)
    per_build: list[Counter[str]] = []
    print("| build | table pieces | with heads | with a caption |")
    print("|---|---:|---:|---:|")
    for path in args.fts5:
        found = table_pieces(path)
        heads = Counter({name: sum(map(carries_heads, bodies)) for name, bodies in found.items()})
        total = sum(len(bodies) for bodies in found.values())
        captions = sum(carries_caption(body) for bodies in found.values() for body in bodies)
        print(f"| {path} | {total} | {sum(heads.values())} | {captions} |")
        per_build.append(heads)
    for before, after in itertools.pairwise(per_build):
        for name in sorted(set(before) | set(after)):
            if before[name] != after[name]:
                print(f"  {name}: pieces with heads {before[name]} -> {after[name]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
