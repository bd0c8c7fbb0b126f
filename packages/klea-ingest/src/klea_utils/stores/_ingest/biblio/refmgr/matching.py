"""Find a source file's entry: by attachment, DOI, arXiv id, then title similarity.

See :mod:`klea_utils.stores.references` for the order and
:data:`~klea_utils.stores.references.TITLE_MATCH_THRESHOLD` for the title test.
"""

from __future__ import annotations

import os
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from difflib import SequenceMatcher
from pathlib import Path

from klea_utils.stores._ingest.biblio.refmgr.entries import (
    TITLE_MATCH_THRESHOLD,
    FileMatch,
    ReferenceEntry,
)
from klea_utils.stores._ingest.biblio.refmgr.file_field import file_name_of
from klea_utils.stores._ingest.biblio.refmgr.identifiers import (
    arxiv_in_name,
    find_arxiv_ids,
    find_dois,
    normalize_arxiv,
    normalize_doi,
    normalize_title,
)

__all__ = ["HEAD_WORDS", "MIN_TITLE_WORDS_IN_TEXT", "EntryIndex", "title_similarity"]

HEAD_WORDS = 400
"""Words at the top of a file's text searched for an entry's title."""

MIN_TITLE_WORDS_IN_TEXT = 4
"""Shortest title (in words) looked for in the text; a shorter one ("Genome editing")
occurs in too many papers and is compared with the extracted title only."""

_OVERLAP = 0.8  # share of a title's words that must occur at the top before it is compared
_EXTRACTED_OVERLAP = 0.5  # share of its words a title must have in the extracted title


def _path_key(path: str) -> str:
    return os.path.normcase(unicodedata.normalize("NFC", path.replace("\\", "/")))


def _name_key(path: str) -> str:
    return unicodedata.normalize("NFC", file_name_of(path)).casefold()


def _same_size(file_path: Path, attached: Path) -> bool:
    """Whether the attached file is this one's copy, as far as its size tells; ``True``
    when the attached file is not on this machine (a library exported elsewhere)."""
    try:
        return attached.stat().st_size == file_path.stat().st_size
    except OSError:
        return True


def _ratio(left: str, right: str, floor: float) -> float:
    """difflib's ratio of the two strings, or 0 when its cheap upper bounds are below
    ``floor`` (the full ratio costs milliseconds per pair)."""
    matcher = SequenceMatcher(None, left, right, autojunk=False)
    if matcher.real_quick_ratio() < floor or matcher.quick_ratio() < floor:
        return 0.0
    return matcher.ratio()


def title_similarity(
    title: str, extracted_title: str, head_words: list[str], floor: float = 0.0
) -> float:
    """How alike an entry's folded ``title`` is to the file's (0-1): the better of the
    extracted title and the best run of as many words at the top of its text. A
    similarity under ``floor`` may be given as 0."""
    if not title:
        return 0.0
    best = _ratio(title, extracted_title, floor) if extracted_title else 0.0
    words = title.split()
    if len(words) < MIN_TITLE_WORDS_IN_TEXT or not head_words:
        return best
    present = set(head_words)
    if sum(1 for w in words if w in present) < _OVERLAP * len(words):
        return best
    width = len(words)
    for start in range(max(1, len(head_words) - width + 1)):
        if head_words[start] not in words[:2] and start + 1 < len(head_words):
            continue  # a window worth comparing starts with one of the title's first words
        window = " ".join(head_words[start : start + width])
        best = max(best, _ratio(title, window, max(floor, best)))
    return best


class EntryIndex:
    """Entries indexed by attachment path, attachment file name, DOI, arXiv id and title."""

    def __init__(self, entries: Iterable[ReferenceEntry]) -> None:
        self.entries = list(entries)
        self.by_path: dict[str, ReferenceEntry] = {}
        names: dict[str, list[tuple[ReferenceEntry, str]]] = defaultdict(list)
        self.by_doi: dict[str, ReferenceEntry] = {}
        self.by_arxiv: dict[str, ReferenceEntry] = {}
        for entry in self.entries:
            for path in entry.attachments:
                self.by_path.setdefault(_path_key(path), entry)
                if all(e is not entry for e, _ in names[_name_key(path)]):
                    names[_name_key(path)].append((entry, path))
            if entry.doi:
                self.by_doi.setdefault(normalize_doi(entry.doi), entry)
            if entry.arxiv:
                self.by_arxiv.setdefault(normalize_arxiv(entry.arxiv) or entry.arxiv, entry)
        self.by_name = {name: found[0] for name, found in names.items() if len(found) == 1}
        """Attachments by file name, for the names only one entry attaches."""
        self.titles = [(normalize_title(e.title), e) for e in self.entries if e.title]
        self.title_words: dict[str, list[int]] = defaultdict(list)
        """The titles each (folded) word occurs in, by position in :attr:`titles`."""
        for position, (folded, _) in enumerate(self.titles):
            for word in set(folded.split()):
                self.title_words[word].append(position)

    def _shared_words(self, words: set[str]) -> Counter[int]:
        counts: Counter[int] = Counter()
        for word in words:
            counts.update(self.title_words.get(word, ()))
        return counts

    def _title_candidates(self, extracted: str, head_words: list[str]) -> list[int]:
        """Titles that share enough words with the extracted title or the top of the text
        to be worth a similarity (a 0.9 ratio needs most of the words)."""
        found: set[int] = set()
        for counts, share in (
            (self._shared_words(set(extracted.split())), _EXTRACTED_OVERLAP),
            (self._shared_words(set(head_words)), _OVERLAP),
        ):
            for position, shared in counts.items():
                if shared >= share * len(set(self.titles[position][0].split())):
                    found.add(position)
        return sorted(found)

    def _by_attachment(self, file_path: Path) -> ReferenceEntry | None:
        for candidate in (str(file_path), str(file_path.resolve())):
            entry = self.by_path.get(_path_key(candidate))
            if entry is not None:
                return entry
        found = self.by_name.get(_name_key(file_path.name))
        if found is None or not _same_size(file_path, Path(found[1])):
            return None
        return found[0]

    def _by_title(self, title: str, head_text: str) -> tuple[ReferenceEntry, float] | None:
        extracted = normalize_title(title)
        head_words = normalize_title(head_text).split()[:HEAD_WORDS]
        best: tuple[ReferenceEntry, float] | None = None
        for position in self._title_candidates(extracted, head_words):
            folded, entry = self.titles[position]
            score = title_similarity(folded, extracted, head_words, TITLE_MATCH_THRESHOLD)
            if score >= TITLE_MATCH_THRESHOLD and (best is None or score > best[1]):
                best = (entry, score)
        return best

    def match(
        self, file_path: Path, *, head_text: str, dois: Iterable[str], title: str
    ) -> FileMatch:
        """The entry of ``file_path`` (:meth:`ReferenceLibrary.match
        <klea_utils.stores.references.ReferenceLibrary.match>`)."""
        entry = self._by_attachment(file_path)
        if entry is not None:
            return FileMatch(entry, "attachment")
        # Only the first DOI and arXiv id of the text: later ones are usually cited works.
        for doi in [*(normalize_doi(d) for d in dois), *find_dois(head_text)[:1]]:
            if doi and doi in self.by_doi:
                return FileMatch(self.by_doi[doi], "doi")
        for arxiv in [arxiv_in_name(file_path.stem), *find_arxiv_ids(head_text)[:1]]:
            if arxiv and arxiv in self.by_arxiv:
                return FileMatch(self.by_arxiv[arxiv], "arxiv")
        found = self._by_title(title, head_text)
        if found is not None:
            return FileMatch(found[0], "title", round(found[1], 2))
        return FileMatch()
