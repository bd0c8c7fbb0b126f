"""The wild-PDF bench: build a folder of real-world PDFs with the real CLI and measure it.

Copies the PDFs of ``--source`` (default: ``shared/data/realpapers-wild/pdf``, the
development set of issue 24) into a scratch folder, runs ``klea-stores-create build`` on the
copy (Chroma store plus BM25 corpus, default settings) as a user would, then reads the BM25
corpus back and prints, per file and per category of the set's ``manifest.json``:

- ``stored``: ``yes``, or the reason the build gave (its failure record, else its
  ``not stored`` line);
- ``chunks``: chunks stored for the file;
- ``pages``: pages covered / pages with content. A page is covered when it falls inside some
  chunk's ``page_start``..``page_end``; a page has content when its pdfium text layer holds
  a non-space character or it draws an image at any depth (Form XObjects included);
- ``recall``: bag-of-words recall of the file's text-layer words in the stored chunk text
  (see *Words*); ``-`` where the text layer holds no word;
- ``gib%``: share of the stored words that are gibberish (see *Gibberish*);
- ``rec-rl``: the same recall with the text layer's *repeated lines* left out: a line
  (lower-cased, digits as ``#``) found on three or more pages. The reader removes running
  heads and feet on purpose, so a file whose ``recall`` is below 0.9 but whose ``rec-rl``
  is not loses only such lines; the run lists the files below 0.9 with both figures.

For the run: pages per CPU-minute (pages of the files built, over the CPU time of the
whole ``build`` process tree: the CLI, its conversion workers, tesseract), the peak RSS of
the process tree (sum over its processes, sampled every 0.1 s) and of its largest process,
and the number of ``Warning`` lines the build printed on stderr (library noise).

Per phase (conversion+chunking, embedding+store, the rest) and for the whole run: wall time,
CPU time, cores used (CPU/wall), pages per wall-minute and per CPU-minute, timed as
``build_phases.py`` says. ``--baseline-ref REF`` first builds the same files with the code of
REF (a temporary git worktree, this venv) and prints each phase's ratio to it;
``--also 'LABEL:ARGS'`` adds a build of this code with extra arguments (say
``'one worker:--workers 1'``). Every run converts a fresh copy (no cache); the per-file
figures are of the last run (this code), and each other run is checked to have stored the
same chunk texts.

*Words* (``pdf_words.words``): the text is NFKC-normalised and lower-cased; a hyphen (``-``,
soft hyphen, or pdfium's U+FFFE) at a line end followed by a lower-case letter joins the two
halves; a word is a maximal run of letters and combining marks, kept when it has 3+ letters.
Scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) have no
words to count, so their runs are cut into overlapping 3-character shingles after whitespace
between two such characters is dropped (a line break inside a Chinese sentence is no word
boundary). The text layer is pypdfium2's ``get_text_range()`` of every page.

*Gibberish*: a stored word (a whitespace-separated token stripped of surrounding
punctuation, holding a letter or a suspicious character) is gibberish when it holds a
private-use character, a dingbat (U+2700-27BF, U+2600-26FF, U+1F300-1FAFF), U+FFFD or
another character of category Cc/Cs/Co/Cn, letters of two scripts (Greek counts as Latin,
for units and formulas like ``μm``; Han, kana and Hangul count as one; letters of scripts
written without spaces are left out, as Japanese sets ``Zipfの法則`` in one token), or a run of 5+
Latin letters without a vowel (``aeiouy``, accents ignored) that is not all capitals.

    uv run --frozen python scripts/bench/pdf_wild.py [--files GLOB ...] [--source DIR]
        [--manifest FILE] [--json OUT] [--work DIR] [--keep] [--baseline-ref REF]
        [--also LABEL:ARGS ...] [--build-arg ARG ...] [--runnable]

``--runnable`` also samples each build's runnable threads every 50 ms and prints, per phase,
the share of wall time the build offered two or more runnable threads, and its longest
serial stretches (``runnable_threads.py``): a measure of what the build could use that the
neighbours on a shared machine do not move.

Use ``--files`` for subsets while developing (the whole set is 3,722 pages, 15+ CPU-minutes
on a two-core machine).
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's: it moves
# behind the standard library on the import path (``pdf_words`` is imported from it).
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import collections
import fnmatch
import json
import pickle
import re
import shutil
import statistics
import tempfile
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from build_phases import TimedBuild, baseline_tree, print_phases, run_build, run_plan
from build_phases import summary as timed_summary
from pdf_words import bag_recall, script_of, unspaced, words

_ROOT = Path(__file__).resolve().parents[2]


def _default_set() -> Path:
    for parent in _ROOT.parents:
        candidate = parent / "shared" / "data" / "realpapers-wild"
        if candidate.is_dir():
            return candidate
    return _ROOT.parent / "shared" / "data" / "realpapers-wild"


# -- gibberish -----------------------------------------------------------------------------

_VOWELS = set("aeiouy")


def _dingbat(ch: str) -> bool:
    o = ord(ch)
    return 0x2700 <= o <= 0x27BF or 0x2600 <= o <= 0x26FF or 0x1F300 <= o <= 0x1FAFF


def _bad_char(ch: str) -> bool:
    return ch == "\ufffd" or _dingbat(ch) or unicodedata.category(ch) in ("Cc", "Cs", "Co", "Cn")


def _vowelless_run(word: str) -> bool:
    for run in re.findall(r"[A-Za-z]{5,}", unicodedata.normalize("NFKD", word)):
        if not _VOWELS & set(run.lower()) and not run.isupper():
            return True
    return False


def is_gibberish(word: str) -> bool:
    """The module docstring's *Gibberish* for one stored word."""
    if any(_bad_char(c) for c in word):
        return True
    # Japanese and Chinese set Latin words inside a sentence without a blank (``Zipfの法則``):
    # a token of an unspaced script is a phrase, so only the other letters must agree
    scripts = {script_of(c) for c in word if unicodedata.category(c)[0] == "L" and not unspaced(c)}
    return len(scripts) > 1 or _vowelless_run(word)


def stored_words(text: str) -> list[str]:
    """Tokens of chunk text (edge punctuation stripped) holding a letter or a bad character."""
    out = []
    for token in unicodedata.normalize("NFKC", text).split():
        token = token.strip("".join(c for c in token if unicodedata.category(c)[0] == "P"))
        if token and any(unicodedata.category(c)[0] == "L" or _bad_char(c) for c in token):
            out.append(token)
    return out


# -- reading the PDFs ----------------------------------------------------------------------


@dataclass
class TextLayer:
    pages: int = 0
    content_pages: list[int] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    unrepeated_words: list[str] = field(default_factory=list)
    """The words of the lines that are not repeated lines (see the module's docstring)."""
    error: str = ""


_DIGITS = re.compile(r"\d+")


def _line_key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.lower().split()))


def _unrepeated_text(pages: list[str]) -> str:
    """The text of ``pages`` without the lines found on three or more of them."""
    keyed = [[(_line_key(line), line) for line in text.splitlines()] for text in pages]
    seen: collections.Counter[str] = collections.Counter()
    for lines in keyed:
        seen.update({key for key, _ in lines if key})
    return "\n".join(line for lines in keyed for key, line in lines if seen[key] < 3)


def _draws_image(page: Any) -> bool:
    import pypdfium2.raw as raw

    return any(True for _ in page.get_objects(filter=(raw.FPDF_PAGEOBJ_IMAGE,), max_depth=8))


def read_text_layer(path: Path) -> TextLayer:
    """Text-layer words and the pages with content, as pypdfium2 reads them."""
    import pypdfium2 as pdfium

    layer = TextLayer()
    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception as exc:  # pypdfium2's PdfiumError, or a password error
        layer.error = f"{type(exc).__name__}: {exc}"
        return layer
    try:
        layer.pages = len(pdf)
        texts = []
        for index in range(layer.pages):
            try:
                page = pdf[index]
            except Exception:
                continue
            try:
                textpage = page.get_textpage()
                text = str(textpage.get_text_range())
                textpage.close()
                if text.strip() or _draws_image(page):
                    layer.content_pages.append(index + 1)
                texts.append(text)
            finally:
                page.close()
        layer.words = words("\n".join(texts))
        layer.unrepeated_words = words(_unrepeated_text(texts))
    finally:
        pdf.close()
    return layer


# -- the build -----------------------------------------------------------------------------


def build_args(src: Path, work: Path, extra: list[str]) -> list[str]:
    """The ``build`` arguments of one run: Chroma store and BM25 corpus under ``work``."""
    return [
        str(src),
        "--collection",
        "wild",
        "--store",
        f"chroma:{work / 'chroma'}",
        "--bm25-store",
        str(work / "bm25.pkl"),
        *extra,
    ]


def copy_set(files: list[Path], work: Path) -> Path:
    """A fresh copy of ``files`` in ``work/src`` (no cache: every run converts everything)."""
    src = work / "src"
    src.mkdir(parents=True)
    for path in files:
        shutil.copy2(path, src / path.name)
    return src


def read_chunks(bm25: Path) -> dict[str, list[Any]]:
    chunks: dict[str, list[Any]] = collections.defaultdict(list)
    if not bm25.exists():
        return chunks
    with bm25.open("rb") as fh:
        while True:
            try:
                batch = pickle.load(fh)
            except EOFError:
                break
            for doc in batch:
                chunks[doc.metadata.get("file_name", "")].append(doc)
    return chunks


def not_stored_reasons(output: str, names: list[str], src: Path) -> dict[str, str]:
    """``{file: reason}`` from the failure record, else from the ``not stored`` line."""
    reasons: dict[str, str] = {}
    record = src / ".klea-cache" / "failed-files.json"
    if record.exists():
        for name, entry in json.loads(record.read_text(encoding="utf-8")).items():
            reasons[name] = str(entry.get("error", "")) if isinstance(entry, dict) else ""
    for line in output.splitlines():
        if "not stored:" not in line:
            continue
        body = line.split("not stored:", 1)[1]
        starts = sorted((body.find(f" {n} ("), n) for n in names if f" {n} (" in body)
        for (pos, name), nxt in zip(starts, [*starts[1:], (len(body) + 2, "")], strict=True):
            text = body[pos + len(name) + 3 : nxt[0]].rstrip("; ").removesuffix(")")
            reasons.setdefault(name, text)
    return reasons


# -- the report ----------------------------------------------------------------------------


@dataclass
class FileRow:
    file: str
    categories: list[str]
    pages: int
    stored: bool
    reason: str
    chunks: int
    covered: int
    content_pages: int
    recall: float | None
    gibberish: float | None
    recall_unrepeated: float | None
    stored_words: int


def measure_file(path: Path, docs: list[Any], reason: str, categories: list[str]) -> FileRow:
    layer = read_text_layer(path)
    covered: set[int] = set()
    chunk_words: list[str] = []
    stored: list[str] = []
    for doc in docs:
        meta = doc.metadata
        start, end = meta.get("page_start"), meta.get("page_end")
        if isinstance(start, int) and isinstance(end, int):
            covered.update(range(start, end + 1))
        chunk_words.extend(words(doc.page_content))
        stored.extend(stored_words(doc.page_content))
    content = set(layer.content_pages)
    gib = sum(map(is_gibberish, stored)) / len(stored) if stored else None
    return FileRow(
        file=path.name,
        categories=categories,
        pages=layer.pages,
        stored=bool(docs),
        reason="" if docs else (reason or layer.error or "no chunks, no reason given"),
        chunks=len(docs),
        covered=len(covered & content),
        content_pages=len(content),
        recall=bag_recall(layer.words, chunk_words) if docs or layer.words else None,
        gibberish=gib,
        recall_unrepeated=(
            bag_recall(layer.unrepeated_words, chunk_words) if layer.unrepeated_words else None
        ),
        stored_words=len(stored),
    )


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def print_files(rows: list[FileRow]) -> None:
    print(
        f"{'file':58} {'stored':>6} {'chunks':>6} {'pages':>9} {'recall':>6} {'gib%':>5} "
        f"{'rec-rl':>6}"
    )
    for r in rows:
        print(
            f"{r.file[:58]:58} {'yes' if r.stored else 'NO':>6} {r.chunks:>6} "
            f"{f'{r.covered}/{r.content_pages}':>9} {_fmt(r.recall):>6} "
            f"{_fmt(None if r.gibberish is None else 100 * r.gibberish, '.1f'):>5} "
            f"{_fmt(r.recall_unrepeated):>6}"
        )
        if not r.stored:
            print(f"    reason: {' '.join(r.reason.split())[:300]}")


def print_low_recall(rows: list[FileRow]) -> None:
    """The files below 0.9 recall, with the recall left when repeated lines are set aside."""
    low = [r for r in rows if r.recall is not None and r.recall < 0.9]
    if not low:
        return
    print("\nfiles below 0.9 recall (rec-rl: without the text layer's repeated lines):")
    for r in low:
        verdict = (
            "only repeated lines are missing"
            if r.recall_unrepeated is not None and r.recall_unrepeated >= 0.9
            else "more than repeated lines is missing"
        )
        print(f"  {r.file[:58]:58} {_fmt(r.recall)} -> {_fmt(r.recall_unrepeated)}  {verdict}")


def category_table(rows: list[FileRow]) -> list[dict[str, Any]]:
    cats: dict[str, list[FileRow]] = collections.defaultdict(list)
    for r in rows:
        for c in r.categories:
            cats[c].append(r)
    cats["all"] = rows
    out = []
    for cat, members in sorted(cats.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        recalls = [r.recall for r in members if r.recall is not None]
        gibs = [r.gibberish for r in members if r.gibberish is not None]
        out.append(
            {
                "category": cat,
                "files": len(members),
                "stored": sum(r.stored for r in members),
                "pages_covered": sum(r.covered for r in members),
                "content_pages": sum(r.content_pages for r in members),
                "median_recall": statistics.median(recalls) if recalls else None,
                "below_0_9": sum(r < 0.9 for r in recalls),
                "max_gibberish": max(gibs) if gibs else None,
                "over_5pct": sum(g > 0.05 for g in gibs),
            }
        )
    return out


def print_categories(table: list[dict[str, Any]]) -> None:
    print(
        f"\n{'category':20} {'files':>5} {'stored':>6} {'pages cov.':>12} {'med.rec':>7} "
        f"{'<0.9':>4} {'max gib%':>8} {'>5%':>3}"
    )
    for t in table:
        pages = f"{t['pages_covered']}/{t['content_pages']}"
        gib = None if t["max_gibberish"] is None else 100 * t["max_gibberish"]
        print(
            f"{t['category']:20} {t['files']:>5} {t['stored']:>6} {pages:>12} "
            f"{_fmt(t['median_recall']):>7} {t['below_0_9']:>4} {_fmt(gib, '.1f'):>8} "
            f"{t['over_5pct']:>3}"
        )


def _select(source: Path, patterns: list[str]) -> list[Path]:
    files = sorted(p for p in source.iterdir() if p.suffix.lower() == ".pdf")
    if patterns:
        files = [p for p in files if any(fnmatch.fnmatch(p.name, g) for g in patterns)]
    return files


def _slug(label: str) -> str:
    """A run's folder name: its label without blanks or slashes."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", label)


def _chunk_texts(bm25: Path) -> dict[str, list[str]]:
    return {name: sorted(d.page_content for d in docs) for name, docs in read_chunks(bm25).items()}


def print_same_chunks(runs: list[TimedBuild], work: Path) -> None:
    """Whether every run stored the same chunk texts per file as the last one (this code)."""
    last = _chunk_texts(work / _slug(runs[-1].label) / "bm25.pkl")
    for run in runs[:-1]:
        other = _chunk_texts(work / _slug(run.label) / "bm25.pkl")
        differ = sorted(n for n in set(last) | set(other) if last.get(n) != other.get(n))
        verdict = "same chunks" if not differ else f"{len(differ)} file(s) differ: {differ[:5]}"
        print(f"{run.label} vs {runs[-1].label}: {verdict}")


def _timed_runs(files: list[Path], work: Path, args: argparse.Namespace) -> list[TimedBuild]:
    """The baseline (if any), each ``--also`` variant, then this code: a fresh copy each."""
    plan = run_plan(args.baseline_ref, args.also, args.build_arg)
    runs: list[TimedBuild] = []
    with baseline_tree(args.baseline_ref) as baseline:
        for label, old, extra in plan:
            folder = work / _slug(label)
            src = copy_set(files, folder)
            print(f"building {len(files)} file(s) in {folder} ({label}) ...", file=sys.stderr)
            code = baseline if old else None
            runs.append(
                run_build(label, code, build_args(src, folder, extra), runnable=args.runnable)
            )
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--source", type=Path, help="folder of PDFs (default: the wild set)")
    parser.add_argument("--manifest", type=Path, help="manifest.json with the categories")
    parser.add_argument(
        "--files", nargs="*", default=[], metavar="GLOB", help="only files matching a GLOB"
    )
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument(
        "--build-arg", action="append", default=[], help="extra argument for the build"
    )
    parser.add_argument("--show-stderr", action="store_true", help="print the build's stderr")
    parser.add_argument(
        "--baseline-ref",
        help="also build with the code of this git ref first, for the ratios (build_phases.py)",
    )
    parser.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="LABEL:ARGS",
        help="also build with this code and extra build arguments, e.g. 'one worker:--workers 1'",
    )
    parser.add_argument(
        "--runnable",
        action="store_true",
        help="sample the build's runnable threads every 50 ms (runnable_threads.py): per phase, "
        "the share of wall time with 2+ runnable threads, and the serial stretches",
    )
    args = parser.parse_args()

    wild = _default_set()
    source = args.source or wild / "pdf"
    manifest_path = args.manifest or (source.parent / "manifest.json")
    manifest: dict[str, list[str]] = {}
    if manifest_path.exists():
        data = json.loads(manifest_path.read_text(encoding="utf-8"))
        manifest = {e["file"]: list(e.get("categories", [])) for e in data.get("files", [])}
    files = _select(source, args.files)
    if not files:
        sys.exit(f"no PDF in {source} matches {args.files}")

    work = args.work or Path(tempfile.mkdtemp(prefix="pdf-wild-"))
    if work.exists() and args.work:
        shutil.rmtree(work)
    runs = _timed_runs(files, work, args)
    run = runs[-1]
    src = work / _slug(run.label) / "src"
    if args.show_stderr:
        sys.stderr.write(run.stderr)
    output = run.stdout + "\n" + run.stderr
    chunks = read_chunks(work / _slug(run.label) / "bm25.pkl")
    reasons = not_stored_reasons(output, [p.name for p in files], src)
    rows = [
        measure_file(
            src / p.name, chunks.get(p.name, []), reasons.get(p.name, ""), manifest.get(p.name, [])
        )
        for p in files
    ]
    print_files(rows)
    table = category_table(rows)
    print_categories(table)
    print_low_recall(rows)

    pages = sum(r.pages for r in rows)
    recalls = [r.recall for r in rows if r.recall is not None]
    warnings = [line for line in run.stderr.splitlines() if "Warning" in line]
    summary = {
        "files": len(rows),
        "stored": sum(r.stored for r in rows),
        "pages": pages,
        "cpu_s": round(run.total.cpu_s, 1),
        "wall_s": round(run.total.wall_s, 1),
        "pages_per_cpu_min": round(pages / (run.total.cpu_s / 60), 1) if run.total.cpu_s else None,
        "peak_rss_tree_gib": round(run.peak_rss_tree / 2**30, 2),
        "peak_rss_process_gib": round(run.peak_rss_process / 2**30, 2),
        "median_recall": statistics.median(recalls) if recalls else None,
        "files_below_0_9": sum(r < 0.9 for r in recalls),
        "files_below_0_9_without_repeated_lines": sum(
            r.recall_unrepeated is not None and r.recall_unrepeated < 0.9 for r in rows
        ),
        "warning_lines_on_stderr": len(warnings),
        "exit_status": run.returncode,
    }
    print_phases(runs, pages)
    print_same_chunks(runs, work)
    print(
        f"\nrun: {summary['stored']}/{summary['files']} stored, {pages} pages, "
        f"CPU {run.total.cpu_s / 60:.1f} min, wall {run.total.wall_s / 60:.1f} min, "
        f"{summary['pages_per_cpu_min']} pages/CPU-min, peak RSS "
        f"{summary['peak_rss_tree_gib']} GiB (tree) / {summary['peak_rss_process_gib']} GiB "
        f"(largest process), median recall {_fmt(summary['median_recall'])}, "
        f"{summary['files_below_0_9']} file(s) < 0.9, {len(warnings)} warning line(s) on "
        f"stderr, exit {run.returncode}"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "summary": summary,
                    "timed_runs": [timed_summary(r, pages) for r in runs],
                    "categories": table,
                    "files": [asdict(r) for r in rows],
                    "warnings": warnings[:50],
                },
                indent=1,
            ),
            encoding="utf-8",
        )
    if not args.keep and not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
