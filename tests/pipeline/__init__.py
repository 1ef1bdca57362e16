"""Tests of pipeline/: options, checks at start, the Beam graph, storage, runners, report, API."""
