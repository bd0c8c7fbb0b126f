"""find_source_files: supported formats, excluded artifacts, bad input."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores import source_files as _source_files
from klea_utils.stores import source_listing as _listing
from klea_utils.stores.ingest_exceptions import SourceLayoutError
from klea_utils.stores.source_files import (
    find_source_files,
    find_unique_source_files,
    supported_extensions,
)


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x", encoding="utf-8")
    return path


def test_cache_dir_name_is_the_public_constant() -> None:
    from klea_utils.stores.utils import CACHE_DIR_NAME

    assert _source_files.CACHE_DIR_NAME is CACHE_DIR_NAME == ".klea-cache"


def test_finds_supported_files_recursively_sorted(tmp_path: Path) -> None:
    wanted = [
        _touch(tmp_path / "b.pdf"),
        _touch(tmp_path / "a.md"),
        _touch(tmp_path / "sub" / "c.DOCX"),
        _touch(tmp_path / "sub" / "deep" / "d.html"),
        _touch(tmp_path / "bundle.tar.gz"),
    ]
    _touch(tmp_path / "notes.xyz")
    assert find_source_files(tmp_path) == sorted(wanted)


def test_excludes_cache_map_and_store_folders(tmp_path: Path) -> None:
    keep = _touch(tmp_path / "paper.pdf")
    _touch(tmp_path / ".klea-cache" / "metadata-map.template.json")
    _touch(tmp_path / ".klea-cache" / "x.md")
    metadata_map = _touch(tmp_path / "metadata-map.json")
    _touch(tmp_path / "chroma-store" / "chroma.sqlite3")
    _touch(tmp_path / "chroma-store" / "data.json")
    _touch(tmp_path / "qdrant" / "collection.json")
    found = find_source_files(
        tmp_path, metadata_map_path=metadata_map, store_dir=tmp_path / "qdrant"
    )
    assert found == [keep]


def test_only_the_store_s_own_folder_is_excluded_never_the_source(tmp_path: Path) -> None:
    # Seed: excluded are "the configured store_dir when it lies under source_dir, or any
    # directory inside source_dir that contains a chroma.sqlite3".
    source = tmp_path / "papers"
    paper = _touch(source / "paper.md")
    nested = _touch(source / "sub" / "notes.md")
    assert find_source_files(source, store_dir=tmp_path) == [paper, nested]  # holds source
    assert find_source_files(source, store_dir=source) == [paper, nested]
    _touch(source / "chroma.sqlite3")  # a Chroma store written straight into the source
    assert find_source_files(source) == [paper, nested]
    _touch(source / "sub" / "chroma.sqlite3")  # a store folder inside the source
    assert find_source_files(source) == [paper]


def test_json_files_are_ingested_unless_they_are_the_map(tmp_path: Path) -> None:
    doc = _touch(tmp_path / "doc.json")
    assert find_source_files(tmp_path) == [doc]


def test_unsupported_extensions_are_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _touch(tmp_path / "a.md")
    _touch(tmp_path / "strange.xyz")
    with caplog.at_level(logging.WARNING):
        find_source_files(tmp_path, logger=logging.getLogger("test"))
    assert "strange.xyz" in caplog.text


def test_missing_directory_is_named(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="nope"):
        find_source_files(tmp_path / "nope")


def test_repeated_file_names_are_refused_naming_both_paths(tmp_path: Path) -> None:
    one = _touch(tmp_path / "x" / "same.md")
    two = _touch(tmp_path / "y" / "same.md")
    other = _touch(tmp_path / "other.md")
    with pytest.raises(SourceLayoutError, match="unique names") as info:
        find_unique_source_files(tmp_path)
    assert str(one) in str(info.value)
    assert str(two) in str(info.value)
    two.unlink()
    assert find_unique_source_files(tmp_path) == [other, one]


@given(
    stem=st.text(alphabet="abcdefgh_-", min_size=1, max_size=8),
    ext=st.sampled_from(sorted(supported_extensions())),
    upper=st.booleans(),
)
def test_every_docling_extension_matches_in_any_case(stem: str, ext: str, upper: bool) -> None:
    name = f"{stem}.{ext.upper() if upper else ext}"
    assert _listing._matches(Path(name), supported_extensions())


@given(stem=st.text(alphabet="abcdefgh", min_size=1, max_size=8))
def test_unknown_extensions_never_match(stem: str) -> None:
    assert not _listing._matches(Path(f"{stem}.qqq"), supported_extensions())
    assert not _listing._matches(Path(stem), supported_extensions())


def test_organise_copies_are_skipped_so_names_stay_unique(tmp_path: Path) -> None:
    from klea_utils.stores.precheck import organise_directory

    wanted = [_touch(tmp_path / "a.md"), _touch(tmp_path / "sub" / "b.md")]
    own = _touch(tmp_path / "ocr" / "own.md")  # only in ocr/: not a copy, so it is a source
    organise_directory(tmp_path, {})
    assert (tmp_path / "no-ocr" / "sub" / "b.md").is_file()
    assert find_unique_source_files(tmp_path) == sorted([*wanted, own])
    (tmp_path / "a.md").unlink()  # the original is gone: its organised copy stands in
    assert find_source_files(tmp_path) == sorted([tmp_path / "no-ocr" / "a.md", own, wanted[1]])


def test_extension_table_is_doclings() -> None:
    from docling.datamodel.base_models import FormatToExtensions

    live = {ext.lower() for exts in FormatToExtensions.values() for ext in exts}
    assert supported_extensions() == live


def test_listing_and_linting_import_no_docling_or_torch() -> None:
    import subprocess
    import sys

    code = (
        "import sys, pathlib, tempfile\n"
        "from klea_utils.stores import cli, map_lint, metadata_map, precheck\n"
        "from klea_utils.stores.source_files import find_source_files\n"
        "find_source_files(pathlib.Path(tempfile.mkdtemp()))\n"
        "print(sorted(m for m in ('docling', 'torch', 'langchain_core', 'transformers') "
        "if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
