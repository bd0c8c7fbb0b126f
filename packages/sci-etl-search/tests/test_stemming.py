"""Porter stemming: documented examples and parity with SQLite FTS5's ``porter`` tokenizer.

FTS5 is the oracle throughout: every stem is compared with the term an FTS5 table
created with :data:`FTS5_PORTER_TOKENIZE` indexes, read back as bytes through an
``fts5vocab`` table, and every query with the rows such a table selects.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sci_etl_core.search.compile_fts5 import is_rankable
from sci_etl_core.search.query import And, Near, Node, Not, Or, Phrase, Term
from sci_etl_core.search.stemming import FTS5_PORTER_TOKENIZE, PorterTokenizer, porter_stem
from sci_etl_core.search.store_base import SearchDocument
from sci_etl_core.search.tokenize import Token, Tokenizer, Unicode61Tokenizer
from search_fts5_oracle import expected as oracle_expected
from search_fts5_oracle import (
    fts5_filter,
    fts5_match,
    fts5_oracle,
    indexed_terms,
    load,
    vocab_oracle,
)
from search_strategies import PREFIXES, VOCABULARY, documents, query_nodes, record_ids, tricky_text

PORTER = PorterTokenizer()
UNICODE61 = Unicode61Tokenizer()

# Common English stems (some already ending as a suffix would) and the suffixes that the
# five Porter steps remove or rewrite, with a few letters the conditions look at.
STEMS: tuple[str, ...] = (
    "rel", "relat", "condit", "ration", "valen", "hesit", "digit", "conform", "radic",
    "differ", "vil", "analog", "vietnam", "predic", "oper", "feud", "decis", "hope",
    "callous", "form", "sensit", "sensib", "tripl", "electr", "good", "reviv", "allow",
    "infer", "airlin", "gyroscop", "adjust", "defens", "irrit", "replac", "depend", "adopt",
    "homolog", "commun", "activ", "angular", "effect", "bowdler", "prob", "rat", "ceas",
    "control", "rol", "run", "hop", "tan", "fal", "his", "fiz", "fail", "fil", "happ", "sk",
    "cr", "agr", "f", "plaster", "motor", "s", "conflat", "troubl", "siz", "galax",
    "photometr", "spectr", "observ", "measur", "comput", "dens", "lumin", "stell", "magnet",
    "cosm", "gener", "nat", "a", "y", "b", "t", "to", "ab", "abl", "cem", "archaeo", "sensibl",
)  # fmt: skip
SUFFIXES: tuple[str, ...] = (
    "ational", "tional", "enci", "anci", "izer", "abli", "bli", "alli", "entli", "eli",
    "ousli", "ization", "ation", "ator", "alism", "iveness", "fulness", "ousness", "aliti",
    "iviti", "biliti", "logi", "icate", "ative", "alize", "iciti", "ical", "ful", "ness",
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion",
    "sion", "tion", "ou", "ism", "ate", "iti", "ous", "ive", "ize", "sses", "ies", "ss", "s",
    "eed", "ed", "ing", "at", "bl", "iz", "e", "l", "ll", "y", "yy", "w", "x",
)  # fmt: skip
# Other tokens unicode61 can produce: digits, non-ASCII letters, a character whose last two
# UTF-8 bytes are equal (subscript two, e2 82 82; 丸, e4 b8 b8).
ODD_STEMS: tuple[str, ...] = ("1990", "h2", "ж", "aж", "жa", "ß", "ba₂", "a丸", "σίσυφ", "𐐨x")

PARAGRAPHS = """
Photometric observations of the dwarf galaxies were reduced with the standard pipeline,
and the resulting magnitudes agreed with the earlier catalogues. Relational databases
store the conditional probabilities; the hesitancy of the digitizer, conformably with
radically different operators, was feudalism's decisiveness. Hopefulness, callousness,
formality, sensitivity, sensibility: the triplicate formative was formalized
electrically. Revival allowance inference airliner gyroscopic adjustable defensible
irritant replacement adjustment dependent adoption homologous communism activate
angularity effective bowdlerize probate rate cease controlling rolling. Caresses, ponies,
ties, cats, feed, plastered, bled, motoring, sing, conflated, troubled, sized, hopping,
tanned, falling, hissing, fizzed, failing, filing, happy, sky, crying, enjoying, toys.
The spectrographs measured luminosities; computationally, the densities were generalized,
nationalized, rationalized and archaeologically sensibly catalogued by 1990s surveys of
H2 regions, Müller's Straße, Σίσυφος and ΣΊΣΥΦΟΣ, naïve coöperation, and résumés.
"""

WORD_EXAMPLES: list[tuple[str, str]] = [
    # FTS5 leaves tokens under 3 or over 64 UTF-8 bytes alone.
    ("a", "a"),
    ("as", "as"),
    ("is", "is"),
    ("ss", "ss"),
    ("жs", "ж"),  # 3 bytes: stemmed
    ("ßs", "ß"),
    ("x" * 63 + "s", "x" * 63),  # 64 bytes: stemmed
    ("x" * 64 + "s", "x" * 64 + "s"),  # 65 bytes: unchanged
    ("ж" * 31 + "s", "ж" * 31),  # 63 bytes
    ("ж" * 31 + "es", "ж" * 31 + "e"),  # 64 bytes
    ("ж" * 32 + "s", "ж" * 32 + "s"),  # 65 bytes
    # A suffix that is the whole word is skipped, so a shorter one applies.
    ("ies", "ie"),
    ("sses", "sse"),
    ("eed", "e"),
    ("ing", "ing"),
    # Non-ASCII bytes and digits are consonants.
    ("жys", "жy"),
    ("жies", "жi"),
    ("σίσυφοσ", "σίσυφοσ"),
    ("straße", "straß"),  # ß is two consonant bytes: the final e goes
    ("1990s", "1990"),
    ("2ing", "2ing"),
    ("h2", "h2"),
    ("covid19", "covid19"),
    ("ba₂ing", "ba\udce2\udc82"),  # the double-consonant rule splits e2 82 82
    ("a丸ed", "a\udce4\udcb8"),
    # y: a vowel after a consonant, a consonant first or after a vowel.
    ("happy", "happi"),
    ("sky", "sky"),
    ("cry", "cry"),
    ("crying", "cry"),
    ("toy", "toi"),
    ("enjoying", "enjoi"),
    ("yyyy", "yyyi"),
    ("syzygy", "syzygi"),
    ("ayyed", "ai"),  # y is a consonant in the double-consonant test
    ("syyed", "sy"),
    # Step 1a.
    ("caresses", "caress"),
    ("ponies", "poni"),
    ("ties", "ti"),
    ("caress", "caress"),
    ("cats", "cat"),
    # Step 1b.
    ("feed", "feed"),
    ("agreed", "agre"),
    ("plastered", "plaster"),
    ("bled", "bled"),
    ("motoring", "motor"),
    ("sing", "sing"),
    ("conflated", "conflat"),
    ("troubled", "troubl"),
    ("sized", "size"),
    ("hopping", "hop"),
    ("tanned", "tan"),
    ("falling", "fall"),
    ("hissing", "hiss"),
    ("fizzed", "fizz"),
    ("failing", "fail"),
    ("filing", "file"),
    ("running", "run"),
    # Step 2 (then later steps).
    ("relational", "relat"),
    ("conditional", "condit"),
    ("rational", "ration"),
    ("valenci", "valenc"),
    ("hesitanci", "hesit"),
    ("digitizer", "digit"),
    ("conformabli", "conform"),
    ("sensibli", "sensibl"),  # bli -> ble, not abli -> able
    ("radicalli", "radic"),
    ("differentli", "differ"),
    ("vileli", "vile"),
    ("analogousli", "analog"),
    ("vietnamization", "vietnam"),
    ("predication", "predic"),
    ("operator", "oper"),
    ("feudalism", "feudal"),
    ("decisiveness", "decis"),
    ("hopefulness", "hope"),
    ("callousness", "callous"),
    ("formaliti", "formal"),
    ("sensitiviti", "sensit"),
    ("sensibiliti", "sensibl"),
    ("archaeology", "archaeolog"),  # logi -> log
    # Step 3.
    ("triplicate", "triplic"),
    ("formative", "form"),
    ("formalize", "formal"),
    ("electriciti", "electr"),
    ("electrical", "electr"),
    ("hopeful", "hope"),
    ("goodness", "good"),
    # Step 4.
    ("revival", "reviv"),
    ("allowance", "allow"),
    ("inference", "infer"),
    ("airliner", "airlin"),
    ("gyroscopic", "gyroscop"),
    ("adjustable", "adjust"),
    ("defensible", "defens"),
    ("irritant", "irrit"),
    ("replacement", "replac"),
    ("adjustment", "adjust"),
    ("dependent", "depend"),
    ("adoption", "adopt"),
    ("homologou", "homolog"),
    ("communism", "commun"),
    ("activate", "activ"),
    ("angulariti", "angular"),
    ("homologous", "homolog"),
    ("effective", "effect"),
    ("bowdlerize", "bowdler"),
    ("ablement", "ablement"),  # only the longest suffix, ement, is tried
    # Step 5.
    ("probate", "probat"),
    ("rate", "rate"),
    ("cease", "ceas"),
    ("controll", "control"),
    ("roll", "roll"),
]


@pytest.fixture(scope="module")
def vocab() -> Iterator[sqlite3.Connection]:
    with vocab_oracle(FTS5_PORTER_TOKENIZE) as db:
        yield db


fts5_terms = indexed_terms


def as_bytes(stems: list[str]) -> list[bytes]:
    return [stem.encode("utf-8", "surrogateescape") for stem in stems]


def assert_stems_equal_fts5(db: sqlite3.Connection, words: list[str]) -> None:
    """Each word must be one unicode61 token; its stem must be FTS5's term for it."""
    assert UNICODE61.words(" ".join(words)) == words
    assert as_bytes([porter_stem(word) for word in words]) == fts5_terms(db, " ".join(words))


def english_words() -> st.SearchStrategy[str]:
    """An English-like word: a common stem and up to three suffixes."""
    return st.builds(
        lambda stem, suffixes: stem + "".join(suffixes),
        st.sampled_from(STEMS + ODD_STEMS),
        st.lists(st.sampled_from(SUFFIXES), max_size=3),
    )


@pytest.mark.parametrize(("word", "stem"), WORD_EXAMPLES)
def test_documented_examples(word: str, stem: str, vocab: sqlite3.Connection) -> None:
    assert porter_stem(word) == stem
    assert fts5_terms(vocab, word) == as_bytes([stem])


def test_a_split_character_round_trips_to_the_fts5_bytes(vocab: sqlite3.Connection) -> None:
    assert porter_stem("ba₂ing").encode("utf-8", "surrogateescape") == b"ba\xe2\x82"
    assert fts5_terms(vocab, "ba₂ing") == [b"ba\xe2\x82"]


def test_unencodable_word_is_unchanged() -> None:
    assert porter_stem("a\ud800ing") == "a\ud800ing"


@given(st.lists(english_words(), min_size=30, max_size=80, unique=True))
def test_equals_fts5_on_english_like_words(vocab: sqlite3.Connection, words: list[str]) -> None:
    assert_stems_equal_fts5(vocab, words)


@given(tricky_text())
def test_equals_fts5_on_tricky_text(vocab: sqlite3.Connection, text: str) -> None:
    assert as_bytes(PORTER.words(text)) == fts5_terms(vocab, text)


def test_equals_fts5_on_a_fixed_vocabulary(vocab: sqlite3.Connection) -> None:
    """Every stem x suffix, every stem x suffix x suffix for a third of the stems, and prose."""
    stems = STEMS + ODD_STEMS
    words = {stem + suffix for stem in stems for suffix in ("", *SUFFIXES)}
    words |= {s + a + b for s in stems[::3] for a in SUFFIXES for b in SUFFIXES}
    words |= set(UNICODE61.words(PARAGRAPHS))
    ordered = sorted(words)
    assert len(ordered) > 50_000
    assert_stems_equal_fts5(vocab, ordered)
    assert as_bytes(PORTER.words(PARAGRAPHS)) == fts5_terms(vocab, PARAGRAPHS)


# --- PorterTokenizer -------------------------------------------------------------------


class SplitOnSpaces:
    """A base tokenizer other than unicode61: lower-cased runs of non-spaces."""

    def tokens(self, text: str) -> list[Token]:
        out, start = [], 0
        for piece in text.split(" "):
            if piece:
                out.append(Token(piece.lower(), start, start + len(piece)))
            start += len(piece) + 1
        return out


def test_tokens_keep_the_base_offsets() -> None:
    text = "Galaxies RUNNING, Müller's naïve H-alpha ba₂ing 𐐀xes"
    stemmed = PORTER.tokens(text)
    base = UNICODE61.tokens(text)
    assert [(t.start, t.end) for t in stemmed] == [(t.start, t.end) for t in base]
    assert [t.text for t in stemmed] == [porter_stem(t.text) for t in base]
    assert [t.text for t in stemmed][:4] == ["galaxi", "run", "muller", "s"]
    assert all(type(token) is Token for token in stemmed)


@given(tricky_text())
def test_words_equal_token_texts(text: str) -> None:
    tokens = PORTER.tokens(text)
    assert PORTER.words(text) == [token.text for token in tokens]
    assert [(t.start, t.end) for t in tokens] == [(t.start, t.end) for t in UNICODE61.tokens(text)]


def test_other_base_tokenizer() -> None:
    tokenizer = PorterTokenizer(SplitOnSpaces())
    assert tokenizer.tokens("Running  H-alpha cats") == [
        Token("run", 0, 7),
        Token("h-alpha", 9, 16),
        Token("cat", 17, 21),
    ]
    assert tokenizer.words("Running  H-alpha cats") == ["run", "h-alpha", "cat"]


def test_defaults_and_protocol() -> None:
    assert FTS5_PORTER_TOKENIZE == "porter unicode61 remove_diacritics 2"
    assert PorterTokenizer() == PorterTokenizer(None) == PorterTokenizer(Unicode61Tokenizer())
    assert PorterTokenizer().base == Unicode61Tokenizer()
    assert isinstance(PORTER, Tokenizer)
    with pytest.raises(TypeError, match="Tokenizer"):
        PorterTokenizer("unicode61")  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        PORTER.base = Unicode61Tokenizer()  # type: ignore[misc]


# --- Queries ---------------------------------------------------------------------------

# Words whose stems and stem prefixes overlap in the ways prefix queries expose.
PORTER_WORDS: tuple[str, ...] = (
    "running", "runs", "runner", "run", "galaxies", "galaxy", "galactic", "photometry",
    "photometric", "photometrically", "connected", "connections", "happiness", "happy",
)  # fmt: skip
PORTER_PREFIXES: tuple[str, ...] = (
    "running", "run", "photometr", "photometry", "photometric", "galaxy", "galaxies",
    "connecting", "happi", "r",
)  # fmt: skip


def porter_field_text(max_words: int = 8) -> st.SearchStrategy[str]:
    spellings = st.sampled_from((str, str, str.title, str.upper))
    spelled = st.builds(lambda word, spell: spell(word), st.sampled_from(PORTER_WORDS), spellings)
    separators = st.sampled_from((" ", " ", ", ", "-", ". "))
    return st.lists(st.tuples(spelled, separators), max_size=max_words).map(
        lambda pairs: "".join(word + sep for word, sep in pairs).strip()
    )


def porter_documents() -> st.SearchStrategy[SearchDocument]:
    return st.builds(
        SearchDocument,
        record_id=record_ids(),
        title=porter_field_text(4),
        abstract=porter_field_text(),
        body=porter_field_text(),
    )


def substitute(node: Node, words: dict[str, str], prefixes: dict[str, str]) -> Node:
    """``node`` with its vocabulary words and prefixes replaced, its shape unchanged."""
    if isinstance(node, Term):
        table = prefixes if node.prefix else words
        return Term(table[node.text], node.fields, node.prefix)
    if isinstance(node, Phrase):
        return Phrase(tuple(words[w] for w in node.words), node.fields)
    if isinstance(node, Near):
        ops = tuple(substitute(op, words, prefixes) for op in node.operands)
        return Near(ops, node.distance, node.fields)  # type: ignore[arg-type]
    if isinstance(node, And):
        return And(tuple(substitute(op, words, prefixes) for op in node.operands))
    if isinstance(node, Or):
        return Or(tuple(substitute(op, words, prefixes) for op in node.operands))
    assert isinstance(node, Not)
    return Not(substitute(node.operand, words, prefixes))


def porter_queries() -> st.SearchStrategy[Node]:
    """The trees of :func:`query_nodes`, over :data:`PORTER_WORDS` and :data:`PORTER_PREFIXES`."""

    def rename(node: Node, words: list[str], prefixes: list[str]) -> Node:
        chosen = dict(zip(VOCABULARY, words[: len(VOCABULARY)], strict=True))
        return substitute(node, chosen, dict(zip(PREFIXES, prefixes[: len(PREFIXES)], strict=True)))

    return st.builds(
        rename, query_nodes(), st.permutations(PORTER_WORDS), st.permutations(PORTER_PREFIXES)
    )


@pytest.fixture(scope="module")
def db() -> Iterator[sqlite3.Connection]:
    with fts5_oracle(FTS5_PORTER_TOKENIZE) as connection:
        yield connection


def expected(node: Node, docs: list[SearchDocument]) -> set[int]:
    return oracle_expected(node, docs, tokenizer=PORTER)


def assert_parity(db: sqlite3.Connection, node: Node, docs: list[SearchDocument]) -> None:
    load(db, docs)
    wanted = expected(node, docs)
    if is_rankable(node):
        assert fts5_match(db, node) == wanted
    assert fts5_filter(db, node) == wanted


@given(query_nodes(), st.lists(documents(), min_size=1, max_size=6))
def test_queries_select_what_fts5_selects(
    db: sqlite3.Connection, node: Node, docs: list[SearchDocument]
) -> None:
    assert_parity(db, node, docs)


@given(porter_queries(), st.lists(porter_documents(), min_size=1, max_size=6))
def test_stemmed_queries_select_what_fts5_selects(
    db: sqlite3.Connection, node: Node, docs: list[SearchDocument]
) -> None:
    assert_parity(db, node, docs)


QUERY_DOCS = [
    "running",  # 1: run
    "runner",  # 2: runner
    "runs",  # 3: run
    "photometry",  # 4: photometri
    "photometric",  # 5: photometr
    "photometrically",  # 6: photometr
    "galaxies",  # 7: galaxi
    "connected components",  # 8: connect compon
    "connection of the components",  # 9
    "a丸ed",  # 10: a e4 b8 (a split character)
    "ba₂ing",  # 11: ba e2 82
]


@pytest.mark.parametrize(
    ("node", "rows"),
    [
        (Term("running", prefix=True), {1, 2, 3}),  # stemmed first: run*
        (Term("running"), {1, 3}),
        (Term("photometr", prefix=True), {4, 5, 6}),
        (Term("photometry", prefix=True), {4}),  # photometri* misses photometr
        (Term("photometric", prefix=True), {4, 5, 6}),
        (Term("galaxy", prefix=True), {7}),
        (Phrase(("connecting", "component")), {8}),
        (Near((Term("connections"), Term("components")), 2), {8, 9}),
        (Near((Term("connections"), Term("components")), 1), {8}),
        (Term("a丸ing"), {10}),  # the same split bytes
        (Term("ba₂ed"), {11}),
    ],
)
def test_query_examples(db: sqlite3.Connection, node: Node, rows: set[int]) -> None:
    docs = [SearchDocument(str(i), body=text) for i, text in enumerate(QUERY_DOCS, start=1)]
    load(db, docs)
    assert fts5_match(db, node) == rows
    assert expected(node, docs) == rows


def test_prefix_of_a_split_character_is_the_known_difference(db: sqlite3.Connection) -> None:
    """The one inherent difference, pinned so that a change either way is noticed.

    Porter's double-consonant rule can cut the last byte of a character whose last two
    bytes are equal. FTS5 then compares the prefix's bytes (``a e4 b8``) and finds both
    documents; Python compares characters, and the surrogate-escaped stem is no string
    prefix of ``a丸``, so the twin finds neither.
    """
    docs = [SearchDocument("1", body="a丸"), SearchDocument("2", body="a丸丸 a丼")]
    load(db, docs)
    node = Term("a丸ed", prefix=True)
    assert fts5_match(db, node) == {1, 2}
    assert expected(node, docs) == set()
