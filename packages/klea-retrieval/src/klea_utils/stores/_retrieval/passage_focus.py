"""Re-scoring fused candidates by the place inside them where the question's words meet.

Inside a long document the passages around the answer share its topic words: every chunk
of a rules book says "member", every chunk of a JPEG standard says "JPEG". Ranked as
whole chunks (BM25 sums a word's weight wherever it stands, an embedding averages the
chunk), a neighbour that repeats the topic words can outrank the passage where the
question's *distinguishing* words stand together. This pass looks at that place:

1. Each leg hands over a deeper pool than the caller keeps (``pool`` hits), fused by RRF.
2. The question's content words are stemmed as the lexical legs stem them; each gets a
   weight from how few of the pooled passages hold it (an IDF over the pool), so the
   topic words all passages share weigh little and the rare ones weigh much. Where the
   pipeline can count the words over the whole library
   (:mod:`~klea_utils.stores._retrieval.library_terms`), that weight is multiplied by
   the word's IDF over the library (``library_idf``): a word every document says
   ("obtain", "approach") weighs less than one few say ("renormalize"), however rarely
   the pool holds it. A word that names the passage's document (point 5) takes the
   question's lowest library IDF: its rarity in the library is what found the document.
3. A passage's *focus* is the weight of the question words inside its best window of
   ``window`` words (each distinct word counted once), as a share of the weight of all
   the question's words, blended with the share its whole text covers.
4. Optionally (``vector_share`` above 0; off by default), where the pipeline can read the
   pooled passages' stored vectors (a vector store in the domain), the focus blends in
   their cosine to the question, scaled over the pool to ``[0, 1]`` (min-max):
   ``(1 - vector_share) * lexical + vector_share * cosine``, so a passage that says the
   answer in other words than the question can keep its place against a neighbour that
   repeats the question's words. A passage without a stored vector keeps its lexical
   focus.
5. When the question names a passage's document (an author's family name, or half of the
   title's words: "In Thoreau's Walden, ..."), those words weigh ``identity_weight`` as
   much in that passage's focus: they found the document, not the place in it.
6. A leading clause that says where to look ("In the X report, ...") names the
   document: its words weigh as a title's words do under point 5, in every passage.
7. Pairs of neighbouring question words found next to each other in the passage (a
   name, a term of art: "patent wars", "font program") add ``phrase_share`` of the
   focus, as sequential-dependence models of IR weigh ordered pairs.
8. A question that asks for a kind of value (a percentage, a sum of money, a year, a
   number) gives ``answer_share`` of the focus to the passages that hold one.
9. A question word written as an identifier (a capital inside a word that has lower-case
   letters, "CMath", "MuPDF"; letters and digits in one word, "GSM8K", "8038B") weighs
   ``identifier_weight`` times as much, unless it names the passage's document (point 5):
   a benchmark's, a product's or a form's name says which row, section or exhibit
   answers more surely than a common word the pool happens to hold as rarely.
10. The final score mixes the fused rank score (scaled to the best candidate's) and the
   focus: ``(1 - weight) * fused + weight * focus``.

Numbers and units are matched as such: a number word from one to twenty reads as its
digits ("five" matches "5"; "zero" does not read as "0", which every decimal and chart
axis holds: "below zero" and "zero-shot" ask for no digit), and ``%``, ``$`` and ``°``
read as "percent", "dollar" and "degree", so "5 percent" finds "5%".

No model is loaded and nothing is downloaded: the pass reads the candidates' text and
stored vectors (the question's vector is the one the vector leg searched with), a few
milliseconds for a pool of 60 passages. It runs in :class:`~klea_utils.stores.
pipeline.KleaPipeline` between the fusion and the optional cross-encoder.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from klea_utils.stores._retrieval.answer_kind import asked_kind, holds_kind
from klea_utils.stores._retrieval.focus_words import (
    identifier_terms,
    passage_terms,
    question_pairs,
    question_terms,
)
from klea_utils.stores._retrieval.query_words import LEXICAL_STOPWORDS
from klea_utils.stores.text import normalize_text
from langchain_core.documents import Document

__all__ = [
    "FocusParams",
    "SentenceSimilarities",
    "blend_similarities",
    "file_key",
    "focus_rerank",
    "focus_scores",
    "heading_words",
    "identifier_terms",
    "identity_terms",
    "passage_terms",
    "place_question",
    "question_pairs",
    "question_terms",
    "scope_terms",
]


@dataclass(frozen=True)
class FocusParams:
    """How candidates are re-scored (see the module's description).

    Attributes:
        pool: Hits each leg hands over before re-scoring (at least the caller's ``k``).
        window: Words in the window whose question words make the focus.
        weight: Share of the focus in the final score (0: the fused order as it was).
        window_share: Share of the best window in the focus; the rest is the share of
            the question's weight the whole passage covers.
        within_files: Re-order passages inside each file only: every file keeps the
            places (and fused scores) its passages hold in the fused order, filled by its
            best focused passages. ``False`` re-scores across files too.
        vector_share: Share of the stored-vector cosine in the focus when the passages'
            similarities are given (0, the default: the focus reads words only). Off by
            default: with the packaged MiniLM it helped the development papers and cost
            the real-world long documents (see the retrieval-quality benchmarks); a
            stronger embedder may tell a document's passages apart better.
        idf_scope: ``pool``: a question word weighs by how few passages of the whole
            pool hold it; ``file``: by how few passages of the same file hold it (the
            words every passage of a long document repeats weigh little there).
        identity_weight: Scale of the question words that name a passage's document
            (its title or an author's family name, when the question names it: see
            :func:`identity_terms`). They picked the document and say nothing about
            where in it the answer stands ("In Thoreau's Walden, what ..." otherwise
            favours the title page). 1 turns it off.
        phrase_share: Share of the question's word pairs in the focus: two content
            words next to each other in the question ("patent wars") that stand within
            ``phrase_gap`` words in that order in the passage, weighed by the rarer
            word's weight, as a share of all the question's pairs (0 turns it off).
        phrase_gap: How far apart (in words) a pair's second word may follow the first
            in the passage (1: next to it).
        scope_clause: Read a leading clause that says where to look ("In the KB's
            inventory of PDF preservation risks, ...", "According to the IRS manual,
            ...") as naming the document: its words, less those the rest of the question
            also uses, weigh ``identity_weight`` as much in every passage, as the words
            of the document's title and authors do. They picked the document and say
            nothing about the place in it.
        answer_share: Share of the focus that goes to passages holding a value of the
            kind the question asks for ("what share" a percentage, "how much money" a
            sum, "which year" a year, "how many" a number; see
            :mod:`~klea_utils.stores._retrieval.answer_kind`). A question that asks for
            no kind is scored without it (0 turns it off).
        reference_lists_back: After the focus, the pipeline moves reference-list chunks
            behind the other passages of their file, and a file found only by its list
            behind the other files; a question that names the list gets them first in
            their file (:mod:`~klea_utils.stores._retrieval.reference_lists`). ``False``
            leaves them where the focus put them.
        sentence_share: Share of each passage's best sentence cosine to the question in
            the order of the first ``sentence_top`` places (0, the default: off). The
            passages there of a file holding two or more of them are cut into sentences,
            embedded with the domain's vector embedder (each passage once per pipeline,
            :mod:`~klea_utils.stores._retrieval.sentence_focus`) and compared with the
            question less a leading clause that names the document; they are re-ordered
            by ``(1 - share) * score + share * cosine``, and every file keeps its places.
            Only when a vector store of the domain answered. Off by default: with the
            packaged MiniLM it lifted the development papers and cost the real-world
            files, and it multiplies a question's latency (see the retrieval-quality
            benchmarks, issue 35).
        sentence_top: The places whose passages ``sentence_share`` re-orders.
        identifier_weight: Scale of the question words written as identifiers (see
            :func:`identifier_terms`: "CMath", "GSM8K", "8038B") in every passage whose
            document they do not name. 1 turns it off.
        library_idf: Multiply each question word's pool weight by its IDF over the whole
            library, where the pipeline can count it (point 2 of the module's
            description). ``False`` keeps the pool's weights alone.
    """

    pool: int = 20
    window: int = 24
    weight: float = 0.7
    window_share: float = 0.25
    within_files: bool = True
    vector_share: float = 0.0
    idf_scope: Literal["pool", "file"] = "pool"
    identity_weight: float = 0.25
    phrase_share: float = 0.2
    phrase_gap: int = 1
    scope_clause: bool = True
    answer_share: float = 0.2
    reference_lists_back: bool = True
    sentence_share: float = 0.0
    sentence_top: int = 5
    identifier_weight: float = 3.0
    library_idf: bool = True

    def __post_init__(self) -> None:
        for name in ("pool", "window", "phrase_gap", "sentence_top"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        for name in (
            "weight",
            "window_share",
            "vector_share",
            "identity_weight",
            "phrase_share",
            "answer_share",
            "sentence_share",
        ):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be within [0, 1], got {value!r}")
        if self.identifier_weight < 1.0:
            raise ValueError(f"identifier_weight must be >= 1, got {self.identifier_weight!r}")
        if self.idf_scope not in ("pool", "file"):
            raise ValueError(f"idf_scope must be 'pool' or 'file', got {self.idf_scope!r}")


def _pairs_found(
    hits: list[tuple[int, str]], pairs: list[tuple[str, str]], gap: int
) -> set[tuple[str, str]]:
    """The ``pairs`` whose second word follows the first within ``gap`` words in ``hits``."""
    wanted = set(pairs)
    found: set[tuple[str, str]] = set()
    for j, (position, term) in enumerate(hits):
        # positions rise one word at least per hit: the hits within ``gap`` words of this
        # one are among the ``gap`` before it
        for earlier, first in reversed(hits[max(0, j - gap) : j]):
            if position - earlier > gap:
                break
            if (first, term) in wanted:
                found.add((first, term))
    return found


def _best_window(positions: list[tuple[int, str]], weights: dict[str, float], size: int) -> float:
    """The largest weight of distinct terms found within ``size`` consecutive words."""
    best = 0.0
    inside: dict[str, int] = {}
    total = 0.0
    first = 0
    for position, term in positions:
        while positions[first][0] <= position - size:
            old = positions[first][1]
            inside[old] -= 1
            if not inside[old]:
                del inside[old]
                total -= weights[old]
            first += 1
        if term not in inside:
            inside[term] = 0
            total += weights[term]
        inside[term] += 1
        best = max(best, total)
    return best


def focus_scores(
    question: str,
    texts: Sequence[str],
    params: FocusParams,
    lead_words: Sequence[int] | None = None,
    groups: Sequence[str] | None = None,
    identities: Sequence[frozenset[str]] | None = None,
    library_weights: Mapping[str, float] | None = None,
) -> list[float]:
    """Each text's focus in ``[0, 1]`` for ``question`` (all 0 when it has no content word).

    ``lead_words`` (one per text) is how many of a text's first words are its heading
    chain: they count for the words the passage covers, not for its best window (the
    title that opens every chunk of a paper says nothing about where in it the answer is).
    ``library_weights``: each question term's IDF over the whole library, multiplied into
    its pool weight (a term that names a text's document takes the lowest of them there).
    """
    terms = question_terms(question)
    if not terms or not texts:
        return [0.0] * len(texts)
    wanted = set(terms)
    found = [[(i, t) for i, t in enumerate(passage_terms(text)) if t in wanted] for text in texts]
    held = [{term for _, term in hits} for hits in found]
    keys = list(groups) if groups is not None else [""] * len(texts)
    members: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        members.setdefault(key, []).append(i)
    group_weights = {}
    for key, inside in members.items():
        holders = {t: sum(t in held[i] for i in inside) for t in terms}
        n = len(inside)
        group_weights[key] = {t: math.log(1.0 + (n + 1.0) / (holders[t] + 0.5)) for t in terms}
    leads = lead_words if lead_words is not None else [0] * len(texts)
    names = identities if identities is not None else [frozenset()] * len(texts)
    pairs = question_pairs(question) if params.phrase_share else []
    kind = asked_kind(question) if params.answer_share else None
    identifiers = identifier_terms(question) if params.identifier_weight != 1.0 else frozenset()
    scores = []
    for hits, terms_of, lead, key, name in zip(found, held, leads, keys, names, strict=True):
        weights = _with_library(group_weights[key], library_weights, name)
        weights = _discounted(weights, name, params.identity_weight)
        weights = _raised(weights, identifiers - name, params.identifier_weight)
        whole = sum(weights.values())
        # sums run in the question's word order, never a set's (whose order follows the
        # process's hash seed): the same floats in another order can round differently
        covered = sum(weights[t] for t in terms if t in terms_of)
        body = [(i, t) for i, t in hits if i >= lead]
        window = _best_window(body, weights, params.window) if body else 0.0
        share = params.window_share
        score = (share * window + (1.0 - share) * covered) / whole
        if pairs:
            pair_weight = {p: min(weights[p[0]], weights[p[1]]) for p in pairs}
            joined_pairs = _pairs_found(body, pairs, params.phrase_gap)
            joined = sum(pair_weight[p] for p in pairs if p in joined_pairs)
            all_pairs = sum(pair_weight.values()) or 1.0
            score = (1.0 - params.phrase_share) * score + params.phrase_share * joined / all_pairs
        scores.append(score)
    if kind is not None:
        kind_share = params.answer_share
        scores = [
            (1.0 - kind_share) * score + kind_share * holds_kind(text, kind)
            for score, text in zip(scores, texts, strict=True)
        ]
    return scores


def _with_library(
    weights: dict[str, float], library: Mapping[str, float] | None, names: frozenset[str]
) -> dict[str, float]:
    """``weights`` times each term's library IDF; the terms in ``names`` (they name the
    passage's document) take the lowest library IDF of the question's terms."""
    if not library:
        return weights
    floor = min(library.get(t, 1.0) for t in weights)
    return {t: w * (floor if t in names else library.get(t, 1.0)) for t, w in weights.items()}


def _discounted(
    weights: dict[str, float], names: frozenset[str], factor: float
) -> dict[str, float]:
    """``weights`` with the words that name the passage's document scaled by ``factor``
    (unless every question word names it: the question then asks about the document)."""
    if factor == 1.0 or not names.intersection(weights) or names.issuperset(weights):
        return weights
    return {t: w * factor if t in names else w for t, w in weights.items()}


def _raised(
    weights: dict[str, float], identifiers: frozenset[str], factor: float
) -> dict[str, float]:
    """``weights`` with the question's identifier words scaled by ``factor``."""
    if not identifiers.intersection(weights):
        return weights
    return {t: w * factor if t in identifiers else w for t, w in weights.items()}


def identity_terms(doc: Document, question: Sequence[str]) -> frozenset[str]:
    """The words of ``question`` (its terms) that name ``doc``'s document, if it names it.

    A question names a document when it holds an author's family name or at least half
    of the title's content words ("In Thoreau's Walden, ..."); the words of the title and
    of the authors' names are then what picked the document, and say nothing about where
    in it the answer stands. A question that shares a word or two of a long title (a
    paper's topic words) does not name it.
    """
    asked = set(question)
    title = set(passage_terms(str(doc.metadata.get("title") or ""))) - LEXICAL_STOPWORDS
    names = [
        passage_terms(name)
        for name in _names(doc.metadata.get("authors"))
        if len(name.split()) > 1 and passage_terms(name)
    ]
    family = {words[-1] for words in names}
    if not family & asked and not (title and 2 * len(title & asked) >= len(title)):
        return frozenset()
    # every word of the names then names the document, as the title's do: two authors'
    # names that a title page set on one line are one name, whose last word alone is a
    # family name ("Yusuke Shinyama Satoshi Sekine")
    return frozenset((title | {w for words in names for w in words}) & asked)


_SCOPE_CLAUSE = re.compile(
    r"^\s*(?:in|according to|from|within|inside)\s+(?!(?:which|what|whose|how|when|where|who)\b)"
    r"([^,?]+),(.+)$",
    re.IGNORECASE | re.DOTALL,
)


def scope_terms(question: str) -> frozenset[str]:
    """The terms of a leading clause that names where to look ("In the X report, ..."),
    less those the rest of the question asks for too."""
    match = _SCOPE_CLAUSE.match(normalize_text(question))
    if match is None:
        return frozenset()
    rest = set(question_terms(match.group(2)))
    return frozenset(t for t in question_terms(match.group(1)) if t not in rest)


def place_question(question: str) -> str:
    """``question`` less a leading clause that names where to look ("In the X report, what
    ..." -> "what ..."): what it asks about the place inside the document."""
    match = _SCOPE_CLAUSE.match(normalize_text(question))
    return match.group(2).strip() if match is not None else question


def _names(value: object) -> list[str]:
    """The author names of a ``authors`` metadata value (a list; a lone name as text)."""
    if isinstance(value, list):
        return [str(v) for v in value]
    return [value] if isinstance(value, str) else []


def heading_words(doc: Document) -> int:
    """How many words open ``doc``'s text with its heading chain (metadata ``headings``)."""
    headings = doc.metadata.get("headings")
    if not isinstance(headings, list) or not headings:
        return 0
    lead = "\n".join(str(h) for h in headings)
    if not doc.page_content.startswith(lead):
        return 0
    return len(passage_terms(lead))


def blend_similarities(
    focus: Sequence[float], similarities: Sequence[float | None], share: float
) -> list[float]:
    """``focus`` blended with ``similarities`` scaled to ``[0, 1]`` over those known.

    A passage whose similarity is ``None`` keeps its focus; when every known similarity
    is the same, they add nothing to tell the passages apart.
    """
    known = [s for s in similarities if s is not None]
    if not known or share == 0.0:
        return list(focus)
    low, span = min(known), max(known) - min(known)
    return [
        f if s is None else (1.0 - share) * f + share * ((s - low) / span if span else 0.0)
        for f, s in zip(focus, similarities, strict=True)
    ]


SentenceSimilarities = Callable[[Sequence[Document]], Sequence[float | None]]
"""Each passage's best sentence cosine to the question (``None``: unknown); see
:mod:`~klea_utils.stores._retrieval.sentence_focus`."""


def focus_rerank(
    question: str,
    merged: Sequence[tuple[Document, float]],
    params: FocusParams | None = None,
    similarities: Sequence[float | None] | None = None,
    sentence_similarities: SentenceSimilarities | None = None,
    library_weights: Mapping[str, float] | None = None,
) -> list[tuple[Document, float]]:
    """``merged`` (fused ``(document, score)`` pairs) re-scored by focus, best first.

    ``similarities``: each pair's stored-vector cosine to the question (``None`` where
    unknown), in the order of ``merged``; blended into the focus by
    ``params.vector_share``. ``sentence_similarities``: asked for the passages at the
    first ``params.sentence_top`` places (those of a file holding two or more of them),
    blended by ``params.sentence_share`` (see :func:`_by_sentences`).
    ``library_weights``: the question terms' IDF over the library (see
    :func:`focus_scores`), used when ``params.library_idf``. Ties keep the fused
    order. With ``params.weight`` 0 the order is the fused one and the scores are scaled
    fused scores.
    """
    params = params or FocusParams()
    if not merged:
        return []
    if similarities is not None and len(similarities) != len(merged):
        raise ValueError(f"{len(similarities)} similarities for {len(merged)} passages")
    order_in = sorted(range(len(merged)), key=lambda i: -merged[i][1])  # stable: fused order
    sims = [similarities[i] for i in order_in] if similarities is not None else None
    merged = [merged[i] for i in order_in]
    top = merged[0][1] or 1.0
    docs = [doc for doc, _ in merged]
    groups = [file_key(d) for d in docs] if params.idf_scope == "file" else None
    asked = question_terms(question)
    identities = [identity_terms(d, asked) for d in docs] if params.identity_weight != 1.0 else None
    if identities is not None and params.scope_clause:
        scope = scope_terms(question)
        identities = [names | scope for names in identities]
    texts = [d.page_content for d in docs]
    leads = [heading_words(d) for d in docs]
    library = library_weights if params.library_idf else None
    focus = focus_scores(question, texts, params, leads, groups, identities, library)
    if sims is not None:
        focus = blend_similarities(focus, sims, params.vector_share)
    finals = [
        (1.0 - params.weight) * (score / top) + params.weight * f
        for (_, score), f in zip(merged, focus, strict=True)
    ]
    order = sorted(range(len(merged)), key=lambda i: -finals[i])
    if not params.within_files:
        return [(merged[i][0], finals[i]) for i in order]
    # Each file keeps the places its passages hold in the fused order (and their fused
    # scores); its passages fill those places, the best focused first.
    best_first: dict[str, list[int]] = {}
    for i in order:
        best_first.setdefault(file_key(docs[i]), []).append(i)
    placed: dict[str, int] = {}
    chosen: list[int] = []
    for doc in docs:
        key = file_key(doc)
        chosen.append(best_first[key][placed.get(key, 0)])
        placed[key] = placed.get(key, 0) + 1
    if sentence_similarities is not None and params.sentence_share > 0:
        chosen = _by_sentences(chosen, docs, finals, params, sentence_similarities)
    return [(docs[i], score / top) for i, (_, score) in zip(chosen, merged, strict=True)]


def _by_sentences(
    chosen: list[int],
    docs: Sequence[Document],
    finals: Sequence[float],
    params: FocusParams,
    sentence_similarities: SentenceSimilarities,
) -> list[int]:
    """``chosen`` (the passage at each place) with each file's passages among the first
    ``params.sentence_top`` places re-ordered by ``(1 - share) * final + share * best
    sentence cosine``; a file keeps its places, and a file with one passage there is not
    asked about (nothing to re-order)."""
    head = chosen[: params.sentence_top]
    per_file: dict[str, list[int]] = {}
    for i in head:
        per_file.setdefault(file_key(docs[i]), []).append(i)
    asked = [i for members in per_file.values() if len(members) > 1 for i in members]
    if not asked:
        return chosen
    cosines = dict(zip(asked, sentence_similarities([docs[i] for i in asked]), strict=True))
    share = params.sentence_share
    blended = dict.fromkeys(asked, 0.0)
    for i in asked:
        cosine = cosines[i]
        blended[i] = finals[i] if cosine is None else (1.0 - share) * finals[i] + share * cosine
    ranked = {
        key: sorted(members, key=lambda i: -blended[i])
        for key, members in per_file.items()
        if len(members) > 1
    }
    taken: dict[str, int] = {}
    out = []
    for i in head:
        key = file_key(docs[i])
        if key not in ranked:
            out.append(i)
            continue
        out.append(ranked[key][taken.get(key, 0)])
        taken[key] = taken.get(key, 0) + 1
    return out + chosen[params.sentence_top :]


def file_key(doc: Document) -> str:
    """The file a passage comes from (its hash, else its name); a passage of no named
    file stands alone."""
    name = doc.metadata.get("file_hash") or doc.metadata.get("file_name")
    return f"file:{name}" if isinstance(name, str) and name else f"passage:{doc.page_content}"
