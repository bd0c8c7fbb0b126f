"""Build a Zotero 7 data folder for tests: ``zotero.sqlite`` with Zotero's own table layout
(the columns of Zotero 7's ``userdata.sql`` for the tables klea reads) and a ``storage/``
tree, filled through the same rows Zotero writes: an item, its fields through
``itemData``/``itemDataValues``, creators, tags, collections and child attachments.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

SCHEMA = """
CREATE TABLE version (schema TEXT PRIMARY KEY, version INT NOT NULL);
CREATE TABLE libraries (
    libraryID INTEGER PRIMARY KEY, type TEXT NOT NULL, editable INT NOT NULL,
    filesEditable INT NOT NULL, version INT NOT NULL DEFAULT 0,
    clientVersion INT NOT NULL DEFAULT 0, storageVersion INT NOT NULL DEFAULT 0,
    lastSync INT NOT NULL DEFAULT 0, archived INT NOT NULL DEFAULT 0,
    isAdmin INT NOT NULL DEFAULT 0);
CREATE TABLE itemTypes (
    itemTypeID INTEGER PRIMARY KEY, typeName TEXT, templateItemTypeID INT, display INT DEFAULT 1);
CREATE TABLE fields (fieldID INTEGER PRIMARY KEY, fieldName TEXT, fieldFormatID INT);
CREATE TABLE creatorTypes (creatorTypeID INTEGER PRIMARY KEY, creatorType TEXT);
CREATE TABLE items (
    itemID INTEGER PRIMARY KEY, itemTypeID INT NOT NULL,
    dateAdded TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    dateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    libraryID INT NOT NULL, key TEXT NOT NULL, version INT NOT NULL DEFAULT 0,
    clientVersion INT NOT NULL DEFAULT 0, synced INT NOT NULL DEFAULT 0,
    UNIQUE (libraryID, key));
CREATE TABLE itemDataValues (valueID INTEGER PRIMARY KEY, value UNIQUE, valueNormalized TEXT);
CREATE TABLE itemData (itemID INT, fieldID INT, valueID, PRIMARY KEY (itemID, fieldID));
CREATE TABLE itemNotes (itemID INTEGER PRIMARY KEY, parentItemID INT, note TEXT, title TEXT);
CREATE TABLE itemAttachments (
    itemID INTEGER PRIMARY KEY, parentItemID INT, linkMode INT, contentType TEXT,
    charsetID INT, path TEXT, syncState INT DEFAULT 0, storageModTime INT, storageHash TEXT,
    lastProcessedModificationTime INT, lastRead INT);
CREATE TABLE tags (tagID INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, nameNormalized TEXT);
CREATE TABLE itemTags (
    itemID INT NOT NULL, tagID INT NOT NULL, type INT NOT NULL, PRIMARY KEY (itemID, tagID));
CREATE TABLE creators (
    creatorID INTEGER PRIMARY KEY, firstName TEXT, lastName TEXT, fieldMode INT,
    firstNameNormalized TEXT, lastNameNormalized TEXT, UNIQUE (lastName, firstName, fieldMode));
CREATE TABLE itemCreators (
    itemID INT NOT NULL, creatorID INT NOT NULL, creatorTypeID INT NOT NULL DEFAULT 1,
    orderIndex INT NOT NULL DEFAULT 0, PRIMARY KEY (itemID, creatorID, creatorTypeID, orderIndex),
    UNIQUE (itemID, orderIndex));
CREATE TABLE collections (
    collectionID INTEGER PRIMARY KEY, collectionName TEXT NOT NULL,
    parentCollectionID INT DEFAULT NULL,
    clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, libraryID INT NOT NULL,
    key TEXT NOT NULL, version INT NOT NULL DEFAULT 0, clientVersion INT NOT NULL DEFAULT 0,
    synced INT NOT NULL DEFAULT 0, UNIQUE (libraryID, key));
CREATE TABLE collectionItems (
    collectionID INT NOT NULL, itemID INT NOT NULL, orderIndex INT NOT NULL DEFAULT 0,
    PRIMARY KEY (collectionID, itemID));
CREATE TABLE deletedItems (itemID INTEGER PRIMARY KEY,
    dateDeleted DEFAULT CURRENT_TIMESTAMP NOT NULL);
CREATE TABLE deletedCollections (collectionID INTEGER PRIMARY KEY,
    dateDeleted DEFAULT CURRENT_TIMESTAMP NOT NULL);
"""

ITEM_TYPES = {
    "annotation": 1, "attachment": 3, "book": 7, "conferencePaper": 11,
    "journalArticle": 22, "note": 28, "preprint": 31, "report": 32, "thesis": 36,
}  # fmt: skip
FIELDS = (
    "title", "abstractNote", "publicationTitle", "volume", "issue", "pages", "date", "url",
    "extra", "DOI", "proceedingsTitle", "conferenceName", "university", "institution",
    "repository", "archiveID",
)  # fmt: skip
CREATOR_TYPES = {"author": 8, "editor": 10, "contributor": 2}
LINK_IMPORTED_FILE, LINK_IMPORTED_URL, LINK_LINKED_FILE = 0, 1, 2


@dataclass
class Attachment:
    """A child attachment: ``storage:NAME`` (``source`` copied into ``storage/KEY/``) or a
    linked file (``path`` absolute or ``attachments:REL``)."""

    key: str
    path: str
    source: Path | None = None
    link_mode: int = LINK_IMPORTED_FILE
    content_type: str = "application/pdf"
    deleted: bool = False


@dataclass
class Item:
    """One library item as Zotero stores it."""

    key: str
    item_type: str = "journalArticle"
    fields: dict[str, str] = field(default_factory=dict)
    creators: Sequence[tuple[str, str, str] | tuple[str, str, str, int]] = ()
    tags: Sequence[str] = ()
    collections: Sequence[str] = ()
    attachments: Sequence[Attachment] = ()
    notes: Sequence[str] = ()
    deleted: bool = False
    deleted_collections: Sequence[str] = ()


class _Writer:
    def __init__(self, db: sqlite3.Connection, folder: Path) -> None:
        self.db = db
        self.folder = folder
        self.values: dict[str, int] = {}
        self.creators: dict[tuple[str, str, int], int] = {}
        self.tags: dict[str, int] = {}
        self.collections: dict[str, int] = {}

    def new_item(self, item_type: str, key: str) -> int:
        cursor = self.db.execute(
            "INSERT INTO items (itemTypeID, libraryID, key) VALUES (?, 1, ?)",
            (ITEM_TYPES[item_type], key),
        )
        return int(cursor.lastrowid or 0)

    def value_id(self, value: str) -> int:
        if value not in self.values:
            cursor = self.db.execute("INSERT INTO itemDataValues (value) VALUES (?)", (value,))
            self.values[value] = int(cursor.lastrowid or 0)
        return self.values[value]

    def set_field(self, item_id: int, name: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO itemData VALUES (?, ?, ?)",
            (item_id, FIELDS.index(name) + 1, self.value_id(value)),
        )

    def creator_id(self, first: str, last: str, mode: int) -> int:
        key = (first, last, mode)
        if key not in self.creators:
            cursor = self.db.execute(
                "INSERT INTO creators (firstName, lastName, fieldMode) VALUES (?, ?, ?)", key
            )
            self.creators[key] = int(cursor.lastrowid or 0)
        return self.creators[key]

    def tag_id(self, name: str) -> int:
        if name not in self.tags:
            cursor = self.db.execute("INSERT INTO tags (name) VALUES (?)", (name,))
            self.tags[name] = int(cursor.lastrowid or 0)
        return self.tags[name]

    def collection_id(self, name: str) -> int:
        if name not in self.collections:
            cursor = self.db.execute(
                "INSERT INTO collections (collectionName, libraryID, key) VALUES (?, 1, ?)",
                (name, f"C{len(self.collections):07d}"),
            )
            self.collections[name] = int(cursor.lastrowid or 0)
        return self.collections[name]

    def add(self, item: Item) -> None:
        item_id = self.new_item(item.item_type, item.key)
        for name, value in item.fields.items():
            self.set_field(item_id, name, value)
        for index, creator in enumerate(item.creators):
            kind, first, last = creator[:3]
            mode = creator[3] if len(creator) > 3 else 0
            self.db.execute(
                "INSERT INTO itemCreators VALUES (?, ?, ?, ?)",
                (item_id, self.creator_id(first, last, mode), CREATOR_TYPES[kind], index),
            )
        for tag in item.tags:
            self.db.execute("INSERT INTO itemTags VALUES (?, ?, 0)", (item_id, self.tag_id(tag)))
        for name in item.collections:
            self.db.execute(
                "INSERT INTO collectionItems (collectionID, itemID) VALUES (?, ?)",
                (self.collection_id(name), item_id),
            )
        for attachment in item.attachments:
            self.attach(item_id, attachment)
        for note in item.notes:
            note_id = self.new_item("note", f"N{item.key[1:]}")
            self.db.execute("INSERT INTO itemNotes VALUES (?, ?, ?, '')", (note_id, item_id, note))
        if item.deleted:
            self.db.execute("INSERT INTO deletedItems (itemID) VALUES (?)", (item_id,))
        for name in item.deleted_collections:
            self.db.execute(
                "INSERT OR IGNORE INTO deletedCollections (collectionID) VALUES (?)",
                (self.collection_id(name),),
            )

    def attach(self, parent: int, attachment: Attachment) -> None:
        attachment_id = self.new_item("attachment", attachment.key)
        self.db.execute(
            "INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) "
            "VALUES (?, ?, ?, ?, ?)",
            (attachment_id, parent, attachment.link_mode, attachment.content_type, attachment.path),
        )
        if attachment.deleted:
            self.db.execute("INSERT INTO deletedItems (itemID) VALUES (?)", (attachment_id,))
        if attachment.source is not None and attachment.path.startswith("storage:"):
            target = self.folder / "storage" / attachment.key / attachment.path[8:]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(attachment.source, target)


def build_zotero(folder: Path, items: Sequence[Item]) -> Path:
    """Write ``folder/zotero.sqlite`` (and ``folder/storage/``) holding ``items``."""
    folder.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(folder / "zotero.sqlite")
    try:
        db.executescript(SCHEMA)
        db.execute("INSERT INTO version VALUES ('userdata', 129)")
        db.execute("INSERT INTO libraries (libraryID, type, editable, filesEditable) "
                   "VALUES (1, 'user', 1, 1)")  # fmt: skip
        db.executemany("INSERT INTO itemTypes (itemTypeID, typeName) VALUES (?, ?)",
                       [(i, n) for n, i in ITEM_TYPES.items()])  # fmt: skip
        db.executemany("INSERT INTO fields (fieldID, fieldName) VALUES (?, ?)",
                       list(enumerate(FIELDS, start=1)))  # fmt: skip
        db.executemany("INSERT INTO creatorTypes VALUES (?, ?)",
                       [(i, n) for n, i in CREATOR_TYPES.items()])  # fmt: skip
        writer = _Writer(db, folder)
        for item in items:
            writer.add(item)
        db.commit()
    finally:
        db.close()
    return folder
