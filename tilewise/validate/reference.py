"""The reference runtimes generated code is held against (DESIGN.md "Verification").

- TFLite models: LiteRT's interpreter with the reference kernels (OpResolverType.BUILTIN_REF) —
  the arithmetic the golden model's tflite mode reproduces.
- ONNX models: onnxruntime's CPU session as the ONNX frontend configures it
  (frontend/onnx_io.py `reference_session`); float edges are (de)quantized there.
Inputs and outputs are the IR's integer NHWC arrays.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import TilewiseError
from ..ir.graph import Graph

LITERT = "LiteRT BUILTIN_REF"
ORT = "onnxruntime"


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
        from ..frontend.onnx_io import reference_session, run_reference

        sess = reference_session(str(model))
        return [run_reference(graph, sess, {graph.inputs[0]: x})[out_name] for x in inputs]
    raise TilewiseError(f"{graph.source or graph.name}: no reference runtime for format '{fmt}'")
