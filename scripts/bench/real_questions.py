"""Real questions over real papers: is the answer in the passages a reader gets first?

Run with ``uv run --frozen python scripts/bench/real_questions.py``. It copies the source
PDFs to a scratch folder, builds stores with the real CLI (``klea-stores-create build``:
Chroma + pickled BM25 + FTS5, default settings unless build options are passed on), asks
every question of a questions file, and prints answer@1/@3/@5 per system and the misses
with the rank of the first chunk that holds the answer.

Systems:

- **fused**: ``klea-retrieve --stores-config STORES --json -k K QUESTION``, every store
  of the build fused (RRF) and re-ranked as the CLI does by default.
- **vector**, **bm25-pickle**, **bm25-fts5**: ``klea-retrieve`` with that one store
  (``--store papers=chroma:...``, ``--bm25-store bm25.pkl``, ``--bm25-store fts5:...``).
- **sci-etl-lexical**: sci-etl-search's ``AsyncHybridSearcher`` in lexical mode over the
  same FTS5 index, the question searched as klea-serve searches a plain question (the OR
  of its content words).
- **sci-etl-hybrid**: the same searcher in hybrid mode. sci-etl-search cannot read a
  Chroma collection today (the adapter is issue 26), so the bench copies the vectors the
  build stored in Chroma, with their chunk ids, into a sci-etl SQLite vector memory (no
  second chunking or embedding); the query side embeds with the same packaged MiniLM.

``klea-retrieve`` runs in this process through its entry point (``retrieve_cli.main``
with the argument list a shell would pass, its standard output captured): the same code
path as the console script, without paying a Python start-up and imports per question.
``--subprocess`` runs the console script instead.

Scoring follows ``realpapers-dev/README.md``: passage and answer are normalised alike
(soft hyphen or U+FFFE before a line end rejoined, NFKC, lower case, runs of whitespace
collapsed) and a question is answered at rank r when the r-th passage holds the answer
and comes from the question's paper: its file, or a variant of it named
``<stem>_<suffix>`` (the OCRed scan of 9802040's page 1 holds the same page). The Type 3
twin of 1708.00137 carries the same text as a question target; following the README it
is left out of the build (``--keep-twin`` keeps it, and then its passages count as the
paper's).

For a question not answered in the top 5, the rank of the first answering chunk is
looked up again with ``-k DEEP_K`` per store (default 50) and printed; ``-`` means it was
not among those candidates.

Build options pass through: ``--max-tokens``, ``--fts5-stemming`` or any other with
``--build-opt=--option=value`` (repeatable); retrieve options likewise with
``--retrieve-opt``. ``--reuse DIR`` asks a folder built before (it holds
``stores.json``) without building. ``--json OUT`` writes the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT.parent / "shared" / "data" / "realpapers-dev"
COLLECTION = "papers"
TWIN_MARK = "_type3fonts"
DEPTHS = (1, 3, 5)

Asker = Callable[[str, int], list[tuple[str, str]]]
"""``ask(question, k)`` -> ranked ``(file_name, passage)`` pairs."""


# -- questions and scoring --------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    file: str
    answer: str
    page: int | None = None


def load_questions(path: Path) -> list[Question]:
    """Read a questions file (JSON lines with id, question, file, answer[, page])."""
    questions: list[Question] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            questions.append(
                Question(
                    str(row["id"]), row["question"], row["file"], row["answer"], row.get("page")
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"{path}:{number}: not a question row ({exc})") from None
    return questions


_LINE_END_HYPHEN = re.compile("[\u00ad\ufffe][ \t]*\r?\n[ \t]*")
_CELL_SEPARATOR = re.compile(r"(?:^|(?<=\s))\|(?=\s|$)")


def normalise(text: str) -> str:
    """The README's normalisation: hyphenated line ends rejoined, NFKC, lower, spaces.

    The ``|`` that a stored table row sets between its cells (``10 | 1111111010``) is
    markup of ours, not text of the page, and reads as a space: an answer that spans two
    cells of a row is found as the page prints it.
    """
    text = _CELL_SEPARATOR.sub(" ", text)
    text = _LINE_END_HYPHEN.sub("", text).replace("\u00ad", "").replace("\ufffe", "")
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def same_paper(file_name: str, target: str) -> bool:
    """``file_name`` is ``target`` or a variant of it (``<target stem>_<suffix>.<ext>``)."""
    stem = target.rsplit(".", 1)[0]
    return file_name == target or file_name.startswith(stem + "_")


def answer_rank(question: Question, hits: Sequence[tuple[str, str]]) -> int | None:
    """1-based rank of the first hit from the question's paper that holds the answer."""
    answer = normalise(question.answer)
    for rank, (file_name, passage) in enumerate(hits, start=1):
        if same_paper(file_name, question.file) and answer in normalise(passage):
            return rank
    return None


@dataclass
class SystemResult:
    name: str
    ranks: dict[str, int | None] = field(default_factory=dict)
    deep_ranks: dict[str, int | None] = field(default_factory=dict)
    seconds: float = 0.0

    def at(self, depth: int) -> int:
        return sum(1 for r in self.ranks.values() if r is not None and r <= depth)


# -- building ---------------------------------------------------------------------------


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def build(source: Path, out: Path, build_opts: Sequence[str], *, keep_twin: bool) -> Path:
    """Copy ``source``'s files to ``out/src`` and build the stores there; return stores.json."""
    src = out / "src"
    src.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.iterdir()):
        if path.is_file() and (keep_twin or TWIN_MARK not in path.name):
            shutil.copy2(path, src / path.name)
    config = out / "stores.json"
    command = [
        str(Path(sys.executable).with_name("klea-stores-create")),
        "build",
        str(src),
        "--store",
        f"chroma:{out / 'chroma'}",
        "--collection",
        COLLECTION,
        "--bm25-store",
        str(out / "bm25.pkl"),
        "--fts5-store",
        str(out / "fts5.sqlite"),
        "--write-stores-config",
        str(config),
        "-q",
        *build_opts,
    ]
    _log("$ " + " ".join(command))
    start = time.perf_counter()
    subprocess.run(command, check=True)
    _log(f"built in {time.perf_counter() - start:.0f} s")
    return config


# -- asking -----------------------------------------------------------------------------


def _klea_retrieve(argv: list[str], *, use_subprocess: bool) -> str:
    if use_subprocess:
        exe = str(Path(sys.executable).with_name("klea-retrieve"))
        done = subprocess.run([exe, *argv], check=True, capture_output=True, text=True)
        return done.stdout
    from klea_utils.stores.retrieve_cli import main

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = main(argv)
    if status != 0:
        raise RuntimeError(f"klea-retrieve {' '.join(argv)} exited with {status}")
    return buffer.getvalue()


def klea_asker(store_args: list[str], retrieve_opts: list[str], *, use_subprocess: bool) -> Asker:
    """Ask through ``klea-retrieve --json``; the hits of every domain, in order."""

    def ask(question: str, k: int) -> list[tuple[str, str]]:
        argv = [*store_args, "--json", "-q", "-k", str(k), *retrieve_opts, "--", question]
        material = json.loads(_klea_retrieve(argv, use_subprocess=use_subprocess))
        return [
            (str(hit["metadata"].get("file_name", "")), hit["page_content"])
            for hits in material.values()
            for hit in hits
        ]

    return ask


class SciEtl:
    """sci-etl-search's hybrid searcher over the build's FTS5 index and its Chroma vectors."""

    def __init__(self, folder: Path, work: Path) -> None:
        from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store, built_facet_keys

        self.loop = asyncio.new_event_loop()
        index = folder / "fts5.sqlite"
        self.text_store = AsyncSqliteFts5Store(index, facet_keys=built_facet_keys(index) or ())
        self.memory_path = work / "scietl-vectors.sqlite"
        self.memory: Any = None
        self.finder: Any = None
        self.chroma = folder / "chroma"

    def _copy_vectors(self) -> None:
        import chromadb
        from sci_etl_core.embeddings.finder_async import AsyncSimilarArticleFinder
        from sci_etl_core.embeddings.sentence_transformers_async import (
            AsyncSentenceTransformerEmbedder,
        )
        from sci_etl_core.embeddings.store_base import EmbeddingChunk
        from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore

        settings = chromadb.config.Settings(anonymized_telemetry=False)  # as klea opens it
        client = chromadb.PersistentClient(path=str(self.chroma), settings=settings)
        rows = client.get_collection(COLLECTION).get(include=["embeddings", "documents"])
        self.memory_path.unlink(missing_ok=True)
        self.memory = AsyncSqliteEmbeddingStore(self.memory_path)
        texts: list[Any] = list(rows["documents"] or [])
        vectors: list[Any] = list(rows["embeddings"] if rows["embeddings"] is not None else [])
        chunks = [
            EmbeddingChunk(str(i), 0, text or "", [float(x) for x in vector])
            for i, text, vector in zip(rows["ids"], texts, vectors, strict=True)
        ]
        self.loop.run_until_complete(self.memory.add(chunks))
        self.finder = AsyncSimilarArticleFinder(AsyncSentenceTransformerEmbedder(), self.memory)

    def asker(self, mode: str) -> Asker:
        from sci_etl_core.search import AsyncHybridSearcher, HybridParams

        if mode != "lexical" and self.finder is None:
            self._copy_vectors()
        finder = self.finder if mode != "lexical" else None

        def ask(question: str, k: int) -> list[tuple[str, str]]:
            query = _question_query(question)
            searcher = AsyncHybridSearcher(
                self.text_store, finder, params=HybridParams(candidate_pool=max(k, 100))
            )
            outcome = self.loop.run_until_complete(
                searcher.search(query, top_k=k, mode=mode)  # type: ignore[arg-type]
            )
            ids = [h.record_id for h in outcome.hits]
            docs = self.loop.run_until_complete(self.text_store.get_documents(ids))
            return [
                (str(docs[i].metadata.get("file_name", "")), docs[i].body) for i in ids if i in docs
            ]

        return ask

    def close(self) -> None:
        self.loop.run_until_complete(self.text_store.aclose())
        if self.memory is not None:
            self.loop.run_until_complete(self.memory.aclose())
        self.loop.close()


def _question_query(question: str) -> str:
    """A plain question as klea-serve searches it (the OR of its content words)."""
    from klea_utils.stores.serve.search.backend import question_query

    return question_query(question) or question


# -- running and reporting --------------------------------------------------------------


def evaluate(
    name: str, ask: Asker, questions: Sequence[Question], k: int, deep_k: int
) -> SystemResult:
    result = SystemResult(name)
    start = time.perf_counter()
    for q in questions:
        result.ranks[q.id] = answer_rank(q, ask(q.question, k))
        if result.ranks[q.id] is None or result.ranks[q.id] > max(DEPTHS):  # type: ignore[operator]
            result.deep_ranks[q.id] = answer_rank(q, ask(q.question, deep_k))
    result.seconds = time.perf_counter() - start
    _log(f"{name}: @1 {result.at(1)} @3 {result.at(3)} @5 {result.at(5)} ({result.seconds:.0f} s)")
    return result


def report(results: Sequence[SystemResult], questions: Sequence[Question], deep_k: int) -> str:
    n = len(questions)
    lines = [
        "| system | answer@1 | answer@3 | answer@5 |",
        "|---|---|---|---|",
        *(f"| {r.name} | {r.at(1)}/{n} | {r.at(3)}/{n} | {r.at(5)}/{n} |" for r in results),
        "",
        f"Misses at 3 (rank of the first answering chunk; beyond 5: with -k {deep_k}):",
    ]
    by_id = {q.id: q for q in questions}
    for r in results:
        missed = []
        for qid, rank in r.ranks.items():
            if rank is not None and rank <= 3:
                continue
            shown = rank if rank is not None else r.deep_ranks.get(qid)
            missed.append(f"{qid}={shown if shown is not None else '-'}")
        lines.append(f"  {r.name}: {', '.join(missed) or 'none'}")
    lines.append("")
    for qid, q in by_id.items():
        if any(r.ranks.get(qid) is None or r.ranks[qid] > 3 for r in results):  # type: ignore[operator]
            lines.append(f"  {qid} ({q.file} p. {q.page}): {q.question} -> {q.answer!r}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=DEV / "pdf", help="folder of papers")
    parser.add_argument("--questions", type=Path, default=DEV / "questions.jsonl")
    parser.add_argument("--out", type=Path, help="build folder (default: a new temp folder)")
    parser.add_argument("--reuse", type=Path, metavar="DIR", help="ask a folder built before")
    parser.add_argument("--keep-twin", action="store_true", help="index the Type 3 twin too")
    parser.add_argument("--max-tokens", type=int, help="passed to build")
    parser.add_argument("--fts5-stemming", action="store_true", help="passed to build")
    parser.add_argument("--build-opt", action="append", default=[], metavar="OPT")
    parser.add_argument("--retrieve-opt", action="append", default=[], metavar="OPT")
    parser.add_argument("-k", type=int, default=5, help="klea-retrieve -k (hits per store)")
    parser.add_argument("--deep-k", type=int, default=50, help="-k when looking up misses")
    parser.add_argument(
        "--systems",
        default="fused,vector,bm25-pickle,bm25-fts5,sci-etl-lexical,sci-etl-hybrid",
        help="comma-separated systems to ask",
    )
    parser.add_argument("--subprocess", action="store_true", help="run klea-retrieve as a process")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the figures here")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no "Loading weights" bars
    for name in ("sentence_transformers", "transformers", "huggingface_hub"):
        logging.getLogger(name).setLevel(logging.WARNING)
    questions = load_questions(args.questions)
    if args.reuse:
        folder = args.reuse
    else:
        folder = args.out or Path(tempfile.mkdtemp(prefix="real-questions-"))
        opts = list(args.build_opt)
        if args.max_tokens:
            opts += ["--max-tokens", str(args.max_tokens)]
        if args.fts5_stemming:
            opts.append("--fts5-stemming")
        build(args.source, folder, opts, keep_twin=args.keep_twin)
    _log(f"stores: {folder}")
    config = folder / "stores.json"
    stores = {
        "fused": ["--stores-config", str(config)],
        "vector": ["--store", f"{COLLECTION}=chroma:{folder / 'chroma'}"],
        "bm25-pickle": ["--bm25-store", str(folder / "bm25.pkl")],
        "bm25-fts5": ["--bm25-store", f"fts5:{folder / 'fts5.sqlite'}"],
    }
    wanted = [s.strip() for s in args.systems.split(",") if s.strip()]
    results: list[SystemResult] = []
    scietl: SciEtl | None = None
    work = Path(tempfile.mkdtemp(prefix="real-questions-work-"))
    try:
        for name in wanted:
            if name in stores:
                ask = klea_asker(stores[name], args.retrieve_opt, use_subprocess=args.subprocess)
            elif name in ("sci-etl-lexical", "sci-etl-hybrid"):
                scietl = scietl or SciEtl(folder, work)
                ask = scietl.asker(name.removeprefix("sci-etl-"))
            else:
                raise SystemExit(f"unknown system {name!r}")
            results.append(evaluate(name, ask, questions, args.k, args.deep_k))
    finally:
        if scietl is not None:
            scietl.close()
        shutil.rmtree(work, ignore_errors=True)
    print(report(results, questions, args.deep_k))
    if args.json:
        figures = {
            "stores": str(folder),
            "questions": str(args.questions),
            "k": args.k,
            "deep_k": args.deep_k,
            "retrieve_opts": args.retrieve_opt,
            "systems": {
                r.name: {
                    **{f"answer@{d}": r.at(d) for d in DEPTHS},
                    "total": len(questions),
                    "ranks": r.ranks,
                    "deep_ranks": r.deep_ranks,
                    "seconds": round(r.seconds, 1),
                }
                for r in results
            },
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
