"""A chunk's ``regions`` read back from any store: the list of its boxes on the page.

Ingestion writes ``regions`` on PDF chunks: ``[{"page": 7, "bbox": [left, bottom, right,
top]}, ...]`` in PDF user-space points (bottom-left origin of the unrotated page), one box
per line or block, in reading order. A store that holds only flat metadata keeps it as a
JSON string; :func:`regions_of` gives the list back whichever way it was stored, and an
empty list for a chunk without regions (older stores, non-PDF sources) or with a malformed
value (never an error: a passage is still shown without its boxes).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["REGIONS_KEY", "join_regions", "regions_of"]

REGIONS_KEY = "regions"
"""Chunk metadata key of the regions."""

_MAX_REGIONS = 10_000
"""More boxes than any chunk's lines: a value longer than this is not a chunk's regions."""


def _region(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, Mapping):
        return None
    page, bbox = value.get("page"), value.get("bbox")
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        return None
    if not isinstance(bbox, list | tuple) or len(bbox) != 4:
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in bbox):
        return None
    box = [float(v) for v in bbox]
    if not all(math.isfinite(v) for v in box) or box[0] > box[2] or box[1] > box[3]:
        return None
    return {"page": page, "bbox": box}


def regions_of(metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The chunk's regions as a list (``[]`` when it has none or they are malformed)."""
    value = metadata.get(REGIONS_KEY)
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    if not isinstance(value, list) or len(value) > _MAX_REGIONS:
        return []
    regions = [_region(v) for v in value]
    return [r for r in regions if r is not None]


def join_regions(metadatas: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The regions of chunks read one after another (a widened hit), in order."""
    out: list[dict[str, Any]] = []
    for metadata in metadatas:
        for region in regions_of(metadata):
            if not out or out[-1] != region:
                out.append(region)
    return out
