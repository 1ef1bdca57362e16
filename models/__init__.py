"""Everything about the network: label schemes, the model directory, the ONNX handler, training, export, evaluation."""
