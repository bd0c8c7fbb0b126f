"""klea-stores-create: help, and the review flow (chunk, edit, map-lint, store) in subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ingest_store_support import query_store
from klea_utils.stores.cli import app
from typer.testing import CliRunner

ENV = {**os.environ, "KLEA_DOI_LOOKUP": "0", "PYTHONWARNINGS": "ignore", "COLUMNS": "200"}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "klea_utils.stores.cli", *args],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_help_shows_the_review_workflow() -> None:
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for step in ("pre-check", "chunk SOURCE", "Copy the template", "map-lint", "store SOURCE"):
        assert step in result.output
    store_help = CliRunner().invoke(app, ["store", "--help"], env={"COLUMNS": "200"}).output
    for option in (
        "--metadata-map",
        "--collection",
        "--store",
        "--bm25-store",
        "--embed-batch-size",
        "--force",
        "--embedding-model",
        "--verbose",
        "--quiet",
        "--strict",
        "--write-stores-config",
    ):
        assert option in store_help
    build_help = CliRunner().invoke(app, ["build", "--help"], env={"COLUMNS": "200"}).output
    for option in (
        "--max-tokens",
        "--ocr",
        "--no-ocr",
        "--worker-mem-limit",
        "--worker-batch-size",
        "--no-embed-during-conversion",
    ):
        assert option in build_help


def test_version_short_help_and_hidden_aliases() -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["--version"]).output.startswith("klea-stores-create (klea-ingest ")
    short = runner.invoke(app, ["store", "-h"], env={"COLUMNS": "200"})
    assert short.exit_code == 0
    assert "--model " not in short.output
    assert "--debug" not in short.output
    assert runner.invoke(app, ["store", "--nope"]).exit_code == 2


def test_map_lint_broken_maps(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.md").write_text("# A\n\ntext\n")
    broken = tmp_path / "map.json"
    broken.write_text("{nope")
    result = CliRunner().invoke(app, ["map-lint", str(source), "--metadata-map", str(broken)])
    assert result.exit_code == 1
    assert f"{broken}: not valid JSON" in result.output
    broken.write_text(json.dumps({"other.md": {"DEFAULT": {}}}))
    result = CliRunner().invoke(app, ["map-lint", str(source), "--metadata-map", str(broken)])
    assert result.exit_code == 1
    assert "ERROR: 1 source file(s) have no entry" in result.output
    assert "  - a.md" in result.output


@pytest.mark.slow
def test_review_flow_end_to_end(tmp_path: Path) -> None:
    source = tmp_path / "papers"
    source.mkdir()
    (source / "dendrites.md").write_text(
        "# Dendritic Computation\n\nAuthors: Ankur Sinha, Padraig Gleeson\n\n"
        "## Methods\n\nWe simulate dendrites with many compartments and ion channels.\n\n"
        "## Data\n\nRecordings from layer five pyramidal neurons were analysed.\n"
    )
    (source / "notes.txt").write_text(
        "Plasticity Notes\n\nSynaptic plasticity rules shape learning.\n"
    )

    chunked = _cli("chunk", str(source))
    assert chunked.returncode == 0, chunked.stderr
    template = source / ".klea-cache" / "metadata-map.template.json"
    assert "Template:" in chunked.stdout
    data = json.loads(template.read_text())
    assert set(data) == {"dendrites.md", "notes.txt"}
    assert data["dendrites.md"]["DEFAULT"]["title"] == "Dendritic Computation"

    lint = _cli("map-lint", str(source))
    assert lint.returncode == 1  # extracted metadata is incomplete
    assert "missing core field 'doi'" in lint.stdout

    reviewed = tmp_path / "metadata-map.json"
    for name, year in (("dendrites.md", 2021), ("notes.txt", 2019)):
        data[name]["DEFAULT"].update(
            title=data[name]["DEFAULT"].get("title", name),
            authors=["Ankur Sinha"],
            keywords=["neuro"],
            year=year,
            journal="J Neuro",
            doi=f"10.1234/{year}",
        )
    data["dendrites.md"]["Dendritic Computation > Data"] = {"url": "https://example.org/data"}
    reviewed.write_text(json.dumps(data))
    lint = _cli("map-lint", str(source), "--metadata-map", str(reviewed))
    assert lint.returncode == 0, lint.stdout
    assert "OK: no issues found" in lint.stdout

    store_uri, bm25 = f"chroma:{tmp_path / 'store'}", tmp_path / "papers.bm25"
    store_args = [
        "store",
        str(source),
        "--metadata-map",
        str(reviewed),
        "--store",
        store_uri,
        "--collection",
        "papers",
        "--bm25-store",
        str(bm25),
    ]
    stored = _cli(*store_args)
    assert stored.returncode == 0, stored.stderr
    assert "Summary: 2 file(s) added" in stored.stdout
    again = _cli(*store_args)  # the same command again: nothing to re-embed
    assert "0 chunk(s) embedded" in again.stdout

    post = _cli("store-lint", "--bm25-store", str(bm25), "--samples", "1")
    assert post.returncode == 0, post.stdout
    assert "OK: no issues found" in post.stdout

    hits = query_store(store_uri, "papers", "pyramidal neuron recordings")
    assert hits[0].metadata["file_name"] == "dendrites.md"
    assert hits[0].metadata["url"] == "https://example.org/data"
    assert hits[0].metadata["year"] == 2021
    assert "Sinha" in hits[0].metadata["authors"]


def test_build_refuses_a_bad_collection_name_before_converting(tmp_path: Path) -> None:
    source = tmp_path / "papers"
    source.mkdir()
    (source / "a.md").write_text("# Title\n\nSome text about neurons.\n", encoding="utf-8")
    result = _cli(
        "build", str(source), "--store", f"chroma:{tmp_path / 'chroma'}", "--collection", "c"
    )
    assert result.returncode == 1, result.stderr
    assert "collection name 'c' must be 3-512 characters" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (source / ".klea-cache").exists()  # nothing was converted


def test_store_lint_reports_a_file_that_is_not_a_corpus(tmp_path: Path) -> None:
    garbage = tmp_path / "notes.txt"
    garbage.write_text("plain text, not pickled documents\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["store-lint", "--bm25-store", str(garbage)])
    assert result.exit_code == 1
    assert f"BM25 corpus {str(garbage)!r}: batch 0 cannot be unpickled" in result.output


def test_max_tokens_above_the_embedder_is_a_one_line_error_unless_forced(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    result = CliRunner().invoke(app, ["chunk", str(source), "--max-tokens", "450"])
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert "max_tokens=450 is more than the 256 tokens" in errors[0]
    assert "--force-max-tokens" in errors[0]
    help_text = CliRunner().invoke(app, ["build", "--help"], env={"COLUMNS": "200"}).output
    assert "--force-max-tokens" in help_text
