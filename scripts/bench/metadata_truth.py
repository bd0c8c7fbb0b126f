"""What each paper is: title, first author and year read by the build, against a truth file.

Usage::

    uv run --frozen python scripts/bench/metadata_truth.py [--truth FILE] [--set dev|wild]
        [--only NAME ...] [--documents DIR] [--json OUT] [--before OUT_OF_AN_EARLIER_RUN]

Each file of the truth file (``scripts/bench/truth/metadata.jsonl``: one JSON object a line,
``set``, ``file``, ``title``, ``first_author``, ``year``, a ``null`` where the document
prints none; ``held_out``: the batch of files added after the code was tuned, ``true`` for
the first and ``2``, ``3`` for the next ones, whose figures are also printed apart, as
``held1``, ``held2``, ``held3``, beside the others, ``tuned``; which batches are still held
out is said in ``scripts/bench/truth/README.md``; ``authors``, where a line has it: the
family names of the whole byline in its order) is converted the way
``klea-stores-create build`` converts it (the model-free PDF path, OCR on) and given to
:func:`klea_utils.stores.biblio.extract_metadata`, the build's own metadata step, with DOI
look-ups off (the bench is offline). Per set it prints, for each field, how many files are
right, how many are filled with something that is not the truth ("noise": worse than empty,
it is what a user sees and a citation is linked by) and how many are empty, and lists every
file with a field that is not right.

``--documents DIR`` keeps each converted document (Docling JSON, keyed by the file's hash)
so that a second run, after a change to the metadata step only, does not convert again.
``--json OUT`` writes what was read per file; ``--before OUT`` (such a file from an earlier
run, e.g. of the code before a change) prints its figures beside this run's.

Right means: the title equal after folding case, accents, punctuation and spaces (or a
similarity of at least 0.9 by ``difflib``); the first author's family name a run of words of
the first extracted author (``van der Knijff`` in ``Johan van der Knijff``); the year equal;
the whole author list (column ``authors``, counted over the lines that have one) as many
names as the truth's, each family name a run of words of the name in its place.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import argparse  # noqa: E402
import difflib  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import unicodedata  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TRUTH = ROOT / "scripts/bench/truth/metadata.jsonl"
FIELDS = ("title", "first_author", "year")
LIST = "authors"
"""The whole author list, compared where the truth line has one."""


def _shared(name: str) -> Path:
    for parent in ROOT.parents:
        if (parent / "shared/data" / name).is_dir():
            return parent / "shared/data" / name
    return ROOT / "shared/data" / name


SETS = {"dev": "realpapers-dev", "wild": "realpapers-wild"}


def fold(text: str) -> str:
    """Lower case, accents and punctuation dropped, spaces collapsed."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return " ".join(re.sub(r"[^\w]+", " ", plain).split())


def title_right(found: str | None, want: str) -> bool:
    if not found:
        return False
    a, b = fold(found), fold(want)
    return a == b or difflib.SequenceMatcher(a=a, b=b, autojunk=False).ratio() >= 0.9


def author_right(found: str | None, want: str) -> bool:
    if not found:
        return False
    return f" {fold(want)} " in f" {fold(found)} "


def verdict(field: str, found: Any, want: Any) -> str:
    """``right``, ``noise`` (filled, not the truth) or ``empty``."""
    if found in (None, "", []):
        return "right" if want is None else "empty"
    if want is None:
        return "noise"
    if field == LIST:
        same = len(found) == len(want)
        ok = same and all(author_right(str(f), str(w)) for f, w in zip(found, want, strict=True))
    elif field == "title":
        ok = title_right(str(found), str(want))
    elif field == "first_author":
        ok = author_right(str(found), str(want))
    else:
        ok = found == want
    return "right" if ok else "noise"


def _document(path: Path, converter: Any, store: Path | None) -> Any:
    """The file's document as the build converts it, kept under ``store`` when given."""
    cached = None
    if store is not None:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:24]
        cached = store / f"{digest}.json"
        if cached.is_file():
            from docling_core.types.doc.document import DoclingDocument

            return DoclingDocument.model_validate_json(cached.read_text(encoding="utf-8"))
    document = converter.convert(path)
    if cached is not None:
        cached.write_text(document.model_dump_json(), encoding="utf-8")
    return document


def read_one(path: Path, converter: Any, store: Path | None, cache_dir: Path) -> dict[str, Any]:
    from klea_utils.stores.biblio import extract_metadata

    start = time.process_time()
    try:
        document = _document(path, converter, store)
    except Exception as exc:  # a file the build reports as failed: nothing is read
        return {"error": f"{type(exc).__name__}: {exc}"[:200]}
    convert_s = time.process_time() - start
    start = time.process_time()
    meta = extract_metadata(path, document, cache_dir=cache_dir)
    authors = meta.get("authors") or []
    return {
        "title": meta.get("title"),
        "first_author": authors[0] if authors else None,
        LIST: list(authors),
        "year": meta.get("year"),
        "sources": meta.get("_sources", {}),
        "convert_cpu_s": round(convert_s, 2),
        "metadata_cpu_s": round(time.process_time() - start, 4),
    }


def load_truth(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            missing = [k for k in ("set", "file", *FIELDS) if k not in row]
            if missing:
                raise SystemExit(f"{path.name}:{number}: missing {', '.join(missing)}")
            names = row.get(LIST)
            if names is not None and (not names or names[0] != row["first_author"]):
                raise SystemExit(f"{path.name}:{number}: authors must open with first_author")
            rows.append(row)
    return rows


def batch(row: dict[str, Any]) -> int:
    """0 for a file the rules were written against, else its held-out batch (1, 2, ...)."""
    held = row.get("held_out")
    return 0 if not held else 1 if held is True else int(held)


def tally(
    truth: list[dict[str, Any]],
    read: dict[str, dict[str, Any]],
    name: str,
    held_out: int | None = None,
) -> dict[str, Any]:
    """Right/noise/empty per field over the set's files (``held_out``: only the files of
    that batch, 0 for the tuned ones; ``None``: all)."""
    counts: dict[str, dict[str, int]] = {f: {"right": 0, "noise": 0, "empty": 0} for f in FIELDS}
    rows = [
        t
        for t in truth
        if t["set"] == name and t["file"] in read and (held_out is None or batch(t) == held_out)
    ]
    counts[LIST] = {"right": 0, "noise": 0, "empty": 0}
    listed = 0
    for want in rows:
        got = read[want["file"]]
        for field in FIELDS:
            counts[field][verdict(field, got.get(field), want[field])] += 1
        if LIST in want and LIST in got:  # an earlier run's JSON may hold no lists
            listed += 1
            counts[LIST][verdict(LIST, got[LIST], want[LIST])] += 1
    return {"files": len(rows), "listed": listed, **counts}


def _line(name: str, label: str, figures: dict[str, Any]) -> str:
    cells = [
        f"{figures[f]['right']}/{figures['files']} noise {figures[f]['noise']}" for f in FIELDS
    ]
    if figures["listed"]:
        cells.append(f"{figures[LIST]['right']}/{figures['listed']} noise {figures[LIST]['noise']}")
    return f"{name:<5} {label:<7} " + "  ".join(f"{c:<20}" for c in cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--truth", type=Path, default=TRUTH)
    parser.add_argument("--set", choices=sorted(SETS), action="append", default=None)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--documents", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--before", type=Path, default=None)
    args = parser.parse_args()
    os.environ["KLEA_DOI_LOOKUP"] = "0"
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    logging.basicConfig(level=logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning)  # docling_core's clamped boxes
    from klea_utils.stores._ingest.convert.conversion import Converter

    truth = [
        t
        for t in load_truth(args.truth)
        if (args.set is None or t["set"] in args.set) and (not args.only or t["file"] in args.only)
    ]
    if args.documents is not None:
        args.documents.mkdir(parents=True, exist_ok=True)
    converter = Converter(do_ocr=True, logger=logging.getLogger("bench"))
    read: dict[str, dict[str, Any]] = {}
    wall = time.perf_counter()
    with tempfile.TemporaryDirectory() as cache_dir:
        for want in truth:
            path = _shared(SETS[want["set"]]) / "pdf" / want["file"]
            read[want["file"]] = read_one(path, converter, args.documents, Path(cache_dir))
    wall_s, cpu_s = time.perf_counter() - wall, time.process_time()
    print(f"{len(read)} files, wall {wall_s:.1f} s, CPU {cpu_s:.1f} s")
    before = json.loads(args.before.read_text()) if args.before else None
    print(f"{'set':<5} {'run':<7} " + "  ".join(f"{f:<20}" for f in (*FIELDS, LIST)))
    for name in SETS:
        if not any(t["set"] == name for t in truth):
            continue
        if before is not None:
            print(_line(name, "before", tally(truth, before, name)))
        print(_line(name, "now", tally(truth, read, name)))
        batches = sorted({batch(t) for t in truth if t["set"] == name})
        if batches != [0]:
            for held in batches:
                label = f"held{held}" if held else "tuned"
                earlier = tally(truth, before, name, held) if before is not None else None
                if earlier is not None and earlier["files"]:
                    print(_line(name, f"{label}-b", earlier))
                print(_line(name, label, tally(truth, read, name, held)))
    print("\nfiles with a field not right (found | truth):")
    for want in truth:
        got = read[want["file"]]
        fields = [*FIELDS, LIST] if LIST in want and LIST in got else list(FIELDS)
        wrong = [f for f in fields if verdict(f, got.get(f), want[f]) != "right"]
        if wrong:
            print(f"  {want['file']}" + (f"  [{got['error']}]" if "error" in got else ""))
            for field in wrong:
                print(f"    {field}: {str(got.get(field))[:90]!r} | {want[field]!r}")
    if args.json is not None:
        args.json.write_text(json.dumps(read, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
