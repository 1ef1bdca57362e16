"""Hostile inputs for the readers, drawn at random."""
