"""The models the mutations start from: the shipped ones (MLPerf Tiny's int8 and float TFLite
files, the 64 integer ONNX exports and the bundled example, a QOperator ONNX model)."""

from __future__ import annotations

from pathlib import Path

from tilewise.examples import EXAMPLE_ONNX


def seed_files(models: Path, importer: str, max_bytes: int | None = None) -> list[Path]:
    """The seed files of `importer` ("tflite" or "onnx") under the shared models directory
    `models`, sorted (so that a seed index means the same file on every machine); `max_bytes`
    leaves out larger files (the bounded test run favours the quick ones)."""
    if importer == "tflite":
        files = sorted(models.glob("mlperf_tiny/*.tflite")) + sorted(models.glob("mlperf_tiny_float/*.tflite"))
    elif importer == "onnx":
        files = sorted(models.glob("integer_onnx/**/*.onnx")) + [EXAMPLE_ONNX]
    else:
        raise ValueError(f"unknown importer {importer!r}")
    return [f for f in files if max_bytes is None or f.stat().st_size <= max_bytes]
