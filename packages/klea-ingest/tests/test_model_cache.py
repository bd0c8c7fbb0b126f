"""Whether Docling's models are in the Hugging Face cache, read from the cache's layout.

``cached_snapshot`` answers what ``snapshot_download(..., local_files_only=True)`` answers,
without importing the hub client (about 0.4 CPU-seconds of a worker's start-up). Each
cache layout below is checked against ``snapshot_download`` itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from klea_utils.stores._ingest.convert.conversion import cached_snapshot

REPO = "docling-project/docling-models"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _layout(cache: Path, *, ref: str | None, snapshots: list[str]) -> None:
    repo = cache / "models--docling-project--docling-models"
    for commit in snapshots:
        (repo / "snapshots" / commit).mkdir(parents=True)
        (repo / "snapshots" / commit / "config.json").write_text("{}", encoding="utf-8")
    if ref is not None:
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / "main").write_text(ref, encoding="utf-8")


@pytest.mark.parametrize(
    ("ref", "snapshots"),
    [
        (None, []),  # nothing cached
        (COMMIT, [COMMIT]),  # a complete download
        (COMMIT + "\n", [COMMIT]),  # a ref file ending in a newline
        (None, [COMMIT]),  # a snapshot without a ref to main
        (COMMIT, []),  # a ref to a snapshot that is gone
        ("f" * 40, [COMMIT]),  # a ref to another snapshot
    ],
)
def test_the_cache_layout_is_read_as_snapshot_download_reads_it(
    tmp_path: Path, ref: str | None, snapshots: list[str]
) -> None:
    from huggingface_hub import snapshot_download

    _layout(tmp_path, ref=ref, snapshots=snapshots)
    try:
        expected: Path | None = Path(
            snapshot_download(REPO, cache_dir=tmp_path, local_files_only=True)
        )
    except Exception:  # not cached: LocalEntryNotFoundError and relatives
        expected = None
    assert cached_snapshot(REPO, cache_dir=tmp_path) == expected


def test_an_empty_ref_is_no_snapshot(tmp_path: Path) -> None:
    # The hub client answers the ``snapshots`` folder itself here, from which no model
    # loads: the one place the two differ, on purpose.
    _layout(tmp_path, ref="", snapshots=[COMMIT])
    assert cached_snapshot(REPO, cache_dir=tmp_path) is None
