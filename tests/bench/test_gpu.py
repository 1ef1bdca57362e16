"""bench/gpu.sh and bench/gpu_table.py without a GPU: the script's syntax and package set-up, the table's parts."""
from __future__ import annotations

import lzma
import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

from bench.gpu_table import GpuSamples, Leg, parse_smi, plan_legs, table_lines
from tests.paths import ROOT

SCRIPT = ROOT / "bench" / "gpu.sh"

SMI = """utilization.gpu [%], memory.used [MiB]
0 %, 500 MiB
40 %, 1200 MiB
80 %, 1300 MiB
12"""


def test_smi_samples_skip_the_header_and_a_partial_line():
    assert parse_smi(SMI) == GpuSamples(3, 40.0, 80.0, 1300.0)
    assert parse_smi("utilization.gpu [%], memory.used [MiB]\n") is None


def test_cuda_table_has_the_five_rows_and_shares_the_model_on_all_workers(tmp_path):
    legs = plan_legs("docs.jsonl", 256, 64, 16, "cuda", "ckpt", tmp_path)
    assert [leg.name for leg in legs] == ["hf-users", "ort", "larvatus-1", "larvatus-shared",
                                          "larvatus-cpu"]
    by_name = {leg.name: leg for leg in legs}
    assert by_name["hf-users"].params["config"] == "users"
    assert by_name["ort"].params["model_dir"] == "embedded:default"
    assert by_name["larvatus-1"].params["extra"] == ["--share-model", "off"]
    assert by_name["larvatus-shared"].params["extra"] == [
        "--share-model", "on", "--direct_num_workers", "16"]
    assert by_name["larvatus-cpu"].params["device"] == "cpu"
    assert "16" in by_name["larvatus-cpu"].params["extra"]


def test_without_a_checkpoint_or_a_gpu_the_rows_that_need_them_are_left_out(tmp_path):
    names = [leg.name for leg in plan_legs("d", 256, 64, 2, "cpu", None, tmp_path)]
    assert names == ["ort", "larvatus-1", "larvatus-shared"]


def test_table_gives_words_per_second_and_utilisation():
    leg = Leg("ort", "raw loop", "bench.runners:measure_ort", {})
    lines = table_lines(1_000_000, [(leg, {"seconds": 2.0}, GpuSamples(5, 12.4, 90.0, 2048.0)),
                                    (leg, {"seconds": 4.0}, None)])
    assert lines[0].startswith("| 1,000,000 words of news documents | seconds | words/s")
    assert lines[2] == "| raw loop | 2.0 | 500,000 | 12% / 90% | 2,048 MiB |"
    assert lines[3] == "| raw loop | 4.0 | 250,000 | not sampled |  |"


def test_gpu_script_is_valid_bash():
    assert subprocess.run(["bash", "-n", str(SCRIPT)]).returncode == 0


def _parts(folder: Path) -> None:
    """A site folder with one module, packed and split the way gpu-parts.sh packs it."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        data = b"VALUE = 42\n"
        info = tarfile.TarInfo("./carried_module.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    packed = lzma.compress(buffer.getvalue())
    folder.mkdir()
    half = len(packed) // 2
    (folder / "site.tar.xz.part00").write_bytes(packed[:half])
    (folder / "site.tar.xz.part01").write_bytes(packed[half:])


def test_gpu_script_unpacks_prepared_parts_onto_the_python_path(tmp_path):
    _parts(tmp_path / "parts")
    site = tmp_path / "site"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(DRY_RUN="1", DEVICE="cpu", OUT=str(tmp_path / "out"), PARTS=str(tmp_path / "parts"),
               SITE=str(site), PYTHON=sys.executable, HOME=str(tmp_path))
    done = subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (site / "carried_module.py").read_text() == "VALUE = 42\n"
    assert f"PYTHONPATH={site}:{ROOT}" in done.stdout
    assert "unpacking 2 part(s)" in done.stdout
