"""The attached files a BibTeX ``file`` field names, in each exporter's form.

- Better BibTeX: plain paths, several separated by ``;``
  (``/home/me/Zotero/storage/ABCD1234/Smith - 2020.pdf``);
- Zotero's own BibTeX export and JabRef: ``description:path:type`` records separated by
  ``;``, with ``\\:``, ``\\;`` and ``\\\\`` escaped (``Full Text PDF:/a/b.pdf:application/pdf``,
  ``:papers/smith.pdf:PDF``, ``:C\\:\\\\Users\\\\me\\\\smith.pdf:PDF``);
- Mendeley: the same records with ``$\\backslash$`` for a backslash and Unix paths without
  their leading ``/`` (``:home/me/Mendeley Desktop/smith.pdf:pdf``).

A relative path is taken relative to the ``.bib`` file's folder; one that does not exist
there but does from ``/`` (Mendeley's form) is taken from ``/``.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["attachment_paths", "file_name_of", "split_file_field"]

_MENDELEY_BACKSLASH = "$\\backslash$"
_DRIVE_RE = re.compile(r"^[A-Za-z]$")


def _split_unescaped(value: str, separator: str) -> list[str]:
    """``value`` split on ``separator`` where no backslash escapes it; escapes are kept."""
    parts: list[str] = []
    current: list[str] = []
    index = 0
    while index < len(value):
        char = value[index]
        if char == "\\" and index + 1 < len(value) and value[index + 1] in "\\:;":
            current.append(value[index : index + 2])
            index += 2
            continue
        if char == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    parts.append("".join(current))
    return parts


def _unescape(value: str) -> str:
    return re.sub(r"\\([\\:;])", r"\1", value)


def _record_path(record: str) -> str:
    parts = _split_unescaped(record, ":")
    if len(parts) >= 3:  # description:path:type (an unescaped drive colon joins back)
        path = ":".join(parts[1:-1])
    elif len(parts) == 2 and _DRIVE_RE.match(parts[0]):  # a plain Windows path
        path = ":".join(parts)
    else:
        path = ":".join(parts)
    return _unescape(path).strip()


def split_file_field(value: str) -> list[str]:
    """The paths written in a ``file`` field, unescaped, in order."""
    value = value.replace(_MENDELEY_BACKSLASH, "\\").strip()
    if not value:
        return []
    paths = [_record_path(record) for record in _split_unescaped(value, ";")]
    return [p for p in paths if p]


def _is_absolute(path: str) -> bool:
    return path.startswith(("/", "\\\\")) or bool(re.match(r"^[A-Za-z]:[\\/]", path))


def attachment_paths(value: str, base_dir: Path) -> list[str]:
    """The files of a ``file`` field as paths: absolute ones as written, relative ones
    resolved against ``base_dir`` (or ``/`` for Mendeley's form, when only that exists)."""
    out: list[str] = []
    for path in split_file_field(value):
        if _is_absolute(path):
            out.append(path)
            continue
        local = base_dir / path
        rooted = Path("/" + path)
        out.append(str(rooted if not local.exists() and rooted.exists() else local))
    return out


def file_name_of(path: str) -> str:
    """The last component of a POSIX or Windows path."""
    return re.split(r"[\\/]", path.rstrip("\\/"))[-1]
