"""postcheck: store lint report, deterministic sample windows, formatting."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.postcheck import (
    MAX_LISTED,
    format_chunk_sample,
    format_store_lint_report,
    lint_store,
    select_sample_windows,
)
from langchain_core.documents import Document

META = {"file_name": "a.pdf", "title": "T", "year": 2020, "doi": "10.1/x", "headings": ["H1", "H2"]}


def _doc(text: str = "x" * 40, **meta: object) -> Document:
    return Document(page_content=text, metadata={**META, **meta})


def test_lint_store_report() -> None:
    docs = [
        _doc(),
        _doc("short"),
        _doc(file_name="b.pdf", doi=None, year="2020"),
        Document(page_content="y" * 30, metadata={}),
    ]
    report = lint_store(docs)
    assert report["total"] == 4
    assert report["files"] == 3
    assert report["chunks_per_file"] == {"a.pdf": 2, "b.pdf": 1, "<no file_name>": 1}
    assert report["total_chars"] == 40 + 5 + 40 + 30
    assert report["empty"] == [("a.pdf", 5)]
    assert report["missing_metadata"] == {"b.pdf": ["doi"]}
    assert report["no_file_name"] == 1
    assert report["invalid_year"] == 1
    assert report["invalid_content"] == 0
    text = format_store_lint_report(report, [])
    assert "4 chunk(s) from 3 file(s)" in text
    assert "  - a.pdf (5 chars)" in text
    assert "  - b.pdf: doi" in text
    assert "1 chunk(s) without a file_name" in text
    assert "OK" not in text


def test_report_truncates_long_lists() -> None:
    docs = [_doc("", file_name=f"f{i}.pdf") for i in range(MAX_LISTED + 5)]
    text = format_store_lint_report(lint_store(docs), [])
    assert "... and 5 more" in text


def test_clean_report_with_samples() -> None:
    docs = [_doc(f"chunk number {i} " * 5) for i in range(10)]
    windows = select_sample_windows(docs, 2)
    text = format_store_lint_report(lint_store(docs), windows)
    assert "OK: no issues found" in text
    assert "--- sample 2/2 ---" in text
    assert "[a.pdf] H1 > H2" in text


def test_sample_windows_positions() -> None:
    docs = [_doc(str(i)) for i in range(100)]
    windows = select_sample_windows(docs, 3)
    assert [[d.page_content for d in w] for w in windows] == [
        ["25", "26", "27"],
        ["50", "51", "52"],
        ["75", "76", "77"],
    ]
    assert select_sample_windows(docs[:2], 3) == [docs[:2]]
    assert select_sample_windows(docs, 0) == []
    assert select_sample_windows([], 3) == []


def test_sample_windows_start_at_the_anchor() -> None:
    # Seed: "Each window is per_anchor consecutive chunks starting at an anchor position".
    docs = [_doc(str(i)) for i in range(4)]
    assert [[d.page_content for d in w] for w in select_sample_windows(docs, 1, 2)] == [["2", "3"]]
    ten = [_doc(str(i)) for i in range(10)]
    assert [w[0].page_content for w in select_sample_windows(ten, 1, 2)] == ["5"]
    # A window that would run past the end starts early enough to fit.
    assert [[d.page_content for d in w] for w in select_sample_windows(docs, 3, 3)] == [
        ["1", "2", "3"]
    ]


@given(n=st.integers(1, 60), anchors=st.integers(1, 8), per=st.integers(1, 5))
def test_sample_windows_properties(n: int, anchors: int, per: int) -> None:
    docs = [_doc(str(i)) for i in range(n)]
    windows = select_sample_windows(docs, anchors, per)
    assert windows == select_sample_windows(docs, anchors, per)
    assert 1 <= len(windows) <= anchors
    for window in windows:
        idx = [int(d.page_content) for d in window]
        assert idx == list(range(idx[0], idx[0] + len(idx)))
        assert len(window) == min(per, n)


def test_format_chunk_sample_truncates() -> None:
    text = format_chunk_sample(_doc("word " * 100), width=30)
    lines = text.splitlines()
    assert lines[0] == "[a.pdf] H1 > H2"
    assert len(lines[1].strip()) == 30
    assert lines[1].strip().endswith("...")
    assert "year=2020" in lines[2]
