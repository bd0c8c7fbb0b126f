"""``klea-retrieve``: run every configured store for a query, fuse, re-rank and print.

Usage::

    klea-retrieve [--stores-config FILE | --store COLLECTION=URI ... --bm25-store PATH ...]
                  [--domain D] [--filter JSON] [-k N] [--rerank MODEL]
                  [--embedding-model SPEC] [--max-chars N] [--json] QUERY

With neither ``--stores-config`` nor stores, the file named by ``KLEA_STORES_CONFIG_FILE``
is used. Every local store path is checked before anything is loaded.

For each selected domain (every domain by default) the vector stores and the BM25 stores
are queried with ``k`` each, every store's ranked list is fused with ``rrf_merge``, the
result is optionally re-ranked by a cross-encoder, re-ranked by recency, truncated to
``--max-chars`` and printed as the serialized reference material (or as JSON).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from typing import Any

from klea_utils.stores._retrieval.config_files import STORES_CONFIG_ENV_VAR
from klea_utils.stores._retrieval.store_args import retriever_config_from_args
from klea_utils.stores.embedding_models import DEFAULT_EMBEDDING_MODEL
from klea_utils.stores.exceptions import KleaStoresError
from langchain_core.documents import Document

__all__ = ["build_parser", "main", "run"]

DEFAULT_MAX_CHARS = 20_000
"""Default character budget of the printed reference material."""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def _filter(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"--filter is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("--filter must be a JSON object")
    return value


def build_parser() -> argparse.ArgumentParser:
    """Return the ``klea-retrieve`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="klea-retrieve", description="Query the configured stores and print references."
    )
    parser.add_argument(
        "--stores-config",
        "--stores",
        dest="stores_config",
        metavar="FILE",
        help="stores configuration JSON file (relative store paths resolve against its "
        f"folder; default: ${STORES_CONFIG_ENV_VAR})",
    )
    parser.add_argument(
        "--store",
        action="append",
        default=[],
        metavar="COLLECTION=URI",
        help="a vector store, e.g. papers=chroma:stores/chroma (repeatable)",
    )
    parser.add_argument(
        "--bm25-store",
        action="append",
        default=[],
        metavar="PATH",
        help="a BM25 corpus file or fts5:INDEX.sqlite (repeatable)",
    )
    parser.add_argument("--domain", action="append", help="domain to search (repeatable)")
    parser.add_argument("--filter", type=_filter, help='metadata filter, e.g. {"year": 2021}')
    parser.add_argument(
        "-k", "--top-k", "--k", dest="k", type=_positive_int, default=5, help="results per store"
    )
    parser.add_argument("--rerank", metavar="MODEL", help="cross-encoder model to re-rank with")
    parser.add_argument(
        "--embedding-model", default=DEFAULT_EMBEDDING_MODEL, help="provider:model spec"
    )
    parser.add_argument("--max-chars", type=_positive_int, default=DEFAULT_MAX_CHARS)
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("query", help="the query text")
    return parser


def _as_json(material: dict[str, list[tuple[Document, float]]]) -> str:
    out = {
        domain: [
            {
                "id": doc.id,
                "score": score,
                "page_content": doc.page_content,
                "metadata": doc.metadata,
            }
            for doc, score in docs
        ]
        for domain, docs in material.items()
    }
    return json.dumps(out, indent=2, ensure_ascii=False, default=str)


def run(args: argparse.Namespace, logger: logging.Logger) -> str:
    """Run the retrieval pipeline for parsed ``args`` and return the text to print.

    Every store is opened before the query runs, so a wrong path or model fails here;
    a leg that fails at query time is reported on the logger and left out.
    """
    config = retriever_config_from_args(
        args.stores_config, args.store, args.bm25_store, domains=args.domain
    )
    from klea_utils.stores.pipeline import KleaPipeline
    from klea_utils.stores.utils import (
        serialize_reference_material,
        truncate_reference_material,
    )

    domains = args.domain or list(config.domains)
    pipeline = KleaPipeline(
        config, embedding_model=args.embedding_model, k=args.k, rerank=args.rerank, logger=logger
    )
    try:
        for domain in domains:
            if domain in config.domains:
                pipeline.load([domain])
        results = pipeline.retrieve_all(args.query, domains=domains, metadata_filter=args.filter)
    finally:
        pipeline.close()
    material = {domain: result.hits for domain, result in results.items()}
    for result in results.values():
        for note in result.notes:
            logger.warning("domain %r: %s", result.domain, note)
    material = truncate_reference_material(material, args.max_chars)
    return _as_json(material) if args.json else serialize_reference_material(material)


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; returns the exit status (2 for bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    logger = logging.getLogger("klea-retrieve")
    try:
        text = run(args, logger)
    except (KleaStoresError, OSError) as exc:
        print(f"klea-retrieve: error: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
