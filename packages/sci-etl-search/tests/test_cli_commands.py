"""Every ``sci-etl-search`` command through a subprocess, on a small corpus, without a model.

The commands that need the embedding model are in ``test_cli_semantic.py``.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sci_etl_core.exceptions import SearchQueryError
from sci_etl_core.search.parser import parse_ranked_query
from search_cli_support import INDEXED_IDS, index_corpus, run_cli, write_corpus

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A text index of the support corpus, shared read-only by this module."""
    _, db = index_corpus(tmp_path_factory.mktemp("cli"))
    return db


def search_json(db: Path, query: str, *args: str) -> dict[str, object]:
    result = run_cli("search", query, "--db", db, "--json", *args)
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def hit_ids(data: dict[str, object]) -> list[str]:
    hits = data["hits"]
    assert isinstance(hits, list)
    return [hit["record_id"] for hit in hits]


# -- the program ------------------------------------------------------------------------


def test_help_lists_every_command() -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    for command in ("index", "search", "facets", "graph", "backfill", "maintain"):
        assert re.search(rf"^\s+{command}\s", result.stdout, re.MULTILINE), command
    maintain = run_cli("maintain", "--help")
    for command in ("optimize", "rebuild-index", "rebuild-tags", "check"):
        assert command in maintain.stdout


def test_console_script_is_installed_and_runs() -> None:
    executable = shutil.which("sci-etl-search")
    assert executable, "the sci-etl-search console script is not installed"
    result = subprocess.run(
        [executable, "search", "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert "--mode" in result.stdout


def test_without_the_cli_extra_main_names_the_extra_and_exits_1() -> None:
    code = (
        "import sys; sys.modules['typer'] = None\nfrom sci_etl_core.cli.app import main\nmain()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "pip install 'sci-etl-search[cli]'" in lines[0]
    assert "'typer'" in lines[0]


def test_unknown_option_is_a_usage_error() -> None:
    result = run_cli("search", "x", "--db", "x.db", "--no-such-option")
    assert result.returncode == 2
    assert "--no-such-option" in result.stderr


# -- index ------------------------------------------------------------------------------


def test_index_reports_counts_and_skips_blank_records(tmp_path: Path) -> None:
    source = write_corpus(tmp_path / "r.jsonl")
    result = run_cli("index", source, "--db", tmp_path / "t.db", "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    counts = json.loads(result.stdout)
    assert counts == {"records": 9, "indexed": 8, "cleared": 1, "chunks": 0}


def test_index_draws_its_progress_bar_on_stderr_only(tmp_path: Path) -> None:
    source = write_corpus(tmp_path / "r.jsonl")
    result = run_cli("index", source, "--db", tmp_path / "t.db")
    assert result.returncode == 0, result.stderr
    assert "indexing" in result.stderr
    assert "9/9" in result.stderr
    assert result.stdout.strip() == (
        f"indexed 8 of 9 records into {tmp_path / 't.db'} (1 blank records removed)"
    )


def test_index_a_folder_of_text_files(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    (folder / "astro").mkdir(parents=True)
    (folder / "astro" / "halos.md").write_text(
        "# Cored halos\n\nDwarf spheroidals are dark matter dominated.\n", encoding="utf-8"
    )
    (folder / "notes.txt").write_text("Reading list\nBM25 and friends\n", encoding="utf-8")
    db = tmp_path / "t.db"
    assert run_cli("index", folder, "--db", db, "--no-progress").returncode == 0
    data = search_json(db, "spheroidals", "--mode", "lexical")
    assert hit_ids(data) == ["astro/halos"]
    hits = data["hits"]
    assert isinstance(hits, list)
    assert hits[0]["title"] == "Cored halos"
    assert hits[0]["metadata"] == {"path": "astro/halos.md"}


def test_index_bad_line_exits_1_naming_the_line_and_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "r.jsonl"
    source.write_text('{"id": "a", "title": "fine"}\n{"title": "no id"}\n', encoding="utf-8")
    db = tmp_path / "t.db"
    result = run_cli("index", source, "--db", db)
    assert result.returncode == 1
    assert f"{source}:2: no record id" in result.stderr
    assert result.stdout == ""
    assert not db.exists()


def test_index_missing_source_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("index", tmp_path / "nope.jsonl", "--db", tmp_path / "t.db")
    assert result.returncode == 2
    assert "nope.jsonl" in result.stderr


def test_index_overlap_must_be_below_the_window(tmp_path: Path) -> None:
    source = write_corpus(tmp_path / "r.jsonl")
    result = run_cli(
        "index", source, "--db", tmp_path / "t.db", "--chunk-words", "10", "--overlap-words", "10"
    )
    assert result.returncode == 2
    assert "--overlap-words (10) must be below --chunk-words (10)" in result.stderr


def test_reindexing_keeps_the_recorded_facet_keys(tmp_path: Path) -> None:
    source, db = index_corpus(tmp_path)
    assert run_cli("index", source, "--db", db, "--no-progress").returncode == 0
    assert hit_ids(search_json(db, "dark", "--filter", "year=2021")) == ["dwarf-halos"]


def test_reindexing_with_new_facet_keys_retags_every_document(tmp_path: Path) -> None:
    source, db = index_corpus(tmp_path)
    result = run_cli("index", source, "--db", db, "--facet-key", "authors", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "re-tagging" in result.stderr
    data = search_json(db, "ranks OR dark", "--filter", "authors=Sara Lind")
    assert hit_ids(data) == ["bm25"]
    year = run_cli("search", "dark", "--db", db, "--filter", "year=2021")
    assert year.returncode == 2
    assert "key 'year' is not tagged" in year.stderr


def test_stemming_is_chosen_at_index_time_and_switched_by_rebuild_index(
    tmp_path: Path,
) -> None:
    source, db = index_corpus(tmp_path, "--stemming")
    # "memory" and "memories" share the stem "memori"; "strengthen" that of "strengthens".
    assert hit_ids(search_json(db, "memory AND strengthen")) == ["sleep"]
    reindexed = run_cli("index", source, "--db", db, "--no-progress")
    assert reindexed.returncode == 0, reindexed.stderr
    assert hit_ids(search_json(db, "strengthen")) == ["sleep"]  # the file keeps stemming
    result = run_cli("maintain", "rebuild-index", "--db", db, "--no-stemming")
    assert result.returncode == 0, result.stderr
    assert "without stemming" in result.stdout
    assert hit_ids(search_json(db, "strengthen")) == []
    switched = run_cli("index", source, "--db", db, "--stemming", "--no-progress")
    assert switched.returncode == 0, switched.stderr
    assert "re-tokenizing every document with stemming" in switched.stderr
    assert hit_ids(search_json(db, "strengthen")) == ["sleep"]


def test_multiscript_is_chosen_at_index_time_and_switched_by_rebuild_index(
    tmp_path: Path,
) -> None:
    records = [
        {"id": "zh", "title": "图像分割", "text": "本文提出一种新的图像分割方法。"},
        {"id": "ko", "title": "수면과 기억", "text": "이 연구는 수면을 다룬다."},
        {"id": "en", "title": "Sleep", "text": "Sleep strengthens memories."},
    ]
    source = write_corpus(tmp_path / "records.jsonl", records)
    db = tmp_path / "text.db"
    plain = run_cli("index", source, "--db", db, "--no-progress")
    assert plain.returncode == 0, plain.stderr
    # unicode61 keeps the whole Han run, and the Korean word with its particle, as one token
    assert hit_ids(search_json(db, "分割")) == []
    assert hit_ids(search_json(db, "연구")) == []
    switched = run_cli("index", source, "--db", db, "--multiscript", "--no-progress")
    assert switched.returncode == 0, switched.stderr
    assert "re-tokenizing every document with multiscript" in switched.stderr
    assert hit_ids(search_json(db, "分割")) == ["zh"]
    assert hit_ids(search_json(db, "연구")) == ["ko"]
    assert hit_ids(search_json(db, "memories")) == ["en"]
    again = run_cli("index", source, "--db", db, "--no-progress")  # follows the file
    assert again.returncode == 0, again.stderr
    assert "re-tokenizing" not in again.stderr
    assert hit_ids(search_json(db, "分割")) == ["zh"]
    result = run_cli("maintain", "rebuild-index", "--db", db, "--no-multiscript")
    assert result.returncode == 0, result.stderr
    assert "without multiscript" in result.stdout
    assert hit_ids(search_json(db, "分割")) == []


# -- search -----------------------------------------------------------------------------


def test_lexical_json_hits_carry_ranks_and_highlights(corpus: Path) -> None:
    data = search_json(corpus, "dwarf galaxies", "--mode", "lexical")
    assert data["query"] == "dwarf galaxies"
    assert data["mode"] == "lexical"
    assert data["degraded"] == []
    assert data["skipped"] == []
    hits = data["hits"]
    assert isinstance(hits, list)
    assert [hit["rank"] for hit in hits] == list(range(1, len(hits) + 1))
    assert hits[0]["record_id"] == "dwarf-halos"
    assert hits[0]["lexical_rank"] == 1
    assert hits[0]["semantic_rank"] is None
    assert hits[0]["metadata"]["year"] == 2021
    for snippet in hits[0]["snippets"]:
        words = {snippet["text"][start:end].lower() for start, end in snippet["highlights"]}
        assert words
        assert words <= {"dwarf", "galaxies"}


def test_human_output_shows_rank_title_and_highlighted_snippet(corpus: Path) -> None:
    result = run_cli(
        "search", "saturation", "--db", corpus, "--mode", "lexical", env={"FORCE_COLOR": "1"}
    )
    assert result.returncode == 0, result.stderr
    plain = ANSI.sub("", result.stdout)
    assert plain.splitlines()[0].startswith("1. BM25 revisited: term saturation")
    assert "bm25" in plain.splitlines()[0]
    assert "lexical #1" in plain
    assert re.search(r"\x1b\[1;33m(?:\x1b\[[0-9;]*m)*saturation", result.stdout)


def test_hybrid_without_vectors_notes_the_skipped_leg(corpus: Path) -> None:
    result = run_cli("search", "dwarf", "--db", corpus, "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["skipped"] == ["semantic"]
    assert hit_ids(data) == ["dwarf-halos"]
    assert "semantic leg was skipped (no --vectors or --store given)" in result.stderr


def test_top_k_limits_the_hits(corpus: Path) -> None:
    assert len(hit_ids(search_json(corpus, "the OR of", "--top-k", "2"))) == 2


def test_filters_and_ranges_narrow_the_results(corpus: Path) -> None:
    query = "galaxies OR ranks OR passages OR quasars"
    assert set(hit_ids(search_json(corpus, query))) == {
        "dwarf-halos",
        "quasar-lf",
        "bm25",
        "dense-retrieval",
    }
    assert set(hit_ids(search_json(corpus, query, "--filter", "categories=cs.IR"))) == {
        "bm25",
        "dense-retrieval",
    }
    assert set(hit_ids(search_json(corpus, query, "--filter", "categories!=cs.IR"))) == {
        "dwarf-halos",
        "quasar-lf",
    }
    assert set(hit_ids(search_json(corpus, query, "--range", "year=2020.."))) == {
        "dwarf-halos",
        "dense-retrieval",
    }
    assert set(
        hit_ids(search_json(corpus, query, "--range", "year=..2019", "--filter", "authors=Bo Chen"))
    ) == {"quasar-lf"}


def test_search_facets_count_the_lexical_matches(corpus: Path) -> None:
    data = search_json(
        corpus, "galaxies OR ranks", "--facets", "categories,year", "--filter", "year=2019"
    )
    assert set(hit_ids(data)) == {"quasar-lf", "bm25"}
    facets = data["facets"]
    assert isinstance(facets, dict)
    assert facets["categories"] == [
        {"value": "astro-ph.CO", "count": 1},
        {"value": "astro-ph.GA", "count": 1},
        {"value": "cs.IR", "count": 1},
    ]
    # A key's counts ignore the filter on that key itself.
    assert facets["year"] == [{"value": "2019", "count": 2}, {"value": "2021", "count": 1}]


@pytest.mark.parametrize(
    "query",
    ["dwarf AND (halo", 'title:"dark matter', "NEAR(dwarf halo, x)", "dwarf OR", "nope:dwarf"],
)
def test_malformed_query_shows_a_caret_and_exits_2(corpus: Path, query: str) -> None:
    with pytest.raises(SearchQueryError) as caught:
        parse_ranked_query(query)
    assert caught.value.position is not None
    result = run_cli("search", query, "--db", corpus)
    assert result.returncode == 2
    assert result.stdout == ""
    assert f"invalid query: {caught.value.message}" in result.stderr
    assert caught.value.caret_line(query) in result.stderr
    caret = result.stderr.splitlines()[-1]
    assert caret.index("^") == caught.value.position


def test_unrankable_query_is_a_usage_error(corpus: Path) -> None:
    result = run_cli("search", "--db", corpus, "--mode", "lexical", "--", "-dwarf")
    assert result.returncode == 2
    assert "invalid query" in result.stderr
    assert "-dwarf" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--filter", "year"], "--filter 'year': expected KEY=VALUE"),
        (["--range", "year=2024..2020"], "--range 'year=2024..2020'"),
        (["--filter", "year=1", "--range", "year=1..2"], "already has a --filter"),
        (["--facets", "year,,authors"], "key #2 is empty"),
        (["--filter", "colour=red"], "key 'colour' is not tagged"),
        (["--facets", "colour"], "rebuild-tags"),
        (["--mode", "semantic"], "--mode semantic needs --vectors"),
        (["--mode", "fuzzy"], "fuzzy"),
        (["--top-k", "0"], "--top-k"),
    ],
)
def test_bad_search_options_exit_2_naming_the_option(
    corpus: Path, args: list[str], message: str
) -> None:
    result = run_cli("search", "dwarf", "--db", corpus, *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert result.stdout == ""


def test_missing_index_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("search", "dwarf", "--db", tmp_path / "none.db")
    assert result.returncode == 2
    assert "no such text index" in result.stderr
    assert not (tmp_path / "none.db").exists()


def test_a_file_that_is_not_an_index_exits_1_naming_it(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.db"
    bogus.write_text("this is not a database\n" * 100)
    result = run_cli("search", "dwarf", "--db", bogus)
    assert result.returncode == 1
    assert str(bogus) in result.stderr
    assert "Traceback" not in result.stderr


def test_db_path_can_come_from_the_environment(corpus: Path) -> None:
    result = run_cli("search", "dwarf", "--json", env={"SCI_ETL_SEARCH_DB": str(corpus)})
    assert result.returncode == 0, result.stderr
    assert hit_ids(json.loads(result.stdout)) == ["dwarf-halos"]


def test_no_match_prints_nothing_on_stdout(corpus: Path) -> None:
    result = run_cli("search", "xylophone", "--db", corpus)
    assert result.returncode == 0
    assert result.stdout == ""
    assert "no matching records" in result.stderr


# -- facets -----------------------------------------------------------------------------


def test_facets_json_counts_every_record(corpus: Path) -> None:
    result = run_cli("facets", "authors", "--db", corpus, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "authors": [
            {"value": "Ana Ruiz", "count": 2},
            {"value": "Bo Chen", "count": 2},
            {"value": "Maya Tan", "count": 2},
            {"value": "Sara Lind", "count": 2},
            {"value": "Ivo Berg", "count": 1},
        ]
    }


def test_facets_with_query_and_filter_in_human_output(corpus: Path) -> None:
    result = run_cli(
        "facets", "year", "categories", "--db", corpus, "-q", "-dwarf", "--filter", "year=2019"
    )
    assert result.returncode == 0, result.stderr
    lines = [line.split() for line in result.stdout.splitlines()]
    assert lines[0] == ["year"]
    assert ["2", "2019"] in lines
    assert lines[lines.index(["categories"]) + 1 :] == [
        ["1", "astro-ph.CO"],
        ["1", "astro-ph.GA"],
        ["1", "cs.IR"],
    ]


def test_facets_errors(corpus: Path) -> None:
    untagged = run_cli("facets", "colour", "--db", corpus)
    assert untagged.returncode == 2
    assert "key 'colour' is not tagged" in untagged.stderr
    bad_query = run_cli("facets", "year", "--db", corpus, "--query", "(dwarf")
    assert bad_query.returncode == 2
    assert "(dwarf\n^" in bad_query.stderr


# -- graph ------------------------------------------------------------------------------


def test_graph_json_gives_nodes_and_metadata_edges(corpus: Path) -> None:
    result = run_cli(
        "graph",
        "bm25",
        "--db",
        corpus,
        "--json",
        "--metadata-key",
        "categories",
        "--metadata-key",
        "authors",
        "--min-weight",
        "0.1",
    )
    assert result.returncode == 0, result.stderr
    graph = json.loads(result.stdout)
    assert graph["seed"] == "bm25"
    nodes = {node["record_id"]: node for node in graph["nodes"]}
    assert set(nodes) == {"bm25", "dense-retrieval"}
    assert nodes["bm25"]["title"].startswith("BM25 revisited")
    assert nodes["bm25"]["community"] == nodes["dense-retrieval"]["community"]
    assert [(e["source"], e["target"], e["kind"]) for e in graph["edges"]] == [
        ("bm25", "dense-retrieval", "metadata")
    ]
    assert 0.1 <= graph["edges"][0]["weight"] <= 1.0


def test_graph_human_output_marks_the_seed(corpus: Path) -> None:
    result = run_cli("graph", "quasar-lf", "--db", corpus, "--min-weight", "0.1")
    assert result.returncode == 0, result.stderr
    assert "records," in result.stdout.splitlines()[0]
    seed_line = next(line for line in result.stdout.splitlines() if line.startswith(" * "))
    assert "quasar-lf" in seed_line
    assert "metadata" in result.stdout


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["nope"], 1, "record 'nope' is not in the text index"),
        (["bm25", "--edges", "semantic"], 2, "--edges semantic needs --vectors"),
        (["bm25", "--metadata-key", "colour"], 2, "key 'colour' is not tagged"),
        (["bm25", "--min-weight", "nan"], 2, "min_weight"),
    ],
)
def test_graph_errors(corpus: Path, args: list[str], code: int, message: str) -> None:
    result = run_cli("graph", *args, "--db", corpus)
    assert result.returncode == code, result.stderr
    assert message in result.stderr


# -- maintain ---------------------------------------------------------------------------


def test_maintain_commands_keep_the_index_working(tmp_path: Path) -> None:
    _, db = index_corpus(tmp_path)
    for command in ("optimize", "rebuild-index"):
        result = run_cli("maintain", command, "--db", db)
        assert result.returncode == 0, result.stderr
    check = run_cli("maintain", "check", "--db", db, "--json")
    assert check.returncode == 0, check.stderr
    assert json.loads(check.stdout) == {
        "ok": True,
        "documents": 8,
        "facet_keys": ["authors", "categories", "year"],
    }
    assert hit_ids(search_json(db, "dwarf")) == ["dwarf-halos"]


def test_rebuild_tags_changes_what_can_be_filtered(tmp_path: Path) -> None:
    _, db = index_corpus(tmp_path)
    result = run_cli("maintain", "rebuild-tags", "--db", db, "--facet-key", "year")
    assert result.returncode == 0, result.stderr
    assert "by year" in result.stdout
    assert hit_ids(search_json(db, "dark", "--filter", "year=2021")) == ["dwarf-halos"]
    assert run_cli("search", "dark", "--db", db, "--filter", "authors=Ana Ruiz").returncode == 2


def test_check_reports_an_inconsistent_index_and_rebuild_repairs_it(tmp_path: Path) -> None:
    _, db = index_corpus(tmp_path)
    with sqlite3.connect(db) as connection:
        connection.execute("""INSERT INTO "documents_fts"("documents_fts") VALUES ('delete-all')""")
    connection.close()
    check = run_cli("maintain", "check", "--db", db)
    assert check.returncode == 1
    assert "maintain rebuild-index" in check.stderr
    assert run_cli("maintain", "rebuild-index", "--db", db).returncode == 0
    assert run_cli("maintain", "check", "--db", db).stdout.startswith("ok:")


def test_maintain_needs_an_existing_index(tmp_path: Path) -> None:
    result = run_cli("maintain", "check", "--db", tmp_path / "none.db")
    assert result.returncode == 2
    assert "no such text index" in result.stderr


def test_backfill_needs_an_existing_vector_memory(tmp_path: Path) -> None:
    result = run_cli("backfill", "--db", tmp_path / "t.db", "--vectors", tmp_path / "v.db")
    assert result.returncode == 2
    assert "no such vector memory" in result.stderr


def test_every_indexed_record_is_searchable(corpus: Path) -> None:
    result = run_cli("facets", "year", "--db", corpus, "--json")
    total = sum(item["count"] for item in json.loads(result.stdout)["year"])
    assert total == len(INDEXED_IDS)
