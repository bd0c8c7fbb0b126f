"""The regions bench (issue 36): does every PDF chunk's ``regions`` hold its words?

Converts each PDF on the model-free path (OCR on, as ``klea-stores-create`` does without
layout models) and chunks it with the default MiniLM settings (256 tokens, packaged
tokenizer), then for every chunk reads the text inside its regions and counts the chunk's
words found there (``klea_utils.stores._ingest.pdf.region_check``):

- text-layer pages: pdfium's ``PdfTextPage.get_text_bounded`` of each box;
- OCRed pages (no text layer): the OCR lines of the document whose box lies inside a
  region (the lines' text and user-space boxes as the conversion kept them), and every
  box must lie inside the page's box (a wrong pixel-to-point mapping falls outside).
- pages pdfium refuses and pypdf reads (no geometry): a region on such a page is the
  whole page, so its text is pypdf's text of the page.

Per file it prints: chunks, ``nore`` (chunks without regions), ``share`` (words found
over words, all chunks; the target is >= 0.95), ``min`` (worst chunk), ``low`` (chunks
under 0.8), ``ocr`` (OCRed pages), ``pypdf`` (pages read by pypdf), ``out`` (boxes outside
the page) and the seconds.
For ``realpapers-dev`` it also checks every question whose answer string lies in one
chunk: the answer's words must lie inside that chunk's regions. Per category (the
wild set's ``manifest.json`` categories; the dev set's ``kind``) it prints the
word-weighted share and the worst file.

    uv run --frozen python scripts/bench/pdf_regions.py [--files GLOB ...] [--set dev|wild|both]
        [--json OUT]

The whole of both sets is 86 files (about 4,000 pages): 16-19 minutes on the shared
two-core machine (2026-12-02); use ``--files`` for samples.
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import fnmatch
import json
import logging
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"
if not SHARED.is_dir():
    SHARED = Path("/work/shared/data")
LOW_SHARE = 0.8


@dataclass
class FileResult:
    file: str
    categories: list[str]
    chunks: int = 0
    without_regions: int = 0
    words: int = 0
    found: int = 0
    min_share: float = 1.0
    low: int = 0
    ocr_pages: list[int] = field(default_factory=list)
    second_reader: list[int] = field(default_factory=list)
    outside_page: int = 0
    answers: int = 0
    answers_inside: int = 0
    seconds: float = 0.0
    error: str = ""

    @property
    def share(self) -> float:
        return self.found / self.words if self.words else 1.0


def _chunker() -> Any:
    from klea_utils.stores._ingest.chunking.chunking import MINILM_MAX_TOKENS, Chunker
    from klea_utils.stores.packaged_minilm import packaged_minilm_path

    return Chunker(
        max_tokens=MINILM_MAX_TOKENS,
        merge_peers=True,
        tokenizer_model=str(packaged_minilm_path()),
        logger=logging.getLogger("bench"),
    )


def _ocr_lines(document: Any, pages: set[int]) -> dict[int, list[tuple[str, tuple[float, ...]]]]:
    """The text and user-space box of every line kept from the OCRed ``pages``."""
    out: dict[int, list[tuple[str, tuple[float, ...]]]] = defaultdict(list)
    for item, _ in document.iterate_items():
        text = getattr(item, "text", None)
        for prov in getattr(item, "prov", None) or []:
            if prov.page_no in pages and isinstance(text, str):
                start, end = prov.charspan
                box = (prov.bbox.l, prov.bbox.b, prov.bbox.r, prov.bbox.t)
                out[prov.page_no].append((text[start:end], box))
    return out


def _second_reader_texts(path: Path, pages: list[int]) -> dict[int, str]:
    """pypdf's text of each page pdfium refused (1-based page -> text)."""
    from klea_utils.stores._ingest.pdf.pdf_fallback import SecondReader

    reader = SecondReader(path)
    out = {}
    for page in pages:
        lines = reader.page_lines(page - 1)
        out[page] = lines.raw_text if lines is not None else ""
    return out


def measure(
    path: Path, categories: list[str], chunker: Any, questions: list[dict[str, Any]]
) -> FileResult:
    import pypdfium2 as pdfium
    from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
    from klea_utils.stores._ingest.pdf.region_check import (
        chunk_words,
        ocr_text_inside,
        region_text,
        words_inside_share,
    )

    result = FileResult(path.name, categories)
    started = time.perf_counter()
    try:
        document, recovery = convert_pdf_offline(path, do_ocr=True)
    except Exception as exc:  # a file the reader refuses is reported, not measured
        result.error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
        result.seconds = time.perf_counter() - started
        return result
    docs = chunker.chunk(document, file_name=path.name, file_hash="bench")
    result.ocr_pages = list(recovery.ocr)
    result.second_reader = list(recovery.second_reader)
    ocr_lines = _ocr_lines(document, set(recovery.ocr))
    flat = _second_reader_texts(path, recovery.second_reader)
    pdf = pdfium.PdfDocument(str(path))
    try:
        skipped = set(flat) | set(recovery.failed)  # pages pdfium cannot load
        boxes = {i + 1: pdf[i].get_bbox() for i in range(len(pdf)) if i + 1 not in skipped}
        for doc in docs:
            regions = doc.metadata.get("regions") or []
            result.chunks += 1
            if not regions:
                result.without_regions += 1
            layer = [r for r in regions if r["page"] not in ocr_lines and r["page"] not in flat]
            inside = region_text(pdf, layer)
            inside += "".join("\n" + flat[r["page"]] for r in regions if r["page"] in flat)
            for page, lines in ocr_lines.items():
                page_boxes = [tuple(r["bbox"]) for r in regions if r["page"] == page]
                inside += "\n" + ocr_text_inside(lines, page_boxes)
                left, bottom, right, top = boxes[page]
                result.outside_page += sum(
                    b[0] < left - 1 or b[1] < bottom - 1 or b[2] > right + 1 or b[3] > top + 1
                    for b in page_boxes
                )
            headings = doc.metadata.get("headings") or []
            share = words_inside_share(doc.page_content, inside, headings)
            body = doc.page_content
            for heading in headings:
                body = body.removeprefix(heading + "\n")
            count = len(chunk_words(body))
            result.words += count
            result.found += round(share * count)
            result.min_share = min(result.min_share, share)
            result.low += share < LOW_SHARE
            for question in questions:
                if question["answer"] in doc.page_content:
                    result.answers += 1
                    answer_share = words_inside_share(question["answer"], inside)
                    result.answers_inside += answer_share >= 1.0
    finally:
        pdf.close()
    result.seconds = time.perf_counter() - started
    return result


def _files(which: str) -> list[tuple[Path, list[str], list[dict[str, Any]]]]:
    out = []
    if which in ("dev", "both"):
        folder = SHARED / "realpapers-dev"
        questions: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for line in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                questions[record["file"]].append(record)
        for entry in json.loads((folder / "manifest.json").read_text(encoding="utf-8")):
            path = folder / entry["pdf"]
            out.append((path, ["dev", *entry.get("kind", [])], questions.get(path.name, [])))
    if which in ("wild", "both"):
        folder = SHARED / "realpapers-wild"
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        for entry in manifest["files"]:
            out.append((folder / "pdf" / entry["file"], ["wild", *entry["categories"]], []))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=["dev", "wild", "both"], default="both")
    parser.add_argument("--files", nargs="*", default=[], help="glob(s) on the file name")
    parser.add_argument("--json", type=Path, help="write every file's figures here")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    import warnings

    warnings.simplefilter("ignore")
    chunker = _chunker()
    results = []
    columns = ("chunks", 6), ("nore", 4), ("share", 6), ("min", 5), ("low", 4), ("ocr", 4)
    columns += (("pypdf", 5),)
    tail = ("out", 4), ("answers", 8), ("s", 6)
    print(f"{'file':58} " + " ".join(f"{name:>{width}}" for name, width in (*columns, *tail)))
    for path, categories, questions in _files(args.set):
        if args.files and not any(fnmatch.fnmatch(path.name, g) for g in args.files):
            continue
        r = measure(path, categories, chunker, questions)
        results.append(r)
        if r.error:
            print(f"{r.file[:58]:58} not converted: {r.error}")
            continue
        answers = f"{r.answers_inside}/{r.answers}" if r.answers else "-"
        print(
            f"{r.file[:58]:58} {r.chunks:6d} {r.without_regions:4d} {r.share:6.3f} "
            f"{r.min_share:5.2f} {r.low:4d} {len(r.ocr_pages):4d} {len(r.second_reader):5d} "
            f"{r.outside_page:4d} "
            f"{answers:>8} {r.seconds:6.1f}"
        )
    by_category: dict[str, list[FileResult]] = defaultdict(list)
    for r in results:
        if not r.error:
            for category in r.categories:
                by_category[category].append(r)
    print(
        f"\n{'category':22} {'files':>5} {'share':>6} {'worst file':>10} {'nore':>5} "
        f"{'below 0.95':>10}"
    )
    for category, rows in sorted(by_category.items()):
        words = sum(r.words for r in rows)
        share = sum(r.found for r in rows) / words if words else 1.0
        worst = min(r.share for r in rows)
        print(
            f"{category:22} {len(rows):5d} {share:6.3f} {worst:10.3f} "
            f"{sum(r.without_regions for r in rows):5d} {sum(r.share < 0.95 for r in rows):10d}"
        )
    done = [r for r in results if not r.error]
    print(
        f"\nfiles {len(done)} (+{len(results) - len(done)} not converted), chunks "
        f"{sum(r.chunks for r in done)}, without regions {sum(r.without_regions for r in done)}, "
        f"files under 0.95: {sum(r.share < 0.95 for r in done)}, answers inside their "
        f"chunk's regions {sum(r.answers_inside for r in done)}/{sum(r.answers for r in done)}"
    )
    if args.json:
        args.json.write_text(
            json.dumps([{**asdict(r), "share": r.share} for r in results], indent=1) + "\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
