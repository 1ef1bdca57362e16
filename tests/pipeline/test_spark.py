"""The Spark engine on real executor JVMs: the Beam engine's rows, every row once after a killed worker, annotate(df)."""
from __future__ import annotations

import json
import os
import signal
import threading

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from larvatus import run as run_lib
from larvatus import schemas
from tests.paths import ROOT

SAMPLE = ROOT / "pipeline" / "sample" / "news.jsonl"
BAD_LINES = [
    b'{"id": "cut-short", "text": "Angela Merkel',   # invalid_json
    b"not json at all",                               # invalid_json
    b'{"id": "no-text"}',                             # missing_text
    b'["an", "array"]',                               # not_an_object
    b'{"id": "number", "text": 42}',                  # text_not_string
]
CLUSTER = "local-cluster[2,1,1024]"   # two executor JVMs, one core and 1 GiB each


def _corpus(path, copies: int = 1):
    """The sample corpus `copies` times over (ids made unique), with the bad lines among it."""
    lines = SAMPLE.read_bytes().splitlines()
    out = []
    for copy in range(copies):
        for number, line in enumerate(lines):
            record = json.loads(line)
            record["id"] = f"{record['id']}-{copy}"
            out.append(json.dumps(record).encode())
            if number % 9 == 4 and copy == 0:
                out.append(BAD_LINES[(number // 9) % len(BAD_LINES)])
    out += BAD_LINES
    path.write_bytes(b"\n".join(out) + b"\n")
    return path


def _table(output, folder: str) -> list[dict]:
    return sorted(ds.dataset(str(output / folder)).to_table().to_pylist(),
                  key=lambda row: row["source"])


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    """One Spark session on real executor JVMs for every test here (the engine uses an
    active session as it is)."""
    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master(CLUSTER).appName("larvatus-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.mark.slow
def test_spark_engine_writes_the_beam_engines_rows_and_dead_letters(spark, tmp_path):
    """The sample corpus with malformed lines, through the embedded default model, on two
    executors: every annotation and dead-letter row and every count as the Beam engine's."""
    corpus = _corpus(tmp_path / "in.jsonl")
    common = ["--input", str(corpus), "--keep-text", "--max-dead-letter-ratio", "0.5", "-q"]
    assert run_lib.main([*common, "--output", str(tmp_path / "beam")]) == 0
    assert run_lib.main([*common, "--output", str(tmp_path / "spark"), "--engine", "spark",
                         "--spark-master", CLUSTER]) == 0

    for folder in ("annotations", "dead_letters"):
        beam_rows, spark_rows = _table(tmp_path / "beam", folder), _table(tmp_path / "spark", folder)
        assert spark_rows == beam_rows, folder
        assert ds.dataset(str(tmp_path / "spark" / folder)).schema.equals(
            ds.dataset(str(tmp_path / "beam" / folder)).schema)
    beam = json.loads((tmp_path / "beam" / "_SUMMARY.json").read_text())
    summary = json.loads((tmp_path / "spark" / "_SUMMARY.json").read_text())
    assert summary["checks"] == beam["checks"] and summary["checks"]["passed"]
    for key in ("records_in", "records_out", "dead_lettered_by_reason", "entities_by_label",
                "documents_by_language", "audit", "words", "wordpieces", "published_rows"):
        assert summary[key] == beam[key], key
    assert summary["records_out"] == 36 and summary["dead_lettered"] == 4 + len(BAD_LINES)
    assert summary["options"]["engine"] == "spark"
    assert not [name for name in os.listdir(tmp_path / "spark") if name.startswith(".")]


def _python_workers() -> dict[int, float]:
    """This test process's PySpark Python workers (forked by pyspark.daemon under the
    executor JVMs it started) and their CPU seconds."""
    daemons, parents, cpu = set(), {}, {}
    tick = os.sysconf("SC_CLK_TCK")
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                command = handle.read()
            with open(f"/proc/{name}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if b"pyspark.daemon" in command:
            daemons.add(int(name))
        parents[int(name)] = int(fields[1])
        cpu[int(name)] = (int(fields[11]) + int(fields[12])) / tick

    def ours(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return {pid: cpu[pid] for pid, parent in parents.items() if parent in daemons and ours(pid)}


@pytest.mark.slow
def test_a_python_worker_killed_mid_job_leaves_every_row_exactly_once(
        spark, rigged_model_dir, tmp_path):
    corpus = _corpus(tmp_path / "in.jsonl", copies=4)
    expected = 4 * 36
    killed: list[int] = []
    done = threading.Event()

    def kill_a_busy_worker():
        # a worker that has worked a while and is working now (on 2 loaded cores a busy
        # process may get only a few hundredths of a second of CPU between two looks)
        first, last = {}, {}
        while not done.wait(0.2) and not killed:
            now = _python_workers()
            busy = [pid for pid, cpu in now.items()
                    if cpu - first.setdefault(pid, cpu) >= 0.3 and cpu > last.get(pid, cpu)]
            if busy:
                os.kill(busy[0], signal.SIGKILL)
                killed.append(busy[0])
            last = now

    killer = threading.Thread(target=kill_a_busy_worker, daemon=True)
    killer.start()
    try:
        status = run_lib.main(["--input", str(corpus), "--output", str(tmp_path / "out"),
                               "--model", str(rigged_model_dir), "--engine", "spark",
                               "--max-dead-letter-ratio", "0.5", "-q"])
    finally:
        done.set()
        killer.join()
    assert killed, "no Python worker was seen working, so none was killed"
    assert not os.path.exists(f"/proc/{killed[0]}") or _python_workers().get(killed[0]) is None
    assert status == 0
    rows = _table(tmp_path / "out", "annotations")
    sources = [row["source"] for row in rows]
    assert len(sources) == len(set(sources)) == expected
    summary = json.loads((tmp_path / "out" / "_SUMMARY.json").read_text())
    assert summary["records_out"] == expected and summary["counts_add_up"]
    assert summary["published_rows"] == {"annotations": expected,
                                         "dead_letters": summary["dead_lettered"]}


@pytest.mark.slow
def test_annotate_dataframe_gives_the_redactors_rows(spark, rigged_model_dir):
    from larvatus import Redactor
    from larvatus.spark import annotate

    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()][:12]
    frame = spark.createDataFrame(
        [(r["id"], r["text"], "kept") for r in records] + [("empty", None, "kept")],
        "id string, text string, team string").repartition(3)
    out = annotate(frame, model=str(rigged_model_dir), placeholder="indexed")
    assert out.columns[:3] == ["id", "text", "team"]
    got = {row["id"]: row for row in out.toArrow().to_pylist()}

    redactor = Redactor(model=str(rigged_model_dir), placeholder="indexed")
    expected = pa.Table.from_pylist(
        redactor.annotate([r["text"] for r in records], ids=[r["id"] for r in records]),
        schema=schemas.OutputColumns.of(False).schema()).to_pylist()
    assert len(got) == len(records) + 1
    for row in expected:
        mine = got[row["id"]]
        assert mine["team"] == "kept" and mine["dead_letter"] is None
        for column in ("redacted_text", "language", "entities", "replacements", "audit", "model"):
            assert mine[column] == row[column], (row["id"], column)
    assert got["empty"]["dead_letter"] == {"reason": "missing_text", "detail": "no text field"}
    assert got["empty"]["redacted_text"] is None and got["empty"]["team"] == "kept"


def test_spark_engine_refuses_a_pseudonym_key_in_the_environment(tmp_path, monkeypatch, capsys):
    """The key would have to travel in spark.executorEnv, which the Spark UI shows."""
    monkeypatch.setenv("LARVATUS_PSEUDONYM_KEY", "k" * 40)
    status = run_lib.main(["--input", str(SAMPLE), "--output", str(tmp_path / "out"),
                           "--engine", "spark", "--placeholder", "pseudonym", "-q"])
    assert status == 2
    error = capsys.readouterr().err
    assert "--pseudonym-key-file" in error and "spark.executorEnv" in error
    assert not (tmp_path / "out").exists() or not os.listdir(tmp_path / "out")


def test_spark_engine_without_java_fails_at_start(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))   # no java on it
    monkeypatch.delenv("JAVA_HOME", raising=False)
    status = run_lib.main(["--input", str(SAMPLE), "--output", str(tmp_path / "out"),
                           "--engine", "spark", "-q"])
    assert status == 2
    assert "Java runtime" in capsys.readouterr().err


def test_engine_is_checked_before_anything_runs(tmp_path, capsys):
    status = run_lib.main(["--input", str(SAMPLE), "--output", str(tmp_path / "out"),
                           "--engine", "flink"])
    assert status == 2
    assert "--engine" in capsys.readouterr().err
