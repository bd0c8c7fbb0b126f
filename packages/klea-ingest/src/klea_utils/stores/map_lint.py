"""LLM-free linting of a metadata map.

Checks each file's ``DEFAULT`` entry for the core bibliographic fields, their types and
plausibility (year range, DOI shape, title equal to the file name, too many URLs), heading
entries for structure, and, when the source files are known, that every source file has an
entry (a missing one makes ``store`` fail) and which keys are stale.

A ``DEFAULT`` filled from a reference library (``chunk --bib/--zotero``) carries its match
report line (``_match``), which the report lists per file; a matched entry is the
researcher's own record, so a field it lacks is not reported missing, but each
disagreement with the file (``_conflicts``: a different DOI on the first page) is.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable
from pathlib import PurePath
from typing import Any

from klea_utils.stores.metadata import SHARED_DOC_METADATA_KEYS

__all__ = [
    "CORE_FIELDS",
    "URL_WARN_THRESHOLD",
    "YEAR_MAX",
    "YEAR_MIN",
    "format_metadata_lint_report",
    "lint_file_metadata",
    "lint_metadata_map",
    "match_lines",
]

CORE_FIELDS: tuple[str, ...] = tuple(sorted(SHARED_DOC_METADATA_KEYS))
"""Core bibliographic fields a complete DEFAULT entry should carry.

The shared document fields every chunk inherits; derived (not duplicated) from
:data:`klea_utils.stores.metadata.SHARED_DOC_METADATA_KEYS` so a change to the stored schema
is picked up here.
"""

URL_WARN_THRESHOLD = 5
"""DEFAULT entries with more than this many ``url*`` keys probably picked up reference URLs."""

YEAR_MAX = _dt.date.today().year + 2
"""Latest plausible publication year: the current year plus a margin for in-press items."""

YEAR_MIN = 1800
"""Earliest plausible publication year. Anything before this is flagged."""

_DOI_RE = re.compile(r"^10\.\d{4,9}/\S+$")
_URL_RE = re.compile(r"^https?://\S+$", re.IGNORECASE)
_STEM_YEAR_RE = re.compile(r"(?<!\d)(1[89]\d{2}|20\d{2})(?!\d)")
_LIST_FIELDS = ("authors", "keywords")
_TEXT_FIELDS = ("title", "journal", "doi")


def _is_blank(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _check_year(file_name: str, year: Any) -> list[str]:
    if isinstance(year, bool) or not isinstance(year, int):
        return [f"DEFAULT: 'year' must be an integer, got {year!r}"]
    issues = []
    if not YEAR_MIN <= year <= YEAR_MAX:
        issues.append(f"DEFAULT: year {year} is outside {YEAR_MIN}-{YEAR_MAX}")
    stem_years = {int(y) for y in _STEM_YEAR_RE.findall(PurePath(file_name).stem)}
    if stem_years and year not in stem_years:
        found = ", ".join(str(y) for y in sorted(stem_years))
        issues.append(f"DEFAULT: year {year} differs from the year in the file name ({found})")
    return issues


def _is_matched(default: dict[str, Any]) -> bool:
    match = default.get("_match")
    return isinstance(match, str) and match.startswith("matched")


def _check_default(file_name: str, default: dict[str, Any]) -> list[str]:
    issues: list[str] = []
    matched = _is_matched(default)
    for field in CORE_FIELDS:
        if _is_blank(default.get(field)) and not matched:
            issues.append(f"DEFAULT: missing core field '{field}'")
    conflicts = default.get("_conflicts")
    if isinstance(conflicts, list):
        issues.extend(f"DEFAULT: conflict with the file: {c}" for c in conflicts)
    for field in _LIST_FIELDS:
        value = default.get(field)
        if not _is_blank(value) and (
            not isinstance(value, list) or not all(isinstance(v, str) and v for v in value)
        ):
            issues.append(f"DEFAULT: '{field}' must be a list of non-empty strings")
    for field in _TEXT_FIELDS:
        value = default.get(field)
        if not _is_blank(value) and not isinstance(value, str):
            issues.append(f"DEFAULT: '{field}' must be a string, got {type(value).__name__}")
    if not _is_blank(default.get("year")):
        issues.extend(_check_year(file_name, default["year"]))
    doi = default.get("doi")
    if isinstance(doi, str) and doi and not _DOI_RE.match(doi.strip()):
        issues.append(f"DEFAULT: doi {doi!r} does not look like a DOI (10.NNNN/...)")
    title = default.get("title")
    stem = PurePath(file_name).stem
    if isinstance(title, str) and title.strip().casefold() == stem.casefold():
        issues.append("DEFAULT: title is just the file name")
    urls = {k: v for k, v in default.items() if k.startswith("url")}
    if len(urls) > URL_WARN_THRESHOLD:
        issues.append(
            f"DEFAULT: {len(urls)} url* keys (more than {URL_WARN_THRESHOLD}); "
            "reference-list URLs were probably picked up"
        )
    for key, value in urls.items():
        if not isinstance(value, str) or not _URL_RE.match(value):
            issues.append(f"DEFAULT: '{key}' is not an http(s) URL: {value!r}")
    return issues


def lint_file_metadata(file_name: str, entry: dict[str, Any]) -> list[str]:
    """Return human-readable issues for one metadata-map file entry.

    ``entry`` is the per-file dict from a metadata map: a ``"DEFAULT"`` metadata dict plus
    one dict per heading chain. A flat metadata dict (the old heading-keyed format) is
    reported as a single structural issue instead of a list of missing fields.

    Args:
        file_name: Source file name (used for the year-vs-stem and title checks).
        entry: Per-file metadata-map entry.

    Returns:
        Sorted list of issue strings; empty when the entry is clean.
    """
    if not isinstance(entry, dict):
        return [f"entry must be an object, got {type(entry).__name__}"]
    if "DEFAULT" not in entry:
        if entry and not all(isinstance(v, dict) for v in entry.values()):
            return ['flat metadata dict (old heading-keyed format): wrap it in {"DEFAULT": ...}']
        return ["no DEFAULT entry"]
    default = entry["DEFAULT"]
    if not isinstance(default, dict):
        return [f"DEFAULT must be an object, got {type(default).__name__}"]
    issues = _check_default(file_name, default)
    for key, value in entry.items():
        if key != "DEFAULT" and not isinstance(value, dict):
            issues.append(f"heading {key!r}: must be an object, got {type(value).__name__}")
        elif key != "DEFAULT" and "year" in value:
            year = value["year"]
            if isinstance(year, bool) or not isinstance(year, int):
                issues.append(f"heading {key!r}: 'year' must be an integer, got {year!r}")
    return sorted(issues)


def lint_metadata_map(
    data: dict[str, dict[str, Any]], source_files: Iterable[str] | None = None
) -> dict[str, Any]:
    """Lint a whole metadata map and return a structured report.

    When ``source_files`` is given (the base names of the files the store will ingest),
    top-level keys are checked against it: a source file with no entry is fatal (``store``
    raises), a key that is not a source file is a stale leftover ``store`` ignores.

    Args:
        data: Parsed metadata-map JSON (``{file_name: entry}``).
        source_files: Base names of the source files, or ``None`` to skip the key checks.

    Returns:
        ``files`` (total), ``complete`` (count of DEFAULTs with ``_metadata_complete``),
        ``issues`` (``{file_name: [issue, ...]}``), ``placeholders`` (``{file_name: n}``
        empty heading entries), ``missing_keys`` and ``unknown_keys`` (sorted lists),
        ``matches`` (``{file_name: match report line}`` for the entries that carry one).
    """
    issues: dict[str, list[str]] = {}
    placeholders: dict[str, int] = {}
    complete = 0
    for file_name, entry in data.items():
        found = lint_file_metadata(file_name, entry)
        if found:
            issues[file_name] = found
        if isinstance(entry, dict):
            default = entry.get("DEFAULT")
            if isinstance(default, dict) and default.get("_metadata_complete") is True:
                complete += 1
            empty = sum(1 for k, v in entry.items() if k != "DEFAULT" and v == {})
            if empty:
                placeholders[file_name] = empty
    missing: list[str] = []
    unknown: list[str] = []
    if source_files is not None:
        names = set(source_files)
        missing = sorted(names - set(data))
        unknown = sorted(set(data) - names)
    return {
        "files": len(data),
        "complete": complete,
        "issues": issues,
        "placeholders": placeholders,
        "missing_keys": missing,
        "unknown_keys": unknown,
        "matches": match_lines(data),
    }


def match_lines(data: dict[str, dict[str, Any]]) -> dict[str, str]:
    """``{file_name: match report line}`` of the map's entries that were matched against a
    reference library (``matched by doi (bibtex smith2020)``, ``unmatched``)."""
    out: dict[str, str] = {}
    for file_name, entry in sorted(data.items()):
        default = entry.get("DEFAULT") if isinstance(entry, dict) else None
        if isinstance(default, dict) and isinstance(default.get("_match"), str):
            out[file_name] = default["_match"]
    return out


def _format_matches(matches: dict[str, str]) -> list[str]:
    unmatched = sum(1 for line in matches.values() if not line.startswith("matched"))
    head = f"Reference library: {len(matches) - unmatched} of {len(matches)} file(s) matched"
    if unmatched:
        head += f", {unmatched} unmatched (their metadata is extracted: review it)"
    lines = [head]
    lines.extend(f"  {name}: {line}" for name, line in matches.items())
    return lines


def format_metadata_lint_report(report: dict[str, Any]) -> str:
    """Render a :func:`lint_metadata_map` report as compact text."""
    issues: dict[str, list[str]] = report.get("issues", {})
    placeholders: dict[str, int] = report.get("placeholders", {})
    missing: list[str] = report.get("missing_keys", [])
    unknown: list[str] = report.get("unknown_keys", [])
    lines = [
        f"Metadata map: {report.get('files', 0)} file(s), "
        f"{report.get('complete', 0)} with complete extracted metadata, "
        f"{len(issues)} with issues"
    ]
    matches: dict[str, str] = report.get("matches", {})
    if matches:
        lines.extend(_format_matches(matches))
    if missing:
        lines.append(f"ERROR: {len(missing)} source file(s) have no entry (store will fail):")
        lines.extend(f"  - {name}" for name in missing)
    for file_name in sorted(issues):
        lines.append(f"{file_name}:")
        lines.extend(f"  - {issue}" for issue in issues[file_name])
    if placeholders:
        total = sum(placeholders.values())
        lines.append(
            f"{total} empty heading placeholder(s) in {len(placeholders)} file(s) "
            "(they inherit DEFAULT; fill them only where a section needs its own metadata)"
        )
    if unknown:
        lines.append(f"{len(unknown)} key(s) match no source file (ignored by store):")
        lines.extend(f"  - {name}" for name in unknown)
    if not issues and not missing:
        lines.append("OK: no issues found")
    return "\n".join(lines)
