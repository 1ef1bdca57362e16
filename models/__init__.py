"""Everything about the network: label schemes, the model directory, the ONNX handler, training, export, evaluation."""

from larvatus.models import beam_imports  # noqa: F401,E402  (before any apache_beam.ml import)
