"""The Redactor takes every `larvatus run` option that changes rows, checks it as `run` does,
and gives `run`'s rows and dead letters for each; `pipe` streams, dead-lettering bad records."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from larvatus.api import NOT_KEYWORDS, keyword_options, option_table
from larvatus.options import OptionsError
from tests.paths import ROOT

KEY_ENV = "LARVATUS_TEST_OTHER_KEY"
KEY = "k" * 40

# The texts both drivers annotate: the rigged model tags Titlecase words PER and CAPITALS
# ORG; the patterns find the email, phone and date; one text is too long for max_chars=300.
TEXTS = [
    "Ada met Bob at ACME in town on 3 March 2021.",
    "write to ada.lovelace@example.org or call +44 20 7946 0958, said Carol of BBC.",
    "Bob and Ada left ACME. Ada came back.",
    "nothing to see here.",
    "Zed works at INITECH; Zed lives nearby. " * 12,   # 480 characters
    "Dear Mr Smith, Dear Mrs Jones: Smith and Jones met NATO staff.",
]


def _terms(tmp_path: Path) -> dict[str, Path]:
    keep = tmp_path / "keep.txt"
    keep.write_text("# never hidden\nCarol\n", encoding="utf-8")
    always = tmp_path / "always.txt"
    always.write_text("town\nCLIENT\tnothing to see\n", encoding="utf-8")
    key = tmp_path / "key.txt"
    key.write_text(KEY + "\n", encoding="utf-8")
    return {"keep": keep, "always": always, "key": key}


def _cases(tmp_path: Path) -> list[tuple[list[str], dict]]:
    """(`larvatus run` arguments, the same as Redactor keywords): every keyword option at a
    value other than its default, in a few runs."""
    files = _terms(tmp_path)
    return [
        (["--redact-labels", "PER,ORG,EMAIL,DATE", "--placeholder", "indexed", "--no-propagate",
          "--redact-threshold", "0.3", "--aggregation", "max", "--phone-regions", "GB",
          "--keep-text", "--max-chars", "300", "--window-length", "24", "--window-overlap", "6",
          "--device", "cpu", "--batch-tokens", "128", "--intra-op-threads", "1",
          "--record-timeout", "120"],
         dict(redact_labels=["PER", "ORG", "EMAIL", "DATE"], placeholder="indexed",
              propagate=False, redact_threshold=0.3, aggregation="max", phone_regions=["GB"],
              keep_text=True, max_chars=300, window_length=24, window_overlap=6, device="cpu",
              batch_tokens=128, intra_op_threads=1, record_timeout=120)),
        (["--placeholder", "pseudonym", "--pseudonym-key-env", KEY_ENV,
          "--keep-terms", str(files["keep"]), "--always-redact", str(files["always"]),
          "--label-thresholds", "ORG=0.9", "--emit-token-ids", "--profile", "strict"],
         dict(placeholder="pseudonym", pseudonym_key_env=KEY_ENV, keep_terms=files["keep"],
              always_redact=str(files["always"]), label_thresholds={"ORG": 0.9},
              emit_token_ids=True, profile="strict")),
        (["--placeholder", "pseudonym", "--pseudonym-key-file", str(files["key"]),
          "--emit-embeddings", "--embedding-layer", "sum_last_four", "--embedding-pooling", "cls",
          "--redact-labels", "default,-DATE"],
         dict(placeholder="pseudonym", pseudonym_key_file=str(files["key"]),
              emit_embeddings=True, embedding_layer="sum_last_four", embedding_pooling="cls",
              redact_labels="default,-DATE")),
    ]


def test_every_option_of_run_is_a_keyword_or_says_why_not():
    table = option_table()
    assert set(NOT_KEYWORDS) <= set(table), "a reason given for an option run does not have"
    for dest in table:
        assert dest in keyword_options() or dest in NOT_KEYWORDS, \
            f"--{dest.replace('_', '-')} is neither a Redactor keyword nor said not to be one"
    for wanted in ("keep_terms", "always_redact", "label_thresholds", "record_timeout",
                   "placeholder", "emit_token_ids", "model", "redact_labels"):
        assert wanted in keyword_options()


def _run_rows(tmp_path: Path, model_dir, arguments: list[str]) -> tuple[list[dict], list[dict]]:
    from larvatus.run import run

    source = tmp_path / "in" / "in.jsonl"
    source.parent.mkdir(exist_ok=True)
    source.write_text("".join(json.dumps({"id": f"d{i}", "text": text}) + "\n"
                              for i, text in enumerate(TEXTS)), encoding="utf-8")
    output = tmp_path / f"out-{len(list(tmp_path.glob('out-*')))}"
    summary = run(["--input", str(source), "--output", str(output), "--model", str(model_dir),
                   *arguments])
    assert summary["counts_add_up"]

    def rows(folder: str) -> list[dict]:
        found = []
        for path in sorted((output / folder).glob("*.parquet")):
            found += pq.read_table(path).to_pylist()
        return sorted(found, key=lambda row: row["source"])

    return rows("annotations"), rows("dead_letters")


def _redactor_rows(model_dir, keywords: dict) -> tuple[list[dict], list[dict]]:
    from larvatus import DeadLetter, Redactor
    from larvatus.schemas import DEAD_LETTER_SCHEMA, dead_letter_row

    redactor = Redactor(model=str(model_dir), **keywords)
    records = [{"id": f"d{i}", "text": text, "source": f"in.jsonl:{i + 1}"}
               for i, text in enumerate(TEXTS)]
    results = list(redactor.pipe(records, batch_size=4))
    rows = [r for r in results if not isinstance(r, DeadLetter)]
    dead = [dead_letter_row(r) for r in results if isinstance(r, DeadLetter)]
    as_parquet = pa.Table.from_pylist(rows, schema=redactor.schema).to_pylist()
    return (sorted(as_parquet, key=lambda row: row["source"]),
            pa.Table.from_pylist(dead, schema=DEAD_LETTER_SCHEMA).to_pylist())


@pytest.mark.slow
def test_redactor_and_run_give_the_same_rows_for_every_keyword_option(
        rigged_model_dir, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    cases = _cases(tmp_path)
    covered = {keyword for _, keywords in cases for keyword in keywords} | {"model"}
    assert covered == set(keyword_options()), \
        f"options no case sets: {sorted(set(keyword_options()) - covered)}"
    for arguments, keywords in cases:
        run_rows, run_dead = _run_rows(tmp_path, rigged_model_dir, arguments)
        api_rows, api_dead = _redactor_rows(rigged_model_dir, keywords)
        assert len(run_rows) + len(run_dead) == len(TEXTS)
        for row in run_rows:
            row["source"] = row["source"].rsplit("/", 1)[-1]
        assert api_rows == run_rows, arguments
        assert api_dead == [{**letter, "source": letter["source"].rsplit("/", 1)[-1]}
                            for letter in run_dead], arguments
    assert run_rows and "embedding" in run_rows[0]   # the last case: embeddings


@pytest.fixture(scope="module")
def rigged(rigged_model_dir):
    from larvatus import Redactor

    return Redactor(model=str(rigged_model_dir), redact_labels="PER,ORG,EMAIL")


@pytest.mark.parametrize("keywords, option", [
    (dict(keep_text="false"), "--keep-text"),
    (dict(propagate="no"), "--no-propagate"),
    (dict(redact_threshold=None), "--redact-threshold"),
    (dict(redact_threshold="high"), "--redact-threshold"),
    (dict(redact_labels=None), "--redact-labels"),
    (dict(redact_labels=["PER", 3]), "--redact-labels"),
    (dict(max_chars=None), "--max-chars"),
    (dict(max_chars=1.5), "--max-chars"),
    (dict(max_chars=0), "--max-chars"),
    (dict(aggregation="median"), "--aggregation"),
    (dict(placeholder="stars"), "--placeholder"),
    (dict(phone_regions=[]), "--phone-regions"),
    (dict(label_thresholds={"MISC": 0.5}), "--redact-threshold/--label-thresholds"),
    (dict(record_timeout=-1), "--record-timeout"),
    (dict(batch_tokens=8), "--batch-tokens"),
    (dict(keep_terms="/no/such/terms.txt"), "--keep-terms"),
])
def test_bad_keyword_values_fail_at_construction_naming_the_option(rigged_model_dir, keywords,
                                                                   option):
    from larvatus import Redactor

    with pytest.raises(OptionsError, match=f"^{option}"):
        Redactor(model=str(rigged_model_dir), **keywords)


def test_values_the_command_line_accepts_are_accepted(rigged_model_dir):
    from larvatus import Redactor

    model = str(rigged_model_dir)
    as_string = Redactor(model=model, redact_threshold="0.5", phone_regions="US")
    as_value = Redactor(model=model, redact_threshold=0.5, phone_regions=["US"])
    assert as_string.settings == as_value.settings
    assert as_value.settings.decision.threshold == 0.5
    assert as_value.settings.patterns.phone_regions == ("US",)
    listed = Redactor(model=model, redact_labels=["PER", "EMAIL"], window_length=None,
                      keep_terms=["Ada"], always_redact=["town"])
    assert listed.settings.policy.labels == frozenset({"PER", "EMAIL"})
    assert listed.settings.policy.keep_terms == ("Ada",)
    assert listed.settings.policy.always_redact == (("town", "TERM"),)
    with pytest.raises(TypeError, match="input"):
        Redactor(model=model, input="x.jsonl")


def test_one_string_is_not_a_list_of_texts(rigged):
    with pytest.raises(TypeError, match="not one string"):
        rigged.annotate("Ada met Bob")
    with pytest.raises(TypeError, match="not one string"):
        list(rigged.pipe("Ada met Bob"))
    assert rigged.annotate(["Ada met Bob"])[0]["redacted_text"] == "[PER] met [PER]"


def test_pipe_yields_a_dead_letter_for_a_bad_record_and_the_rest_go_on(rigged):
    from larvatus import DeadLetter

    records = ["Ada met Bob", 42, {"id": "x", "text": None}, {"id": "y", "text": "see ACME"},
               "x" * 2_000_001]
    results = list(rigged.pipe(records, batch_size=2))
    assert [type(r).__name__ for r in results] == ["dict", "DeadLetter", "DeadLetter", "dict",
                                                   "DeadLetter"]
    assert [r.reason for r in results if isinstance(r, DeadLetter)] == [
        "text_not_string", "missing_text", "too_large"]
    assert (results[1].doc_id, results[1].source) == ("1", "records[1]")
    assert (results[3]["id"], results[3]["redacted_text"]) == ("y", "see [ORG]")
    assert "xxxx" not in repr(results[4])


def test_pipe_bounds_each_record_by_the_record_timeout(rigged_model_dir):
    from larvatus import DeadLetter, Redactor

    redactor = Redactor(model=str(rigged_model_dir), record_timeout=0.5, max_chars=3_000_000)
    huge = "Ada met Bob. " * 150_000     # 1.95 M characters: seconds in segment and encode
    results = list(redactor.pipe(["Ada met Bob.", {"id": "huge", "text": huge}, "Carol left."]))
    assert [r["redacted_text"] for r in (results[0], results[2])] == ["[PER] met [PER].",
                                                                      "[PER] left."]
    letter = results[1]
    assert isinstance(letter, DeadLetter)
    assert (letter.reason, letter.doc_id) == ("timeout", "huge")
    assert letter.detail.endswith("took more than 0.5 s")


def test_pipe_rows_do_not_depend_on_batches_or_processes(rigged, rigged_model_dir):
    from larvatus import Redactor

    texts = [f"Person{i} met ACME and Zed{i}" if i % 5 else 7 for i in range(23)]
    one_by_one = list(rigged.pipe(texts, batch_size=1))
    assert list(rigged.pipe(texts, batch_size=64)) == one_by_one
    assert list(rigged.pipe(iter(texts), batch_size=5, n_process=2)) == one_by_one
    with pytest.raises(ValueError, match="batch_size"):
        list(rigged.pipe(texts, batch_size=0))
    assert Redactor(model=str(rigged_model_dir), redact_labels="PER,ORG,EMAIL").annotate(
        ["Person1 met ACME and Zed1"], ids=["1"], sources=["records[1]"]) == [one_by_one[1]]


def test_annotate_frame_leaves_a_bad_row_out_and_returns_its_dead_letter(rigged):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"body": ["call Carol", None, "see ACME"], "key": ["a", "b", "c"]},
                         index=[10, 20, 30])
    result = rigged.annotate_frame(frame, text_column="body", id_column="key")
    assert list(result.index) == [10, 30]
    assert list(result["redacted_text"]) == ["call [PER]", "see [ORG]"]
    dead = result.attrs["dead_letters"]
    assert list(dead.index) == [20]
    assert dead.loc[20, "reason"] == "missing_text" and dead.loc[20, "id"] == "b"


def test_import_larvatus_and_a_redactor_load_no_beam_module():
    code = ("import sys, larvatus\n"
            "redactor = larvatus.Redactor()\n"
            "assert redactor.redact('Angela Merkel spoke.') == '[PER] spoke.'\n"
            "print(sorted(m for m, module in sys.modules.items()\n"
            "             if m.split('.')[0] == 'apache_beam' and module is not None))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ}, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
