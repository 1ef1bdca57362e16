"""Worker sizing: model copies, ONNX Runtime threads per session, processes per machine from runner options."""
from __future__ import annotations

import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from larvatus.models.handler import OnnxTokenClassifierHandler
from larvatus.models.model_dir import load_model_spec
from larvatus.models.runners import processes_per_machine, runs_locally, session_threads


@pytest.fixture(scope="module")
def spec(rigged_model_dir):
    return load_model_spec(rigged_model_dir)


@pytest.mark.parametrize("kwargs, cores, expected", [
    ({}, 8, (0, True)),                                    # one process: ORT's default, spinning
    ({"processes_per_machine": 2}, 8, (4, False)),         # DirectRunner multi_processing, 2 workers
    ({"processes_per_machine": 3}, 8, (2, False)),
    ({"processes_per_machine": 16}, 8, (1, False)),        # more processes than cores
    ({"processes_per_machine": 0}, 8, (1, False)),         # Dataflow: one process per vCPU
    ({"processes_per_machine": 0, "large_model": True}, 8, (8, False)),   # one shared copy
    ({"processes_per_machine": 0, "model_copies": 2}, 8, (4, False)),
    ({"processes_per_machine": 2, "intra_op_threads": 3}, 8, (3, False)),  # explicit wins
    ({"intra_op_threads": 8}, 8, (8, True)),
])
def test_threads_split_the_cores_between_sessions(spec, kwargs, cores, expected):
    handler = OnnxTokenClassifierHandler(spec, device="cpu", **kwargs)
    assert handler.session_threads(cores) == expected


def test_model_copies_and_large_model_reach_beam(spec):
    assert not OnnxTokenClassifierHandler(spec).share_model_across_processes()
    shared = OnnxTokenClassifierHandler(spec, large_model=True)
    assert shared.share_model_across_processes() and shared.model_copies() == 1
    copies = OnnxTokenClassifierHandler(spec, model_copies=3)
    assert copies.share_model_across_processes() and copies.model_copies() == 3
    with pytest.raises(ValueError, match="model_copies"):
        OnnxTokenClassifierHandler(spec, model_copies=0)


def test_a_session_is_built_with_the_chosen_threads(spec, monkeypatch):
    import onnxruntime as ort

    seen = {}
    real = ort.InferenceSession

    def spy(path, sess_options=None, providers=None):
        seen["threads"] = sess_options.intra_op_num_threads
        seen["spinning"] = sess_options.get_session_config_entry("session.intra_op.allow_spinning")
        return real(path, sess_options=sess_options, providers=providers)

    monkeypatch.setattr(ort, "InferenceSession", spy)
    OnnxTokenClassifierHandler(spec, device="cpu", processes_per_machine=2).load_model()
    assert seen["spinning"] == "0" and seen["threads"] >= 1


def test_the_model_runs_through_predict_only(spec):
    """A shared model is a proxy that offers methods only: the handler must call nothing else."""
    from tests.models.test_handler import encode_text

    handler = OnnxTokenClassifierHandler(spec, device="cpu")
    loaded = handler.load_model()

    class MethodsOnly:
        def predict(self, windows):
            return loaded.predict(windows)

    doc = encode_text(spec, "Ada met Bob in PARIS.")
    [through_proxy] = handler.run_inference([doc], MethodsOnly())
    [direct] = handler.run_inference([doc], loaded)
    assert [p.tolist() for p in through_proxy.inference] == [p.tolist() for p in direct.inference]


@pytest.mark.parametrize("argv, expected", [
    ([], 1),
    (["--direct_num_workers", "2", "--direct_running_mode", "multi_processing"], 2),
    (["--direct_num_workers", "4", "--direct_running_mode", "multi_threading"], 1),
    (["--runner", "DataflowRunner"], 0),
    (["--runner", "DataflowRunner", "--experiments", "no_use_multiple_sdk_containers"], 1),
    (["--runner", "FlinkRunner", "--sdk_worker_parallelism", "4"], 4),
    (["--runner", "PortableRunner"], 1),
    (["--runner", "SparkRunner", "--sdk_worker_parallelism", "0"], 0),
])
def test_processes_per_machine_follow_the_runner(argv, expected):
    assert processes_per_machine(PipelineOptions(argv)) == expected


@pytest.mark.parametrize("argv, expected", [
    ([], True),
    (["--runner", "DirectRunner", "--direct_running_mode", "multi_processing"], True),
    (["--runner", "SwitchingDirectRunner"], True),
    (["--runner", "DataflowRunner"], False),
    (["--runner", "FlinkRunner"], False),
])
def test_only_direct_runners_run_their_workers_on_the_launchers_machine(argv, expected):
    assert runs_locally(PipelineOptions(argv)) is expected


def test_session_threads_is_a_pure_split_of_the_cores():
    assert session_threads(8, sessions=1, processes_per_machine=1) == (0, True)
    assert session_threads(8, sessions=3, processes_per_machine=3) == (2, False)
    assert session_threads(8, sessions=0, processes_per_machine=0) == (8, False)   # no session counted: one
    assert session_threads(2, sessions=1, processes_per_machine=1, intra_op_threads=4) == (4, True)
