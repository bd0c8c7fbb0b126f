"""Time matching source files to a reference library by title (the costliest test).

Usage: ``uv run --frozen python scripts/bench/refmgr_match.py [--entries N] [--files N]
[--vocabulary N]``. Builds a library of ``--entries`` random titles (4-14 words drawn from
``--vocabulary`` words plus common English ones) and matches ``--files`` files whose top
of text is 600 such words, none of them in the library (the worst case: every file goes
through every test); prints the time to index the library and the time per file.
A smaller vocabulary makes titles share more words with the text, so more are compared.
"""

from __future__ import annotations

import os
import sys

# scripts/bench/tokenize.py shadows the standard library's tokenize, which dataclasses
# imports: keep this folder off the import path.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import argparse  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from klea_utils.stores.references import ReferenceEntry, ReferenceLibrary  # noqa: E402

COMMON = ["the", "of", "and", "in", "a", "for", "with", "on", "to", "by"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=5000)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--vocabulary", type=int, default=20000)
    args = parser.parse_args()
    rng = random.Random(1)
    words = [f"w{i}" for i in range(args.vocabulary)] + COMMON * (args.vocabulary // 400 + 1)

    def title() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(4, 14)))

    entries = [
        ReferenceEntry(citekey=f"k{i}", source="bibtex", origin="bench", title=title())
        for i in range(args.entries)
    ]
    start = time.perf_counter()
    library = ReferenceLibrary(entries)
    indexed = time.perf_counter() - start
    heads = [" ".join(rng.choice(words) for _ in range(600)) for _ in range(args.files)]
    start = time.perf_counter()
    for index, head in enumerate(heads):
        library.match(Path(f"file{index}.pdf"), head_text=head, title=title())
    per_file = (time.perf_counter() - start) / args.files
    print(
        f"{args.entries} entries, vocabulary {args.vocabulary}: index {indexed:.2f} s, "
        f"{per_file * 1000:.0f} ms per file"
    )


if __name__ == "__main__":
    main()
