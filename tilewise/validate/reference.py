"""The reference runtimes generated code is held against (DESIGN.md "Verification").

- TFLite models: LiteRT's interpreter with the reference kernels (OpResolverType.BUILTIN_REF) —
  the arithmetic the golden model's tflite mode reproduces.
- ONNX models: onnxruntime's CPU session as the ONNX frontend configures it
  (frontend/onnx_io.py `reference_session`); float edges are (de)quantized there.
- QuantLab ONNX models (RequantShift, which onnxruntime cannot run): onnxruntime on a copy with
  every RequantShift expanded into standard int64 ops (frontend/onnx_quantlab.py), used only when
  that copy is proven exact (every float32 value below 2^24, every int64 one below 2^62,
  graph.meta["onnx_value_bound"]); otherwise there is no reference and `reference_name` says why.
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


ORT_EXPANDED = "onnxruntime on a copy with RequantShift as int64 Mul/Add/Div and Clip"


def _quantlab_exact(graph: Graph) -> bool:
    from ..frontend.onnx_quantlab import F32_EXACT

    bound = graph.meta.get("onnx_value_bound")
    return bound is not None and bound < F32_EXACT


def reference_name(graph: Graph) -> str:
    """The reference the outputs are held against, as validate prints it."""
    if graph.meta.get("format") == "tflite":
        return LITERT
    if graph.meta.get("onnx_style") != "quantlab":
        return ORT
    bound = graph.meta.get("onnx_value_bound")
    if _quantlab_exact(graph):
        return f"{ORT_EXPANDED} (exact: float32 values within ±{bound} < 2^24)"
    why = ("a value range is unknown or could pass 2^62 in int64" if bound is None
           else f"a float32 value may reach {bound} >= 2^24, beyond float32's exact integers")
    return (f"no reference runtime (onnxruntime has no RequantShift, and its expansion into standard ops "
            f"is not provably exact here: {why}; compared with the golden model only)")


def reference_outputs(graph: Graph, model: str | Path,
                      inputs: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """The reference runtime's output (the graph's single output, IR layout) for each input; None
    when the model has no reference (a QuantLab model whose expansion is not provably exact)."""
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
    if fmt == "onnx" and graph.meta.get("onnx_style") == "quantlab":
        if not _quantlab_exact(graph):
            return None
        from ..frontend.onnx_io import reference_session, run_reference
        from ..frontend.onnx_model import decode_model, read_graph
        from ..frontend.onnx_quantlab import expanded_model

        data = Path(model).read_bytes()
        copy = expanded_model(decode_model(data, str(model)), read_graph(data, str(model)))
        try:
            sess = reference_session(copy.SerializeToString())
        except Exception as exc:  # onnxruntime refuses the copy: a property of the file, not a bug
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise TilewiseError(f"{model}: onnxruntime cannot load the copy with RequantShift expanded into "
                                f"standard ops ({first}); validate needs a model onnxruntime can read") from None
        return [run_reference(graph, sess, {graph.inputs[0]: x})[out_name] for x in inputs]
    if fmt == "onnx":
        from ..frontend.onnx_io import reference_session, run_reference

        sess = reference_session(str(model))
        return [run_reference(graph, sess, {graph.inputs[0]: x})[out_name] for x in inputs]
    raise TilewiseError(f"{graph.source or graph.name}: no reference runtime for format '{fmt}'")
