"""Read CSL-JSON (Zotero's "CSL JSON" export, Better CSL JSON, ``pandoc -t csljson``).

A file is a JSON array of items (or an object holding one under ``items`` or
``references``). Names are CSL name objects (``family``, ``given``, particles,
``suffix``, or one ``literal``); dates are ``date-parts``, ``raw``, ``literal`` or a plain
string; ``keyword`` is a comma-separated string or a list.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.biblio.refmgr.entries import ReferenceEntry
from klea_utils.stores._ingest.biblio.refmgr.fields import (
    clean_doi,
    generated_key,
    split_words_list,
    year_of,
)
from klea_utils.stores._ingest.biblio.refmgr.identifiers import normalize_arxiv
from klea_utils.stores.ingest_exceptions import ReferenceLibraryError

__all__ = ["csl_name", "looks_like_json", "read_csl_json"]


def looks_like_json(path: Path) -> bool:
    """Whether ``path`` holds JSON (its first non-blank character opens an array or object)."""
    try:
        with path.open(encoding="utf-8-sig", errors="replace") as handle:
            head = handle.read(512).lstrip()
    except OSError as exc:
        reason = f"cannot read the library ({exc.strerror or exc})"
        raise ReferenceLibraryError(path, reason) from exc
    return head[:1] in ("[", "{")


def csl_name(name: Any) -> str:
    """A CSL name object in display form (``Given particle Family Suffix``)."""
    if isinstance(name, str):
        return " ".join(name.split())
    if not isinstance(name, dict):
        return ""
    if name.get("literal"):
        return " ".join(str(name["literal"]).split())
    parts = [
        name.get("given"),
        name.get("dropping-particle"),
        name.get("non-dropping-particle"),
        name.get("family"),
        name.get("suffix"),
    ]
    return " ".join(" ".join(str(p) for p in parts if p).split())


def _names(item: dict[str, Any], key: str) -> tuple[str, ...]:
    value = item.get(key)
    names = [csl_name(n) for n in value] if isinstance(value, list) else []
    return tuple(n for n in names if n)


def _year(value: Any) -> int | None:
    if isinstance(value, dict):
        parts = value.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            return year_of(parts[0][0])
        return year_of(value.get("raw") or value.get("literal") or value.get("season"))
    return year_of(value)


def _text(item: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = item.get(key)
        if isinstance(value, (str, int)) and str(value).strip():
            return " ".join(str(value).split())
    return ""


def _keywords(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(dict.fromkeys(" ".join(str(v).split()) for v in value if str(v).strip()))
    return split_words_list(value) if isinstance(value, str) else ()


def _key_from_id(item: dict[str, Any], index: int) -> str:
    """The item's ``id`` when it is a citation key; Zotero's export ids are URIs
    (``http://zotero.org/users/local/x/items/KEY``), which get Zotero's key form instead."""
    item_id = _text(item, "id")
    if item_id and "/" not in item_id and " " not in item_id:
        return item_id
    authors = item.get("author")
    first = authors[0] if isinstance(authors, list) and authors else {}
    last = str(first.get("family") or first.get("literal") or "") if isinstance(first, dict) else ""
    key = generated_key(last, _text(item, "title"), _year(item.get("issued")))
    return key if key != "item" else f"item{index + 1}"


def _entry(item: dict[str, Any], index: int, path: Path) -> ReferenceEntry:
    key = _text(item, "citation-key", "citation_key") or _key_from_id(item, index)
    keywords = _keywords(item.get("keyword"))
    url = _text(item, "URL", "url")
    doi = clean_doi(_text(item, "DOI", "doi"))
    arxiv = ""
    for candidate in (doi, url, _text(item, "number"), _text(item, "note")):
        arxiv = arxiv or normalize_arxiv(candidate)
    return ReferenceEntry(
        citekey=key,
        source="csl_json",
        origin=f"{path} item {index + 1} ({key})",
        title=_text(item, "title"),
        authors=_names(item, "author") or _names(item, "editor"),
        year=_year(item.get("issued")),
        journal=_text(item, "container-title", "event-title", "publisher")
        if item.get("type") not in ("book", "thesis")
        else _text(item, "container-title", "publisher"),
        volume=_text(item, "volume"),
        pages=_text(item, "page"),
        doi=doi,
        url=url,
        abstract=_text(item, "abstract"),
        keywords=keywords,
        tags=keywords,
        arxiv=arxiv,
    )


def read_csl_json(path: Path) -> list[ReferenceEntry]:
    """Every item of the CSL-JSON file ``path``.

    Raises:
        ReferenceLibraryError: The file is not JSON, or not a list of CSL items.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise ReferenceLibraryError(
            path, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc
    except OSError as exc:
        reason = f"cannot read the library ({exc.strerror or exc})"
        raise ReferenceLibraryError(path, reason) from exc
    if isinstance(data, dict):
        data = data.get("items", data.get("references"))
    if not isinstance(data, list):
        raise ReferenceLibraryError(path, "CSL-JSON must be an array of items")
    entries = []
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            raise ReferenceLibraryError(path, f"item {index + 1} is not an object")
        entries.append(_entry(item, index, path))
    return entries
