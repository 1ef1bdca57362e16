"""The pseudonym key: read by each worker from where the job says, never carried inside the job graph."""
from __future__ import annotations

import base64
import bz2
import glob
import pickle
import zlib

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.portability.api import beam_runner_api_pb2

from larvatus.graph import build
from larvatus.options import LarvatusOptions, OptionsError
from larvatus.run import make_config, run
from larvatus.transforms import stages
from larvatus.transforms.redact import KeySource, RedactionPolicy, SecretKeyError

KEY = "Larvatus-test-key-7Qm2xZ9vK4pR"
ENV = "LARVATUS_TEST_PSEUDONYM_KEY"


def _decoded(blob: bytes) -> list[bytes]:
    """A payload and, if it is one of Beam's pickles (base64 of bz2 or zlib), its plain bytes."""
    out = [blob]
    try:
        raw = base64.b64decode(blob, validate=True)
    except (ValueError, TypeError):
        return out
    for decompress in (bz2.decompress, zlib.decompress):
        try:
            out.append(decompress(raw))
        except Exception:
            continue
    return out


def graph_blobs(pipeline: beam.Pipeline) -> list[bytes]:
    """Every byte string the pipeline proto carries, Beam's pickled DoFns decompressed."""
    proto = pipeline.to_runner_api()
    blobs = [proto.SerializeToString()]
    for transform in proto.components.transforms.values():
        payload = transform.spec.payload
        if not payload:
            continue
        blobs += _decoded(payload)
        if transform.spec.urn == "beam:transform:pardo:v1":
            pardo = beam_runner_api_pb2.ParDoPayload.FromString(payload)
            blobs += _decoded(pardo.do_fn.payload)
        elif transform.spec.urn == "beam:transform:combine_per_key:v1":
            combine = beam_runner_api_pb2.CombinePayload.FromString(payload)
            blobs += _decoded(combine.combine_fn.payload)
    for coder in proto.components.coders.values():
        blobs += _decoded(coder.spec.payload)
    for strategy in proto.components.windowing_strategies.values():
        blobs += _decoded(strategy.window_fn.payload)
    return blobs


def job_graph(argv) -> beam.Pipeline:
    options = PipelineOptions(argv)
    config = make_config(options.view_as(LarvatusOptions))
    pipeline = beam.Pipeline(options=options)
    build(pipeline, config)
    return pipeline


@pytest.fixture
def corpus(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "text": "Ada met Bob."}\n{"id": "b", "text": "Bob left."}\n')
    return source


def test_the_graph_decoder_finds_a_secret_that_is_there():
    pipeline = beam.Pipeline()
    _ = pipeline | beam.Create([1]) | beam.Map(lambda x, k=KEY: x)
    assert any(KEY.encode() in blob for blob in graph_blobs(pipeline))


@pytest.mark.parametrize("how", ["env", "file"])
def test_the_pseudonym_key_is_not_in_the_job_graph(rigged_model_dir, corpus, tmp_path,
                                                    monkeypatch, how):
    argv = ["--input", str(corpus), "--output", str(tmp_path / "out"),
            "--model", str(rigged_model_dir), "--placeholder", "pseudonym"]
    if how == "env":
        monkeypatch.setenv(ENV, KEY)
        argv += ["--pseudonym-key-env", ENV]
        reference = ENV.encode()
    else:
        (tmp_path / "key").write_text(KEY + "\n")
        argv += ["--pseudonym-key-file", str(tmp_path / "key")]
        reference = str(tmp_path / "key").encode()
    blobs = graph_blobs(job_graph(argv))
    assert any(reference in blob for blob in blobs)   # the Redact DoFn, decoded, names it
    assert not any(KEY.encode() in blob for blob in blobs)
    assert KEY not in repr(PipelineOptions(argv).get_all_options())


def test_a_policy_holding_the_key_refuses_to_be_pickled():
    with pytest.raises(TypeError, match="must not be pickled"):
        pickle.dumps(RedactionPolicy(frozenset({"PER"}), "pseudonym", key=KEY.encode()))
    assert KEY not in repr(RedactionPolicy(frozenset({"PER"}), "pseudonym", key=KEY.encode()))
    by_reference = RedactionPolicy(frozenset({"PER"}), "pseudonym", key_source=KeySource(env=ENV))
    assert pickle.loads(pickle.dumps(by_reference)) == by_reference


def test_the_worker_loads_the_key_in_setup_and_says_where_it_looked(monkeypatch):
    policy = RedactionPolicy(frozenset({"PER"}), "pseudonym", key_source=KeySource(env=ENV))
    redact = pickle.loads(pickle.dumps(stages.Redact(policy)))
    monkeypatch.delenv(ENV, raising=False)
    with pytest.raises(SecretKeyError, match=rf"^on worker .*environment variable {ENV} is not set"):
        redact.setup()
    monkeypatch.setenv(ENV, "short")
    with pytest.raises(SecretKeyError, match="shorter than 16") as caught:
        redact.setup()
    assert "short" not in str(caught.value).replace("shorter", "")
    monkeypatch.setenv(ENV, KEY)
    redact.setup()


def test_a_missing_key_fails_at_start(rigged_model_dir, corpus, tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    base = ["--input", str(corpus), "--output", str(tmp_path / "out"),
            "--model", str(rigged_model_dir), "--placeholder", "pseudonym"]
    with pytest.raises(OptionsError, match=ENV):
        run(base + ["--pseudonym-key-env", ENV])
    with pytest.raises(OptionsError, match="cannot read the pseudonym key's file"):
        run(base + ["--pseudonym-key-file", str(tmp_path / "no-such-key")])
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_key_file_and_the_same_key_in_the_environment_give_the_same_pseudonyms(
        rigged_model_dir, corpus, tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    (tmp_path / "key").write_text(KEY + "\n")
    base = ["--input", str(corpus), "--model", str(rigged_model_dir), "--device", "cpu",
            "--placeholder", "pseudonym"]
    texts = {}
    for how, extra in (("env", ["--pseudonym-key-env", ENV]),
                       ("file", ["--pseudonym-key-file", str(tmp_path / "key")])):
        run(base + extra + ["--output", str(tmp_path / how)])
        rows = [r for f in glob.glob(str(tmp_path / how / "annotations" / "annotations-*.parquet"))
                for r in pq.read_table(f).to_pylist()]
        texts[how] = sorted((r["id"], r["redacted_text"]) for r in rows)
    assert texts["env"] == texts["file"]
    assert all("[PER_" in text for _, text in texts["env"])
