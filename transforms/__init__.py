"""Pure per-stage logic of the Larvatus pipeline, plus thin Beam wrappers in `stages`."""
