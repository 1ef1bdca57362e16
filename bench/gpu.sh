#!/usr/bin/env bash
# GPU throughput: whoever next has an NVIDIA GPU runs, from anywhere, unchanged:
#
#   bash bench/gpu.sh [PATH/TO/onnxruntime_gpu-*.whl]
#
# 1. installs onnxruntime-gpu if CUDAExecutionProvider is missing (from the wheel given as
#    $1, else from PyPI with its CUDA and cuDNN libraries) and puts pip's NVIDIA libraries
#    on LD_LIBRARY_PATH;
# 2. builds the speed-only checkpoint (the packaged MiniLM-L6 with a fresh, seeded head:
#    speed does not depend on training) and exports it with
#    `python -m larvatus.models.export --precision fp16,fp32 --optimize`;
# 3. checks that the device really runs the model (no silent fall back to CPU);
# 4. runs `python bench/throughput.py --device cuda` on the 240-document news corpus, on
#    long documents and on a million words, nvidia-smi sampling utilization and memory
#    every second in the background;
# 5. prints tokens/s against the H100's physical limit for MiniLM-L6 in fp16 (about 44M
#    tokens/s) and the GPU's utilization.
#
# Everything lands in $OUT (default bench/.cache/gpu/): gpu.log, the JSON figures, the
# nvidia-smi CSVs. Settings by environment: DEVICE (cuda; cpu runs every python step on
# CPU as a smoke check), DOCS (240), LONG_DOCS (24), WORDS (1000000; 0 skips that run),
# REPEATS (3), HF_CONFIG (both), CEILING (44e6), PYTHON (python; .venv is activated if
# present).
set -euo pipefail
cd "$(dirname "$0")/.."

DEVICE=${DEVICE:-cuda}
DOCS=${DOCS:-240}
LONG_DOCS=${LONG_DOCS:-24}
WORDS=${WORDS:-1000000}
REPEATS=${REPEATS:-3}
HF_CONFIG=${HF_CONFIG:-both}
CEILING=${CEILING:-44e6}
OUT=${OUT:-bench/.cache/gpu}
WHEEL=${1:-}

if [ -f .venv/bin/activate ]; then
  # shellcheck disable=SC1091
  . .venv/bin/activate
fi
PY=${PYTHON:-python}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu.log") 2>&1
echo "== bench/gpu.sh $(date -u +%FT%TZ) device=$DEVICE docs=$DOCS long_docs=$LONG_DOCS words=$WORDS repeats=$REPEATS"

# --------------------------------------------------------------------- 1. onnxruntime-gpu
has_cuda_ep() {
  "$PY" -c 'import sys, onnxruntime as o; sys.exit("CUDAExecutionProvider" not in o.get_available_providers())' 2>/dev/null
}
if [ -n "$WHEEL" ] || ! has_cuda_ep; then
  echo "== installing onnxruntime-gpu ${WHEEL:-from PyPI}"
  "$PY" -m pip uninstall -y -q onnxruntime || true  # the CPU package shadows the GPU one
  if [ -n "$WHEEL" ]; then
    "$PY" -m pip install -q "$WHEEL"
  else
    "$PY" -m pip install -q "onnxruntime-gpu[cuda,cudnn]"
  fi
fi
has_cuda_ep || { echo "onnxruntime offers no CUDAExecutionProvider"; exit 1; }
# CUDA and cuDNN from pip (nvidia-* wheels, torch's or onnxruntime-gpu's extras) are found
# by ONNX Runtime only on the library path.
NVIDIA_LIBS=$("$PY" - <<'EOF'
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
libs = {os.path.dirname(p) for r in roots
        for p in glob.glob(os.path.join(r, "nvidia", "**", "lib*.so*"), recursive=True)}
print(":".join(sorted(libs)))
EOF
)
if [ -n "$NVIDIA_LIBS" ]; then
  export LD_LIBRARY_PATH="$NVIDIA_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
"$PY" -c 'import onnxruntime as o; print("onnxruntime", o.__version__, o.get_available_providers())'
"$PY" -c 'import torch; print("torch", torch.__version__, "cuda available:", torch.cuda.is_available())' \
  || echo "torch missing: install the train extra (pip install -e .[train])"
if [ "$DEVICE" = cuda ]; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/gpu.csv"
fi

# --------------------------------------------------------------------- 2. checkpoint, fp16 export
CKPT=bench/.cache/gpu-minilm-conll9-ckpt
MODEL=bench/.cache/gpu-minilm-conll9-fp16-fp32  # fp16 runs on CUDA, fp32 on CPU
"$PY" -m bench.weights --output "$CKPT" --seed 0 --entity-rate 0.15
if [ ! -f "$MODEL/larvatus_model.json" ]; then
  # A fresh head's logits are close together: fp16 noise flips many argmaxes, so parity
  # is printed, not enforced (speed does not depend on it).
  "$PY" -m larvatus.models.export --checkpoint "$CKPT" --output "$MODEL" --precision fp16,fp32 \
    --optimize --max-length 256 --max-disagreement 1 --name bench-minilm-gpu
fi
LABEL=$([ "$DEVICE" = cuda ] && echo fp16 || echo fp32)  # what the model directory runs there

# --------------------------------------------------------------------- 3. the device runs it
"$PY" -m bench.runners check-device --model "$MODEL" --device "$DEVICE"

# --------------------------------------------------------------------- 4. throughput
SMI_PID=""
stop_smi() {
  if [ -n "$SMI_PID" ]; then
    kill "$SMI_PID" 2>/dev/null || true
    wait "$SMI_PID" 2>/dev/null || true
    SMI_PID=""
  fi
}
trap stop_smi EXIT

measure() {  # measure NAME THROUGHPUT-ARGS...
  local name=$1
  shift
  echo "== throughput: $name"
  if [ "$DEVICE" = cuda ] && command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv -l 1 >"$OUT/nvidia-smi-$name.csv" &
    SMI_PID=$!
  fi
  "$PY" bench/throughput.py --device "$DEVICE" --model "$MODEL" --checkpoint "$CKPT" \
    --model-label "$LABEL" --repeats "$REPEATS" --hf-config "$HF_CONFIG" --idle-wait 10 \
    --json "$OUT/$name.json" "$@"
  stop_smi
  local smi=()
  if [ -f "$OUT/nvidia-smi-$name.csv" ]; then
    smi=(--smi "$OUT/nvidia-smi-$name.csv")
  fi
  # ------------------------------------------------------------------- 5. against the limit
  "$PY" -m bench.report --json "$OUT/$name.json" --ceiling "$CEILING" ${smi[@]+"${smi[@]}"}
}

measure "news-$DOCS" --corpus news --docs "$DOCS"
measure "long-$LONG_DOCS" --corpus long --docs "$LONG_DOCS"
if [ "$WORDS" -gt 0 ]; then
  measure "words-$WORDS" --corpus news --words "$WORDS"
fi
echo "== done: $OUT"
