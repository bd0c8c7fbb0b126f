"""Metadata filter translation for store backends.

Filters use a small backend-agnostic DSL (see :func:`validate_metadata_filter`). The
in-memory matcher :func:`filter_docs_by_metadata` defines its meaning; every backend
translation agrees with it on well-typed filters, except for the documented
approximations that :func:`translation_is_exact` reports (PGVector ``$contains``, Chroma
``$ne``/``$nin`` on strings). Both approximations only ever match more documents, so
post-filtering a backend's results with :func:`filter_docs_by_metadata` makes them exact.
Malformed filters raise :class:`~klea_utils.stores.exceptions.MetadataFilterError` (a
``ValueError``) naming the clause at fault.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from klea_utils.stores._retrieval import filter_backends as backends
from klea_utils.stores._retrieval.filter_dsl import (
    FIELD_OPERATORS,
    LOGICAL_OPERATORS,
    canonicalize,
    is_number,
    referenced_fields,
)
from klea_utils.stores._retrieval.filter_match import matches
from klea_utils.stores.config import FilterFieldInfo
from klea_utils.stores.exceptions import MetadataFilterError
from klea_utils.stores.store_uri import StoreURI
from langchain_core.documents import Document

__all__ = [
    "FIELD_OPERATORS",
    "LOGICAL_OPERATORS",
    "QDRANT_METADATA_PAYLOAD_KEY",
    "filter_docs_by_metadata",
    "normalize_config_filters",
    "qdrant_payload_filter",
    "restrict_metadata_filter",
    "to_chroma_filter",
    "to_pgvector_filter",
    "to_qdrant_filter",
    "translate_metadata_filter",
    "translation_is_exact",
    "validate_metadata_filter",
]

_logger = logging.getLogger(__name__)

QDRANT_METADATA_PAYLOAD_KEY = "metadata"
"""Payload key under which ``langchain_qdrant.QdrantVectorStore`` stores document metadata."""


def validate_metadata_filter(f: dict[str, Any]) -> dict[str, Any]:
    """Validate a filter and normalize it to the canonical form.

    Filters map a metadata field name to either a bare value (implicit ``$eq``) or an
    operator expression ``{op: value}``, combined with the ``$and``/``$or`` combinators.
    Supported operators are ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``,
    ``$in``, ``$nin`` and ``$contains`` (the last matches a list-valued field, e.g.
    ``authors``, that contains the value).

    The canonical form is the one every backend translator accepts:

    - every field value is an operator expression with exactly one operator (bare values
      are wrapped as ``{"$eq": value}``)
    - several constraints (multiple top-level fields, or several operators on one field)
      are combined with ``$and``
    - the top level has exactly one key (a field, ``$and`` or ``$or``)

    Nested combinators of the same kind are flattened and a one-operand combinator
    collapses to its operand. Operands are checked: ``$eq``/``$ne`` take a string, number
    or boolean; ranges take a number; ``$in``/``$nin`` a non-empty list of strings or of
    numbers; ``$contains`` a string or number. Non-finite numbers are rejected.

    Example::

        validate_metadata_filter({"year": {"$gte": 2020, "$lte": 2025}})
        -> {"$and": [{"year": {"$gte": 2020}}, {"year": {"$lte": 2025}}]}

    Args:
        f: Metadata filter in the DSL described above.

    Returns:
        Canonical normalized filter (a new dict; the input is not modified).

    Raises:
        MetadataFilterError: A ``ValueError`` naming the clause at fault, when the filter
            is not well-formed (empty, unknown operator, malformed operand).
    """
    return canonicalize(f)


def filter_docs_by_metadata(docs: list[Document], f: dict[str, Any]) -> list[Document]:
    """Return the subset of ``docs`` whose metadata matches the filter.

    Python-side matcher for backends without native filter support: the BM25 store
    post-filters its results through this. Documents without the filter's metadata field
    never match (under ``$ne`` and ``$nin`` too). Comparisons only hold between values of
    the same kind (numbers, strings, booleans); ``$contains`` treats a scalar value as a
    one-element list.

    Example::

        docs = [Document(page_content="a", metadata={"authors": ["Magee"]}),
                Document(page_content="b", metadata={"authors": ["Jones"]})]
        filter_docs_by_metadata(docs, {"authors": {"$contains": "Magee"}})
        -> [Document(page_content="a", ...)]

    Args:
        docs: Documents to filter, each carrying metadata.
        f: Metadata filter in the DSL (see :func:`validate_metadata_filter`).

    Returns:
        Documents whose metadata satisfies the filter, in their input order.

    Raises:
        MetadataFilterError: When the filter is not well-formed.
    """
    canonical = canonicalize(f)
    return [doc for doc in docs if matches(canonical, doc.metadata)]


def to_chroma_filter(f: dict[str, Any]) -> dict[str, Any]:
    """Translate a filter to a Chroma ``where`` dict.

    The canonical normalized form is Chroma's native ``where`` syntax (single-operator
    field clauses, ``$and``/``$or`` combinators, and the ``$contains`` array-membership
    operator), so this validates the filter and returns the normalized form unchanged.

    Chroma itself departs from :func:`filter_docs_by_metadata` on some numeric clauses
    (its ``$ne``/``$nin`` match documents without the field; it truncates a fractional
    operand compared with an int value). :func:`translate_metadata_filter`, which the
    retrievers use, adds the rewrites that compensate; use it to query a live store.

    Example::

        to_chroma_filter({"authors": {"$contains": "Magee"}})
        -> {"authors": {"$contains": "Magee"}}

    Args:
        f: Metadata filter in the DSL (see :func:`validate_metadata_filter`).

    Returns:
        Chroma ``where`` dict, passable as ``filter=`` to a ``langchain_chroma`` store's
        similarity search.

    Raises:
        MetadataFilterError: When the filter is not well-formed.
    """
    return canonicalize(f)


def to_pgvector_filter(f: dict[str, Any]) -> dict[str, Any]:
    """Translate a filter to a ``langchain_postgres`` filter dict.

    ``langchain_postgres`` accepts the canonical normalized form directly. The one gap is
    ``$contains``: the backend has no array containment operator for metadata fields, so
    it is approximated with ``$like`` over the serialized JSON text of the value (a
    substring match against e.g. ``["Magee", "Smith"]``). It can match more documents
    than the exact operator (``"Mage"`` matches ``"Magee"``), never fewer. This is a
    documented approximation for the Postgres backend only. LIKE metacharacters in the
    operand are escaped; every other clause is the normalized form unchanged.

    :func:`translate_metadata_filter`, which the retrievers use, also sends numeric
    ``$in``/``$nin`` as ``$or``/``$and`` of ``$eq``/``$ne`` (``langchain_postgres``
    compares ``$in`` lists as text), and the store ``instantiate_vector_store`` opens
    accepts any field name (``has-hyphen`` included), which plain ``langchain_postgres``
    refuses.

    Example::

        to_pgvector_filter({"authors": {"$contains": "Magee"}})
        -> {"authors": {"$like": "%Magee%"}}

    Args:
        f: Metadata filter in the DSL (see :func:`validate_metadata_filter`).

    Returns:
        ``langchain_postgres`` filter dict, passable as ``filter=`` to a
        ``langchain_postgres`` store's similarity search.

    Raises:
        MetadataFilterError: When the filter is not well-formed.
    """
    return backends.pgvector_like(canonicalize(f))


def to_qdrant_filter(f: dict[str, Any], *, key_prefix: str = "") -> Any:
    """Translate a filter to a Qdrant ``models.Filter`` object.

    Scalar equality and ``$contains`` become ``MatchValue`` (an array element match),
    ``$in``/``$nin`` become ``MatchAny``/``MatchExcept``, ``$ne`` becomes a one-value
    ``MatchExcept`` (which, unlike ``must_not``, never matches a point without the field),
    and range operators become a ``Range`` condition. Qdrant's ``MatchValue`` takes no
    floats, so equality with a float is a closed ``Range``. Compound clauses are grouped
    as nested ``Filter`` objects. Needs the ``qdrant`` extra.

    Example::

        to_qdrant_filter({"year": {"$gte": 2020, "$lte": 2025}})
        -> Filter(must=[Filter(must=[FieldCondition(key='year',
                                                    range=Range(gte=2020.0))]),
                        Filter(must=[FieldCondition(key='year',
                                                    range=Range(lte=2025.0))])])

    Args:
        f: Metadata filter in the DSL (see :func:`validate_metadata_filter`).
        key_prefix: Prepended to every payload key. ``langchain_qdrant`` stores metadata
            under the ``metadata`` payload key, so a store needs ``"metadata."``; see
            :func:`qdrant_payload_filter`.

    Returns:
        Qdrant ``models.Filter`` object.

    Raises:
        MetadataFilterError: When the filter is not well-formed.
        MissingExtraError: When ``qdrant-client`` is not installed.
    """
    return backends.qdrant(canonicalize(f), key_prefix)


def qdrant_payload_filter(f: dict[str, Any], payload_key: str = QDRANT_METADATA_PAYLOAD_KEY) -> Any:
    """Translate a filter for a ``langchain_qdrant.QdrantVectorStore`` collection.

    Same as :func:`to_qdrant_filter` with every key prefixed by ``payload_key + "."``,
    because LangChain stores document metadata under one payload key. Pass the result
    as ``filter=`` to the store's similarity search.

    Args:
        f: Metadata filter in the DSL (see :func:`validate_metadata_filter`).
        payload_key: The store's ``metadata_payload_key`` (``"metadata"`` by default).

    Returns:
        Qdrant ``models.Filter`` object over ``<payload_key>.<field>`` keys.
    """
    return to_qdrant_filter(f, key_prefix=f"{payload_key}." if payload_key else "")


def translate_metadata_filter(path: str, f: dict[str, Any]) -> Any:
    """Translate a filter for the backend named by a store path.

    Dispatch helper used by the retrievers: reads the URI scheme from a store path (e.g.
    ``chroma:/data/store``) and returns the matching backend-native filter, ready to send
    to a live store: it adds the rewrites that keep each backend in step with
    :func:`filter_docs_by_metadata`, which the ``to_*_filter`` functions leave out.

    - ``chroma:``: :func:`to_chroma_filter`'s form with numeric clauses rewritten: a
      numeric ``$ne x`` becomes ``$or: [$gt x, $lt x]`` (a numeric ``$nin`` an ``$and``
      of those), because Chroma's ``$ne``/``$nin`` also match documents without the
      field; a comparison with a fractional operand is paired with an integer-bound
      clause, because Chroma truncates such an operand against an int value
      (``{"$eq": 0.5}`` would match ``0``); ``$in`` lists mixing ints and floats are
      sent as floats. String ``$ne``/``$nin`` have no exact rewrite (see
      :func:`translation_is_exact`).
    - ``pgvector:``: :func:`to_pgvector_filter`'s form with numeric ``$in``/``$nin`` as
      ``$or``/``$and`` of ``$eq``/``$ne`` (``langchain_postgres`` compares ``$in`` lists
      as text).
    - ``qdrant:``: :func:`qdrant_payload_filter` (keys under the ``metadata.`` payload
      prefix that ``langchain_qdrant`` uses).

    ``filter_docs_by_metadata`` is not returned here: callers that need the in-memory
    matcher (the BM25 store) call it directly.

    Example::

        translate_metadata_filter("chroma:/data/store",
                                  {"authors": {"$contains": "Magee"}})
        -> {"authors": {"$contains": "Magee"}}

    Args:
        path: Store URI (``scheme:location``).
        f: Metadata filter in the DSL (see :func:`validate_metadata_filter`).

    Returns:
        Backend-native filter for the store's scheme.

    Raises:
        ValueError: When the scheme is missing or unknown, or the filter is malformed.
    """
    scheme = StoreURI.vector(path).scheme
    if scheme == "chroma":
        return backends.chroma(canonicalize(f))
    if scheme == "pgvector":
        return backends.pgvector(canonicalize(f))
    return qdrant_payload_filter(f)


def translation_is_exact(path: str, f: dict[str, Any]) -> bool:
    """Return whether the backend of ``path`` applies ``f`` exactly.

    ``False`` when the translation is one of the documented approximations: ``$contains``
    on PGVector, or ``$ne``/``$nin`` with string operands on Chroma. Both only ever return
    extra documents, so a caller that gets ``False`` should over-fetch and post-filter the
    results with :func:`filter_docs_by_metadata`.

    Args:
        path: Store URI (``scheme:location``).
        f: Metadata filter in the DSL.

    Raises:
        ValueError: When the scheme is missing or unknown, or the filter is malformed.
    """
    scheme = StoreURI.vector(path).scheme
    canonical = canonicalize(f)
    if scheme == "chroma":
        return backends.chroma_is_exact(canonical)
    if scheme == "pgvector":
        return backends.pgvector_is_exact(canonical)
    return True


def _coerce(field: FilterFieldInfo, value: Any, where: str) -> Any:
    kind = field.value_type
    if kind in ("string", "list") and isinstance(value, str):
        return value
    if kind == "list" and is_number(value):
        return value
    if kind == "int" and is_number(value) and float(value).is_integer():
        return int(value)
    if kind == "float" and is_number(value) and math.isfinite(value):
        return value
    expected = {"string": "a string", "list": "a string", "int": "an integer", "float": "a number"}
    raise MetadataFilterError(
        f"metadata filter clause {where!r}: field {field.name!r} ({kind}) expects "
        f"{expected[kind]}, got {value!r} ({type(value).__name__})"
    )


def _config_clause(field: FilterFieldInfo, operand: Any) -> dict[str, Any] | None:
    name = field.name
    if isinstance(operand, dict):
        return canonicalize({name: operand})
    if isinstance(operand, list | tuple):
        values = [_coerce(field, v, f"{name}[{i}]") for i, v in enumerate(operand)]
        if not values:
            return None
        if field.value_type == "list":
            return canonicalize({"$and": [{name: {"$contains": v}} for v in values]})
        return canonicalize({name: {"$in": values}})
    value = _coerce(field, operand, name)
    op = "$contains" if field.value_type == "list" else "$eq"
    return canonicalize({name: {op: value}})


def normalize_config_filters(
    filters: dict[str, Any], allowed_fields: list[FilterFieldInfo]
) -> list[dict[str, Any]]:
    """Validate configured-domain filters into canonical DSL clauses.

    ``filters`` maps a metadata field name (from a deployment's ``filter_fields``
    configuration) to an operand produced by the retrieval query generator: a bare scalar,
    a list of scalars, or an operator expression dict (``{op: value}``). Each configured
    field's ``value_type`` decides how a bare operand is interpreted:

    - scalar fields (``string``/``int``/``float``): a bare value is ``$eq``; a list of
      values is ``$in``.
    - list fields (e.g. tags): a bare value requires element membership (``$contains``);
      several values combine with ``$and`` (every value must be present).

    An operator expression dict is validated and normalized through
    :func:`validate_metadata_filter`; an unsupported operator or malformed operand raises
    ``ValueError``. A bare operand of the wrong type for the field (e.g. text for an
    ``int`` field) raises too; an integral float is accepted for an ``int`` field.

    Field names not declared in ``allowed_fields`` are ignored with a logged warning and
    never reach a backend. ``None`` operands and empty operand lists are ignored.

    The result is a list of single-clause DSL dicts, each directly consumable by
    :func:`validate_metadata_filter` (and hence by every backend translator and the
    in-memory matcher). An empty input returns ``[]``.

    Example::

        fields = [
            FilterFieldInfo(name="repository_type", description="...",
                            value_type="string"),
            FilterFieldInfo(name="tags", description="...", value_type="list"),
        ]
        normalize_config_filters(
            {"repository_type": ["github", "dandi"], "tags": "moose"},
            fields,
        )
        -> [
            {"repository_type": {"$in": ["github", "dandi"]}},
            {"tags": {"$contains": "moose"}},
        ]

    Args:
        filters: Field-name -> operand mapping from the query generator.
        allowed_fields: Configured filter fields for the domain.

    Returns:
        Canonical DSL single-clause dicts, in the order of ``filters``.

    Raises:
        MetadataFilterError: A ``ValueError`` naming the field, when an operand is
            malformed or an operator expression uses an unsupported operator.
    """
    by_name = {field.name: field for field in allowed_fields}
    clauses: list[dict[str, Any]] = []
    for name, operand in filters.items():
        field = by_name.get(name)
        if field is None:
            _logger.warning("ignoring filter on %r: not a configured filter field", name)
            continue
        if operand is None:
            continue
        clause = _config_clause(field, operand)
        if clause is not None:
            clauses.append(clause)
    return clauses


def restrict_metadata_filter(
    metadata_filter: dict[str, Any] | None, allowed_field_names: set[str]
) -> dict[str, Any] | None:
    """Restrict a metadata filter to clauses on the allowed fields.

    ``metadata_filter`` is a combined DSL filter: a single field clause, a top-level
    ``$and``/``$or`` of clauses, or ``None``. This keeps only the clauses whose referenced
    metadata field(s) are in ``allowed_field_names`` and recombines the survivors (a
    single clause returned as-is, several wrapped in ``$and``), so a domain that declares
    only e.g. ``journal`` never has a ``username`` clause applied to its retrievers. A
    filter with nothing left returns ``None``.

    A top-level ``$or`` is kept whole only when every field it references is allowed
    (partially splitting an ``$or`` would change its semantics); a top-level ``$and`` is
    decomposed and its sub-clauses filtered independently.

    Example::

        restrict_metadata_filter(
            {"$and": [{"journal": {"$eq": "nature"}},
                      {"username": {"$eq": "padraig"}}]},
            {"journal"},
        )
        -> {"journal": {"$eq": "nature"}}

    Args:
        metadata_filter: Combined metadata filter, or ``None``.
        allowed_field_names: Metadata field names the caller accepts.

    Clauses are returned as they were given (validated, not rewritten): a single
    ``{"flag": False}`` comes back as ``{"flag": False}``. A dict of several fields counts
    as an ``$and`` of one clause per field.

    Returns:
        The restricted filter, or ``None``.

    Raises:
        MetadataFilterError: When the filter is not well-formed.
    """
    if metadata_filter is None:
        return None
    canonicalize(metadata_filter)  # raises when the filter is not well-formed
    if list(metadata_filter) == ["$and"]:
        parts = list(metadata_filter["$and"])
    elif len(metadata_filter) == 1:
        parts = [metadata_filter]
    else:
        parts = [{key: value} for key, value in metadata_filter.items()]
    allowed = set(allowed_field_names)
    kept = [part for part in parts if referenced_fields(canonicalize(part)) <= allowed]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else {"$and": kept}
