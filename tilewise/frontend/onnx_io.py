"""Arrays between an ONNX model and the IR Graph the frontend made of it, and the reference session.

The IR runs on integer NHWC tensors; the ONNX model takes NCHW tensors, often float32 ones that its
first QuantizeLinear quantizes and its last DequantizeLinear produces. graph.meta["onnx_inputs"] /
["onnx_outputs"] (onnx_lower.py) say, per edge, the IR tensor, `to_ir_perm` (ir = onnx.transpose(p))
and the edge quantization (scale, zero_point; None for integer ONNX tensors). A float input is fed
as s·(q − zp) in float32, which QuantizeLinear maps back to exactly q; a float output is quantized
back with round-half-even, exact for values DequantizeLinear produced.

`reference_session` is onnxruntime as the reference: default session options plus
"session.qdqisint8allowed" = "1". On x86-64 onnxruntime fuses QDQ groups with int8 activations into
QLinear kernels only with that entry (ARM does by default); without it, such groups run as float
Conv/Add with different rounding. uint8-activation QDQ and QOperator models compute the same either way.
A model with uint8 tensors also gets "session.x64quantprecision" = "1": on x86-64 CPUs without VNNI
(AVX2, AVX-512F) onnxruntime's u8s8 kernels add pairs of uint8 × int8 products in saturating
int16 (vpmaddubsw), so their results depend on the CPU; the entry makes it take its exact u8u8
kernels there (and is inert elsewhere). int8-activation models run s8s8 kernels, which are exact.
A model with 4- or 2-bit tensors (int4 / uint4 / int2 / uint2, docs/subbyte.md) runs
with graph optimizations off: onnxruntime has no integer kernels for them (its QDQ fusion would
make a QLinearConv of uint2, which it then refuses), so it computes them as float DequantizeLinear
→ op → QuantizeLinear — not the integer arithmetic of the golden model, which is then the
reference (validate/reference.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..ir.graph import Graph
from ..ir.tensor import dtype_range, np_dtype

SUB_BYTE_ELEMS = (22, 21, 26, 25)   # TensorProto INT4, UINT4, INT2, UINT2


def has_sub_byte(model: Any) -> bool:
    """The ModelProto holds a 4- or 2-bit initializer (weights or zero points)."""
    return any(t.data_type in SUB_BYTE_ELEMS for t in model.graph.initializer)


def _uint8_tensors(proto) -> bool:
    """Whether the model holds uint8 tensors (zero points or inputs): uint8 activations."""
    from onnx import TensorProto

    return (any(t.data_type == TensorProto.UINT8 for t in proto.graph.initializer)
            or any(vi.type.tensor_type.elem_type == TensorProto.UINT8 for vi in proto.graph.input))


def reference_session(model: str | Path | bytes, int8_qdq_fusion: bool = True) -> Any:
    """An onnxruntime CPU InferenceSession for `model` (path or serialized bytes); a sub-byte
    model with graph optimizations off (module docstring)."""
    import onnx
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    proto = onnx.load_model_from_string(model) if isinstance(model, bytes) else onnx.load(str(model))
    src = model if isinstance(model, bytes) else str(model)
    if _uint8_tensors(proto):   # u8s8 on x86-64 without VNNI (module docstring)
        so.add_session_config_entry("session.x64quantprecision", "1")
        src = _unshared(proto).SerializeToString()
    if has_sub_byte(proto):
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    elif int8_qdq_fusion:
        so.add_session_config_entry("session.qdqisint8allowed", "1")
    return ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])


def _unshared(proto):
    """A copy of `proto` in which no initializer feeds two node inputs: each further use gets its
    own copy (onnxruntime's u8u8 rewrite converts a shared weight or zero point twice and fails
    at initialization). The same computation."""
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(proto)
    inits = {t.name: t for t in m.graph.initializer}
    seen: set[str] = set()
    for node in m.graph.node:
        for i, name in enumerate(node.input):
            if name not in inits:
                continue
            if name in seen:
                copy = onnx.TensorProto()
                copy.CopyFrom(inits[name])
                copy.name = f"{name}__{node.name or node.op_type}_{i}"
                m.graph.initializer.append(copy)
                node.input[i] = copy.name
            seen.add(name)
    return m


def untyped_outputs(m: Any, names: list[str] | None = None) -> Any:
    """`m` (changed in place) with graph outputs `names` (default its own) declared without a
    type and no intermediate value_info: integer exports declare int32 / int64 outputs that
    their float32 arithmetic does not produce (Deeploy's kernels), which onnxruntime refuses;
    undeclared, each output keeps the type its node computes."""
    from onnx import helper

    names = [o.name for o in m.graph.output] if names is None else names
    m.graph.ClearField("output")
    m.graph.ClearField("value_info")
    m.graph.output.extend(helper.make_empty_tensor_value_info(o) for o in names)
    return m


def attribute_pads(model: Any) -> list[str]:
    """Names of the Pad nodes that give their pads as attributes (the opset-2 form) in a model of
    opset 11 or later, where Pad takes them as inputs (Deeploy's Pad kernels are written so; the
    frontend reads either form, onnxruntime refuses the file)."""
    opset = next((i.version for i in model.opset_import if i.domain in ("", "ai.onnx")), 0)
    if opset < 11:
        return []
    return [n.name or f"Pad_{i}" for i, n in enumerate(model.graph.node)
            if n.op_type == "Pad" and any(a.name == "pads" for a in n.attribute)]


def _pads_as_inputs(m: Any) -> None:
    """Every attribute-form Pad of `m` (attribute_pads) with its pads and value as inputs."""
    from onnx import numpy_helper

    if not attribute_pads(m):
        return
    for i, n in enumerate(m.graph.node):
        attrs = {a.name: a for a in n.attribute}
        if n.op_type != "Pad" or "pads" not in attrs:
            continue
        base = n.name or f"Pad_{i}"
        pads = np.asarray(list(attrs["pads"].ints), dtype=np.int64)
        value = np.asarray(attrs["value"].f if "value" in attrs else 0.0, dtype=np.float32)
        m.graph.initializer.extend([numpy_helper.from_array(pads, f"{base}__pads"),
                                    numpy_helper.from_array(value, f"{base}__value")])
        del n.input[1:]
        n.input.extend([f"{base}__pads", f"{base}__value"])
        keep = [a for a in n.attribute if a.name == "mode"]
        del n.attribute[:]
        n.attribute.extend(keep)


def reference_model(graph: Graph, model: str | Path) -> str | bytes:
    """What onnxruntime runs as the reference of `graph`: the model file, or — when the frontend
    cut a float tail (onnx_tail.py) — a copy whose graph outputs are the tensors tilewise's network
    ends at, so the reference is the same tensor; an integer export's copy declares its outputs
    without types (`untyped_outputs`) and takes its attribute-form Pads' pads as inputs
    (`attribute_pads`; graph.meta["notes"] says so)."""
    cut = graph.meta.get("onnx_cut")
    integer = graph.meta.get("onnx_style") in ("nemo", "quantlab")
    if not cut and not integer:
        return str(model)
    import onnx

    m = onnx.load(str(model))
    untyped_outputs(m, cut["outputs"] if cut else None)
    _pads_as_inputs(m)
    return m.SerializeToString()


def _inverse(p: tuple[int, ...]) -> tuple[int, ...]:
    inv = [0] * len(p)
    for i, v in enumerate(p):
        inv[v] = i
    return tuple(inv)


def onnx_feeds(graph: Graph, ir_inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """ONNX session feeds for integer IR inputs (keyed by IR tensor name)."""
    feeds = {}
    for e in graph.meta["onnx_inputs"]:
        q = np.asarray(ir_inputs[e["ir"]]).transpose(_inverse(tuple(e["to_ir_perm"])))
        if e["onnx_dtype"] == "float32":
            feeds[e["onnx"]] = (np.float32(e["scale"])
                                * (q.astype(np.int64) - int(e["zero_point"])).astype(np.float32)).astype(np.float32)
        else:
            feeds[e["onnx"]] = q.astype(np_dtype(e["onnx_dtype"]))
    return feeds


def ir_outputs(graph: Graph, onnx_outputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """IR-layout integer arrays (keyed by IR tensor name) from ONNX outputs (keyed by ONNX name)."""
    out = {}
    for e in graph.meta["onnx_outputs"]:
        v = np.asarray(onnx_outputs[e["onnx"]])
        t = graph.tensors[e["ir"]]
        if e["onnx_dtype"] == "float32" and v.dtype.kind == "f":
            lo, hi = dtype_range(t.dtype)
            q = np.rint(v.astype(np.float32) / np.float32(e["scale"])).astype(np.int64) + int(e["zero_point"])
            v = np.clip(q, lo, hi)
        out[e["ir"]] = np.asarray(v).transpose(tuple(e["to_ir_perm"])).astype(np_dtype(t.dtype))
    return out


def run_reference(graph: Graph, session: Any, ir_inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Run the ONNX model on IR inputs; returns IR-layout integer outputs keyed by IR tensor name."""
    names = [o.name for o in session.get_outputs()]
    res = session.run(names, onnx_feeds(graph, ir_inputs))
    return ir_outputs(graph, dict(zip(names, res)))


def random_inputs(graph: Graph, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Uniformly random integer inputs over each IR input's dtype range."""
    out = {}
    for name in graph.inputs:
        t = graph.tensors[name]
        lo, hi = dtype_range(t.dtype)
        out[name] = rng.integers(lo, hi + 1, size=t.shape).astype(np_dtype(t.dtype))
    return out
