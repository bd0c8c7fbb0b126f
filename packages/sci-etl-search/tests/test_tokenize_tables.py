"""The generated character tables equal what SQLite FTS5 does with every code point."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from sci_etl_core.search.tokenize import Unicode61Tokenizer

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "generate_unicode_tables.py"


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_unicode_tables", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("generate_unicode_tables", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def observations(generator: ModuleType) -> dict[int, list[tuple[int, str]]]:
    result: dict[int, list[tuple[int, str]]] = generator.fts5_observations()
    return result


@pytest.mark.slow
def test_regenerating_gives_the_committed_tables(
    generator: ModuleType, observations: dict[int, list[tuple[int, str]]]
) -> None:
    regenerated = generator.render(generator.classify(observations))
    assert regenerated == generator.TARGET.read_text(encoding="utf-8")


@pytest.mark.slow
def test_tokenizer_equals_fts5_on_every_code_point(
    generator: ModuleType, observations: dict[int, list[tuple[int, str]]]
) -> None:
    tokenizer = Unicode61Tokenizer()
    mismatches = []
    for cp in generator.code_points():
        expected = [text for _, text in observations.get(cp, [])]
        if tokenizer.words(generator.probe_text(chr(cp))) != expected:
            mismatches.append(cp)
    assert mismatches == []
    # tokens() and words() share the tables; spot-check tokens() on every 97th code point.
    for cp in range(0, 0x110000, 97):
        if cp in range(0xD800, 0xE000):
            continue
        text = generator.probe_text(chr(cp))
        assert [t.text for t in tokenizer.tokens(text)] == [t for _, t in observations[cp]]
