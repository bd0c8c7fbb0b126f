"""Read a Zotero data folder (``zotero.sqlite`` + ``storage/``), never the live database.

Zotero holds its database locked while it runs, so the database is copied to a temporary
folder and the copy opened read-only. Items come from Zotero 7's tables: ``items`` with
their type (``itemTypes``), fields (``itemData``, ``fields``, ``itemDataValues``),
creators (``itemCreators``, ``creators``, ``creatorTypes``), ``tags``/``itemTags``,
``collections``/``collectionItems`` and child attachments (``itemAttachments``); items and
collections in the trash (``deletedItems``, ``deletedCollections``), notes, annotations and
attachments themselves are left out.

Attachment paths: ``storage:NAME`` is ``storage/<attachment key>/NAME``; a linked file is
absolute, or ``attachments:REL`` relative to Zotero's linked-attachment base folder (a
preference the database does not hold, so only the file name can match it). The citation
key is the item's ``citationKey`` field, a ``Citation Key:`` line in ``extra``, Better
BibTeX's key (``better-bibtex.sqlite``), or else the key Zotero's own BibTeX export makes
(``lastname_firstword_year``). A Better BibTeX database that is there but cannot be read
(corrupt, cannot be copied, no ``citationkey`` table) is logged as a warning naming it, and
the generated keys are used in its place.
"""

from __future__ import annotations

import logging
import re
import shutil
import sqlite3
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from klea_utils.stores._ingest.biblio.refmgr.entries import ReferenceEntry
from klea_utils.stores._ingest.biblio.refmgr.fields import clean_doi, generated_key, year_of
from klea_utils.stores._ingest.biblio.refmgr.identifiers import normalize_arxiv
from klea_utils.stores.ingest_exceptions import ReferenceLibraryError

__all__ = ["VENUE_FIELDS", "read_zotero"]

VENUE_FIELDS = (
    "publicationTitle",
    "proceedingsTitle",
    "conferenceName",
    "bookTitle",
    "university",
    "institution",
    "repository",
    "websiteTitle",
)
"""Zotero fields that name the venue, in the order tried."""

_SKIPPED_TYPES = ("attachment", "note", "annotation")
_TRASH_SQL = "AND i.itemID NOT IN (SELECT itemID FROM deletedItems)"
_TAGS_SQL = "SELECT it.itemID, t.name FROM itemTags AS it JOIN tags AS t ON t.tagID = it.tagID"
_COLLECTIONS_SQL = (
    "SELECT ci.itemID, c.collectionName FROM collectionItems AS ci "
    "JOIN collections AS c ON c.collectionID = ci.collectionID {trash} "
    "ORDER BY c.collectionName"
)
_COLLECTION_TRASH_SQL = "WHERE c.collectionID NOT IN (SELECT collectionID FROM deletedCollections)"
_BBT_SQL = "SELECT itemKey, citationKey FROM citationkey"
_log = logging.getLogger(__name__)


@contextmanager
def _read_only_copy(database: Path) -> Iterator[sqlite3.Connection]:
    with tempfile.TemporaryDirectory(prefix="klea-zotero-") as folder:
        copy = Path(folder) / database.name
        try:
            shutil.copy2(database, copy)
            for suffix in ("-wal", "-journal"):
                side = database.with_name(database.name + suffix)
                if side.exists():
                    shutil.copy2(side, copy.with_name(copy.name + suffix))
        except OSError as exc:
            reason = f"cannot copy the database ({exc.strerror or exc})"
            raise ReferenceLibraryError(database, reason) from exc
        connection = sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True)
        try:
            yield connection
        finally:
            connection.close()


def _tables(db: sqlite3.Connection) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _items(db: sqlite3.Connection, tables: set[str]) -> dict[int, str]:
    trash = _TRASH_SQL if "deletedItems" in tables else ""
    marks = ", ".join("?" for _ in _SKIPPED_TYPES)
    rows = db.execute(
        "SELECT i.itemID, i.key FROM items AS i JOIN itemTypes AS t ON t.itemTypeID = i.itemTypeID "
        f"WHERE t.typeName NOT IN ({marks}) {trash} ORDER BY i.itemID",
        _SKIPPED_TYPES,
    )
    return {int(item_id): str(key) for item_id, key in rows}


def _fields(db: sqlite3.Connection) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = defaultdict(dict)
    rows = db.execute(
        "SELECT d.itemID, f.fieldName, v.value FROM itemData AS d "
        "JOIN fields AS f ON f.fieldID = d.fieldID "
        "JOIN itemDataValues AS v ON v.valueID = d.valueID"
    )
    for item_id, name, value in rows:
        out[int(item_id)][str(name)] = str(value)
    return out


def _creators(db: sqlite3.Connection) -> dict[int, list[tuple[str, str, str]]]:
    """``(creator type, display name, last name)`` per item, in Zotero's order."""
    out: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
    rows = db.execute(
        "SELECT ic.itemID, c.firstName, c.lastName, c.fieldMode, t.creatorType "
        "FROM itemCreators AS ic JOIN creators AS c ON c.creatorID = ic.creatorID "
        "JOIN creatorTypes AS t ON t.creatorTypeID = ic.creatorTypeID "
        "ORDER BY ic.itemID, ic.orderIndex"
    )
    for item_id, first, last, mode, kind in rows:
        name = str(last or "") if mode == 1 else f"{first or ''} {last or ''}"
        name = " ".join(name.split())
        if name:
            out[int(item_id)].append((str(kind), name, " ".join(str(last or "").split())))
    return out


def _grouped(db: sqlite3.Connection, sql: str) -> dict[int, list[str]]:
    out: dict[int, list[str]] = defaultdict(list)
    for item_id, value in db.execute(sql):
        if value and value not in out[int(item_id)]:
            out[int(item_id)].append(str(value))
    return out


def _attachment_path(zotero_dir: Path, key: str, path: str) -> str:
    if path.startswith("storage:"):
        return str(zotero_dir / "storage" / key / path.removeprefix("storage:"))
    return path.removeprefix("attachments:")


def _attachments(db: sqlite3.Connection, zotero_dir: Path, trash: str) -> dict[int, list[str]]:
    out: dict[int, list[str]] = defaultdict(list)
    rows = db.execute(
        "SELECT a.parentItemID, i.key, a.path FROM itemAttachments AS a "
        "JOIN items AS i ON i.itemID = a.itemID "
        f"WHERE a.parentItemID IS NOT NULL AND a.path IS NOT NULL {trash} ORDER BY a.itemID"
    )
    for parent, key, path in rows:
        out[int(parent)].append(_attachment_path(zotero_dir, str(key), str(path)))
    return out


def _better_bibtex_keys(zotero_dir: Path) -> dict[str, str]:
    """Better BibTeX's key per item key; ``{}`` (with a warning) when its database is there
    but cannot be read."""
    database = zotero_dir / "better-bibtex.sqlite"
    if not database.is_file():
        return {}
    try:
        with _read_only_copy(database) as db:
            return {str(k): str(c) for k, c in db.execute(_BBT_SQL)}
    except ReferenceLibraryError as exc:
        reason = exc.reason
    except sqlite3.Error as exc:
        reason = f"not a readable Better BibTeX database ({exc})"
    _log.warning(
        "%s: %s; citation keys are generated instead (Zotero's BibTeX-export form) for items "
        "without a key of their own",
        database,
        reason,
    )
    return {}


def _citekey(fields: dict[str, str], bbt: str | None) -> str:
    if fields.get("citationKey"):
        return fields["citationKey"].strip()
    match = re.search(r"(?im)^\s*citation key:\s*(\S+)", fields.get("extra", ""))
    return match.group(1) if match else (bbt or "")


def _extra(fields: dict[str, str], label: str) -> str:
    match = re.search(rf"(?im)^\s*{label}:\s*(\S+)", fields.get("extra", ""))
    return match.group(1) if match else ""


@dataclass(frozen=True)
class _Rows:
    """What the database holds per item id."""

    items: dict[int, str]
    fields: dict[int, dict[str, str]]
    creators: dict[int, list[tuple[str, str, str]]]
    tags: dict[int, list[str]]
    collections: dict[int, list[str]]
    attachments: dict[int, list[str]]


def _read_rows(database: Path, zotero_dir: Path) -> _Rows:
    try:
        with _read_only_copy(database) as db:
            tables = _tables(db)
            trash = _COLLECTION_TRASH_SQL if "deletedCollections" in tables else ""
            return _Rows(
                items=_items(db, tables),
                fields=_fields(db),
                creators=_creators(db),
                tags=_grouped(db, _TAGS_SQL),
                collections=_grouped(db, _COLLECTIONS_SQL.format(trash=trash)),
                attachments=_attachments(
                    db, zotero_dir, _TRASH_SQL if "deletedItems" in tables else ""
                ),
            )
    except sqlite3.Error as exc:
        raise ReferenceLibraryError(database, f"not a readable Zotero database ({exc})") from exc


def _arxiv(data: dict[str, str], doi: str) -> str:
    candidates = (data.get("archiveID", ""), _extra(data, "arXiv"), doi, data.get("url", ""))
    return next((a for a in map(normalize_arxiv, candidates) if a), "")


def _venue(data: dict[str, str]) -> str:
    return next((data[f].strip() for f in VENUE_FIELDS if data.get(f, "").strip()), "")


def _entry(rows: _Rows, item_id: int, key: str, citekey: str, origin: str) -> ReferenceEntry:
    data = rows.fields.get(item_id, {})
    people = rows.creators.get(item_id, [])
    doi = clean_doi(data.get("DOI", "") or _extra(data, "DOI"))
    tags = tuple(rows.tags.get(item_id, []))
    return ReferenceEntry(
        citekey=citekey,
        source="zotero",
        origin=f"{origin} item {key}",
        title=" ".join(data.get("title", "").split()),
        authors=tuple([n for kind, n, _ in people if kind == "author"] or [p[1] for p in people]),
        year=year_of(data.get("date")),
        journal=_venue(data),
        volume=data.get("volume", "").strip(),
        pages=data.get("pages", "").strip(),
        doi=doi,
        url=data.get("url", "").strip(),
        abstract=" ".join(data.get("abstractNote", "").split()),
        keywords=tags,
        tags=tags,
        collections=tuple(rows.collections.get(item_id, [])),
        attachments=tuple(rows.attachments.get(item_id, [])),
        arxiv=_arxiv(data, doi),
    )


def read_zotero(zotero_dir: Path) -> list[ReferenceEntry]:
    """Every item (not in the trash) of the Zotero data folder ``zotero_dir``.

    Raises:
        ReferenceLibraryError: The folder has no ``zotero.sqlite``, or it is not a Zotero
            database.
    """
    zotero_dir = Path(zotero_dir).expanduser().resolve()
    database = zotero_dir / "zotero.sqlite"
    if not database.is_file():
        raise ReferenceLibraryError(zotero_dir, "no zotero.sqlite here (give Zotero's data folder)")
    rows = _read_rows(database, zotero_dir)
    bbt = _better_bibtex_keys(zotero_dir)
    entries: list[ReferenceEntry] = []
    taken: set[str] = set()
    for item_id, key in rows.items.items():
        data = rows.fields.get(item_id, {})
        year = year_of(data.get("date"))
        people = rows.creators.get(item_id, [])
        last = people[0][2] if people else ""
        base = _citekey(data, bbt.get(key)) or generated_key(last, data.get("title", ""), year)
        citekey, suffix = base, 1
        while citekey in taken:
            suffix += 1
            citekey = f"{base}-{suffix}"
        taken.add(citekey)
        entries.append(_entry(rows, item_id, key, citekey, str(database)))
    return entries
