"""`larvatus estimate` and `Redactor.estimate`: the table, its intervals, a folder of its own, and an honest interval."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.paths import ROOT

SAMPLE = ROOT / "pipeline" / "sample" / "news.jsonl"
TEXTS = ["The council met on Tuesday. Members approved the budget after a long debate.",
         "Der Vertrag wurde am Montag unterschrieben. Die Firma zahlt die Miete pünktlich.",
         "A short note. Nothing else to say here, really."]


def larvatus(*args):
    return subprocess.run([sys.executable, "-m", "larvatus.cli", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def rigged_redactor(rigged_model_dir):
    from larvatus import Redactor

    return Redactor(model=str(rigged_model_dir))


def test_redactor_estimate_counts_add_up_and_leaves_the_texts_alone(rigged_redactor):
    texts = list(TEXTS)
    estimate = rigged_redactor.estimate(texts, copies=4, seed=3)
    assert texts == TEXTS
    overall = estimate.row("all")
    assert overall.planted == len(estimate.outcomes) == 3 * 4 * 3
    for row in estimate.rows:
        assert row.hidden + row.partly + row.missed == row.planted
        low, high = row.interval
        assert 0 <= low <= (row.recall or 0) <= high <= 1
    # The rigged model hides every Titlecase word: a planted name is always hidden whole,
    # and the texts' own capitalised words are not kept.
    assert estimate.row("PER").recall == 1.0
    assert 0 < estimate.words_kept < estimate.words
    assert estimate.as_dict()["items_planted"] == overall.planted


def test_redactor_estimate_refuses_one_string_and_unknown_kinds(rigged_redactor):
    with pytest.raises(TypeError):
        rigged_redactor.estimate("one text")
    with pytest.raises(ValueError, match="kinds"):
        rigged_redactor.estimate(TEXTS, kinds=["SHOE_SIZE"])


def test_estimate_writes_its_own_folder_and_shows_no_text_of_the_user(rigged_model_dir, tmp_path):
    corpus = tmp_path / "in.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n"
                              for i, t in enumerate(TEXTS)))
    output = tmp_path / "est"
    done = larvatus("estimate", "--input", corpus, "--output", output, "--model",
                    rigged_model_dir, "--copies", "3", "--seed", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "95% interval" in done.stdout and "all      all" in done.stdout
    result = json.loads((output / "estimate.json").read_text())
    assert result["items_planted"] == 27 and result["documents_sampled"] == 3
    page = (output / "estimate.html").read_text()
    planted = [json.loads(line) for line in (output / "planted.jsonl").read_text().splitlines()]
    assert len(planted) == 9 and all("text" not in record for record in planted)
    for sentence in ("The council met on Tuesday", "Der Vertrag wurde", "A short note"):
        assert sentence not in page
    assert sorted(p.name for p in output.iterdir()) == ["estimate.html", "estimate.json",
                                                        "planted.jsonl"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["est", "in.jsonl"]


def test_estimate_refuses_a_runs_output_folder_and_bad_numbers(rigged_model_dir, tmp_path):
    run_output = tmp_path / "out"
    run_output.mkdir()
    (run_output / "_SUMMARY.json").write_text("{}")
    done = larvatus("estimate", "--input", SAMPLE, "--output", run_output,
                    "--model", rigged_model_dir)
    assert done.returncode == 2 and "folder of their own" in done.stderr
    assert sorted(p.name for p in run_output.iterdir()) == ["_SUMMARY.json"]
    for option in (["--sample", "0"], ["--copies", "-1"], ["--items-per-copy", "9"]):
        done = larvatus("estimate", "--input", SAMPLE, "--output", tmp_path / "e", *option)
        assert done.returncode == 2, option
        assert done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "e").exists()


@pytest.mark.slow
def test_readme_estimate_command_on_the_sample_corpus(tmp_path):
    """The README's command, with the embedded model, on the bundled sample corpus."""
    done = subprocess.run(["larvatus", "estimate", "--input", "pipeline/sample/news.jsonl",
                           "--output", str(tmp_path / "estimate")], cwd=ROOT,
                          capture_output=True, text=True, timeout=900,
                          env={"PATH": f"{sys.executable.rsplit('/', 1)[0]}:/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "estimate" / "estimate.json").read_text())
    assert result["documents_sampled"] == 36 and result["items_planted"] >= 600
    kinds = {row["kind"] for row in result["table"]}
    assert kinds == {"PER", "EMAIL", "PHONE", "IBAN", "CARD", "ID", "DATE", "ADDRESS", "all"}
    for row in result["table"]:
        low, high = row["interval_95"]
        assert low <= row["recall"] <= high
        assert f"{100 * low:.1f}% - {100 * high:.1f}%" in done.stdout


@pytest.mark.slow
def test_the_interval_covers_the_recall_measured_on_labelled_corpora():
    """On CoNLL's person names and on the privacy bench's gold items, the estimate's 95%
    interval from planting covers the recall measured on the corpus's own items."""
    from bench.estimate_check import PRIVACY_KINDS, check, conll_documents, privacy_documents
    from larvatus import Redactor

    redactor = Redactor()
    lines = (check(redactor, conll_documents(25), ("PER",))
             + check(redactor, privacy_documents(25), PRIVACY_KINDS))
    assert {line["kind"] for line in lines} >= {"PER", "EMAIL", "PHONE", "DATE"}
    for line in lines:
        assert line["covered"], line


def test_report_shows_the_estimate_table_and_the_items_it_missed(rigged_model_dir, tmp_path):
    corpus = tmp_path / "in.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n"
                              for i, t in enumerate(TEXTS)))
    done = larvatus("run", "--input", corpus, "--output", tmp_path / "out", "--model",
                    rigged_model_dir, "-q")
    assert done.returncode == 0, done.stderr[-3000:]
    # Without pattern labels, planted emails, IBANs and cards get through the rigged model
    # (it hides Titlecase words only): the page must list them.
    done = larvatus("estimate", "--input", corpus, "--output", tmp_path / "est", "--model",
                    rigged_model_dir, "--copies", "4", "--redact-labels", "PER,ORG")
    assert done.returncode == 0, done.stderr[-3000:]
    planted = [json.loads(line) for line in (tmp_path / "est" / "planted.jsonl").open()]
    missed = [i for record in planted for i in record["items"] if i["outcome"] != "hidden"]
    assert missed, "with patterns off, some planted identifiers must get through"
    done = larvatus("report", tmp_path / "out", "--estimate", tmp_path / "est")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "out" / "report.html").read_text()
    assert "What gets through: estimate by planting" in page and "95% interval" in page
    assert f"Items not hidden whole: {len(missed)}" in page
    assert all(html_escape(i["value"]) in page for i in missed[:20])
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "estimate.json").write_text('{"table": 3}')
    done = larvatus("report", tmp_path / "out", "--estimate", tmp_path / "broken")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "no readable estimate.json" in done.stderr


def html_escape(value: str) -> str:
    import html

    return html.escape(value)
