"""Read the records the ``index`` command stores: a JSONL file or a folder of text files.

Every record is read and checked before anything is written, so a bad line stops the
command without a half-written index. Errors name the file, the line and the field.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ID_FIELDS", "TEXT_FIELDS", "TEXT_SUFFIXES", "InputRecord", "read_records"]

ID_FIELDS = ("record_id", "id", "_id")
"""The fields a JSONL record's id is read from, the first one present winning."""

TEXT_FIELDS = ("text", "body")
"""The fields a JSONL record's full text is read from, the first one present winning."""

TEXT_SUFFIXES = (".txt", ".md")
"""The file suffixes read from a folder, case-insensitively."""


@dataclass(frozen=True)
class InputRecord:
    """One record to index: an id, a title, an abstract, a full text and metadata.

    It satisfies :class:`~sci_etl_core.ingest_protocol.IngestRecord`, so it can be handed
    to any :class:`~sci_etl_core.ingest_protocol.MemoryIngestor`.

    Raises:
        TypeError: A field has the wrong type.
        ValueError: ``record_id`` is blank.
    """

    record_id: str
    title: str = ""
    abstract: str = ""
    text: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("record_id", "title", "abstract", "text"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"InputRecord.{name} must be a string")
        if not self.record_id.strip():
            raise ValueError("InputRecord.record_id must not be blank")
        if not isinstance(self.metadata, dict):
            raise TypeError("InputRecord.metadata must be a dict")

    @property
    def is_blank(self) -> bool:
        """Whether the title, abstract and text are all empty or whitespace."""
        return not (self.title.strip() or self.abstract.strip() or self.text.strip())


def _text_field(where: str, line: dict[str, Any], name: str) -> str:
    value = line.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{where}: field {name!r} must be a string, got {type(value).__name__}")
    return value


def _record_id(where: str, line: dict[str, Any]) -> str:
    for name in ID_FIELDS:
        if name not in line:
            continue
        value = line[name]
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            raise ValueError(
                f"{where}: field {name!r} must be a string or an integer, "
                f"got {type(value).__name__}"
            )
        if not value.strip():
            raise ValueError(f"{where}: field {name!r} is blank")
        return value
    raise ValueError(f"{where}: no record id; give one of the fields {', '.join(ID_FIELDS)}")


MAX_RECORD_DEPTH = 64
"""Deepest nesting of arrays and objects a JSONL record may have."""


def _too_deep_message(where: str) -> str:
    return f"{where}: the record nests more than {MAX_RECORD_DEPTH} levels deep"


def _too_deep(value: Any) -> bool:
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth + 1 > MAX_RECORD_DEPTH:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _jsonl_record(where: str, raw: str) -> InputRecord:
    try:
        line = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"{where}: not valid JSON ({error.msg} at column {error.colno})") from None
    except RecursionError:
        raise ValueError(_too_deep_message(where)) from None
    if _too_deep(line):
        raise ValueError(_too_deep_message(where))
    if not isinstance(line, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(line).__name__}")
    text_name = next((name for name in TEXT_FIELDS if name in line), TEXT_FIELDS[0])
    metadata = line.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise ValueError(f"{where}: field 'metadata' must be a JSON object")
    return InputRecord(
        record_id=_record_id(where, line),
        title=_text_field(where, line, "title"),
        abstract=_text_field(where, line, "abstract"),
        text=_text_field(where, line, text_name),
        metadata=metadata,
    )


def _read_jsonl(path: Path) -> Iterator[tuple[str, InputRecord]]:
    try:
        content = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    # Split at line feeds only: str.splitlines would also split at U+2028 and the other
    # separators JSON allows inside a string.
    for number, raw in enumerate(content.split("\n"), start=1):
        if raw.strip():
            where = f"{path}:{number}"
            yield where, _jsonl_record(where, raw)


def _title_of(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped.lstrip("#").strip()
    return ""


def _printable(name: str) -> str:
    """``name`` with bytes the file system gave that are not UTF-8 shown as ``\\xNN``."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _read_folder(folder: Path) -> Iterator[tuple[str, InputRecord]]:
    files = sorted(
        path
        for path in folder.rglob("*")
        if path.is_file() and path.suffix.lower() in TEXT_SUFFIXES
    )
    for path in files:
        # A name that is not UTF-8 (Latin-1 bytes from an old archive) keeps its bytes
        # as \xNN escapes, so the id and path are text the index can store.
        relative = _printable(path.relative_to(folder).as_posix())
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(
                f"{_printable(str(path))}: not UTF-8 text ({error.reason} at byte {error.start})"
            ) from None
        record = InputRecord(
            record_id=relative.rsplit(".", 1)[0],
            title=_title_of(text),
            text=text,
            metadata={"path": relative},
        )
        yield _printable(str(path)), record


def skipped_files(folder: Path) -> list[str]:
    """Files under ``folder`` that a folder index leaves out (not ``.txt`` or ``.md``).

    Hidden files and anything under a hidden folder (``.klea-cache``) are not listed.
    Paths are relative to ``folder``, sorted.
    """
    return sorted(
        _printable(path.relative_to(folder).as_posix())
        for path in folder.rglob("*")
        if path.is_file()
        and path.suffix.lower() not in TEXT_SUFFIXES
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )


def read_records(path: Path) -> list[InputRecord]:
    """Read every record of ``path``, a JSONL file or a folder of ``.txt``/``.md`` files.

    A JSONL line is an object with an id (``record_id``, ``id`` or ``_id``; a string or
    an integer), and optionally ``title``, ``abstract``, ``text`` or ``body``, and
    ``metadata`` (an object). Blank lines are skipped. A folder is read recursively in
    path order; each file becomes a record whose id is its path relative to the folder
    without the suffix, whose title is its first non-blank line (Markdown ``#`` marks
    removed), whose text is the whole file, and whose metadata is ``{"path": ...}``.

    Raises:
        ValueError: A line or file is malformed, or two records share an id; the
            message names the file, the line and the field.
        OSError: The path cannot be read.
    """
    source = _read_folder(path) if path.is_dir() else _read_jsonl(path)
    records: list[InputRecord] = []
    first_seen: dict[str, str] = {}
    for where, record in source:
        if record.record_id in first_seen:
            raise ValueError(
                f"{where}: record id {record.record_id!r} repeats the record at "
                f"{first_seen[record.record_id]}"
            )
        first_seen[record.record_id] = where
        records.append(record)
    return records
