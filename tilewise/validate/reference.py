"""The reference runtimes generated code is held against (DESIGN.md "Verification").

- TFLite models: LiteRT's interpreter with the reference kernels (OpResolverType.BUILTIN_REF) —
  the arithmetic the golden model's tflite mode reproduces.
- ONNX models: onnxruntime's CPU session as the ONNX frontend configures it
  (frontend/onnx_io.py `reference_session`); float edges are (de)quantized there. A model
  onnxruntime refuses or fails to run is one TilewiseError sentence (exit 2), its message quoted.
Inputs and outputs are the IR's integer NHWC arrays.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import TilewiseError
from ..ir.graph import Graph

LITERT = "LiteRT BUILTIN_REF"
ORT = "onnxruntime"


def _first_line(exc: Exception) -> str:
    """The runtime's message, first line only, without its bracketed prefix."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = re.sub(r"^\[\w+\] : \d+ : \w+ : ", "", text)       # "[ONNXRuntimeError] : 1 : FAIL : "
    if re.search(r"\.(cc|cpp|h):\d+ ", text) and ") " in text:    # a C++ source location and signature
        text = text.rsplit(") ", 1)[1]
    return text[:240].rstrip(". ")


def reference_name(graph: Graph) -> str:
    return LITERT if graph.meta.get("format") == "tflite" else ORT


def reference_outputs(graph: Graph, model: str | Path,
                      inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The reference runtime's output (the graph's single output, IR layout) for each input."""
    fmt = graph.meta.get("format")
    out_name = graph.outputs[0]
    if fmt == "tflite":
        from ai_edge_litert.interpreter import Interpreter, OpResolverType

        it = Interpreter(model_path=str(model),
                         experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        it.allocate_tensors()
        det_in = it.get_input_details()[0]
        index = graph.meta["tflite_tensor_index"][out_name]
        res = []
        for x in inputs:
            it.set_tensor(det_in["index"], np.asarray(x, dtype=det_in["dtype"]).reshape(det_in["shape"]))
            it.invoke()
            res.append(np.asarray(it.get_tensor(index)).copy())
        return res
    if fmt == "onnx":
        from ..frontend.onnx_io import reference_model, reference_session, run_reference

        try:
            sess = reference_session(reference_model(graph, model))
        except Exception as exc:  # onnxruntime's own exception types (Fail, InvalidGraph, ...)
            raise TilewiseError(f"{model}: onnxruntime refuses the model ({_first_line(exc)}), so validate has no "
                                "reference to compare with; run `tilewise generate` and check the C against "
                                "the golden model, or export the model for an onnxruntime that loads it") from None
        try:
            return [run_reference(graph, sess, {graph.inputs[0]: x})[out_name] for x in inputs]
        except Exception as exc:
            raise TilewiseError(f"{model}: onnxruntime fails to run the model ({_first_line(exc)}), so validate "
                                "has no reference to compare with; check the model with onnxruntime itself") from None
    raise TilewiseError(f"{graph.source or graph.name}: no reference runtime for format '{fmt}'")
