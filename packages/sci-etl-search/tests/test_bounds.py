"""Bounded inputs: query term count and JSONL record depth (issue 19, item 7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sci_etl_core.cli._records import read_records
from sci_etl_core.exceptions import SearchQueryError
from sci_etl_core.search.parser import MAX_QUERY_TERMS, parse_query


def test_query_term_count_is_capped() -> None:
    assert parse_query(" OR ".join(f"w{i}" for i in range(MAX_QUERY_TERMS)))
    words = [f"w{i}" for i in range(100_000)]
    text = " OR ".join(words)
    with pytest.raises(SearchQueryError, match="more than 10000 terms") as caught:
        parse_query(text)
    assert caught.value.position == text.index(f" w{MAX_QUERY_TERMS} ") + 1
    assert caught.value.token == f"w{MAX_QUERY_TERMS}"


def test_deeply_nested_jsonl_record_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    deep = '{"id": "a", "metadata": {"x": ' + "[" * 1000 + "]" * 1000 + "}}"
    path.write_text('{"id": "ok"}\n' + deep + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"r\.jsonl:2: the record nests more than 64 levels"):
        read_records(path)
    shallow = '{"id": "a", "metadata": {"x": ' + "[" * 60 + "]" * 60 + "}}"
    path.write_text(shallow + "\n", encoding="utf-8")
    assert read_records(path)[0].record_id == "a"
