"""A small corpus and a runner for the ``sci-etl-search`` command-line tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FACET_KEYS = ("year", "categories", "authors")

RECORDS: list[dict[str, Any]] = [
    {
        "id": "dwarf-halos",
        "title": "Dark matter halos of dwarf galaxies",
        "abstract": "Rotation curves of dwarf galaxies reveal cored dark matter halos "
        "rather than the cusps that cold dark matter simulations predict.",
        "metadata": {"year": 2021, "categories": ["astro-ph.GA"], "authors": ["Ana Ruiz"]},
    },
    {
        "record_id": "quasar-lf",
        "title": "The quasar luminosity function at high redshift",
        "abstract": "We measure how many bright quasars existed when the universe was young, "
        "from a survey of distant galaxies and quasars.",
        "metadata": {
            "year": 2019,
            "categories": ["astro-ph.GA", "astro-ph.CO"],
            "authors": ["Ana Ruiz", "Bo Chen"],
        },
    },
    {
        "_id": "bm25",
        "title": "BM25 revisited: term saturation and length normalization",
        "abstract": "Okapi BM25 ranks documents by term frequency with saturation and "
        "by document length normalization.",
        "text": "On three test collections the default parameters are within two points "
        "of the best nDCG. Field weighting of titles helps more.",
        "metadata": {"year": 2019, "categories": ["cs.IR"], "authors": ["Sara Lind"]},
    },
    {
        "id": "dense-retrieval",
        "title": "Dense passage retrieval with dual encoders",
        "abstract": "Dual encoders map questions and passages to vectors so that relevant "
        "passages are found by nearest neighbour search, beating BM25 ranking.",
        "metadata": {"year": 2020, "categories": ["cs.IR", "cs.CL"], "authors": ["Sara Lind"]},
    },
    {
        "id": "coral",
        "title": "Coral bleaching under marine heatwaves",
        "abstract": "Prolonged ocean heat stress expels the symbiotic algae of reef corals.",
        "metadata": {"year": 2022, "categories": ["q-bio.PE"], "authors": ["Maya Tan"]},
    },
    {
        "id": "sleep",
        "title": "Sleep and memory consolidation",
        "abstract": "Slow-wave sleep replays recent experiences and strengthens memories "
        "in the hippocampus.",
        "metadata": {"year": 2023, "categories": ["q-bio.NC"], "authors": ["Ivo Berg"]},
    },
    {
        "id": "crispr",
        "title": "Off-target effects of CRISPR-Cas9",
        "abstract": "The Cas9 nuclease sometimes cleaves genomic sites that resemble its "
        "guide sequence, introducing unintended mutations.",
        "metadata": {"year": 2024, "categories": ["q-bio.GN"], "authors": ["Maya Tan"]},
    },
    {
        "id": "graphene",
        "title": "Thermal conductivity of suspended graphene",
        "abstract": "Phonons carry heat in graphene sheets with an exceptionally high "
        "thermal conductivity.",
        "metadata": {"year": 2018, "categories": ["cond-mat"], "authors": ["Bo Chen"]},
    },
    {"id": "blank", "title": "  ", "metadata": {"year": 2020}},
]

INDEXED_IDS = {
    record.get("id") or record.get("record_id") or record["_id"] for record in RECORDS
} - {"blank"}


def write_corpus(path: Path, records: list[dict[str, Any]] | None = None) -> Path:
    """Write ``records`` (by default :data:`RECORDS`) to ``path`` as JSONL."""
    lines = [json.dumps(record) for record in (RECORDS if records is None else records)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_cli(
    *args: str | Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m sci_etl_core.cli ARGS`` and return what it did."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("SCI_ETL_SEARCH_") and key not in {"FORCE_COLOR", "NO_COLOR"}
    }
    environment["COLUMNS"] = "200"
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "sci_etl_core.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        env=environment,
    )


def index_corpus(folder: Path, *extra: str | Path) -> tuple[Path, Path]:
    """Index :data:`RECORDS` into ``folder/text.db``, tagged by :data:`FACET_KEYS`."""
    source = write_corpus(folder / "records.jsonl")
    db = folder / "text.db"
    facet_args = [arg for key in FACET_KEYS for arg in ("--facet-key", key)]
    result = run_cli("index", source, "--db", db, *facet_args, "--no-progress", *extra)
    assert result.returncode == 0, result.stderr
    return source, db
