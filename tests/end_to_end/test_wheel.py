"""A wheel built from the repository installs into a fresh virtualenv as the one `larvatus` namespace and runs the sample corpus."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.paths import ROOT

NOT_SOURCES = (".git", ".venv", "output", "build", "dist", "*.egg-info", "__pycache__",
               ".pytest_cache")
CLASHING = ("pipeline", "transforms", "models", "tests", "bench")


def _dependency_paths() -> list[str]:
    """Where this interpreter finds larvatus's dependencies (apache_beam, onnxruntime...)."""
    import apache_beam
    import onnxruntime

    return sorted({str(Path(module.__file__).resolve().parents[1])
                   for module in (apache_beam, onnxruntime)})


def _build_wheel(tmp_path: Path) -> Path:
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCES))
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         str(source), "-w", str(tmp_path / "dist")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (
        "building the wheel needs setuptools >= 70.1 (or the wheel package) here: "
        + done.stderr[-2000:])
    assert "absent from the packages configuration" not in done.stdout + done.stderr
    [wheel] = (tmp_path / "dist").glob("larvatus-*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel, the fresh virtualenv's python) with the wheel installed, dependencies borrowed."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    wheel = _build_wheel(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=300)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True).stdout.strip()
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", str(wheel)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    # After the wheel's own files: the dependencies of the environment running the tests.
    Path(purelib, "zz_dependencies.pth").write_text("\n".join(_dependency_paths()) + "\n")
    return wheel, python, Path(purelib)


@pytest.mark.slow
def test_the_wheel_holds_only_the_larvatus_namespace_with_model_and_sample(installed):
    wheel, _, site = installed
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"larvatus", "larvatus-0.1.0.dist-info"}
    for expected in ("larvatus/transforms/read.py", "larvatus/models/handler.py",
                     "larvatus/models/default/model.int8.onnx", "larvatus/sample/news.jsonl",
                     "larvatus/api.py"):
        assert expected in names
    assert not [name for name in CLASHING if (site / name).exists()]


@pytest.mark.slow
def test_the_installed_command_runs_the_sample_corpus(installed, tmp_path):
    _, python, site = installed
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    where = subprocess.run(
        [str(python), "-c", "import larvatus, sys; print(larvatus.__file__); "
         "print(any(m in sys.modules for m in ('pipeline', 'transforms', 'models')))"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert where.returncode == 0, where.stderr
    assert where.stdout.split() == [str(site / "larvatus" / "__init__.py"), "False"]
    sample = site / "larvatus" / "sample" / "news.jsonl"
    done = subprocess.run(
        [str(python.parent / "larvatus"), "run", "--input", str(sample), "--output", "out"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((tmp_path / "out" / "_SUMMARY.json").read_text())
    assert (summary["records_in"], summary["records_out"]) == (36, 36)
    assert summary["model"]["path"] == "embedded:default"   # the model inside the wheel


def _runtime_requirements() -> list[str]:
    """setup.py's RUNTIME list (read, not run: setup.py calls setup())."""
    import ast

    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    [value] = [node.value for node in tree.body if isinstance(node, ast.Assign)
               and any(getattr(t, "id", None) == "RUNTIME" for t in node.targets)]
    return ast.literal_eval(value)


def _runtime_closure() -> set[str]:
    """The installed distributions that `pip install larvatus` (no extras) brings in."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    wanted, seen, missing = list(_runtime_requirements()), set(), []
    while wanted:
        requirement = Requirement(wanted.pop())
        if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            wanted += metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            missing.append(name)
    assert not missing, f"runtime dependencies not installed here: {missing}"
    return seen


@pytest.fixture(scope="module")
def runtime_only(installed, tmp_path_factory):
    """A virtualenv with the wheel and only the runtime dependencies' files (linked one by one
    from this environment): no training extra, no torch, nothing a test extra brings."""
    from importlib import metadata

    wheel, _, _ = installed
    tmp_path = tmp_path_factory.mktemp("runtime")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=300)
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True).stdout.strip())
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", str(wheel)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    dependencies = tmp_path / "dependencies"
    for name in _runtime_closure():
        distribution = metadata.distribution(name)
        for file in distribution.files or []:
            if file.parts[0] == ".." or "__pycache__" in file.parts:
                continue        # scripts in bin/, compiled caches
            link = dependencies / file
            if not link.exists():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(Path(distribution.locate_file(file)).resolve())
    (purelib / "zz_runtime_dependencies.pth").write_text(f"{dependencies}\n")
    return python


@pytest.mark.slow
def test_a_runtime_install_derives_the_fp16_gpu_variant(runtime_only, tmp_path):
    """The CUDA path's derivation (onnx, then ONNX Runtime's float16 converter, which imports
    sympy) works with the runtime dependencies alone."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    script = (
        "import importlib.util, sys\n"
        "assert importlib.util.find_spec('torch') is None, 'torch is not a runtime dependency'\n"
        "assert importlib.util.find_spec('transformers') is None\n"
        "from pathlib import Path\n"
        "import onnx, onnxruntime as ort\n"
        "from larvatus.models.model_dir import load_model_spec, EMBEDDED_DEFAULT\n"
        "from larvatus.models.variants import cuda_graph\n"
        "spec = load_model_spec(EMBEDDED_DEFAULT)\n"
        "name = spec.onnx_files['cuda']\n"
        "graph = cuda_graph(spec.onnx_path('cuda'), name in spec.batch_dependent_files,\n"
        "                   lambda: Path(sys.argv[1]))\n"
        "assert not graph.batch_dependent and graph.path.endswith('.onnx'), graph\n"
        "model = onnx.load(graph.path)\n"
        "assert any(i.data_type == onnx.TensorProto.FLOAT16 for i in model.graph.initializer)\n"
        "ort.InferenceSession(graph.path, providers=['CPUExecutionProvider'])\n"
        "print('derived', graph.path)\n")
    done = subprocess.run([str(runtime_only), "-c", script, str(tmp_path / "cache")],
                          cwd=tmp_path, capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("derived " + str(tmp_path / "cache"))
