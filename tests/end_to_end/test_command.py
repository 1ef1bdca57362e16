"""The `larvatus` command as users meet it: sub-commands, strict options, exit codes, the HTML report."""
from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from larvatus.arguments import closest
from larvatus.logs import worker_log_options
from larvatus.report import build_report
from larvatus.run import run
from larvatus.summary import dead_letter_failure
from tests.paths import ROOT


def larvatus(*args, module="larvatus.cli"):
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def test_version_and_command_list():
    done = larvatus("--version")
    assert done.returncode == 0 and done.stdout.startswith("larvatus ")
    assert "apache-beam" in done.stdout
    listing = larvatus("--help")
    for command in ("run", "show", "report", "evaluate", "export", "train"):
        assert f"  {command}" in listing.stdout
    assert "apitools" not in listing.stderr
    assert larvatus("help", "show").stdout.startswith("usage: larvatus show")


COMMANDS = ["run", "show", "report", "evaluate", "export", "train"]
MODULES = {"run": "larvatus.run", "show": "larvatus.show", "report": "larvatus.report",
           "evaluate": "larvatus.models.evaluate", "export": "larvatus.models.export", "train": "larvatus.models.train"}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_its_program_name_and_examples(command):
    done = larvatus(command, "--help")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith(f"usage: larvatus {command}")
    examples = done.stdout.split("examples:")[1]
    assert f"larvatus {command} " in examples
    assert "Traceback" not in done.stderr and "apitools" not in done.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_python_m_entry_points_keep_working_under_the_same_name(command):
    done = larvatus("--help", module=MODULES[command])
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith(f"usage: larvatus {command}") and done.stderr == ""


@pytest.mark.parametrize("command, args, message", [
    ("evaluate", ["--modle", "m", "--data", "d"], "unrecognized argument --modle "
                                                  "(did you mean --model?)"),
    ("export", ["--checkpoin", "c", "--output", "o"], "unrecognized argument --checkpoin (did you mean --checkpoint?)"),
    ("train", ["--epoch", "2"], "unrecognized argument --epoch (did you mean --epochs?)"),
    ("show", ["--exampels", "2", "out"], "unrecognized argument --exampels (did you mean --examples?)"),
    ("report", ["out", "--sample", "2"], "unrecognized argument --sample (did you mean --samples?)"),
])
def test_every_command_refuses_misspelt_and_abbreviated_options(command, args, message):
    done = larvatus(command, *args)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.startswith(f"larvatus {command}: error: {message}")
    assert "Traceback" not in done.stderr


def test_missing_files_fail_before_anything_loads(tmp_path):
    export = larvatus("export", "--checkpoint", tmp_path / "nothere", "--output", tmp_path / "m")
    assert export.returncode == 2 and "argument --checkpoint: no folder" in export.stderr
    assert not (tmp_path / "m").exists()
    evaluate = larvatus("evaluate", "--model", "models/default", "--data", tmp_path)
    assert evaluate.returncode == 2 and "is a folder, not a file" in evaluate.stderr
    train = larvatus("train", "--train", tmp_path / "t.txt", "--valid", tmp_path / "v.txt",
                     "--output", tmp_path / "ckpt")
    assert train.returncode == 2 and "argument --train: no file" in train.stderr
    assert not (tmp_path / "ckpt").exists()


def test_unknown_command_suggests_the_closest():
    done = larvatus("shwo", "out")
    assert done.returncode == 2 and "did you mean 'show'" in done.stderr


def test_misspelt_option_is_an_error_with_a_suggestion(tmp_path):
    done = larvatus("run", "--input", "pipeline/sample/news.jsonl", "--output", tmp_path / "o",
                    "--redact-label", "PER,LOC,ORG,MISC")
    assert done.returncode == 2
    assert "--redact-label" in done.stderr and "did you mean --redact-labels" in done.stderr
    assert not (tmp_path / "o").exists()


def test_beam_options_pass_and_closest_handles_underscores():
    assert closest("--direct-num-workers", ["--direct_num_workers", "--runner"]) == \
        "--direct_num_workers"


def test_worker_processes_of_a_local_run_get_the_launchers_verbosity():
    quiet = worker_log_options(0, [], local=True)
    assert quiet[0] == "--default_sdk_harness_log_level=ERROR"
    assert json.loads(quiet[1].split("=", 1)[1])["pipeline"] == "WARNING"
    assert worker_log_options(2, [], local=True)[0].endswith("=INFO")
    assert worker_log_options(0, [], local=False) == []          # Dataflow & co log elsewhere
    assert worker_log_options(0, ["--default_sdk_harness_log_level=DEBUG"], local=True) == []


def test_missing_text_field_lists_the_fields_that_exist(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "body": "Jane Doe"}) + "\n")
    done = larvatus("run", "--input", source, "--output", tmp_path / "o", "--text-field", "txt")
    assert done.returncode == 2
    assert "--text-field 'txt'" in done.stderr and "body, id" in done.stderr


def test_too_many_dead_letters_fail_the_job_with_reasons(tmp_path, rigged_model_dir):
    source = tmp_path / "in.jsonl"
    source.write_text("{broken\n" * 3 + json.dumps({"id": "a", "text": "Jane Doe"}) + "\n")
    done = larvatus("run", "--input", source, "--output", tmp_path / "o", "--model",
                    rigged_model_dir, "--device", "cpu", "-q")
    assert done.returncode == 1, done.stderr[-2000:]
    assert "3 of 4 records (75%) were dead-lettered" in done.stderr
    assert "invalid_json 3" in done.stderr
    assert done.stdout == ""            # -q: no closing lines
    assert (tmp_path / "o" / "_SUMMARY.json").exists()
    page = build_report(str(tmp_path / "o"))    # the report says the run failed its checks
    assert "FAILED: 3 of 4 records (75%) were dead-lettered" in page
    assert "Every record is accounted for" not in page
    (tmp_path / "o" / "_SUMMARY.json").write_text('{"records_in": 4, "rec')   # cut short
    cut = larvatus("report", tmp_path / "o")
    assert cut.returncode == 1 and "incomplete run" in cut.stderr and "Traceback" not in cut.stderr
    lenient = larvatus("run", "--input", source, "--output", tmp_path / "o2", "--model",
                       rigged_model_dir, "--device", "cpu", "--max-dead-letter-ratio", "0.8",
                       "--progress-interval", "0.2")
    assert lenient.returncode == 0 and "records: 4 in, 1 annotated" in lenient.stdout
    # not -q: the progress monitor runs and closes with its totals (the periodic lines depend
    # on how long the job takes; tests/pipeline/test_progress.py pins them with a short interval)
    assert "debug:" not in lenient.stderr
    assert "larvatus run: done: 4 documents (3 dead-lettered)" in lenient.stderr


def test_verbose_adds_debug_lines(tmp_path, rigged_model_dir):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "text": "Jane Doe"}) + "\n")
    done = larvatus("run", "--input", source, "--output", tmp_path / "o", "--model",
                    rigged_model_dir, "--device", "cpu", "-v")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "larvatus run: debug: settings: {" in done.stderr
    assert "Jane" not in done.stderr                      # settings, never text


def test_an_unreadable_first_file_does_not_stop_the_field_check(tmp_path):
    import pyarrow as pa

    from larvatus import preflight
    from larvatus.options import OptionsError

    (tmp_path / "a.parquet").write_bytes(b"not parquet")           # dead-lettered by the job
    pq.write_table(pa.table({"id": ["x"], "body": ["y"]}), tmp_path / "b.parquet")
    files = preflight.input_files(str(tmp_path / "*.parquet"))
    with pytest.raises(OptionsError, match="its columns: body, id"):
        preflight.check_fields(files, "auto", None, "text")
    preflight.check_fields(files, "auto", None, "body")
    only_bad = preflight.input_files(str(tmp_path / "a.parquet"))
    preflight.check_fields(only_bad, "auto", None, "text")         # nothing to check: the job runs


def test_dead_letter_failure_rules():
    summary = {"records_in": 10, "dead_lettered": 5, "dead_lettered_by_reason": {"too_large": 5}}
    assert dead_letter_failure(summary, 0.5) is None
    assert "too_large 5" in dead_letter_failure(summary, 0.4)
    every = {"records_in": 2, "dead_lettered": 2, "dead_lettered_by_reason": {"x": 2}}
    assert "every record" in dead_letter_failure(every, 1.0)
    assert dead_letter_failure({"records_in": 0, "dead_lettered": 0}, 0.0) is None


def test_text_ids_hash_keeps_file_names_out_of_the_output(tmp_path, rigged_model_dir):
    folder = tmp_path / "letters"
    folder.mkdir()
    (folder / "Quentin Blackwood.txt").write_text("Dear sir, about the invoice.")
    out = tmp_path / "out"
    run(["--input", f"{folder}/*.txt", "--output", str(out), "--model", str(rigged_model_dir),
         "--device", "cpu", "--text-ids", "hash"])
    [path] = (out / "annotations").glob("*.parquet")
    [row] = pq.read_table(path).to_pylist()
    assert row["id"] == row["source"] and row["id"].startswith("sha256:")
    for file in out.rglob("*"):
        if file.is_file():
            assert b"Blackwood" not in file.read_bytes(), file


def test_text_ids_hash_on_input_that_is_not_text_is_refused(tmp_path):
    source = tmp_path / "Quentin Blackwood.jsonl"
    source.write_text(json.dumps({"id": "a", "text": "Jane Doe"}) + "\n")
    done = larvatus("run", "--input", source, "--output", tmp_path / "o", "--text-ids", "hash")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "--text-ids hash applies to text input" in done.stderr
    assert "read as jsonl" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "o").exists()
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "a.jsonl").write_text(json.dumps({"id": "a", "text": "Jane Doe"}) + "\n")
    (mixed / "b.txt").write_text("Dear sir.")
    from larvatus.preflight import check_text_ids, input_files
    check_text_ids(input_files(str(mixed / "*")), "auto", "hash")   # a text file among them


def test_report_highlights_placeholders_and_hides_original_text(tmp_path, rigged_model_dir):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "text": "Jane Doe met ACME in Paris."}) + "\n")
    out = tmp_path / "out"
    run(["--input", str(source), "--output", str(out), "--model", str(rigged_model_dir),
         "--device", "cpu"])
    page = build_report(str(out))
    assert page.startswith("<!DOCTYPE html>") and "Entities by label" in page
    assert "Jane" not in page and "ACME" not in page
    assert 'class="entity"' in page and "[PER]" in page      # placeholder marks
    assert "banner" not in page.split("<body>")[1]
    kept = tmp_path / "kept"
    run(["--input", str(source), "--output", str(kept), "--model", str(rigged_model_dir),
         "--device", "cpu", "--keep-text"])
    page = build_report(str(kept))
    assert "NOT shareable" in page and "Jane" in page
    done = larvatus("report", out)
    assert done.returncode == 0 and (out / "report.html").exists()
    assert larvatus("report", tmp_path).returncode == 1      # no finished run there


@pytest.mark.slow
def test_report_renders_in_headless_chromium(tmp_path, rigged_model_dir):
    import shutil

    from PIL import Image

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, ("headless Chromium is needed to check the report's rendering: "
                      "apt-get install chromium (./run_local.sh test installs it as root)")
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "text": "Jane Doe met ACME in Paris.\n" * 5}) + "\n")
    out = tmp_path / "out"
    run(["--input", str(source), "--output", str(out), "--model", str(rigged_model_dir),
         "--device", "cpu"])
    assert larvatus("report", out).returncode == 0
    png = tmp_path / "report.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1000,1200", f"--screenshot={png}",
                    (out / "report.html").as_uri()],
                   capture_output=True, timeout=180, check=True)
    image = Image.open(png).convert("RGB")
    assert image.size == (1000, 1200)
    pixels = image.getdata()
    per = sum(1 for r, g, b in pixels if abs(r - 0xf6) < 8 and abs(g - 0xb2) < 8 and abs(b - 0x6b) < 8)
    dark = sum(1 for r, g, b in pixels if r + g + b < 150)
    assert per > 500, "no PER placeholder drawn in its colour"
    assert dark > 2000, "no text drawn"
