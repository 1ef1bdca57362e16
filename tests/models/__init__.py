"""Tests of models/: the ONNX handler, model folders, variants, training, export, evaluation, on tiny models."""
