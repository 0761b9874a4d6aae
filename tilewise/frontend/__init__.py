"""Frontends: model file -> ir.Graph. Nothing else in tilewise knows file formats.

`load_model(path)` picks the frontend from the file's content (TFLite flatbuffer identifier
"TFL3" at byte 4, else ONNX protobuf) and reports a missing, empty or unreadable file as one
ModelFormatError sentence.

`input_dtypes` gives the integer type of ONNX inputs whose container does not say it: integer
exports (NEMO, QuantLab, Deeploy) carry integer codes in float32 or wide int32/int64 inputs, and
the codes' range is a property of the data, not of the file (Deeploy's own harness infers it from
its test inputs). Keys are input names, or "*" for every such input; values are IR dtypes (int8,
uint8, int16, int32). Without an entry a float32 input is uint8 (DORY's images) and an int32 /
int64 one int32 (frontend/onnx_lower.py `container_dtype`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..errors import ModelFormatError
from ..ir.graph import Graph
from ..ir.verify import verify


def load_model(path: str | Path, input_dtypes: Mapping[str, str] | None = None) -> Graph:
    """Read a .tflite or .onnx model into a verified Graph (`input_dtypes`: module docstring)."""
    p = Path(path)
    if not p.exists():
        raise ModelFormatError(f"{p}: no such file; give the path of a .tflite or .onnx model")
    if p.is_dir():
        raise ModelFormatError(f"{p}: is a directory, not a model file")
    if not p.is_file():   # a FIFO, socket or device: reading it would block or never end
        raise ModelFormatError(f"{p}: is not a regular file (a FIFO, socket or device); give the "
                               f"path of a .tflite or .onnx model file")
    data = p.read_bytes()
    if len(data) == 0:
        raise ModelFormatError(f"{p}: the file is empty; give a .tflite or .onnx model")
    if data[4:8] == b"TFL3" or p.suffix.lower() == ".tflite":
        from .tflite import read_tflite

        if input_dtypes:
            raise ModelFormatError(f"{p}: a TFLite model types its inputs itself; the input dtype "
                                   "option applies to ONNX integer exports only")
        graph = read_tflite(data, str(p))
    elif p.suffix.lower() == ".onnx" or data[:1] == b"\x08":
        from .onnx import read_onnx

        graph = read_onnx(data, str(p), input_dtypes)
    else:
        raise ModelFormatError(f"{p}: not a TFLite flatbuffer or ONNX protobuf; give a .tflite or .onnx model")
    return verify(graph)
