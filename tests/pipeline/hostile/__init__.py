"""Hostile command lines for larvatus run, drawn at random."""
