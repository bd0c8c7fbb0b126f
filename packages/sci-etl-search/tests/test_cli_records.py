"""Reading the ``index`` command's input: JSONL records and folders of text files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sci_etl_core.cli._records import InputRecord, read_records
from sci_etl_core.ingest_protocol import IngestRecord


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_fields_and_id_aliases(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "r.jsonl",
        [
            json.dumps({"record_id": "a", "title": "T", "abstract": "A", "text": "X"}),
            "",
            json.dumps({"id": 7, "body": "B", "metadata": {"year": 2024}}),
            json.dumps({"_id": "c", "title": None}),
        ],
    )
    assert read_records(path) == [
        InputRecord("a", "T", "A", "X"),
        InputRecord("7", text="B", metadata={"year": 2024}),
        InputRecord("c"),
    ]


def test_record_id_takes_the_first_alias_present(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", [json.dumps({"_id": "x", "id": "y", "record_id": "z"})])
    assert read_records(path)[0].record_id == "z"


def test_input_record_satisfies_the_ingest_protocol() -> None:
    assert isinstance(InputRecord("a"), IngestRecord)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('{"title": "no id"}', "no record id; give one of the fields record_id, id, _id"),
        ('{"id": true}', "field 'id' must be a string or an integer, got bool"),
        ('{"id": "  "}', "field 'id' is blank"),
        ('{"id": "a", "title": 3}', "field 'title' must be a string, got int"),
        ('{"id": "a", "body": ["x"]}', "field 'body' must be a string, got list"),
        ('{"id": "a", "metadata": [1]}', "field 'metadata' must be a JSON object"),
    ],
)
def test_bad_line_names_file_line_and_field(tmp_path: Path, line: str, message: str) -> None:
    path = _write(tmp_path / "r.jsonl", [json.dumps({"id": "ok"}), "", line])
    with pytest.raises(ValueError, match=re.escape(f"{path}:3: {message}")):
        read_records(path)


def test_repeated_id_names_both_lines(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", [json.dumps({"id": "a"}), json.dumps({"record_id": "a"})])
    with pytest.raises(
        ValueError, match=re.escape(f"{path}:2: record id 'a' repeats the record at {path}:1")
    ):
        read_records(path)


def test_non_utf8_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"id": "\xff"}\n')
    with pytest.raises(ValueError, match=re.escape(f"{path}: not UTF-8 text")):
        read_records(path)


def test_folder_reads_text_and_markdown_recursively(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.md").write_text("\n# Heading one\n\nBody words.\n", encoding="utf-8")
    (tmp_path / "sub" / "a.TXT").write_text("First line\nsecond\n", encoding="utf-8")
    (tmp_path / "skip.pdf").write_bytes(b"%PDF")
    records = read_records(tmp_path)
    assert [(r.record_id, r.title, r.metadata) for r in records] == [
        ("b", "Heading one", {"path": "b.md"}),
        ("sub/a", "First line", {"path": "sub/a.TXT"}),
    ]
    assert records[0].text == "\n# Heading one\n\nBody words.\n"


def test_folder_file_sharing_an_id_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x", encoding="utf-8")
    (tmp_path / "a.txt").write_text("y", encoding="utf-8")
    with pytest.raises(ValueError, match="record id 'a' repeats"):
        read_records(tmp_path)


JSON_TEXT = st.text(max_size=20)


@given(
    st.lists(
        st.fixed_dictionaries(
            {"title": JSON_TEXT, "abstract": JSON_TEXT, "text": JSON_TEXT},
        ),
        max_size=5,
    ),
    st.booleans(),
)
def test_every_written_record_reads_back(records: list[dict[str, str]], ascii_only: bool) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r.jsonl"
        lines = [
            json.dumps({"id": f"r{i}", **record}, ensure_ascii=ascii_only)
            for i, record in enumerate(records)
        ]
        path.write_text("\r\n".join(lines), encoding="utf-8", newline="")
        assert read_records(path) == [
            InputRecord(f"r{i}", r["title"], r["abstract"], r["text"])
            for i, r in enumerate(records)
        ]


def test_folder_file_names_that_are_not_utf8_are_indexed(tmp_path: Path) -> None:
    import os

    name = os.fsdecode(b"caf\xe9.md")  # Latin-1 bytes in the name
    (tmp_path / name).write_text("# Cafe\n\nAu lait.\n", encoding="utf-8")
    (record,) = read_records(tmp_path)
    assert record.record_id == "caf\\xe9"
    assert record.metadata == {"path": "caf\\xe9.md"}
    record.record_id.encode("utf-8")  # storable text


def test_index_command_takes_a_folder_with_such_names(tmp_path: Path) -> None:
    import os

    from search_cli_support import run_cli

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / os.fsdecode(b"caf\xe9.md")).write_text("# Cafe\n\nAu lait.\n", encoding="utf-8")
    result = run_cli("index", folder, "--db", tmp_path / "t.db", "--no-progress")
    assert result.returncode == 0, result.stderr
    found = run_cli("search", "lait", "--db", tmp_path / "t.db", "--json")
    assert found.returncode == 0, found.stderr
    assert "caf\\\\xe9" in found.stdout
