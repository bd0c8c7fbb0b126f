"""Reading a Zotero 7 data folder: items, creators, fields, tags, collections, attachments,
the trash, citation keys, and a database Zotero holds locked."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from klea_utils.stores.ingest_exceptions import ReferenceLibraryError
from klea_utils.stores.references import load_reference_library
from zotero_library import LINK_LINKED_FILE, Attachment, Item, build_zotero


def _library(tmp_path: Path) -> Path:
    pdf = tmp_path / "incoming" / "Kowalska - 2024 - Surface code.pdf"
    pdf.parent.mkdir()
    pdf.write_bytes(b"%PDF-1.4 surface code")
    items = [
        Item(
            key="3VJQ8B2M",
            fields={
                "title": "Surface code error correction below threshold",
                "publicationTitle": "Quantum Devices",
                "date": "2024-03-00 March 2024",
                "volume": "7",
                "pages": "101-117",
                "DOI": "10.5555/QD.2024.003",
                "url": "https://example.org/qd/3",
                "abstractNote": "We show  logical errors\nfall below threshold.",
                "extra": "Citation Key: kowalska2024surface",
            },
            creators=[
                ("author", "Marta", "Kowalska"),
                ("author", "Ravi", "Iyer"),
                ("editor", "Ed", "Itor"),
            ],
            tags=["to-read", "quantum"],
            collections=["Thesis", "Error correction", "Old drafts"],
            deleted_collections=["Old drafts"],
            attachments=[
                Attachment("8QF2KX7A", "storage:Kowalska - 2024 - Surface code.pdf", source=pdf),
                Attachment("OLDCOPY1", "storage:old.pdf", source=pdf, deleted=True),
            ],
            notes=["<p>Read section 3 again</p>"],
        ),
        Item(
            key="ZP4N7W1C",
            item_type="report",
            fields={
                "title": "Global tuberculosis report 2023",
                "institution": "WHO",
                "date": "2023",
            },
            creators=[("author", "", "World Health Organization", 1)],
            attachments=[
                Attachment(
                    "LNK00001", "/home/me/papers/who-tb-2023.pdf", link_mode=LINK_LINKED_FILE
                ),
                Attachment(
                    "LNK00002", "attachments:reports/who/tb-annex.pdf", link_mode=LINK_LINKED_FILE
                ),
            ],
        ),
        Item(
            key="PRE00001",
            item_type="preprint",
            fields={
                "title": "Attention heads revisited",
                "repository": "arXiv",
                "archiveID": "arXiv:2401.01234",
                "date": "2024-01-05",
            },
            creators=[("author", "Yuki", "Tanaka")],
        ),
        Item(key="TRASH001", fields={"title": "A deleted paper"}, deleted=True),
    ]
    return build_zotero(tmp_path / "Zotero", items)


def test_items_with_their_creators_fields_tags_collections_and_attachments(
    tmp_path: Path,
) -> None:
    folder = _library(tmp_path)
    entries = {e.title: e for e in load_reference_library(zotero_dir=folder).entries}
    assert set(entries) == {
        "Surface code error correction below threshold",
        "Global tuberculosis report 2023",
        "Attention heads revisited",
    }  # no note, attachment or trashed item
    paper = entries["Surface code error correction below threshold"]
    assert paper.source == "zotero"
    assert paper.citekey == "kowalska2024surface"  # from "Citation Key:" in extra
    assert paper.authors == ("Marta Kowalska", "Ravi Iyer")  # editors are not authors
    assert (paper.year, paper.journal, paper.volume, paper.pages) == (
        2024, "Quantum Devices", "7", "101-117",
    )  # fmt: skip
    assert paper.doi == "10.5555/QD.2024.003"
    assert paper.abstract == "We show logical errors fall below threshold."
    assert paper.tags == paper.keywords == ("to-read", "quantum")
    assert paper.collections == ("Error correction", "Thesis")  # not the trashed one
    stored = folder / "storage" / "8QF2KX7A" / "Kowalska - 2024 - Surface code.pdf"
    assert paper.attachments == (str(stored),)
    assert stored.is_file()

    report = entries["Global tuberculosis report 2023"]
    assert report.authors == ("World Health Organization",)  # a one-field (corporate) name
    assert report.journal == "WHO"
    assert report.attachments == ("/home/me/papers/who-tb-2023.pdf", "reports/who/tb-annex.pdf")
    assert report.citekey == "world_health_organization_global_2023"  # as Zotero exports

    preprint = entries["Attention heads revisited"]
    assert (preprint.arxiv, preprint.journal, preprint.year) == ("2401.01234", "arXiv", 2024)


def test_a_database_zotero_holds_locked_is_read_from_a_copy(tmp_path: Path) -> None:
    folder = _library(tmp_path)
    database = folder / "zotero.sqlite"
    before = database.read_bytes()
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")  # as Zotero while it runs: no other reader gets in
    try:
        with pytest.raises(sqlite3.OperationalError):
            sqlite3.connect(database, timeout=0.1).execute("SELECT 1 FROM items").fetchall()
        assert len(load_reference_library(zotero_dir=folder)) == 3
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert database.read_bytes() == before  # never written


def test_a_folder_without_a_zotero_database_is_named(tmp_path: Path) -> None:
    with pytest.raises(ReferenceLibraryError, match=r"no zotero\.sqlite") as caught:
        load_reference_library(zotero_dir=tmp_path)
    assert caught.value.path == tmp_path.resolve()
    (tmp_path / "zotero.sqlite").write_bytes(b"not a database at all" * 100)
    with pytest.raises(ReferenceLibraryError, match="not a readable Zotero database"):
        load_reference_library(zotero_dir=tmp_path)


def test_better_bibtex_keys_are_used_when_the_item_has_none(tmp_path: Path) -> None:
    folder = build_zotero(
        tmp_path / "Zotero",
        [Item(key="AAAA1111", fields={"title": "Sleep spindles", "date": "2020"},
              creators=[("author", "Ines", "Moreau")]),
         Item(key="BBBB2222", fields={"title": "Sleep spindles", "date": "2020"},
              creators=[("author", "Ines", "Moreau")])],
    )  # fmt: skip
    keys = [e.citekey for e in load_reference_library(zotero_dir=folder).entries]
    assert keys == ["moreau_sleep_2020", "moreau_sleep_2020-2"]  # distinct when generated
    bbt = sqlite3.connect(folder / "better-bibtex.sqlite")
    bbt.execute("CREATE TABLE citationkey (itemID, itemKey, libraryID, citationKey, pinned)")
    bbt.execute("INSERT INTO citationkey VALUES (1, 'AAAA1111', 1, 'moreau2020sleep', 0)")
    bbt.commit()
    bbt.close()
    keys = [e.citekey for e in load_reference_library(zotero_dir=folder).entries]
    assert keys == ["moreau2020sleep", "moreau_sleep_2020"]


def _two_unkeyed_items(folder: Path) -> Path:
    return build_zotero(
        folder,
        [Item(key="AAAA1111", fields={"title": "Sleep spindles", "date": "2020"},
              creators=[("author", "Ines", "Moreau")]),
         Item(key="CCCC3333", fields={"title": "Grid cells", "date": "2019",
                                      "extra": "Citation Key: hafting2019grid"},
              creators=[("author", "Torkel", "Hafting")])],
    )  # fmt: skip


def _write_garbage(database: Path) -> None:
    database.write_bytes(b"\x00\xffnot SQLite, a torn Better BibTeX file\x13\x37" * 200)


def _write_other_schema(database: Path) -> None:
    other = sqlite3.connect(database)
    other.execute("CREATE TABLE keys (itemKey, key)")  # no citationkey table
    other.execute("INSERT INTO keys VALUES ('AAAA1111', 'moreau2020sleep')")
    other.commit()
    other.close()


@pytest.mark.parametrize("spoil", [_write_garbage, _write_other_schema], ids=["corrupt", "schema"])
def test_an_unreadable_better_bibtex_database_is_warned_about_and_keys_are_generated(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, spoil
) -> None:
    folder = _two_unkeyed_items(tmp_path / "Zotero")
    with caplog.at_level(logging.WARNING):
        keys = [e.citekey for e in load_reference_library(zotero_dir=folder).entries]
    assert keys == ["moreau_sleep_2020", "hafting2019grid"]
    assert not caplog.records  # no Better BibTeX database: nothing to warn about

    spoil(folder / "better-bibtex.sqlite")
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        keys = [e.citekey for e in load_reference_library(zotero_dir=folder).entries]
    assert keys == ["moreau_sleep_2020", "hafting2019grid"]  # generated; the item's own kept
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    message = record.getMessage()
    assert "better-bibtex.sqlite" in message
    assert "citation keys are generated instead" in message
