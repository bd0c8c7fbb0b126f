"""One bad file never stops a run: a PDF that fails conversion needs no metadata-map entry,
is named with its reason in one summary line, and exits 0 unless --strict."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from klea_utils.stores._ingest.convert.failures import (
    failures_path,
    format_not_stored,
    read_conversion_failures,
)
from klea_utils.stores.cli import app
from klea_utils.stores.ingest_exceptions import MetadataMapError
from klea_utils.stores.ingestion import StoresBuilder
from klea_utils.stores.metadata_map import template_path, write_heading_template
from typer.testing import CliRunner

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("offline")]

BROKEN_PDF = b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog"


@pytest.fixture(scope="module")
def chunked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of two Markdown files and a truncated PDF, chunked in process."""
    source = tmp_path_factory.mktemp("failed") / "papers"
    source.mkdir()
    (source / "neurons.md").write_text(
        "# Dendrites\n\nPyramidal neurons integrate synaptic input in their dendrites.\n"
    )
    (source / "glia.md").write_text("# Glia\n\nAstrocytes regulate synapses and blood flow.\n")
    (source / "broken.pdf").write_bytes(BROKEN_PDF)
    builder = StoresBuilder("huggingface:all-MiniLM-L6-v2", logging.getLogger("t"), max_tokens=256)
    headings = builder.chunk_all(source, in_process=True)
    write_heading_template(headings, source, builder.logger)
    return source


def _builder() -> StoresBuilder:
    return StoresBuilder("huggingface:all-MiniLM-L6-v2", logging.getLogger("t"))


def test_the_failure_is_recorded_with_its_reason(chunked: Path) -> None:
    reasons = read_conversion_failures(chunked)
    assert list(reasons) == ["broken.pdf"]
    assert "damaged or truncated" in reasons["broken.pdf"]
    assert "broken.pdf" not in json.loads(template_path(chunked).read_text())
    line = format_not_stored([chunked / "broken.pdf"], reasons)
    assert line.startswith("1 file(s) not stored: broken.pdf (")
    assert "\n" not in line


def test_template_and_explicit_maps_do_not_need_the_failed_file(
    chunked: Path, tmp_path: Path
) -> None:
    results = _builder()._load_and_fold_results(chunked)  # the template
    assert sorted(Path(p).name for _, _, p in results) == ["glia.md", "neurons.md"]
    assert [p.name for p in results.missing] == ["broken.pdf"]
    explicit = tmp_path / "map.json"
    template = json.loads(template_path(chunked).read_text())
    explicit.write_text(json.dumps(template))
    _builder()._load_and_fold_results(chunked, explicit)  # no error
    del template["glia.md"]
    explicit.write_text(json.dumps(template))
    with pytest.raises(MetadataMapError, match=r"no entry for source file\(s\) 'glia.md'; "):
        _builder()._load_and_fold_results(chunked, explicit)


def test_store_exits_0_with_one_summary_line_and_1_under_strict(
    chunked: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    lint = runner.invoke(app, ["map-lint", str(chunked)])
    assert "Not required, 1 file(s) not stored: broken.pdf (" in lint.output
    assert "have no entry" not in lint.output
    args = ["store", str(chunked), "--store", f"chroma:{tmp_path / 'c'}", "--collection", "papers"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "Summary: 2 file(s) added" in result.stdout
    lines = [ln for ln in result.stderr.splitlines() if "broken.pdf" in ln]
    assert len(lines) == 1
    assert lines[0].startswith("1 file(s) not stored: broken.pdf (")
    assert "damaged or truncated" in lines[0]
    strict = runner.invoke(app, [*args, "--strict"])
    assert strict.exit_code == 1
    assert "0 chunk(s) embedded" in strict.stdout  # the rest is still stored (unchanged)


def test_every_file_failing_exits_1(tmp_path: Path) -> None:
    source = tmp_path / "only-broken"
    source.mkdir()
    (source / "broken.pdf").write_bytes(BROKEN_PDF)
    _builder().chunk_all(source, in_process=True)
    assert failures_path(source).is_file()
    args = ["store", str(source), "--store", f"chroma:{tmp_path / 'c'}", "--collection", "papers"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert "broken.pdf (" in result.stderr


def test_store_prints_the_klea_retrieve_command_and_writes_a_config(
    chunked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import shlex

    from klea_utils.stores.retrieve_cli import main as retrieve

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KLEA_STORES_CONFIG_FILE", raising=False)
    args = ["store", str(chunked), "--store", "chroma:stores/chroma", "--collection", "papers"]
    args += ["--bm25-store", "stores/papers.bm25", "--write-stores-config", "stores/stores.json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    command = lines[lines.index("Query what you built:") + 1].strip()
    words = shlex.split(command)
    assert words[0] == "klea-retrieve"
    assert f"papers=chroma:{tmp_path / 'stores' / 'chroma'}" in words
    assert (
        json.loads((tmp_path / "stores" / "stores.json").read_text())["domains"]["papers"][
            "bm25_stores"
        ][0]["path"]
        == "papers.bm25"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    question = "pyramidal neurons integrate synaptic input"
    assert retrieve([*words[1:-1], "--json", question]) == 0
    hits = json.loads(capsys.readouterr().out)["default"]  # stores given directly
    assert hits[0]["metadata"]["file_name"] == "neurons.md"
    config = ["--stores-config", "../stores/stores.json", "--json", question]
    assert retrieve(config) == 0
    assert json.loads(capsys.readouterr().out)["papers"][0]["metadata"]["file_name"] == "neurons.md"


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_respect_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    import os

    from klea_utils.stores._ingest import atomic

    old = os.umask(umask)
    atomic.file_mode.cache_clear()
    try:
        atomic.atomic_write_json(tmp_path / "out.json", {"a": 1})
        assert (tmp_path / "out.json").stat().st_mode & 0o777 == mode
    finally:
        os.umask(old)
        atomic.file_mode.cache_clear()
