"""The build names the citation-links file in the stores configuration it writes (issue 38)."""

from __future__ import annotations

import json
from pathlib import Path

from klea_utils.stores._ingest.citations.build_links import citations_path
from klea_utils.stores._ingest.cli_report import query_hint
from klea_utils.stores.config import read_retriever_config


def _config(tmp_path: Path, write_links: bool) -> dict[str, object]:
    source = tmp_path / "papers"
    links = citations_path(source, "papers")
    if write_links:
        links.parent.mkdir(parents=True)
        links.write_text('{"version": 1, "papers": {}}')
    config = tmp_path / "stores.json"
    store = f"chroma:{tmp_path / 'stores' / 'chroma'}"
    hint = query_hint(store, "papers", None, None, config, links)
    assert str(config) in hint
    return json.loads(config.read_text())["domains"]["papers"]


def test_a_written_links_file_is_named_relative_to_the_configuration(tmp_path: Path) -> None:
    domain = _config(tmp_path, write_links=True)
    assert domain["citations"] == "papers/.klea-cache/papers.citations.json"
    loaded = read_retriever_config(tmp_path / "stores.json")
    assert loaded.domains["papers"].citations == str(citations_path(tmp_path / "papers", "papers"))


def test_no_links_file_no_entry(tmp_path: Path) -> None:
    assert "citations" not in _config(tmp_path, write_links=False)
