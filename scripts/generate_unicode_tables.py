"""Generate ``sci_etl_core/search/_unicode_tables.py`` from SQLite's own FTS5 tokenizer.

The tables of :class:`sci_etl_core.search.tokenize.Unicode61Tokenizer` are not copied from
any Unicode database: they are observed. Every code point outside the surrogates is
indexed by a real FTS5 table (``tokenize = "unicode61 remove_diacritics 2"``) inside the
probe text ``x<c>x <c> x`` and the tokens are read back, with their positions, through an
``fts5vocab`` table of type ``instance``. What FTS5 made of the probe says what the code
point is:

=================================  ============================================
tokens read back (by position)     the code point ``c``
=================================  ============================================
``x``, ``x``, ``x``                a separator
``x<f>x``, ``<f>``, ``x``          starts a token and folds to ``<f>``
``x<f>x``, ``x``                   continues a token (a diacritic), folds to ``<f>``
=================================  ============================================

Usage (from the repository root)::

    uv run --frozen python scripts/generate_unicode_tables.py            # print the module
    uv run --frozen python scripts/generate_unicode_tables.py --check    # diff, exit 1 on change
    uv run --frozen python scripts/generate_unicode_tables.py --write    # rewrite the module
"""

from __future__ import annotations

import argparse
import difflib
import sqlite3
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

TARGET = (
    Path(__file__).resolve().parent.parent
    / "packages/sci-etl-search/src/sci_etl_core/search/_unicode_tables.py"
)
MAX_CODE_POINT = 0x10FFFF
SURROGATES = range(0xD800, 0xE000)
TOKENIZE = "unicode61 remove_diacritics 2"


def probe_text(char: str) -> str:
    """Return the text indexed to observe how FTS5 treats ``char``."""
    return f"x{char}x {char} x"


def code_points() -> Iterator[int]:
    """Yield every code point SQLite can receive: all but the surrogates."""
    for cp in range(MAX_CODE_POINT + 1):
        if cp not in SURROGATES:
            yield cp


def fts5_observations(batch: int = 1 << 17) -> dict[int, list[tuple[int, str]]]:
    """Index every probe text in FTS5 and return each code point's ``(position, token)`` list."""
    observed: dict[int, list[tuple[int, str]]] = {}
    db = sqlite3.connect(":memory:")
    try:
        db.execute(f"CREATE VIRTUAL TABLE probe USING fts5(x, tokenize = '{TOKENIZE}')")
        db.execute("CREATE VIRTUAL TABLE probe_vocab USING fts5vocab(probe, instance)")
        cps = list(code_points())
        for first in range(0, len(cps), batch):
            chunk = cps[first : first + batch]
            db.execute("DELETE FROM probe")
            db.executemany(
                "INSERT INTO probe(rowid, x) VALUES (?, ?)",
                ((cp, probe_text(chr(cp))) for cp in chunk),
            )
            for term, doc, offset in db.execute("SELECT term, doc, offset FROM probe_vocab"):
                observed.setdefault(doc, []).append((offset, term))
    finally:
        db.close()
    for tokens in observed.values():
        tokens.sort()
    return observed


@dataclass(frozen=True)
class Tables:
    """What FTS5 does with each code point."""

    starters: frozenset[int]
    continuers: frozenset[int]
    folds: dict[int, int]


def classify(observed: dict[int, list[tuple[int, str]]]) -> Tables:
    """Turn the observations of :func:`fts5_observations` into tables, or fail loudly."""
    starters: set[int] = set()
    continuers: set[int] = set()
    folds: dict[int, int] = {}
    for cp in code_points():
        tokens = observed.get(cp, [])
        texts = [text for _, text in tokens]
        positions = [position for position, _ in tokens]
        if texts == ["x", "x", "x"] and positions == [0, 1, 2]:
            continue
        if len(texts) == 3 and positions == [0, 1, 2] and texts[2] == "x":
            folded = texts[1]
            if texts[0] != f"x{folded}x":
                raise SystemExit(f"U+{cp:04X}: unexpected tokens {tokens}")
            starters.add(cp)
        elif len(texts) == 2 and positions == [0, 1] and texts[1] == "x":
            folded = texts[0][1:-1]
            if texts[0] != f"x{folded}x":
                raise SystemExit(f"U+{cp:04X}: unexpected tokens {tokens}")
            continuers.add(cp)
        else:
            raise SystemExit(f"U+{cp:04X}: unexpected tokens {tokens}")
        if len(folded) > 1:
            raise SystemExit(f"U+{cp:04X}: folds to several characters {folded!r}")
        target = ord(folded) if folded else 0
        if target != cp:
            folds[cp] = target
    return Tables(frozenset(starters), frozenset(continuers), folds)


def ranges(members: frozenset[int]) -> list[tuple[int, int]]:
    """Compress a set of code points into sorted inclusive ``(first, last)`` ranges."""
    out: list[tuple[int, int]] = []
    for cp in sorted(members):
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


def fold_runs(folds: dict[int, int]) -> list[tuple[int, int, int, int]]:
    """Compress folds into greedy ``(first, last, step, value)`` runs.

    With ``step > 0`` a run maps ``first, first + step, ... last`` each to ``cp + value``;
    with ``step < 0`` it maps every ``-step``-th code point from ``first`` to ``last`` to
    ``value`` itself (0 meaning the character folds away).
    """
    out: list[tuple[int, int, int, int]] = []
    done: set[int] = set()
    for cp in sorted(folds):
        if cp in done:
            continue
        best = (cp, 1, folds[cp] - cp, 1)  # last, step, value, length
        for step in (1, 2):
            for constant in (False, True):
                value = folds[cp] if constant else folds[cp] - cp
                last, length = cp, 1
                while True:
                    nxt = last + step
                    if nxt not in folds or nxt in done:
                        break
                    if (folds[nxt] if constant else folds[nxt] - nxt) != value:
                        break
                    last, length = nxt, length + 1
                if length > best[3]:
                    best = (last, -step if constant else step, value, length)
        last, step, value, _ = best
        out.append((cp, last, step, value))
        done.update(range(cp, last + 1, abs(step)))
    return out


def _fold_map(runs: list[tuple[int, int, int, int]]) -> dict[int, int]:
    result: dict[int, int] = {}
    for first, last, step, value in runs:
        for cp in range(first, last + 1, abs(step)):
            result[cp] = value if step < 0 else cp + value
    return result


def _chunks(items: list[tuple[int, ...]], per_line: int) -> str:
    lines = []
    for start in range(0, len(items), per_line):
        row = ", ".join(
            "(" + ", ".join(str(v) for v in item) + ")" for item in items[start : start + per_line]
        )
        lines.append(f"    {row},")
    return "\n".join(lines)


def render(tables: Tables) -> str:
    """Return the source text of the generated module."""
    runs = fold_runs(tables.folds)
    if _fold_map(runs) != tables.folds:
        raise SystemExit("internal error: fold runs do not reproduce the folds")
    return f'''"""Character tables of FTS5's ``unicode61 remove_diacritics 2`` tokenizer.

Generated by ``scripts/generate_unicode_tables.py`` from SQLite {sqlite3.sqlite_version}'s own
FTS5; do not edit. Ranges are inclusive ``(first, last)`` code points.
"""

# Code points that start (and continue) a token: letters, numbers, private use.
TOKEN_RANGES: tuple[tuple[int, int], ...] = (
{_chunks(ranges(tables.starters), 6)}
)

# Code points that continue a token but never start one (diacritics).
CONTINUE_RANGES: tuple[tuple[int, int], ...] = (
{_chunks(ranges(tables.continuers), 6)}
)

# Folding of token characters, as (first, last, step, value) runs: with step > 0 every
# code point first, first + step, ... last folds to itself plus value; with step < 0 every
# one of them (every -step-th) folds to value, and 0 means the character folds away.
FOLD_RUNS: tuple[tuple[int, int, int, int], ...] = (
{_chunks(runs, 4)}
)
'''


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="diff against the committed module")
    mode.add_argument("--write", action="store_true", help="rewrite the committed module")
    args = parser.parse_args(argv)
    text = render(classify(fts5_observations()))
    if args.write:
        TARGET.write_text(text, encoding="utf-8")
        return 0
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        diff = list(
            difflib.unified_diff(
                current.splitlines(keepends=True),
                text.splitlines(keepends=True),
                str(TARGET),
                "regenerated",
            )
        )
        sys.stdout.writelines(diff)
        return 1 if diff else 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
