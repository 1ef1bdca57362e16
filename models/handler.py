"""An ONNX token classifier on padded, length-sorted batches (Beam-free; `larvatus.models.beam_handler` adapts it to RunInference)."""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from larvatus.models.batching import flatten_windows, run_in_batches, split_per_document
from larvatus.models.model_dir import ModelError, ModelSpec, cache_root, where
from larvatus.models.runners import available_cores, session_threads, sessions_sharing_cores
from larvatus.models.variants import CudaGraph, cuda_graph
from larvatus.transforms.records import EncodedDocument, InferenceFailure, Window, WindowPredictions

LOG = logging.getLogger(__name__)
DEVICE_CHOICES = ("auto", "cpu", "cuda")
CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
# On CPU small batches stay in cache: 512 padded tokens ran 10-17% faster than 1,024-2,048
# and 50% faster than 8,192 (int8 MiniLM-L6, 2 AVX2 cores); a GPU wants large batches.
CPU_BATCH_TOKENS = 512
CUDA_BATCH_TOKENS = 65536
# RunInference hands the handler at least this many tokens of documents at a time, so
# that sorting their windows by length has enough to choose from.
MIN_DOCUMENT_BATCH_TOKENS = 16384
# What the start-up probe feeds the model to see that its outputs are finite numbers.
PROBE_SENTENCE = "Jane Doe met John Smith of ACME Corp in London on 3 May 2021."


@dataclass
class LoadedModel:
    """An ONNX Runtime session and what is known about it."""

    session: Any
    device: str
    input_names: tuple[str, ...]
    num_labels: int
    batch_tokens: int
    io_binding: bool = False
    windows_per_call: Optional[int] = None   # 1 for dynamically quantized graphs
    # Graph outputs fetched: the logits, then the hidden states for --emit-embeddings.
    output_names: tuple[str, ...] = ()
    # The ONNX file the session runs: the model's own, or its derived fp16 GPU variant.
    graph_file: str = ""

    def predict(self, windows: Sequence[Window]) -> list[np.ndarray]:
        """Label probabilities for each window's content pieces.

        The one method the handler calls, so that a model shared across processes
        (`--large-model`, `--model-copies`: Beam hands out a proxy to it) does the
        whole batched loop in its own process, in one call per batch of documents.
        """
        return run_in_batches(windows, self.batch_tokens, self.run, self.windows_per_call)

    def run(self, feeds: dict[str, np.ndarray]):
        """Logits for one padded batch, or (logits, hidden states) when those are fetched too.

        Only the outputs in `output_names` are fetched (ONNX Runtime then runs only
        the nodes they need). On CUDA the inputs are bound once and ONNX Runtime
        allocates the outputs on the device, copying them back in one transfer (IO binding).
        """
        feeds = {k: v for k, v in feeds.items() if k in self.input_names}
        names = list(self.output_names or (self.session.get_outputs()[0].name,))
        if not self.io_binding:
            outputs = self.session.run(names, feeds)
        else:
            binding = self.session.io_binding()
            for name, array in feeds.items():
                binding.bind_cpu_input(name, array)
            for name in names:
                binding.bind_output(name, "cuda" if self.device == "cuda" else "cpu")
            self.session.run_with_iobinding(binding)
            outputs = binding.copy_outputs_to_cpu()
        return outputs[0] if len(outputs) == 1 else (outputs[0], outputs[1])


def missing_hidden_states(spec: ModelSpec, layer: str) -> str:
    """The start-up error for --emit-embeddings on a model exported without hidden-state outputs."""
    return (f"--emit-embeddings needs the hidden-state outputs of layer {layer!r}, but model "
            f"{spec.name} ({spec.location}) was exported without them (its config lists "
            f"{sorted(spec.hidden_outputs) or 'none'}). Re-export it with "
            f"`python -m larvatus.models.export` (hidden states are exported by default), or drop "
            f"--emit-embeddings.")


def cuda_present() -> bool:
    """Whether this machine has an NVIDIA driver (checked before asking ONNX Runtime for CUDA)."""
    return os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidia0")


class OnnxTokenClassifier:
    """Loads the ONNX model once per process and tags every window of each document.

    An element is a whole EncodedDocument: a driver batches documents (Beam's
    RunInference by their token count), and `predict_documents` flattens their windows, sorts them by
    length and runs padded sub-batches within `batch_tokens`. The inference for
    a document is a list of per-window label probabilities over the content
    pieces ([CLS] and [SEP] stripped), or an InferenceFailure.
    """

    def __init__(
        self, spec: ModelSpec, device: str = "auto", batch_tokens: Optional[int] = None,
        intra_op_threads: int = 0, processes_per_machine: int = 1,
        model_copies: Optional[int] = None, large_model: bool = False,
        embedding_layer: Optional[str] = None,
    ):
        """
        Args:
          spec: the model, as the launcher checked it (workers find its files themselves).
          device: auto, cpu or cuda.
          batch_tokens: padded tokens per inference batch (default per device).
          intra_op_threads: ONNX Runtime threads per session; 0 picks them from
            the machine's cores and the sessions sharing them (`session_threads`).
          processes_per_machine: SDK worker processes the runner starts on each
            machine, each loading its own session unless the model is shared; 0
            means one per core (Dataflow's default).
          model_copies: load exactly this many copies per machine, shared by all
            its processes (Beam's `model_copies`); None: one per process.
          large_model: share one copy per machine across processes (Beam's
            `large_model`), for models too big to load once per process.
          embedding_layer: also fetch these hidden states (`larvatus.models.export.HIDDEN_OUTPUTS`
            key) for --emit-embeddings; a document's inference is then a WindowPredictions.
        """
        if device not in DEVICE_CHOICES:
            raise ValueError(f"device must be one of {DEVICE_CHOICES}, got {device!r}")
        if batch_tokens is not None and batch_tokens < spec.max_length:
            raise ValueError(
                f"batch_tokens ({batch_tokens}) must be at least the model's window "
                f"length ({spec.max_length})")
        if intra_op_threads < 0:
            raise ValueError(f"intra_op_threads must be 0 (chosen per machine) or more, "
                             f"got {intra_op_threads}")
        if processes_per_machine < 0:
            raise ValueError(f"processes_per_machine must be 0 (one per core) or more, "
                             f"got {processes_per_machine}")
        if model_copies is not None and model_copies < 1:
            raise ValueError(f"model_copies must be at least 1, got {model_copies}")
        self._spec = spec
        self._device = device
        self._batch_tokens = batch_tokens
        self._intra_op_threads = intra_op_threads
        self._processes_per_machine = processes_per_machine
        if embedding_layer is not None and embedding_layer not in spec.hidden_outputs:
            raise ModelError(missing_hidden_states(spec, embedding_layer))
        self._embedding_layer = embedding_layer

    def sessions_per_machine(self, cores: int) -> int:
        """How many ONNX Runtime sessions compete for this machine's cores (one per process here)."""
        return sessions_sharing_cores(cores, self._processes_per_machine, None)

    def session_threads(self, cores: Optional[int] = None) -> tuple[int, bool]:
        """Intra-op threads for one session and whether its threads may spin (`larvatus.models.runners`)."""
        cores = cores or available_cores()
        return session_threads(cores, self.sessions_per_machine(cores),
                               self._processes_per_machine, self._intra_op_threads)

    def _session(self, onnx_path: str, providers: list):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        threads, spinning = self.session_threads()
        if threads:
            options.intra_op_num_threads = threads
        options.add_session_config_entry(
            "session.intra_op.allow_spinning", "1" if spinning else "0")
        try:
            return ort.InferenceSession(onnx_path, sess_options=options, providers=providers)
        except Exception as error:  # ORT raises several types for a bad file
            raise ModelError(
                f"on {where()}: ONNX Runtime {ort.__version__} cannot load "
                f"{os.path.basename(onnx_path)} of model {self._spec.location}: "
                f"{type(error).__name__}: {str(error)[:500]}. Its sha256 matches what the "
                f"launcher checked, so if the launcher loaded it (it does before the job "
                f"starts) this machine differs: its onnxruntime version, CPU or memory. "
                f"If the launcher cannot load it either, re-export it with "
                f"`python -m larvatus.models.export`.") from error

    def cuda_graph(self) -> CudaGraph:
        """The graph to run on CUDA: a dynamic-int8 file gives way to its cached fp16 variant."""
        name = self._spec.onnx_files["cuda"]
        graph = cuda_graph(self._spec.onnx_path("cuda"),
                           name in self._spec.batch_dependent_files, cache_root)
        if graph.batch_dependent:
            LOG.warning("on %s: %s", where(), graph.note)
        elif graph.note:
            LOG.info("on %s: CUDA runs the %s", where(), graph.note)
        return graph

    def load_model(self) -> LoadedModel:
        import onnxruntime as ort

        want_cuda = self._device == "cuda" or (self._device == "auto" and cuda_present())
        session = None
        on_cuda = None
        if want_cuda and CUDA in ort.get_available_providers():
            on_cuda = self.cuda_graph()
            session = self._session(on_cuda.path, [CUDA, CPU])
            if CUDA not in session.get_providers():
                session = None
        if session is None:
            if self._device == "cuda":
                raise ModelError(
                    f"on {where()}: --device cuda was asked for, but ONNX Runtime cannot use "
                    f"CUDA here (available: {ort.get_available_providers()}, driver present: "
                    f"{cuda_present()}). Install onnxruntime-gpu with CUDA 12/13 and cuDNN 9, "
                    "or run with --device cpu.")
            session = self._session(self._spec.onnx_path("cpu"), [CPU])
        device = "cuda" if CUDA in session.get_providers() else "cpu"
        input_names = tuple(i.name for i in session.get_inputs())
        missing = {"input_ids", "attention_mask"} - set(input_names)
        if missing:
            raise ModelError(
                f"{self._spec.location}: the ONNX graph lacks inputs {sorted(missing)}; "
                "export a token-classification model with `python -m larvatus.models.export`.")
        outputs = [o.name for o in session.get_outputs()]
        output_names = (outputs[0],)
        if self._embedding_layer is not None:
            hidden = self._spec.hidden_outputs[self._embedding_layer]
            if hidden not in outputs:
                raise ModelError(
                    f"{self._spec.location}: the config lists hidden-state output {hidden!r} "
                    f"but the ONNX graph has only {outputs}; re-export the model with "
                    "`python -m larvatus.models.export`.")
            output_names += (hidden,)
        num_labels = session.get_outputs()[0].shape[-1]
        if isinstance(num_labels, int) and num_labels != len(self._spec.labels):
            raise ModelError(
                f"{self._spec.location}: the graph predicts {num_labels} labels but the "
                f"config lists {len(self._spec.labels)}.")
        threads, spinning = self.session_threads()
        LOG.debug("Larvatus model %s runs on %s (%s) in %s, %s intra-op threads, spinning %s",
                 self._spec.name, device, session.get_providers()[0], where(),
                 threads or "ONNX Runtime's default", "on" if spinning else "off")
        batch_tokens = self._batch_tokens or (
            CUDA_BATCH_TOKENS if device == "cuda" else CPU_BATCH_TOKENS)
        per_window = on_cuda.batch_dependent if device == "cuda" else \
            self._spec.onnx_files["cpu"] in self._spec.batch_dependent_files
        loaded = LoadedModel(session, device, input_names, len(self._spec.labels), batch_tokens,
                             io_binding=device == "cuda", windows_per_call=1 if per_window else None,
                             output_names=output_names,
                             graph_file=on_cuda.path if device == "cuda" else
                             self._spec.onnx_path("cpu"))
        self._probe_finite(loaded)
        return loaded

    def _probe_finite(self, loaded: LoadedModel) -> None:
        """Runs the model once on a fixed sentence and refuses it when its outputs are NaN or
        infinite (fp16 overflow on a GPU, a broken export): such a model tags nothing."""
        ids = self._spec.load_tokenizer().encode(PROBE_SENTENCE).ids[:self._spec.max_length]
        shape = (1, len(ids))
        output = loaded.run({"input_ids": np.asarray([ids], dtype=np.int64),
                             "attention_mask": np.ones(shape, dtype=np.int64),
                             "token_type_ids": np.zeros(shape, dtype=np.int64)})
        arrays = output if isinstance(output, tuple) else (output,)
        if not all(np.isfinite(np.asarray(a)).all() for a in arrays):
            raise ModelError(
                f"on {where()}: model {self._spec.location} ({self._spec.onnx_files[loaded.device]}"
                f" on {loaded.device}) gives NaN or infinite outputs for a plain sentence, so it "
                f"would tag no entity at all. An fp16 graph can overflow: use its fp32 or int8 "
                f"file for this device (the config's \"onnx\" map), or re-export the model.")

    def run_windows(self, model: LoadedModel, windows: Sequence[Window]) -> list[np.ndarray]:
        """Label probabilities for each window's content pieces (through a proxy when shared)."""
        return model.predict(windows)

    def predict_documents(self, batch: Sequence[EncodedDocument], model: LoadedModel) -> list:
        """Each document's inference: its windows' probabilities (a WindowPredictions with
        hidden states), or an InferenceFailure for a document whose windows fail alone."""
        try:
            flat = self.run_windows(model, flatten_windows(batch))
        except Exception:  # isolate the document that fails, keep the others
            LOG.warning("a batch of %d documents failed inference; retrying one by one",
                        len(batch))
            return [self._run_one(model, doc) for doc in batch]
        return [self._per_document(probs) for probs in split_per_document(batch, flat)]

    def _per_document(self, results: list):
        """A document's window results: a list of probabilities, or with hidden states a WindowPredictions."""
        if self._embedding_layer is None:
            return results
        return WindowPredictions(tuple(r[0] for r in results), tuple(r[1] for r in results))

    def _run_one(self, model: LoadedModel, doc: EncodedDocument):
        try:
            return self._per_document(self.run_windows(model, doc.windows))
        except Exception as error:
            return InferenceFailure(f"{type(error).__name__}: {str(error)[:300]}")


def document_tokens(element) -> int:
    """Batch weight of a document (or a keyed one): its padded-free token count."""
    doc = element[1] if isinstance(element, tuple) else element
    return max(doc.num_tokens, 1)


def __getattr__(name: str):
    """`OnnxTokenClassifierHandler`, Beam's adapter, imported on first use (it loads Beam)."""
    if name == "OnnxTokenClassifierHandler":
        from larvatus.models.beam_handler import OnnxTokenClassifierHandler

        return OnnxTokenClassifierHandler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
