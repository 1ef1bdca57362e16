"""Larvatus test suite."""
