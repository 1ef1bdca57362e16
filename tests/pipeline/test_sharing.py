"""--share-model: worker processes sized from the machine around one shared model, rows as one process gives."""
from __future__ import annotations

import subprocess
import sys

import pytest

from larvatus.sharing import Sharing, SharingError, given, plan_sharing
from tests.rows import differing, read_rows
from tests.pipeline.test_runners import JOB_TIMEOUT, ROOT, SAMPLE, clean_env, direct_rows, summary


def test_on_starts_one_process_per_core_sharing_one_model():
    plan = plan_sharing(["--input", "x"], "on", "cpu", cores=16)
    assert plan == Sharing(("--direct_running_mode=multi_processing",
                            "--direct_num_workers=16", "--model_copies=1"), 16)


def test_auto_is_on_with_cuda_and_off_on_cpu():
    assert plan_sharing([], "auto", "cuda", cores=8).workers == 8
    assert plan_sharing([], "auto", "cpu", cores=8) == Sharing()
    assert plan_sharing([], "off", "cuda", cores=8) == Sharing()


def test_what_the_user_says_wins():
    plan = plan_sharing(["--direct_num_workers", "3", "--model-copies", "2",
                         "--direct_running_mode=multi_processing"], "on", "cuda", cores=16)
    assert plan == Sharing((), 3)
    large = plan_sharing(["--large-model"], "on", "cpu", cores=4)
    assert "--model_copies=1" not in large.arguments and large.workers == 4
    assert plan_sharing(["--direct_num_workers=0"], "on", "cpu", cores=5).workers == 5


def test_other_runners_turn_auto_off_and_refuse_on():
    for argv in (["--runner", "DataflowRunner"], ["--direct_running_mode", "in_memory"]):
        assert plan_sharing(argv, "auto", "cuda", cores=8) == Sharing()
        with pytest.raises(SharingError, match="DirectRunner only"):
            plan_sharing(argv, "on", "cuda", cores=8)


def test_given_reads_both_spellings_and_the_last_value():
    argv = ["--a", "1", "--b=2", "--a=3", "--flag", "--c", "4"]
    assert given(argv, "--a") == "3" and given(argv, "--b") == "2"
    assert given(argv, "--flag") == "" and given(argv, "--missing") is None


@pytest.fixture(scope="module")
def fp16_model_dir(tmp_path_factory):
    """The embedded model's derived fp16 variant as a model directory that runs it on the CPU."""
    import json
    import shutil

    from larvatus.models.model_dir import CONFIG_NAME, TOKENIZER_NAME, embedded_model_dir
    from larvatus.models.variants import FP16_NAME, cached_fp16

    source = embedded_model_dir()
    target = tmp_path_factory.mktemp("models") / "embedded-fp16"
    target.mkdir()
    shutil.copy(cached_fp16(source / "model.int8.onnx", target.parent), target / FP16_NAME)
    shutil.copy(source / TOKENIZER_NAME, target / TOKENIZER_NAME)
    config = json.loads((source / CONFIG_NAME).read_text())
    config.update(onnx={"cpu": FP16_NAME, "cuda": FP16_NAME}, dynamic_quantization=[],
                  files={"fp16": FP16_NAME}, name=config["name"] + "-fp16")
    config.pop("parity", None)
    (target / CONFIG_NAME).write_text(json.dumps(config, indent=2))
    return target


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["int8", "fp16"])
def test_shared_model_across_two_processes_gives_one_process_rows(precision, tmp_path, request):
    """The embedded model (int8, or its fp16 variant) on the sample: one process, then
    --share-model on with 2 workers."""
    model = ["--model", str(request.getfixturevalue("fp16_model_dir"))] \
        if precision == "fp16" else []
    options = ["--device", "cpu", "--share-model", "off", *model]
    expected = direct_rows(tmp_path, *options)
    output = tmp_path / "shared"
    command = [sys.executable, "-m", "larvatus.run", "--input", str(SAMPLE), "--output",
               str(output), "--device", "cpu", "--share-model", "on",
               "--direct_num_workers", "2", *model]
    done = subprocess.run(command, cwd=ROOT, env=clean_env(), capture_output=True, text=True,
                          timeout=JOB_TIMEOUT)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "--share-model: 2 worker processes sharing 1 model copy" in done.stderr
    assert differing(read_rows(output), expected) == []
    assert summary(output)["records_out"] == 36
    assert summary(output)["beam_counters"]["worker_processes"] == 2
