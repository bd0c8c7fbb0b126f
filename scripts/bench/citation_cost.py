"""What the citation and metadata steps add to a build's conversion time (issue 38).

Usage::

    uv run --frozen python scripts/bench/citation_cost.py [--folder DIR] [--only NAME ...]

For each PDF of the folder (default: ``realpapers-dev``) it runs what a build runs per
file, in the same process and run, timing each part apart (wall and CPU, this process plus
the tesseract children it waited for):

- **conversion**: the model-free PDF path with OCR on, and the chunker a build uses by
  default (the packaged MiniLM's tokenizer and budget) — the build without the work;
- **metadata**: :func:`klea_utils.stores.biblio.extract_metadata` (DOI look-ups off), given
  the first pages' lines the conversion read, as a build does; timed again apart as
  **reread**, without them (the step reads them from the file again: the code before
  issue 38's fourth round), and the two results compared;
- **citations**: the build's citation step over the file's chunks (its text put back
  together, references and callouts parsed, the paper added to the collection's library
  and linked), as :func:`...citations.build_links.collection_library` does after the store.

It prints each file's figures and the growth: (metadata + citations) / conversion, the
share a build grows by with the work against without it.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import argparse  # noqa: E402
import logging  # noqa: E402
import resource  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _dev_folder() -> Path:
    for parent in ROOT.parents:
        if (parent / "shared/data/realpapers-dev/pdf").is_dir():
            return parent / "shared/data/realpapers-dev/pdf"
    return ROOT / "shared/data/realpapers-dev/pdf"


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class _Clock:
    """Wall and CPU seconds of one block, added to ``totals[name]``."""

    def __init__(self, totals: dict[str, list[float]], name: str) -> None:
        self.totals, self.name = totals, name

    def __enter__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), _cpu()

    def __exit__(self, *_: object) -> None:
        spent = self.totals.setdefault(self.name, [0.0, 0.0])
        spent[0] += time.perf_counter() - self.wall
        spent[1] += _cpu() - self.cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=_dev_folder())
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    os.environ["KLEA_DOI_LOOKUP"] = "0"
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    logging.basicConfig(level=logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning)
    from klea_utils.stores._ingest.chunking.chunking import MINILM_MAX_TOKENS, Chunker
    from klea_utils.stores._ingest.citations.build_links import (
        identity_from_chunks,
        paper_text,
    )
    from klea_utils.stores._ingest.citations.library_links import CitationLibrary
    from klea_utils.stores._ingest.citations.paper_citations import parse_citations
    from klea_utils.stores._ingest.convert.conversion import Converter
    from klea_utils.stores.biblio import extract_metadata
    from klea_utils.stores.packaged_minilm import packaged_minilm_path

    log = logging.getLogger("bench")
    converter = Converter(do_ocr=True, logger=log)
    chunker = Chunker(
        max_tokens=MINILM_MAX_TOKENS,
        merge_peers=True,
        tokenizer_model=str(packaged_minilm_path()),
        logger=log,
    )
    files = sorted(p for p in args.folder.glob("*.pdf") if not args.only or p.name in args.only)
    library = CitationLibrary()
    grand: dict[str, list[float]] = {}
    differ = 0
    print(f"{'file':<48} {'convert CPU':>11} {'meta CPU':>9} {'cite CPU':>9} {'growth':>7}")
    with tempfile.TemporaryDirectory() as cache:
        for path in files:
            spent: dict[str, list[float]] = {}
            with _Clock(spent, "conversion"):
                document = converter.convert(path)
                chunks = chunker.chunk(document, file_name=path.name, file_hash=path.name)
            head = getattr(converter.last_readout, "head_lines", None)
            with _Clock(spent, "metadata"):
                meta = extract_metadata(path, document, cache_dir=Path(cache), head_lines=head)
            with _Clock(spent, "reread"):  # the step before issue 38's fourth round
                again = extract_metadata(path, document, cache_dir=Path(cache))
            differ += again != meta
            for chunk in chunks:
                chunk.metadata.update({k: v for k, v in meta.items() if not k.startswith("_")})
            with _Clock(spent, "citations"):
                library.add(
                    identity_from_chunks(path.name, chunks), parse_citations(paper_text(chunks))
                )
            for name, (wall, cpu) in spent.items():
                total = grand.setdefault(name, [0.0, 0.0])
                total[0] += wall
                total[1] += cpu
            work = spent["metadata"][1] + spent["citations"][1]
            print(
                f"{path.name[:48]:<48} {spent['conversion'][1]:>11.2f} "
                f"{spent['metadata'][1]:>9.3f} {spent['citations'][1]:>9.3f} "
                f"{work / max(spent['conversion'][1], 1e-9):>7.2%}"
            )
    print()
    for name, (wall, cpu) in grand.items():
        print(f"{name:<11} wall {wall:8.2f} s   CPU {cpu:8.2f} s")
    meta, reread = grand["metadata"], grand["reread"]
    print(
        f"metadata with the conversion's page lines / reading them again: wall "
        f"{meta[0] / max(reread[0], 1e-9):.2f}x, CPU {meta[1] / max(reread[1], 1e-9):.2f}x; "
        f"{differ} file(s) with different metadata"
    )
    base = grand["conversion"]
    for label, index in (("wall", 0), ("CPU", 1)):
        work = grand["metadata"][index] + grand["citations"][index]
        print(
            f"growth ({label}): {work:.2f} s of work over {base[index]:.2f} s of conversion "
            f"= {work / max(base[index], 1e-9):.2%}"
        )


if __name__ == "__main__":
    main()
