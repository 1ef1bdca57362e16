"""Benchmarks: reusable parts and the scripts that compose them."""
# - `bench.corpus`: the documents (news-like at N documents or N words, long documents,
#   CoNLL validation as raw text) and how Larvatus counts them;
# - `bench.weights`: speed-only weights (the packaged MiniLM with a fresh, seeded head) and
#   their exports;
# - `bench.runners`: each system measured in its own subprocess, with its peak RSS (the HF
#   pipeline, a raw ONNX Runtime loop, Larvatus end to end);
# - `bench.report`: medians, ranges, ratios and Larvatus's per-stage breakdown;
# - `bench/throughput.py`: the CLI composing them; `bench/gpu.sh`: the GPU run;
#   `bench/hostile.py`: the hostile sweep (each hostile case through the command line).
#
# A script in this folder runs as `python bench/NAME.py` if its first lines put the
# repository root, not bench/, first on `sys.path` (see throughput.py), then imports
# `bench.corpus` and so on; `python -m bench.NAME` from the repository root works as is.
