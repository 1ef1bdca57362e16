# Larvatus worker image: Beam's Python SDK image with Larvatus (and its embedded model) and
# onnxruntime-gpu installed. For Dataflow (--sdk_container_image), and for Flink or Spark
# workers (--environment_type DOCKER, or `docker run IMAGE --worker_pool` for EXTERNAL).
#
#   docker build -t IMAGE --build-arg BEAM_VERSION=$(python -c 'import apache_beam; print(apache_beam.__version__)') .
#
# --build-arg LARVATUS_EXTRAS=aws (s3://), gcp (gs://, the default) or aws,gcp picks the
# remote stores the workers can read.
#
# BEAM_VERSION must be the launcher's apache-beam version exactly (the SDK harness and the
# launcher must match); the default is the version this repository is tested with.
# NOT BUILT in this repository's CI (no Docker, no network there): see README, "Running at scale".
ARG BEAM_VERSION=2.77.0
ARG PYTHON_VERSION=3.11
FROM apache/beam_python${PYTHON_VERSION}_sdk:${BEAM_VERSION}
ARG BEAM_VERSION
# "[cuda,cudnn]" pulls CUDA 12 and cuDNN 9 as NVIDIA pip wheels, so no CUDA base image is
# needed: the driver comes from the host (Dataflow: install-nvidia-driver). Build with
# --build-arg ORT_EXTRAS= for a smaller CPU-only image (onnxruntime-gpu runs on CPU too).
ARG ORT_EXTRAS="[cuda,cudnn]"
# Larvatus's extras for remote stores: gcp (gs://), aws (s3://, boto3), or both: "aws,gcp".
ARG LARVATUS_EXTRAS="gcp"

COPY setup.py MANIFEST.in README.md /tmp/larvatus/
COPY models /tmp/larvatus/models
COPY pipeline /tmp/larvatus/pipeline
COPY transforms /tmp/larvatus/transforms

# Pinning apache-beam keeps pip from replacing the image's SDK. The NVIDIA wheels' library
# folders go to the dynamic loader's path so ONNX Runtime's CUDA provider finds them.
RUN pip install --no-cache-dir "/tmp/larvatus[${LARVATUS_EXTRAS}]" \
        "onnxruntime-gpu${ORT_EXTRAS}>=1.21" "apache-beam==${BEAM_VERSION}" \
    && rm -rf /tmp/larvatus \
    && python -c "import glob, os; import importlib.util as u; s = u.find_spec('nvidia'); \
print('\n'.join(sorted({os.path.dirname(p) for b in (s.submodule_search_locations if s else []) \
for p in glob.glob(os.path.join(b, '*', 'lib', 'lib*.so*'))})))" > /etc/ld.so.conf.d/larvatus-nvidia.conf \
    && ldconfig \
    && cd / && python -c "from larvatus.models.model_dir import load_model_spec; s = load_model_spec(); \
print('embedded model', s.name, s.sha256)"

# Remote models (--model gs://...) are copied here once per worker process, keyed by sha256.
ENV LARVATUS_CACHE=/tmp/larvatus-cache
# The entry point stays Beam's /opt/apache/beam/boot, as Dataflow and the portable runners expect.
