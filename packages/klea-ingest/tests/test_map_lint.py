"""map_lint: every check, the report, and CORE_FIELDS derived from the stored schema."""

from __future__ import annotations

from klea_utils.stores.map_lint import (
    CORE_FIELDS,
    URL_WARN_THRESHOLD,
    YEAR_MAX,
    YEAR_MIN,
    format_metadata_lint_report,
    lint_file_metadata,
    lint_metadata_map,
)
from klea_utils.stores.metadata import SHARED_DOC_METADATA_KEYS

GOOD = {
    "title": "Real Title",
    "authors": ["A B"],
    "keywords": ["k"],
    "year": 2020,
    "journal": "J",
    "doi": "10.1234/abc",
    "_metadata_complete": True,
}


def test_core_fields_follow_the_schema() -> None:
    assert set(CORE_FIELDS) == SHARED_DOC_METADATA_KEYS
    assert CORE_FIELDS == ("authors", "doi", "journal", "keywords", "title", "year")
    assert YEAR_MIN == 1800
    assert YEAR_MAX >= 2028


def test_clean_entry() -> None:
    assert lint_file_metadata("paper-2020.pdf", {"DEFAULT": GOOD, "A > B": {}}) == []


def test_every_check() -> None:
    bad = {
        "title": "paper",
        "authors": "A B",
        "year": "2020",
        "journal": 3,
        "doi": "doi.org/x",
        **{f"url_{i}": f"https://x/{i}" for i in range(URL_WARN_THRESHOLD)},
        "url": "ftp://x",
    }
    issues = lint_file_metadata("paper.pdf", {"DEFAULT": bad, "H": [], "G": {"year": "x"}})
    text = "\n".join(issues)
    assert issues == sorted(issues)
    for needle in [
        "missing core field 'keywords'",
        "'authors' must be a list",
        "'year' must be an integer",
        "'journal' must be a string",
        "does not look like a DOI",
        "title is just the file name",
        "url* keys",
        "'url' is not an http(s) URL",
        "heading 'H': must be an object",
        "heading 'G': 'year' must be an integer",
    ]:
        assert needle in text, needle


def test_year_checks() -> None:
    assert any(
        "outside" in i for i in lint_file_metadata("a.pdf", {"DEFAULT": {**GOOD, "year": 1700}})
    )
    issues = lint_file_metadata("smith2019.pdf", {"DEFAULT": GOOD})
    assert issues == ["DEFAULT: year 2020 differs from the year in the file name (2019)"]


def test_structural_issues() -> None:
    assert lint_file_metadata("a", {"title": "x", "year": 1}) == [
        'flat metadata dict (old heading-keyed format): wrap it in {"DEFAULT": ...}'
    ]
    assert lint_file_metadata("a", {}) == ["no DEFAULT entry"]
    assert lint_file_metadata("a", {"DEFAULT": []}) == ["DEFAULT must be an object, got list"]
    assert lint_file_metadata("a", [])[0].startswith("entry must be an object")  # type: ignore[arg-type]


def test_whole_map_report() -> None:
    data = {
        "good.pdf": {"DEFAULT": GOOD, "A": {}, "B": {}},
        "bad.pdf": {"DEFAULT": {"title": "x"}},
        "stale.pdf": {"DEFAULT": GOOD},
    }
    report = lint_metadata_map(data, ["good.pdf", "bad.pdf", "new.pdf"])
    assert report["files"] == 3
    assert report["complete"] == 2
    assert set(report["issues"]) == {"bad.pdf"}
    assert report["placeholders"] == {"good.pdf": 2}
    assert report["missing_keys"] == ["new.pdf"]
    assert report["unknown_keys"] == ["stale.pdf"]
    text = format_metadata_lint_report(report)
    assert "ERROR: 1 source file(s) have no entry (store will fail)" in text
    assert "  - new.pdf" in text
    assert "bad.pdf:" in text
    assert "2 empty heading placeholder(s) in 1 file(s)" in text
    assert "match no source file" in text
    no_keys = lint_metadata_map(data)
    assert no_keys["missing_keys"] == []
    assert no_keys["unknown_keys"] == []


def test_clean_report_says_ok() -> None:
    text = format_metadata_lint_report(lint_metadata_map({"a.pdf": {"DEFAULT": GOOD}}, ["a.pdf"]))
    assert text.endswith("OK: no issues found")
