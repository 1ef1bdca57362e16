"""Benchmarks: reusable parts and the scripts that compose them (listed in docs/architecture.md)."""
# A script in this folder runs as `python bench/NAME.py` if its first lines put the
# repository root, not bench/, first on `sys.path` (see throughput.py), then imports
# `bench.corpus` and so on; `python -m bench.NAME` from the repository root works as is.
