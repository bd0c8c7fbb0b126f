"""Reference parsing measured per paper against a truth file (issue 38).

Usage: ``uv run --frozen python scripts/bench/citations.py [--pdfs DIR] [--markdown DIR]
[--truth FILE] [--only STEM ...]``. Converts each PDF of ``--pdfs`` (default
``shared/data/realpapers-dev/pdf``) on the model-free path, or reads ``<stem>.md`` from
``--markdown`` (e.g. the reference conversions), parses its reference list and prints per
paper: entries found against the entries printed, the precision and recall of the entry
split (labels, or first authors in order for author-year lists), DOI and arXiv-id recall,
the share of the truth file's checked fields (title, first author, year) read right, and
the callouts linked and the entries they cite, and the time the parsing (references and
callouts) took beside the conversion's. Papers missing from the truth file are
listed with their counts only.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import argparse  # noqa: E402
import difflib  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
import unicodedata  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

from klea_utils.stores._ingest.citations.paper_citations import parse_citations  # noqa: E402
from klea_utils.stores._ingest.citations.parse import ParsedReference  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TRUTH = ROOT / "packages/klea-ingest/tests/citations_truth.json"


def _shared(name: str) -> Path:
    for parent in ROOT.parents:
        if (parent / "shared/data" / name).is_dir():
            return parent / "shared/data" / name
    return ROOT / "shared/data" / name


def key(text: str) -> str:
    """The letters of an entry's first name, six at most (``J. Austin, ...`` -> ``jausti``)."""
    folded = unicodedata.normalize(
        "NFKD", re.split(r"[,(]|\.\s(?=[A-Z][a-z]{2,}\s)", text, maxsplit=1)[0]
    )
    return "".join(c for c in folded if c.isalpha()).lower()[:6]


def split_scores(refs: list[ParsedReference], truth: dict[str, object]) -> tuple[int, int]:
    """(entries found that open a printed entry, printed entries found)."""
    if "labels" in truth:
        found = Counter(r.label for r in refs)
        printed = Counter(str(label) for label in truth["labels"])  # type: ignore[attr-defined]
        hits = sum((found & printed).values())
        return hits, hits
    starts = [key(str(s)) for s in truth.get("starts", [])]  # type: ignore[attr-defined]
    opened = [key(r.text) for r in refs]
    matcher = difflib.SequenceMatcher(a=opened, b=starts, autojunk=False)
    hits = sum(block.size for block in matcher.get_matching_blocks())
    return hits, hits


def _title_key(title: str) -> str:
    return re.sub(r"[^\w]+", " ", unicodedata.normalize("NFKC", title).lower()).strip()


def field_scores(refs: list[ParsedReference], truth: dict[str, object]) -> tuple[int, int]:
    """(checked fields read right, checked fields)."""
    right = total = 0
    for want in truth.get("fields", []):  # type: ignore[attr-defined]
        if "label" in want:
            found = [r for r in refs if r.label == want["label"]]
        else:
            found = [r for r in refs if key(r.text) == key(want["start"])]
        ref = found[0] if found else None
        checks = {
            "title": ref is not None
            and difflib.SequenceMatcher(
                a=_title_key(ref.title), b=_title_key(want["title"])
            ).ratio()
            >= 0.9,
            "first_author": ref is not None
            and bool(ref.authors)
            and key(want["first_author"]) in key(ref.authors[0].split()[-1] + ref.authors[0]),
            "year": ref is not None and ref.year == want["year"],
        }
        for name in ("doi", "arxiv"):
            if name in want:
                checks[name] = ref is not None and getattr(ref, name) == want[name]
        right += sum(checks.values())
        total += len(checks)
    return right, total


def id_recall(refs: list[ParsedReference], truth: dict[str, object], name: str) -> tuple[int, int]:
    printed = Counter(str(x).lower() for x in truth.get(name, []))  # type: ignore[attr-defined]
    found = Counter((getattr(r, name.rstrip("s")) or "").lower() for r in refs)
    return sum((found & printed).values()), sum(printed.values())


def _ratio(a: int, b: int) -> str:
    return f"{a}/{b}" if b else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdfs", type=Path, default=_shared("realpapers-dev") / "pdf")
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--truth", type=Path, default=TRUTH)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    truth = json.loads(args.truth.read_text())["papers"] if args.truth.is_file() else {}
    if args.markdown:
        sources = sorted(args.markdown.glob("*.md"))
    else:
        sources = sorted(args.pdfs.glob("*.pdf"))
    print("paper | found/printed | split P | split R | DOI | arXiv | fields | parse ms | convert s")
    totals = Counter()
    for source in sources:
        if args.only and source.stem not in args.only:
            continue
        convert_s = 0.0
        if args.markdown:
            text = source.read_text()
        else:
            from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline

            start = time.perf_counter()
            document, _ = convert_pdf_offline(source, do_ocr=True)
            text = document.export_to_markdown()
            convert_s = time.perf_counter() - start
        start = time.perf_counter()
        paper = parse_citations(text)
        refs = list(paper.references)
        parse_ms = (time.perf_counter() - start) * 1000
        cited = f"{len(paper.contexts)}/{len({c.entry for c in paper.contexts})}"
        want = truth.get(source.stem)
        if want is None:
            print(
                f"{source.stem} | {len(refs)}/? | | | | | | {cited} | {parse_ms:.0f} | "
                f"{convert_s:.1f}"
            )
            continue
        printed = int(want["entries"])
        hits, _ = split_scores(refs, want)
        dois = id_recall(refs, want, "dois")
        arxiv = id_recall(refs, want, "arxiv")
        fields = field_scores(refs, want)
        precision = f"{hits / len(refs):.2f}" if refs else ("1.00" if not printed else "0.00")
        recall = f"{hits / printed:.2f}" if printed else "-"
        print(
            f"{source.stem} | {len(refs)}/{printed} | {precision} | {recall} | "
            f"{_ratio(*dois)} | {_ratio(*arxiv)} | {_ratio(*fields)} | {cited} | {parse_ms:.0f} | "
            f"{convert_s:.1f}"
        )
        totals.update(
            found=len(refs),
            printed=printed,
            hits=hits,
            doi=dois[0],
            doi_all=dois[1],
            arxiv=arxiv[0],
            arxiv_all=arxiv[1],
            fields=fields[0],
            fields_all=fields[1],
            parse_ms=int(parse_ms),
            convert_ms=int(convert_s * 1000),
        )
    if totals["printed"]:
        print(
            f"ALL | {totals['found']}/{totals['printed']} | "
            f"{totals['hits'] / max(1, totals['found']):.3f} | "
            f"{totals['hits'] / totals['printed']:.3f} | "
            f"{_ratio(totals['doi'], totals['doi_all'])} | "
            f"{_ratio(totals['arxiv'], totals['arxiv_all'])} | "
            f"{_ratio(totals['fields'], totals['fields_all'])} | | {totals['parse_ms']} | "
            f"{totals['convert_ms'] / 1000:.1f}"
        )


if __name__ == "__main__":
    main()
