"""Text hygiene every text search store shares: what may be stored, and snippet markers.

:func:`sanitize_text` keeps control characters and lone surrogates out of stored text,
so the snippet markers (:data:`SNIPPET_OPEN`, :data:`SNIPPET_CLOSE`) never occur in it;
:func:`split_markers` turns a marked snippet into text and highlighted spans;
:func:`encode_metadata` writes metadata as JSON text a store can always keep. The
documented home of these names is :mod:`sci_etl_core.search.filters`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import date, datetime, time
from typing import Any

__all__ = [
    "SNIPPET_CLOSE",
    "SNIPPET_ELLIPSIS",
    "SNIPPET_OPEN",
    "SNIPPET_TOKENS",
    "encode_metadata",
    "sanitize_text",
    "split_markers",
]

SNIPPET_OPEN = "\x02"
"""Marks where a highlighted span starts in a raw snippet; :func:`sanitize_text` keeps it out of stored text."""  # noqa: E501

SNIPPET_CLOSE = "\x03"
"""Marks where a highlighted span ends in a raw snippet; :func:`sanitize_text` keeps it out of stored text."""  # noqa: E501

SNIPPET_ELLIPSIS = "…"
"""Stands for the text a snippet leaves out before or after it."""

SNIPPET_TOKENS = 32
"""The most tokens a snippet holds (FTS5's ``snippet()`` accepts at most 64)."""

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_MARKERS = re.compile(f"([{SNIPPET_OPEN}{SNIPPET_CLOSE}])")


def _json_default(value: object) -> object:
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray):
        return repr(value)
    if isinstance(value, set | frozenset):
        try:
            return sorted(value)
        except TypeError:
            return [str(item) for item in value]
    return str(value)


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def encode_metadata(metadata: Mapping[str, Any]) -> str:
    """Encode ``metadata`` as the JSON text a text search store keeps.

    Non-ASCII text stays readable UTF-8. A value JSON cannot hold never fails the
    encoding: a ``date``, ``datetime``, or ``time`` becomes its ISO 8601 text, a
    ``bytes`` or ``bytearray`` its ``repr``, and anything else its ``str``. The
    encoding is one-way, so a ``datetime`` reads back as a string. A lone
    surrogate is written as a JSON escape, so the text can always be stored.
    """
    if not metadata:
        return "{}"
    try:
        text = json.dumps(dict(metadata), ensure_ascii=False, default=_json_default, allow_nan=True)
    except (TypeError, ValueError):
        # Non-string keys that JSON refuses, or a circular structure.
        text = json.dumps(
            {
                str(key): _json_default(value) if not _plain(value) else value
                for key, value in metadata.items()
            },
            ensure_ascii=False,
            default=str,
        )
    return _SURROGATE.sub(_escape_surrogate, text)


def _plain(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def sanitize_text(text: str) -> str:
    """Replace control characters other than tab and line breaks, and lone surrogates, with spaces.

    The FTS5 tokenizer already treats every replaced character as a separator,
    so what matches is unchanged. The replacement guarantees that the snippet
    markers :data:`SNIPPET_OPEN` and :data:`SNIPPET_CLOSE` never occur in stored
    text, and that SQLite can always receive it.
    """
    if text.isprintable():  # no control character and no surrogate: the common case
        return text
    return _CONTROL.sub(" ", text)


def split_markers(raw: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Strip snippet markers from ``raw``, returning the plain text and the highlighted spans.

    Each span is a half-open ``[start, end)`` character range of the plain text.
    :data:`SNIPPET_OPEN` opens a span and :data:`SNIPPET_CLOSE` closes it. The
    function never raises: a second opening marker inside a span and a closing
    marker outside one are ignored, a span still open at the end closes there,
    and an empty span is dropped.
    """
    if SNIPPET_OPEN not in raw and SNIPPET_CLOSE not in raw:
        return raw, ()
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    length = 0
    start: int | None = None
    for part in _MARKERS.split(raw):
        if part == SNIPPET_OPEN:
            if start is None:
                start = length
        elif part == SNIPPET_CLOSE:
            if start is not None:
                if length > start:
                    spans.append((start, length))
                start = None
        elif part:
            out.append(part)
            length += len(part)
    if start is not None and length > start:
        spans.append((start, length))
    return "".join(out), tuple(spans)
