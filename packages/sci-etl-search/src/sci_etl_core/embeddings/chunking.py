"""Split a text into overlapping windows of words, for a vector memory."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_OVERLAP_WORDS", "SlidingWindowChunker"]

#: The overlap a :class:`SlidingWindowChunker` uses when ``overlap_words`` is ``None``,
#: capped at half the window.
DEFAULT_OVERLAP_WORDS = 50


@dataclass(frozen=True)
class SlidingWindowChunker:
    """Cut text into windows of ``chunk_words`` words, overlapping by ``overlap_words``.

    Words are the runs of non-whitespace, as :meth:`str.split` finds them, and each
    passage joins its words with single spaces. Windows start every
    ``chunk_words - overlap_words`` words, and the last window ends at the last word,
    so it always holds more than ``overlap_words`` words:
    :func:`~sci_etl_core.search.backfill_async.merge_passages` relies on that to join the
    passages back into the original words.

    ``overlap_words=None`` chooses :data:`DEFAULT_OVERLAP_WORDS` (50), or half of
    ``chunk_words`` (rounded down) when that is smaller; the chosen value is then the
    ``overlap_words`` attribute, so ``SlidingWindowChunker().overlap_words == 50``.

    Raises:
        TypeError: ``chunk_words`` or ``overlap_words`` is not an int.
        ValueError: ``chunk_words`` is below 1, or ``overlap_words`` is negative or not
            below ``chunk_words``.
    """

    chunk_words: int = 350
    overlap_words: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.chunk_words, bool) or not isinstance(self.chunk_words, int):
            raise TypeError(f"chunk_words must be an int, got {type(self.chunk_words).__name__}")
        if self.chunk_words < 1:
            raise ValueError(f"chunk_words must be >= 1, got {self.chunk_words}")
        if self.overlap_words is None:
            object.__setattr__(
                self, "overlap_words", min(DEFAULT_OVERLAP_WORDS, self.chunk_words // 2)
            )
            return
        if isinstance(self.overlap_words, bool) or not isinstance(self.overlap_words, int):
            raise TypeError(
                f"overlap_words must be an int or None, got {type(self.overlap_words).__name__}"
            )
        if not 0 <= self.overlap_words < self.chunk_words:
            raise ValueError(
                f"overlap_words must be >= 0 and < chunk_words ({self.chunk_words}), "
                f"got {self.overlap_words}"
            )

    @property
    def step(self) -> int:
        """How many words each window starts after the previous one."""
        return self.chunk_words - (self.overlap_words or 0)

    def chunk(self, text: str) -> list[str]:
        """Return the passages of ``text``, in order; blank text gives none.

        Raises:
            TypeError: ``text`` is not a string.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        words = text.split()
        passages: list[str] = []
        start = 0
        while start < len(words):
            end = min(start + self.chunk_words, len(words))
            passages.append(" ".join(words[start:end]))
            if end == len(words):
                break
            start += self.step
        return passages
