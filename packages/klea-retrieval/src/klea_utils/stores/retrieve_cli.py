"""``klea-retrieve``: run every configured store for a query, fuse, re-rank and print.

Usage::

    klea-retrieve [--stores-config FILE | --store COLLECTION=URI ... --bm25-store PATH ...]
                  [--domain D] [--filter JSON] [-k N] [--rerank MODEL]
                  [--embedding-model SPEC] [--max-chars N] [--json]
                  [--context off|neighbours|section] [--context-tokens N]
                  [--votes auto|legs|stores] QUERY

With neither ``--stores-config`` nor stores, the file named by ``KLEA_STORES_CONFIG_FILE``
is used. Every local store path is checked before anything is loaded.

For each selected domain (every domain by default) the vector stores and the BM25 stores
are queried with ``k`` each, the stores' ranked lists are fused by Reciprocal Rank Fusion
(``--votes``: one vote per leg, the lexical stores' lists fused among themselves first,
when the embedding model is multilingual; one vote per store's list otherwise; and by
default no vote for the vector stores when the packaged English MiniLM is asked a
question written mostly in another script than Latin), the
result is optionally re-ranked by a cross-encoder, re-ranked by recency, each hit
optionally widened with its neighbouring chunks of the same section (``--context``, up to
``--context-tokens``), truncated to ``--max-chars`` and printed as the serialized
reference material (or as JSON).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Annotated, Any

import typer
from klea_utils.stores._retrieval.cli_options import (
    Bm25Stores,
    Context,
    ContextTokens,
    Domains,
    Quiet,
    Rerank,
    StoreUris,
    Verbose,
    Version,
    check_context,
    log_level,
    run_app,
)
from klea_utils.stores._retrieval.json_limits import JsonTooDeepError, loads_bounded

if TYPE_CHECKING:
    from langchain_core.documents import Document

__all__ = ["app", "main", "run"]

DEFAULT_MAX_CHARS = 20_000
"""Default character budget of the printed reference material."""

DEFAULT_EMBEDDING_MODEL = "huggingface:all-MiniLM-L6-v2"
"""``klea_utils.stores.embedding_models.DEFAULT_EMBEDDING_MODEL``, spelled out so that
``--help`` imports nothing heavy (a test keeps the two equal)."""

DEFAULT_CONTEXT_TOKENS = 768
"""``klea_utils.stores._retrieval.context.DEFAULT_CONTEXT_TOKENS`` (kept equal by a test)."""

VOTES = ("auto", "legs", "stores")
"""``klea_utils.stores._retrieval.fusion.VOTES``, the values of ``--votes`` (kept equal by a
test)."""

STORES_CONFIG_ENV_VAR = "KLEA_STORES_CONFIG_FILE"
"""``klea_utils.stores.utils.STORES_CONFIG_ENV_VAR`` (a test keeps the two equal)."""

_HELP = f"""Query stores for QUERY: every store runs, the rankings are fused (RRF), optionally \
re-ranked, and the references an LLM would read are printed.

Stores: --stores-config FILE, or --store COLLECTION=URI and --bm25-store PATH (both \
repeatable), or the file named by ${STORES_CONFIG_ENV_VAR}. Every local store path is checked \
before anything loads.

Exit status: 0 ok; 1 the retrieval failed (a store or model could not be used); 2 usage \
error (a bad option, filter, domain or store path).
"""

app = typer.Typer(
    name="klea-retrieve",
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _filter(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = loads_bounded(text)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"not valid JSON: {exc}", param_hint="'--filter'") from None
    except JsonTooDeepError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--filter'") from None
    if not isinstance(value, dict):
        raise typer.BadParameter("must be a JSON object", param_hint="'--filter'")
    return value


def _configure_logging(verbose: int, quiet: bool) -> logging.Logger:
    level = log_level(verbose, quiet)
    logging.basicConfig(level=level, format="%(levelname)s %(message)s", force=True)
    for name in ("httpx", "chromadb", "sentence_transformers", "transformers", "urllib3"):
        logging.getLogger(name).setLevel(max(level, logging.WARNING))
    return logging.getLogger("klea-retrieve")


@app.command(help=_HELP)
def retrieve(
    query: Annotated[str, typer.Argument(help="The question.", show_default=False)],
    stores_config: Annotated[
        Path | None,
        typer.Option(
            "--stores-config",
            metavar="FILE",
            help="Stores configuration JSON (relative store paths resolve against its folder).",
        ),
    ] = None,
    store: StoreUris = None,
    bm25_store: Bm25Stores = None,
    domain: Domains = None,
    filter_text: Annotated[
        str | None,
        typer.Option("--filter", metavar="JSON", help='Metadata filter, e.g. {"year": 2021}.'),
    ] = None,
    references_of: Annotated[
        str | None,
        typer.Option(
            "--references-of",
            metavar="FILE",
            help="Search only the papers FILE cites (those the library holds).",
        ),
    ] = None,
    citing: Annotated[
        str | None,
        typer.Option(
            "--citing", metavar="FILE", help="Search only the library's papers that cite FILE."
        ),
    ] = None,
    top_k: Annotated[int, typer.Option("-k", "--top-k", min=1, help="Results per store.")] = 5,
    rerank: Rerank = None,
    embedding_model: Annotated[
        str | None,
        typer.Option(
            "--embedding-model",
            help="Embedding model, provider:model (default: the one the stores configuration "
            f"names, else {DEFAULT_EMBEDDING_MODEL}).",
        ),
    ] = None,
    max_chars: Annotated[
        int, typer.Option("--max-chars", min=1, help="Character budget of the output.")
    ] = DEFAULT_MAX_CHARS,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
    context: Context = None,
    context_tokens: ContextTokens = None,
    votes: Annotated[
        str,
        typer.Option(
            "--votes",
            metavar="auto|legs|stores",
            help="How the fusion counts the stores' ranked lists: one vote per leg, vector "
            "and lexical (legs: a BM25 pickle and an fts5: index of the same chunks are "
            "fused first), or one per store (stores); auto: legs when the embedding model "
            "is multilingual, else stores, and no vote for the vector stores when the "
            "packaged English MiniLM is asked a question mostly in another script than Latin.",
        ),
    ] = "auto",
    verbose: Verbose = 0,
    quiet: Quiet = False,
    old_stores: Annotated[Path | None, typer.Option("--stores", hidden=True)] = None,
    old_k: Annotated[int | None, typer.Option("--k", min=1, hidden=True)] = None,
    old_model: Annotated[str | None, typer.Option("--model", hidden=True)] = None,
    version: Version = False,
) -> None:
    logger = _configure_logging(verbose, quiet)
    check_context(context)
    if votes not in VOTES:
        typer.echo(
            f"klea-retrieve: error: --votes must be one of {', '.join(VOTES)}, got {votes!r}",
            err=True,
        )
        raise typer.Exit(2)
    if rerank is not None and not rerank.strip():
        typer.echo(
            "klea-retrieve: error: --rerank needs a cross-encoder model name or folder, "
            "got an empty value",
            err=True,
        )
        raise typer.Exit(2)
    args = SimpleNamespace(
        query=query,
        stores_config=stores_config or old_stores,
        store=store or [],
        bm25_store=bm25_store or [],
        domain=domain or None,
        filter=_filter(filter_text),
        references_of=references_of,
        citing=citing,
        k=old_k or top_k,
        rerank=rerank,
        embedding_model=old_model or embedding_model,
        max_chars=max_chars,
        json=as_json,
        context=context,
        context_tokens=DEFAULT_CONTEXT_TOKENS if context_tokens is None else context_tokens,
        votes=votes,
    )
    from klea_utils.stores.exceptions import (
        KleaStoresError,
        MetadataFilterError,
        StoreConfigError,
    )
    from klea_utils.stores.store_args import StoreArgsError

    try:
        text = run(args, logger)
    except (StoreArgsError, StoreConfigError, MetadataFilterError, FileNotFoundError) as exc:
        typer.echo(f"klea-retrieve: error: {exc}", err=True)
        raise typer.Exit(2) from None
    except (KleaStoresError, OSError) as exc:
        typer.echo(f"klea-retrieve: error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(text)


def _shown(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata as shown: person-name fields without their expanded filter variants, and
    ``regions`` as a list whichever way the store kept it."""
    from klea_utils.stores._retrieval.regions import REGIONS_KEY, regions_of
    from klea_utils.stores.metadata import PERSON_NAME_FILTER_FIELDS
    from klea_utils.stores.utils import display_person_names

    return {
        key: display_person_names(value)
        if key in PERSON_NAME_FILTER_FIELDS and isinstance(value, list)
        else regions_of(metadata)
        if key == REGIONS_KEY
        else value
        for key, value in metadata.items()
    }


def _as_json(material: dict[str, list[tuple[Document, float]]]) -> str:
    out = {
        domain: [
            {
                "id": doc.id,
                "score": score,
                "page_content": doc.page_content,
                "metadata": _shown(doc.metadata),
            }
            for doc, score in docs
        ]
        for domain, docs in material.items()
    }
    return json.dumps(out, indent=2, ensure_ascii=False, default=str)


def _filter_keys(tree: Any) -> set[str]:
    """The metadata keys a filter names (every dict key not starting with ``$``)."""
    if isinstance(tree, dict):
        keys = {k for k in tree if isinstance(k, str) and not k.startswith("$")}
        return keys.union(*(_filter_keys(v) for v in tree.values()))
    if isinstance(tree, list):
        return set().union(*(_filter_keys(v) for v in tree))
    return set()


def _explain_no_results(
    metadata_filter: dict[str, Any], unfiltered: dict[str, Any], logger: logging.Logger
) -> None:
    """Say that the filter left nothing, naming keys the stores' documents do not hold."""
    held = {key for r in unfiltered.values() for doc, _ in r.hits for key in doc.metadata}
    if not held:
        return
    unknown = sorted(_filter_keys(metadata_filter) - held)
    if unknown:
        logger.warning(
            "no results: the filter names %s, which the stored documents do not hold; "
            "their keys are %s",
            ", ".join(repr(k) for k in unknown),
            ", ".join(sorted(k for k in held if not k.startswith("_"))),
        )
    else:
        logger.warning("no results: no document matching the query passes the filter")


def run(args: Any, logger: logging.Logger) -> str:
    """Run the retrieval pipeline for parsed ``args`` and return the text to print.

    Every store is opened before the query runs, so a wrong path or model fails here;
    a leg that fails at query time is reported on the logger and left out.
    """
    from klea_utils.stores._retrieval.citation_scope import scoped_filter
    from klea_utils.stores.config import query_embedding_model
    from klea_utils.stores.store_args import retriever_config_from_args

    config = retriever_config_from_args(
        args.stores_config, args.store, args.bm25_store, domains=args.domain
    )
    from klea_utils.stores.pipeline import KleaPipeline
    from klea_utils.stores.utils import (
        serialize_reference_material,
        truncate_reference_material,
    )

    domains = args.domain or list(config.domains)
    scope = _citation_scope(config, args)
    if scope is not None:
        if not scope:
            logger.warning("no results: the library holds no paper in that citation scope")
            return _as_json({}) if args.json else ""
        args.filter = scoped_filter(args.filter, scope)
    pipeline = KleaPipeline(
        config,
        embedding_model=query_embedding_model(config, args.embedding_model),
        k=args.k,
        rerank=args.rerank,
        logger=logger,
        context=getattr(args, "context", None),
        context_tokens=getattr(args, "context_tokens", DEFAULT_CONTEXT_TOKENS),
        votes=getattr(args, "votes", "auto"),
    )
    try:
        for domain in domains:
            if domain in config.domains:
                pipeline.load([domain])
        results = pipeline.retrieve_all(args.query, domains=domains, metadata_filter=args.filter)
        if args.filter and not any(r.hits for r in results.values()):
            unfiltered = pipeline.retrieve_all(args.query, domains=domains)
            _explain_no_results(args.filter, unfiltered, logger)
    finally:
        pipeline.close()
    material = {domain: result.hits for domain, result in results.items()}
    for result in results.values():
        for note in result.notes:
            logger.warning("domain %r: %s", result.domain, note)
    material = truncate_reference_material(material, args.max_chars)
    return _as_json(material) if args.json else serialize_reference_material(material)


def _citation_scope(config: Any, args: Any) -> list[str] | None:
    """The papers ``--references-of`` / ``--citing`` allow, or ``None`` without either."""
    from klea_utils.stores._retrieval.citation_scope import citation_scope
    from klea_utils.stores.exceptions import StoreConfigError

    references_of: str | None = getattr(args, "references_of", None)
    citing: str | None = getattr(args, "citing", None)
    if references_of and citing:
        raise StoreConfigError("give --references-of or --citing, not both")
    if references_of:
        return citation_scope(config, references_of, "references-of")
    if citing:
        return citation_scope(config, citing, "citing")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; returns the exit status (0 ok, 1 failed, 2 usage error)."""
    return run_app(app, argv, "klea-retrieve")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
