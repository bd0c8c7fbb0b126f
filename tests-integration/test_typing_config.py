"""mypy is strict on every module klea-retrieval ships (the override names them one by one,
because klea-ingest shares the ``klea_utils.stores`` namespace and is not strict yet)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules(package: str) -> set[str]:
    src = ROOT / "packages" / package / "src"
    found = set()
    for path in src.rglob("*.py"):
        parts = path.relative_to(src).with_suffix("").parts
        found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def _strict_patterns() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns: list[str] = []
    for override in config["tool"]["mypy"]["overrides"]:
        if override.get("strict"):
            modules = override["module"]
            patterns += [modules] if isinstance(modules, str) else modules
    return patterns


def _covered(module: str, patterns: list[str]) -> bool:
    return any(module == p or (p.endswith(".*") and module.startswith(p[:-1])) for p in patterns)


def test_every_klea_retrieval_module_is_checked_strictly() -> None:
    patterns = _strict_patterns()
    loose = sorted(m for m in _modules("klea-retrieval") if not _covered(m, patterns))
    assert loose == [], f"add these to the strict mypy override in pyproject.toml: {loose}"


def test_the_strict_override_names_no_klea_ingest_module() -> None:
    patterns = _strict_patterns()
    assert sorted(m for m in _modules("klea-ingest") if _covered(m, patterns)) == []
