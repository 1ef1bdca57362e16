"""Tests of transforms/: pure per-document logic, no Beam job and no model unless a test says so."""
