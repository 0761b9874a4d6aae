"""Frontends: model file -> ir.Graph. Nothing else in tilewise knows file formats.

`load_model(path)` picks the frontend from the file's content (TFLite flatbuffer identifier
"TFL3" at byte 4, else ONNX protobuf) and reports a missing, empty or unreadable file as one
ModelFormatError sentence.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ModelFormatError
from ..ir.graph import Graph
from ..ir.verify import verify


def load_model(path: str | Path) -> Graph:
    """Read a .tflite or .onnx model into a verified Graph."""
    p = Path(path)
    if not p.exists():
        raise ModelFormatError(f"{p}: no such file; give the path of a .tflite or .onnx model")
    if p.is_dir():
        raise ModelFormatError(f"{p}: is a directory, not a model file")
    data = p.read_bytes()
    if len(data) == 0:
        raise ModelFormatError(f"{p}: the file is empty; give a .tflite or .onnx model")
    if data[4:8] == b"TFL3" or p.suffix.lower() == ".tflite":
        from .tflite import read_tflite

        graph = read_tflite(data, str(p))
    elif p.suffix.lower() == ".onnx" or data[:1] == b"\x08":
        from .onnx import read_onnx

        graph = read_onnx(data, str(p))
    else:
        raise ModelFormatError(f"{p}: not a TFLite flatbuffer or ONNX protobuf; give a .tflite or .onnx model")
    return verify(graph)
