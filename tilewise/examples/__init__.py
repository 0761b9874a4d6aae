"""The bundled example model (`tilewise demo`): EXAMPLE_ONNX, built by make_example.py."""

from pathlib import Path

EXAMPLE_ONNX = Path(__file__).resolve().parent / "example_cnn.onnx"
