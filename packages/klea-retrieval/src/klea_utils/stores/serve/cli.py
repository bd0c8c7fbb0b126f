"""``klea-serve``: load the stores once, then answer agents over MCP and people over HTTP.

Usage::

    klea-serve [--stores-config FILE | --store COLLECTION=URI ... --bm25-store PATH ...]
               [--fts5-index INDEX.sqlite [--vectors VECTORS.sqlite]]
               [--embedding-model SPEC] [--rerank MODEL] [-k N]
               [--mcp | --host 127.0.0.1 --port 8765]

``--mcp`` speaks MCP over stdio (for an agent that starts the server itself); otherwise
an HTTP server answers the JSON API under ``/api``, the search page at ``/`` and MCP's
streamable HTTP transport at ``/mcp``. Progress lines go to stderr. Exit status, as for
the other command lines: 0 on a clean stop; 1 when the work fails (a store, index or model
cannot load, a missing extra), with one ``klea-serve: error:`` line on stderr; 2 for bad
arguments (argparse's usage message, or one line for a stores configuration or store
argument that is wrong).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from klea_utils.stores.config import RetrieverConfig

__all__ = ["build_parser", "default_fts5_index", "main"]

DEFAULT_PORT = 8765
# Literal here so that --help imports nothing heavy; a test keeps it equal to the constant.
_STORES_ENV = "KLEA_STORES_CONFIG_FILE"


def _positive_int(text: str) -> int:
    value = int(text) if text.strip().lstrip("-").isdigit() else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """Return the ``klea-serve`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="klea-serve",
        description="Serve the stores to agents (MCP) and people (a search page), loaded once.",
    )
    stores = parser.add_argument_group("stores (as for klea-retrieve)")
    stores.add_argument(
        "--stores-config",
        "--stores",
        dest="stores_config",
        metavar="FILE",
        help=f"stores configuration JSON file (default: ${_STORES_ENV})",
    )
    stores.add_argument("--store", action="append", default=[], metavar="COLLECTION=URI")
    stores.add_argument("--bm25-store", action="append", default=[], metavar="PATH")
    stores.add_argument("--domain", action="append", help="serve only this domain (repeatable)")
    search = parser.add_argument_group("search")
    search.add_argument(
        "--fts5-index",
        type=Path,
        metavar="INDEX",
        help="FTS5 index for Boolean search (default: the first fts5: BM25 store)",
    )
    search.add_argument(
        "--vectors", type=Path, metavar="SQLITE", help="sci-etl vector memory for hybrid search"
    )
    models = parser.add_argument_group("models")
    models.add_argument(
        "--embedding-model",
        metavar="SPEC",
        help="provider:model spec (default: the packaged all-MiniLM-L6-v2)",
    )
    models.add_argument("--rerank", metavar="MODEL", help="cross-encoder to re-rank with")
    models.add_argument("-k", "--top-k", dest="k", type=_positive_int, default=5)
    models.add_argument(
        "--leg-timeout",
        type=float,
        default=20.0,
        metavar="SECONDS",
        help="leave a store leg that has not answered after this long out of the answer "
        "(default 20)",
    )
    serving = parser.add_argument_group("serving")
    serving.add_argument("--mcp", action="store_true", help="speak MCP over stdio")
    serving.add_argument("--host", default="127.0.0.1")
    serving.add_argument("--port", type=int, default=DEFAULT_PORT)
    serving.add_argument("-v", "--verbose", action="store_true", help="log at INFO")
    return parser


def default_fts5_index(config: RetrieverConfig) -> Path | None:
    """The first ``fts5:`` BM25 store of ``config``, the default search index."""
    from klea_utils.stores.retrieval.bm25 import FTS5_SCHEME

    for domain in config.domains.values():
        for store in domain.bm25_stores:
            if store.path.startswith(FTS5_SCHEME):
                return Path(store.path[len(FTS5_SCHEME) :])
    return None


def _error(message: object, status: int) -> int:
    """Print one ``klea-serve: error:`` line on stderr and return ``status``."""
    text = " ".join(str(message).split()) or type(message).__name__
    print(f"klea-serve: error: {text}", file=sys.stderr, flush=True)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    for name in ("httpx", "chromadb", "sentence_transformers", "mcp", "uvicorn.access"):
        logging.getLogger(name).setLevel(logging.WARNING)
    if args.rerank is not None and not args.rerank.strip():
        return _error("--rerank needs a cross-encoder model name or folder, got an empty value", 2)
    from klea_utils.stores._retrieval.extras import import_extra
    from klea_utils.stores._retrieval.store_args import retriever_config_from_args
    from klea_utils.stores.embedding_models import DEFAULT_EMBEDDING_MODEL
    from klea_utils.stores.exceptions import KleaStoresError, MetadataFilterError, StoreConfigError

    try:
        import_extra("mcp", feature="klea-serve", extra="serve")
        import_extra("fastapi", feature="klea-serve", extra="serve")
        config = retriever_config_from_args(
            args.stores_config, args.store, args.bm25_store, domains=args.domain
        )
    except (StoreConfigError, MetadataFilterError, FileNotFoundError) as exc:
        return _error(exc, 2)  # the stores were given wrongly (StoreArgsError included)
    except (KleaStoresError, OSError) as exc:
        return _error(exc, 1)  # a missing extra, a store that cannot be read
    from klea_utils.stores.serve.service import ServeOptions, open_service
    from sci_etl_core.exceptions import SciEtlError

    options = ServeOptions(
        config=config,
        embedding_model=args.embedding_model or DEFAULT_EMBEDDING_MODEL,
        rerank=args.rerank,
        k=args.k,
        fts5_index=args.fts5_index or default_fts5_index(config),
        vectors=args.vectors,
        leg_timeout=args.leg_timeout if args.leg_timeout > 0 else None,
    )
    try:
        # stdout is the MCP channel under --mcp: nothing loading prints may land there.
        with contextlib.redirect_stdout(sys.stderr):
            service = open_service(options)
    except (StoreConfigError, MetadataFilterError) as exc:
        return _error(exc, 2)
    except (KleaStoresError, SciEtlError, OSError) as exc:
        return _error(exc, 1)  # a store, index or model that cannot load
    if args.mcp:
        from klea_utils.stores.serve.mcp_tools import build_mcp_server

        print("klea-serve: MCP on stdio", file=sys.stderr, flush=True)
        build_mcp_server(service).run("stdio")
        return 0
    import uvicorn
    from klea_utils.stores.serve.http_app import build_app

    app = build_app(service, host=args.host, port=args.port)
    print(
        f"klea-serve: http://{args.host}:{args.port}/ (API docs /api/docs, MCP /mcp)",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
