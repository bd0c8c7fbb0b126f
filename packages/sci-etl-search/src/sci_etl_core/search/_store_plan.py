"""A query compiled for the in-memory store: its scored phrases, match and count rules (internal).

FTS5 scores one "phrase" per term, phrase, and NEAR operand of the MATCH expression.
:func:`compile_plan` numbers them in the order written and keeps, for each, the fields
it searches. :func:`collect` decides whether a document matches and which phrases
count towards its score: only those in a part of the query that matches it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from sci_etl_core.search.evaluate import TokenizedDocument, matches, near_occurrences, occurrences
from sci_etl_core.search.query import FIELDS, And, Near, Node, Not, Phrase, Term
from sci_etl_core.search.tokenize import Tokenizer

__all__ = ["BoolPlan", "Entry", "LeafPlan", "NearPlan", "Plan", "collect", "compile_plan"]


@dataclass
class Entry:
    """One stored document as the in-memory store keeps it."""

    tokens: TokenizedDocument
    counts: dict[str, Counter[str]]
    length: int
    tags: dict[str, frozenset[str]] = field(default_factory=dict)


@dataclass
class LeafPlan:
    """A term or phrase, scored as one FTS5 phrase."""

    index: int
    leaf: Term | Phrase
    fields: tuple[str, ...]
    words: tuple[str, ...]

    @property
    def simple(self) -> bool:
        """Whether the leaf is one exact token, answered from token counts alone."""
        return len(self.words) == 1 and not (isinstance(self.leaf, Term) and self.leaf.prefix)

    def occurs(self, entry: Entry, tokenizer: Tokenizer) -> bool:
        """Report whether the leaf occurs in the fields it searches."""
        if not self.words:
            return False
        if self.simple:
            word = self.words[0]
            return any(entry.counts[name][word] for name in self.fields)
        return bool(occurrences(self.leaf, entry.tokens, tokenizer=tokenizer))

    def hits(self, entry: Entry, tokenizer: Tokenizer) -> dict[str, list[tuple[int, int]]]:
        """Return the leaf's occurrences per field."""
        if not self.words:
            return {}
        if self.simple:
            word = self.words[0]
            found: dict[str, list[tuple[int, int]]] = {}
            for name in self.fields:
                if entry.counts[name][word]:
                    tokens = getattr(entry.tokens, name)
                    found[name] = [(i, i + 1) for i, token in enumerate(tokens) if token == word]
            return found
        return occurrences(self.leaf, entry.tokens, tokenizer=tokenizer)


@dataclass
class NearPlan:
    """A NEAR group, whose operands are scored as phrases."""

    node: Near
    operands: tuple[LeafPlan, ...]


@dataclass
class BoolPlan:
    """An AND, OR or NOT over plans."""

    kind: str
    children: tuple[Plan, ...]


Plan = LeafPlan | NearPlan | BoolPlan


def _words(leaf: Term | Phrase, tokenizer: Tokenizer) -> tuple[str, ...]:
    text = leaf.text if isinstance(leaf, Term) else " ".join(leaf.words)
    return tuple(token.text for token in tokenizer.tokens(text))


def _scoped(leaf: Term | Phrase, fields: tuple[str, ...]) -> Term | Phrase:
    if isinstance(leaf, Term):
        return Term(leaf.text, fields=fields, prefix=leaf.prefix)
    return Phrase(leaf.words, fields=fields)


def compile_plan(node: Node, tokenizer: Tokenizer) -> tuple[Plan, list[LeafPlan]]:
    """Compile the normalized ``node``, returning the plan and its phrases in order."""
    leaves: list[LeafPlan] = []

    def leaf_plan(leaf: Term | Phrase, fields: tuple[str, ...]) -> LeafPlan:
        scoped = _scoped(leaf, fields) if fields != leaf.fields else leaf
        plan = LeafPlan(len(leaves), scoped, fields or FIELDS, _words(leaf, tokenizer))
        leaves.append(plan)
        return plan

    def build(item: Node) -> Plan:
        if isinstance(item, Term | Phrase):
            return leaf_plan(item, item.fields)
        if isinstance(item, Near):
            return NearPlan(item, tuple(leaf_plan(op, item.fields) for op in item.operands))
        if isinstance(item, Not):
            return BoolPlan("not", (build(item.operand),))
        kind = "and" if isinstance(item, And) else "or"
        return BoolPlan(kind, tuple(build(child) for child in item.operands))

    return build(node), leaves


Counted = list[tuple[LeafPlan, dict[str, list[tuple[int, int]]] | None]]


def collect(plan: Plan, entry: Entry, tokenizer: Tokenizer, out: Counted) -> bool:
    """Report whether ``entry`` matches ``plan``, appending the phrases that count.

    A leaf is appended with ``None`` (all its occurrences count); a NEAR operand with
    the occurrences FTS5 keeps for the group.
    """
    if isinstance(plan, LeafPlan):
        if plan.occurs(entry, tokenizer):
            out.append((plan, None))
            return True
        return False
    if isinstance(plan, NearPlan):
        if not matches(plan.node, entry.tokens, tokenizer=tokenizer):
            return False
        kept = near_occurrences(plan.node, entry.tokens, tokenizer=tokenizer)
        for operand, hits in zip(plan.operands, kept, strict=True):
            out.append((operand, dict(hits)))
        return True
    if plan.kind == "not":
        return not collect(plan.children[0], entry, tokenizer, [])
    if plan.kind == "and":
        found: Counted = []
        for child in plan.children:
            if not collect(child, entry, tokenizer, found):
                return False
        out.extend(found)
        return True
    matched = False
    for child in plan.children:
        if collect(child, entry, tokenizer, out):
            matched = True
    return matched
