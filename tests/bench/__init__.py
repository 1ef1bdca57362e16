"""Tests of the benchmarks' own code (bench/), offline and without the full corpora."""
