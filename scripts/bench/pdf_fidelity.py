"""PDF fidelity of klea-ingest's conversion and chunking on real papers.

Runs every PDF of a folder laid out like ``shared/data/realpapers-dev`` (``pdf/``,
``reference/<stem>.md``) through the same conversion, chunking and metadata extraction that
``klea-stores-create build`` uses (default settings, in this process), and measures each
file against its reference and against a raw pypdfium2 text layer read in the same run:

- ``rec``/``raw``: word recall of the chunks (joined in order, each heading once) and of the
  raw text layer; ``ord``/``rawo``: order similarity (normalised LCS of the word streams);
- ``runs``: running heads/footers/stamps left in chunk text (lines that repeat on the top or
  bottom of at least three pages, digits ignored, and arXiv margin stamps);
- ``head``: reference section headings found as chunk headings (exact or fuzzy >= 0.9 after
  dropping numbering, math and case); ``bad``: chunk headings that are a running line, a
  stamp or mostly not words (axis labels, table rows);
- ``pages``: share of chunks whose metadata carries ``page_start``/``page_end``;
- ``title``: the extracted title matches the reference ``#`` title; ``auth``: authors are a
  list of separate clean names;
- ``maxtok``: longest chunk in the embedder's word pieces (limit in the header); ``>lim``:
  chunks over it;
- ``p/cpu-min``: pages per CPU-minute of the pipeline (tesseract's CPU included).

    uv run --frozen python scripts/bench/pdf_fidelity.py [--data DIR] [--only STEM] [--json OUT]

Normalisation (``pdf_words.tokens``) follows the data set's README (markdown, HTML entities,
LaTeX math removed; NFKC, lower case, ``[^\\W_]+`` tokens; line-end hyphens rejoined on the
PDF side). One step goes beyond it, to be more faithful to what a PDF can print: the
references made with Docling's LaTeX backend keep cross-reference and citation keys
(``Section[sec:real]``, ``Figure[fig\\_real]``, ``[McDuff:DeftoIso]``,
``Appendix\\ref{app:x}``) where the PDF prints a number or a short label, so those keys (a
``\\ref``/``\\cite`` argument, or a bracketed list of identifiers with a ``:`` or ``_`` in
them) are dropped like the other LaTeX leftovers; a bracketed plain word (``[DS]``, which
alpha-style citations print) stays. No extractor can find these words in the text; they were
matched only by accident, mostly by running heads that repeat a section's name on every page
(``7 REAL DATA`` against ``Section[sec:real]``), which credited the raw text layer for page
furniture.
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's: it moves
# behind the standard library on the import path (``pdf_words`` is imported from it).
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import html
import json
import logging
import re
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from pdf_words import bag_recall, pdf_tokens, tokens
from rapidfuzz import fuzz
from rapidfuzz.distance import Indel

_ROOT = Path(__file__).resolve().parents[2]


def _default_data() -> Path:
    for parent in _ROOT.parents:
        candidate = parent / "shared" / "data" / "realpapers-dev"
        if candidate.is_dir():
            return candidate
    return _ROOT.parent / "shared" / "data" / "realpapers-dev"


# -- normalisation -------------------------------------------------------------------------

_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]*\$", re.DOTALL)
_COMMAND = re.compile(r"\\[A-Za-z]+\*?")
# A cross-reference or citation key the LaTeX-derived references keep where the PDF prints a
# number or a short label: ``Section[sec:real]``, ``[McDuff:DeftoIso]``, ``\ref{app:x}``.
_LABEL = re.compile(
    r"\\(?:ref|eqref|autoref|cref|Cref|pageref|cite[pt]?)\*?\{[^}]*\}|"
    r"\[[A-Za-z][\w\\.:\-]*(?:,\s*[A-Za-z][\w\\.:\-]*)*\]"
)


def _drop_key(match: re.Match[str]) -> str:
    """A ``\\ref``/``\\cite`` argument, or a bracketed key list with ``:`` or ``_`` in it."""
    text = match.group(0)
    return " " if text.startswith("\\") or ":" in text or "_" in text else text


def _strip_markdown(text: str) -> str:
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.DOTALL)
    text = re.sub(r"(?m)^Image:.*$", " ", text)
    text = re.sub(r"(?m)^\s*\|?\s*:?-{3,}.*$", " ", text)
    text = re.sub(r"(?m)^```.*$", " ", text)
    text = re.sub(r"(?m)^\s*#{1,6}\s*", "", text)
    text = re.sub(r"(?m)^\s*[-*+]\s+", "", text)
    text = text.replace("|", " ").replace("**", " ").replace("`", " ")
    text = html.unescape(text)
    text = re.sub(r"\\([\\`*_{}\[\]()#+\-.!&%$])", r"\1", text)
    text = _MATH.sub(" ", text)
    text = _LABEL.sub(_drop_key, text)
    return _COMMAND.sub(" ", text)


def ref_tokens(markdown: str) -> list[str]:
    return tokens(_strip_markdown(markdown))


def recall(ref: list[str], out: list[str]) -> float:
    """Bag-of-words recall; 0.0 when the reference holds no word."""
    value = bag_recall(ref, out)
    return 0.0 if value is None else value


def order(ref: list[str], out: list[str]) -> float:
    return float(Indel.normalized_similarity(ref, out))


# -- headings ------------------------------------------------------------------------------

_NUMBERING = re.compile(
    r"^\s*(?:(?:\d+(?:\.\d+)*|[IVXLC]+|[A-Z])(?:\.|\))?\s+|(?:\d+(?:\.\d+)+|\d+)\s*)"
)


def norm_heading(text: str) -> str:
    text = _MATH.sub(" ", text.lstrip("#"))
    text = _COMMAND.sub(" ", text)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = _NUMBERING.sub("", " ".join(text.split()))
    return " ".join(tokens(text))


def reference_headings(markdown: str) -> list[str]:
    out = []
    for line in markdown.splitlines():
        if line.startswith("#"):
            normed = norm_heading(line)
            if normed:
                out.append(normed)
    return out


def heading_found(ref: str, chunk_headings: set[str]) -> bool:
    return ref in chunk_headings or any(fuzz.ratio(ref, h) >= 90 for h in chunk_headings)


# -- running lines -------------------------------------------------------------------------

_STAMP = re.compile(r"arXiv:\s*\d{4}\.\d{4,5}v\d+\s*\[[\w.\-]+\]|arXiv:[a-z\-]+/\d{7}v\d+")


def _line_key(line: str) -> str:
    return re.sub(r"\d+", "#", " ".join(line.split())).strip()


def running_lines(pages: list[str]) -> list[re.Pattern[str]]:
    """Patterns of lines repeated at the top or bottom of >= 3 pages (digits as wildcards)."""
    seen: Counter[str] = Counter()
    for text in pages:
        lines = [ln for ln in (x.strip() for x in text.splitlines()) if ln]
        edge = {_line_key(ln) for ln in lines[:2] + lines[-2:]}
        seen.update(k for k in edge if len(re.sub(r"[#\W]", "", k)) >= 6)
    needed = max(3, len(pages) // 3)
    patterns = []
    for key, count in seen.items():
        if count >= needed:
            body = r"\s*".join(
                re.escape(w).replace("\\#", r"\d+").replace("#", r"\d+") for w in key.split()
            )
            patterns.append(re.compile(body))
    return patterns


def count_running(texts: list[str], patterns: list[re.Pattern[str]]) -> int:
    count = 0
    for text in texts:
        flat = " ".join(text.split())
        count += len(_STAMP.findall(flat))
        count += sum(len(p.findall(flat)) for p in patterns)
    return count


def bad_heading(heading: str, patterns: list[re.Pattern[str]]) -> bool:
    flat = " ".join(heading.split())
    if _STAMP.search(flat) or any(p.fullmatch(flat) for p in patterns):
        return True
    words = re.findall(r"[^\W\d_]{3,}", flat)
    letters = sum(c.isalpha() for c in flat)
    return not words or letters < 0.5 * len(flat.replace(" ", ""))


# -- authors -------------------------------------------------------------------------------

_NAME = re.compile(r"^[^\W\d_][\w.'\u2019\-]*(?:\s+[^\W\d_][\w.'\u2019\-]*){0,4}$")


def clean_authors(authors: Any) -> bool:
    if not isinstance(authors, list) or not authors:
        return False
    for name in authors:
        if not isinstance(name, str) or not _NAME.match(name) or len(name) > 40:
            return False
        if re.search(r"\b(and|university|institute|department)\b", name, re.IGNORECASE):
            return False
    return True


# -- raw layer and pipeline ----------------------------------------------------------------


def raw_pages(pdf_path: Path) -> list[str]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(pdf_path))
    try:
        out = []
        for page in pdf:
            textpage = page.get_textpage()
            out.append(str(textpage.get_text_range()))
            textpage.close()
            page.close()
        return out
    finally:
        pdf.close()


def chunk_stream(docs: list[Any]) -> list[str]:
    """Chunk bodies in order, each heading emitted once where its chain first appears."""
    pieces: list[str] = []
    previous: list[str] = []
    for doc in docs:
        headings = list(doc.metadata.get("headings") or [])
        text = doc.page_content
        lines = text.split("\n")
        skip = 0
        while (
            skip < len(headings)
            and skip < len(lines)
            and lines[skip].strip() == headings[skip].strip()
        ):
            skip += 1
        common = 0
        while common < min(len(headings), len(previous)) and headings[common] == previous[common]:
            common += 1
        pieces.extend(headings[common:])
        pieces.append("\n".join(lines[skip:]))
        previous = headings
    return pieces


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def build_processor(tmp: Path) -> tuple[Any, Any, int]:
    from klea_utils.stores._ingest.workers.batch_conversion import (
        build_processor as _build_processor,
    )
    from klea_utils.stores.ingestion import StoresBuilder

    logger = logging.getLogger("pdf_fidelity")
    builder = StoresBuilder("huggingface:all-MiniLM-L6-v2", logger)
    processor = _build_processor(builder.worker_config(tmp, None), logger)
    processor.warm_up()
    from klea_utils.stores._ingest.chunking.chunking import embedding_max_tokens

    limit = embedding_max_tokens(builder.embedding_model) or 512
    return processor, processor.chunker, limit


def measure(path: Path, reference: str, processor: Any, chunker: Any, limit: int) -> dict[str, Any]:
    from klea_utils.stores.chunk_cache import compute_file_hash

    raw = raw_pages(path)
    ref = ref_tokens(reference)
    raw_tok = pdf_tokens("\n".join(raw))
    start = _cpu()
    outcome = processor.process(path, compute_file_hash(path))
    cpu_s = _cpu() - start
    row: dict[str, Any] = {
        "file": path.stem,
        "pages": len(raw),
        "raw": recall(ref, raw_tok),
        "rawo": order(ref, raw_tok),
        "cpu_s": cpu_s,
    }
    if outcome.error is not None:
        row["error"] = outcome.error
        row.update(rec=0.0, ord=0.0, runs=0, head=0.0, bad=0, pages_ok=0.0, chunks=0)
        return row
    cached = outcome.cached
    docs = cached.docs
    stream = chunk_stream(docs)
    out_tok = pdf_tokens("\n".join(stream))
    patterns = running_lines(raw)
    chunk_headings = {h for d in docs for h in (d.metadata.get("headings") or [])}
    normed = {norm_heading(h) for h in chunk_headings}
    refs = reference_headings(reference)
    found = sum(heading_found(h, normed) for h in refs)
    lengths = [chunker.count_tokens(d.page_content) for d in docs]
    meta = cached.metadata
    title_ref = next((ln for ln in reference.splitlines() if ln.startswith("# ")), None)
    row.update(
        rec=recall(ref, out_tok),
        ord=order(ref, out_tok),
        runs=count_running([d.page_content for d in docs], patterns),
        head_found=found,
        head_total=len(refs),
        head=found / len(refs) if refs else 1.0,
        bad=sum(bad_heading(h, patterns) for h in chunk_headings),
        bad_examples=sorted(h for h in chunk_headings if bad_heading(h, patterns))[:3],
        chunks=len(docs),
        pages_ok=sum(
            isinstance(d.metadata.get("page_start"), int)
            and isinstance(d.metadata.get("page_end"), int)
            for d in docs
        )
        / max(1, len(docs)),
        title=meta.get("title"),
        title_ok=(
            None
            if title_ref is None
            else norm_heading(title_ref) == norm_heading(str(meta.get("title") or ""))
            or fuzz.ratio(norm_heading(title_ref), norm_heading(str(meta.get("title") or ""))) >= 90
        ),
        authors=meta.get("authors"),
        authors_ok=None if title_ref is None else clean_authors(meta.get("authors")),
        maxtok=max(lengths, default=0),
        over=sum(n > limit for n in lengths),
        recovered=getattr(getattr(processor, "_converter", None), "last_recovery", ""),
    )
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=_default_data())
    parser.add_argument("--only", action="append", default=[], help="stem substring to run")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR)
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    pdfs = sorted((args.data / "pdf").glob("*.pdf"))
    if args.only:
        pdfs = [p for p in pdfs if any(s in p.stem for s in args.only)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="pdf-fidelity-") as tmp:
        processor, chunker, limit = build_processor(Path(tmp))
        for pdf in pdfs:
            reference = (args.data / "reference" / f"{pdf.stem}.md").read_text(encoding="utf-8")
            copy = Path(tmp) / pdf.name
            shutil.copyfile(pdf, copy)
            t0 = time.perf_counter()
            row = measure(copy, reference, processor, chunker, limit)
            row["wall_s"] = time.perf_counter() - t0
            rows.append(row)
            _print_row(row, header=len(rows) == 1, limit=limit)
    _print_total(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str), encoding="utf-8")
    return 0


_COLS = "{:<40} {:>4} {:>5} {:>5} {:>5} {:>5} {:>4} {:>7} {:>3} {:>5} {:>5} {:>4} {:>6} {:>4} {:>9}"


def _print_row(row: dict[str, Any], *, header: bool, limit: int) -> None:
    if header:
        print(
            _COLS.format(
                "file",
                "pp",
                "rec",
                "raw",
                "ord",
                "rawo",
                "runs",
                "head",
                "bad",
                "pages",
                "title",
                "auth",
                f"max/{limit}",
                ">lim",
                "p/cpu-min",
            )
        )
    yn = {True: "yes", False: "no", None: "-"}
    print(
        _COLS.format(
            row["file"][:40],
            row["pages"],
            f"{row['rec']:.3f}",
            f"{row['raw']:.3f}",
            f"{row['ord']:.3f}",
            f"{row['rawo']:.3f}",
            row["runs"],
            f"{row.get('head_found', 0)}/{row.get('head_total', 0)}",
            row["bad"],
            f"{row['pages_ok']:.2f}",
            yn[row.get("title_ok")],
            yn[row.get("authors_ok")],
            row.get("maxtok", 0),
            row.get("over", 0),
            f"{row['pages'] / max(row['cpu_s'], 1e-9) * 60:.1f}",
        )
    )
    if row.get("error"):
        print(f"    FAILED: {row['error'][:200]}")
    if row.get("recovered"):
        print(f"    recovered: {row['recovered']}")
    if row.get("bad_examples"):
        print(f"    bad headings: {row['bad_examples']}")
    if row.get("title_ok") is False or row.get("authors_ok") is False:
        print(f"    title={row.get('title')!r} authors={row.get('authors')!r}")


def _print_total(rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    pages = sum(r["pages"] for r in rows)
    cpu = sum(r["cpu_s"] for r in rows)
    found = sum(r.get("head_found", 0) for r in rows)
    total = sum(r.get("head_total", 0) for r in rows)
    titled = [r for r in rows if r.get("title_ok") is not None]
    print(
        "overall: recall>=raw on {}/{} files; order>=raw on {}/{}; running lines max {} "
        "(total {}); headings {}/{} = {:.0%}; bad headings {}; chunks with pages {:.0%}; "
        "titles {}/{}; clean authors {}/{}; chunks over limit {}; {:.1f} pages/CPU-minute; "
        "failed {}".format(
            sum(r["rec"] >= r["raw"] - 1e-9 for r in rows),
            len(rows),
            sum(r["ord"] >= r["rawo"] - 1e-9 for r in rows),
            len(rows),
            max(r["runs"] for r in rows),
            sum(r["runs"] for r in rows),
            found,
            total,
            found / max(1, total),
            sum(r["bad"] for r in rows),
            sum(r["pages_ok"] * r["chunks"] for r in rows) / max(1, sum(r["chunks"] for r in rows)),
            sum(bool(r["title_ok"]) for r in titled),
            len(titled),
            sum(bool(r["authors_ok"]) for r in titled),
            len(titled),
            sum(r.get("over", 0) for r in rows),
            pages / max(cpu, 1e-9) * 60,
            sum(1 for r in rows if r.get("error")),
        )
    )


if __name__ == "__main__":
    sys.exit(main())
