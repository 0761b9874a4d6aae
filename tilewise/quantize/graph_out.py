"""The float ONNX graph -> QDQ ONNX writer, and the choice of which tensors are quantized.

Input: a float ONNX model (opset ≥ 13) of the ops in SUPPORTED. Output: the same graph in the QDQ
form that onnxruntime and tilewise (frontend/onnx_qdq.py) fuse into integer kernels:

- every *activation point* gets QuantizeLinear -> DequantizeLinear (int8, per tensor): the graph
  inputs and the output of every node, except the output of a Conv / Gemm / MatMul / Add whose
  only reader is a Relu / Clip (the activation is fused: onnx_qdq.py's ``op -> [Relu/Clip] -> Q``
  group, onnxruntime's QDQ selectors), which stays float inside the group;
- ops that only move values (MaxPool, Reshape, Flatten, Transpose, Identity) reuse their input's
  parameters, so that their integer form needs no requantization (onnxruntime's quantizer does the
  same); Softmax outputs get the fixed scale 1/256, zero point −128 (the [0, 1) range, TFLite's
  int8 softmax convention);
- Conv weights become DQ(int8 per output channel, axis 0), Gemm weights per output column (axis 0
  with transB=1, else 1), MatMul constant B per column (axis 1), biases DQ(int32, scale
  s_x·s_w, per channel) — weights.py.

Names: a quantized tensor ``t`` produced by a node keeps its name at the DequantizeLinear output
(so the float and the quantized models share tensor names: per-layer SQNR, sqnr.py); the node
now writes ``t/float``, the QuantizeLinear writes ``t/q`` (int8). A graph input ``x`` stays the
float input; its consumers read ``x/dq``.

``--bits 16`` (TFLite's 16x8 scheme): activations int16, symmetric (zero point 0; calibrate.py),
weights int8 per channel as above, biases int32 at s_x·s_w (TFLite keeps 16x8 biases in int64; the
ONNX DQ of a bias is int32, which bias_safe_scale keeps within 2^30), softmax outputs 1/32768 with
zero point 0; int16 QuantizeLinear / DequantizeLinear need opset 21 (IR version 10). onnxruntime
runs such a model (its CPU provider has no integer int16 Conv/Gemm: it keeps DequantizeLinear ->
float op -> QuantizeLinear), so SQNR is measured; tilewise's ONNX frontend refuses int16 QDQ
activations (frontend/onnx_lower.py): with no integer reference in onnxruntime, an int16 ONNX
model has no arithmetic to be bit-exact against: `quantize --bits 16` writes the plan as a TFLite
16x8 model instead (tflite_out.py), which LiteRT's reference kernels run in integers.

Requantization happens in the reading runtime: onnxruntime's fused QLinear kernels (the ``onnx``
mode of golden/requant.py), which tilewise reproduces bit for bit on every target that takes an
``onnx``-mode layer. The shift mode of PULP/NE16/DIANA is written by shift_out.py instead (a QDQ
model with power-of-two scales would still read as onnx mode: round half to even, not a shift).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ..errors import TilewiseError
from .calibrate import QParams
from .weights import quantize_bias, quantize_weights

WEIGHTED = ("Conv", "Gemm", "MatMul")
FUSABLE = WEIGHTED + ("Add",)
ACTIVATIONS = ("Relu", "Clip")
MOVES = ("MaxPool", "Reshape", "Flatten", "Transpose", "Identity")
OWN_SCALE = ("AveragePool", "GlobalAveragePool", "Concat", "Softmax") + ACTIVATIONS + FUSABLE
SUPPORTED = tuple(sorted(set(MOVES + OWN_SCALE)))
SOFTMAX_QPARAMS = QParams(1.0 / 256.0, -128)
SOFTMAX_QPARAMS_16 = QParams(1.0 / 32768.0, 0, -32768, 32767)   # TFLite's int16 softmax output

@dataclass(frozen=True)
class Plan:
    """Which tensors are quantized and where their parameters come from."""

    points: tuple[str, ...]            # tensors with own calibrated parameters (inputs first)
    shared: dict[str, str]             # tensor -> the tensor whose parameters it reuses (moves)
    fixed: dict[str, QParams]          # tensors with fixed parameters (softmax outputs)
    layer_of: dict[str, str]           # quantized tensor -> name of the node that writes it

    def all_tensors(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.points, *self.shared, *self.fixed)))


def _node_label(n: onnx.NodeProto, i: int) -> str:
    return n.name or f"{n.op_type}#{i}"


def check_float_model(model: onnx.ModelProto, path: str) -> None:
    """Raise TilewiseError (one sentence) for what the writer does not take."""
    g = model.graph
    inits = {t.name for t in g.initializer}
    for i, n in enumerate(g.node):
        if n.domain not in ("", "ai.onnx"):
            raise TilewiseError(f"{path}: node '{_node_label(n, i)}' is a {n.domain}::{n.op_type}; "
                                f"tilewise quantize takes standard ONNX ops only")
        if n.op_type in ("QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul",
                         "ConvInteger", "MatMulInteger"):
            raise TilewiseError(f"{path}: node '{_node_label(n, i)}' ({n.op_type}) shows the model "
                                f"is already quantized; give the float model to quantize")
        if n.op_type not in SUPPORTED:
            raise TilewiseError(f"{path}: node '{_node_label(n, i)}' is a {n.op_type}, which tilewise "
                                f"quantize does not take (it takes {', '.join(SUPPORTED)})")
        if n.op_type in WEIGHTED and (len(n.input) < 2 or n.input[1] not in inits):
            raise TilewiseError(f"{path}: node '{_node_label(n, i)}' ({n.op_type}) takes its weights "
                                f"from a computed tensor; tilewise quantize needs constant weights")
        if n.op_type == "Gemm":
            a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
            if a.get("transA", 0) or a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0:
                raise TilewiseError(f"{path}: node '{_node_label(n, i)}' (Gemm) has transA, alpha or "
                                    f"beta set; fold them into the weights before quantizing")
    for vi in g.input:
        if vi.name not in inits and vi.type.tensor_type.elem_type != TensorProto.FLOAT:
            raise TilewiseError(f"{path}: input '{vi.name}' is not float32; tilewise quantize takes "
                                f"a float model")


def plan(model: onnx.ModelProto, bits: int = 8) -> Plan:
    g = model.graph
    inits = {t.name for t in g.initializer}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for n in g.node:
        for x in n.input:
            consumers.setdefault(x, []).append(n)
    outputs = {o.name for o in g.output}
    points = [vi.name for vi in g.input if vi.name not in inits]
    shared: dict[str, str] = {}
    fixed: dict[str, QParams] = {}
    layer_of: dict[str, str] = {}
    fused: dict[str, str] = {}   # float output of a fused op -> the op's label
    for i, n in enumerate(g.node):
        y = n.output[0]
        readers = consumers.get(y, [])
        if (n.op_type in FUSABLE and y not in outputs and len(readers) == 1
                and readers[0].op_type in ACTIVATIONS):
            fused[y] = _node_label(n, i)
            continue   # stays float inside the op -> Relu/Clip -> Q group
        layer_of[y] = fused.get(n.input[0], _node_label(n, i))
        if n.op_type in MOVES:
            src = n.input[0]
            shared[y] = shared.get(src, src)
        elif n.op_type == "Softmax":
            fixed[y] = SOFTMAX_QPARAMS_16 if bits == 16 else SOFTMAX_QPARAMS
        else:
            points.append(y)
    return Plan(tuple(points), shared, fixed, layer_of)


#: moves whose sub-byte form the portable family runs (bindings/portable/subbyte.py)
SUB_BYTE_MOVES = ("MaxPool", "Reshape", "Flatten")


def sub_byte_points(model: onnx.ModelProto, p: Plan) -> tuple[str, ...]:
    """The activation points that can be 4/2-bit in a deployable model: written by a Conv / Gemm /
    MatMul (its fused Relu / Clip included) and read only by such ops, directly or through
    MaxPool / Reshape / Flatten (the ops with sub-byte kernels); never a graph input or output."""
    g = model.graph
    prod = {o: n for n in g.node for o in n.output}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for n in g.node:
        for x in n.input:
            readers.setdefault(x, []).append(n)
    outputs = {o.name for o in g.output}

    def written_by_weighted(t: str) -> bool:
        n = prod.get(t)
        if n is not None and n.op_type in ACTIVATIONS:
            n = prod.get(n.input[0])
        return n is not None and n.op_type in WEIGHTED

    def read_by_weighted(t: str) -> bool:
        rs = readers.get(t, [])
        return t not in outputs and bool(rs) and all(
            (r.op_type in WEIGHTED and r.input[0] == t) or
            (r.op_type in SUB_BYTE_MOVES and read_by_weighted(r.output[0])) for r in rs)

    return tuple(t for t in p.points if written_by_weighted(t) and read_by_weighted(t))


def resolve(p: Plan, calibrated: dict[str, QParams]) -> dict[str, QParams]:
    """Parameters of every quantized tensor, from the calibrated points."""
    out = dict(calibrated)
    out.update(p.fixed)
    for t, src in p.shared.items():
        out[t] = out[src]
    return out


def _weight_axis(n: onnx.NodeProto) -> int:
    if n.op_type == "Conv":
        return 0
    if n.op_type == "Gemm":
        trans_b = next((helper.get_attribute_value(a) for a in n.attribute if a.name == "transB"), 0)
        return 0 if trans_b else 1
    return 1   # MatMul: B is [K, N]


#: ONNX element type of a quantized activation by its code range (QParams qmin, qmax)
ACT_TYPES = {(-128, 127): TensorProto.INT8, (0, 255): TensorProto.UINT8,
             (-32768, 32767): TensorProto.INT16,
             (0, 15): TensorProto.UINT4, (0, 3): TensorProto.UINT2}
#: ONNX element type of weights by their bits (signed, two's complement)
WEIGHT_TYPES = {8: TensorProto.INT8, 4: TensorProto.INT4, 2: TensorProto.INT2}


def _act_type(q: QParams) -> int:
    """The ONNX element type of a quantized activation: ACT_TYPES by its code range, and int8 for
    the narrower signed windows of narrow_search.py (b-bit codes kept in an int8 container)."""
    if (q.qmin, q.qmax) in ACT_TYPES:
        return ACT_TYPES[(q.qmin, q.qmax)]
    if -128 <= q.qmin and q.qmax <= 127:
        return TensorProto.INT8
    raise TilewiseError(f"no ONNX type holds activation codes [{q.qmin}, {q.qmax}]")


def _typed(name: str, elem: int, arr: np.ndarray) -> TensorProto:
    """An initializer of ONNX element type `elem` (int4 / int2 codes need the typed form)."""
    a = np.asarray(arr)
    return helper.make_tensor(name, elem, list(a.shape), a.reshape(-1).astype(np.int64).tolist())


def node_labels(model: onnx.ModelProto) -> list[str]:
    """The labels (name, or op#index) of the model's Conv / Gemm / MatMul nodes, in order: the keys
    of `write_qdq`'s `w_bits`."""
    return [_node_label(n, i) for i, n in enumerate(model.graph.node) if n.op_type in WEIGHTED]


def write_qdq(model: onnx.ModelProto, p: Plan, qp: dict[str, QParams],
              w_bits: dict[str, int] | None = None,
              container_bits: dict[str, int] | None = None) -> onnx.ModelProto:
    """The QDQ model (see the module doc). `w_bits`: weight bits (8, 4, 2) per weighted node label
    (default 8), stored in ONNX's int8 / int4 / int2 types; `container_bits`: per node label, weight
    codes within ±(2^(b−1) − 1) still stored as int8 (narrow_search.py's 2..8-bit widths). Activation
    types follow each tensor's code range (ACT_TYPES: int8, or uint4 / uint2 for the sub-byte
    activations of calibrate.qparams_for)."""
    w_bits = dict(w_bits or {})
    container_bits = dict(container_bits or {})
    g = model.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    graph_inputs = [vi.name for vi in g.input if vi.name not in inits]
    new_inits: list[TensorProto] = []
    nodes: list[onnx.NodeProto] = []
    rename: dict[str, str] = {}          # tensor read by nodes -> what they read now

    def const(name: str, arr: np.ndarray) -> str:
        new_inits.append(numpy_helper.from_array(arr, name))
        return name

    def qdq(src: str, t: str, dq_out: str) -> None:
        q = qp[t]
        s = const(f"{t}/scale", np.array(q.scale, dtype=np.float32))
        z = f"{t}/zero_point"
        new_inits.append(_typed(z, _act_type(q), np.array(q.zero_point)))
        nodes.append(helper.make_node("QuantizeLinear", [src, s, z], [f"{t}/q"], name=f"{t}/quantize"))
        nodes.append(helper.make_node("DequantizeLinear", [f"{t}/q", s, z], [dq_out], name=f"{t}/dequantize"))

    for x in graph_inputs:
        qdq(x, x, f"{x}/dq")
        rename[x] = f"{x}/dq"
    quantized = set(p.all_tensors())
    for i, n in enumerate(g.node):
        ins = [rename.get(x, x) for x in n.input]
        if n.op_type in WEIGHTED:
            ins = _quantized_weights(n, i, ins, inits, qp, const, nodes,
                                     w_bits.get(_node_label(n, i), 8), new_inits,
                                     container_bits.get(_node_label(n, i)))
        y = n.output[0]
        outs = list(n.output)
        if y in quantized:
            outs[0] = f"{y}/float"
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        nodes.append(helper.make_node(n.op_type, ins, outs, name=_node_label(n, i), **attrs))
        if y in quantized:
            qdq(outs[0], y, y)
    used = {x for n in nodes for x in n.input}
    kept = [numpy_helper.from_array(v, k) for k, v in inits.items() if k in used]
    graph = helper.make_graph(nodes, g.name or "tilewise_quantized",
                              [vi for vi in g.input if vi.name not in inits], list(g.output),
                              kept + new_inits)
    opset = max(13, next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13))
    elems = {t.data_type for t in new_inits}
    # QuantizeLinear / DequantizeLinear take int4 / uint4 from opset 21 (IR 10), int2 / uint2
    # from opset 25 (IR 11, onnx 1.20)
    if elems & {TensorProto.INT2, TensorProto.UINT2}:
        opset, ir = max(opset, 25), 11
    elif elems & {TensorProto.INT4, TensorProto.UINT4, TensorProto.INT16}:
        # int16 QuantizeLinear / DequantizeLinear (--bits 16) also need opset 21
        opset, ir = max(opset, 21), 10
    else:
        ir = min(model.ir_version or 9, 9) if model.ir_version >= 7 else 7
    out = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                            producer_name="tilewise quantize")
    out.ir_version = ir
    onnx.checker.check_model(out)
    return out


def _quantized_weights(n, i, ins, inits, qp, const, nodes, bits, typed_inits,
                       container: int | None = None) -> list[str]:
    """Replace the float weight (and bias) inputs of a Conv / Gemm / MatMul by DQ of integers:
    `bits`-bit codes in ONNX's type of that width, or `container`-bit codes in int8."""
    label = _node_label(n, i)
    x_src = n.input[0]
    xq = qp.get(x_src)
    if xq is None:
        raise TilewiseError(f"node '{label}' ({n.op_type}) reads '{x_src}', which is not quantized; "
                            f"tilewise quantize cannot quantize its bias")
    axis = _weight_axis(n)
    w = inits[n.input[1]]
    has_bias = len(n.input) > 2 and n.input[2] and n.input[2] in inits
    qw = quantize_weights(w, axis=axis, bits=container or bits,
                          bias=inits[n.input[2]] if has_bias else None, input_scale=xq.scale)
    wname = f"{label}/weight"
    ws = const(f"{wname}/scale", qw.scale)
    if bits not in WEIGHT_TYPES:
        raise TilewiseError(f"node '{label}' ({n.op_type}): {bits}-bit weights; tilewise quantize "
                            f"writes 8-, 4- or 2-bit weights")
    wz, wq = f"{wname}/zero_point", f"{wname}/q"
    elem = WEIGHT_TYPES[8 if container else bits]
    typed_inits.append(_typed(wz, elem, np.zeros(qw.scale.shape, dtype=np.int64)))
    typed_inits.append(_typed(wq, elem, qw.q))
    nodes.append(helper.make_node("DequantizeLinear", [wq, ws, wz], [f"{wname}/dq"], name=f"{wname}/dequantize",
                                  axis=axis))
    out = list(ins)
    out[1] = f"{wname}/dq"
    if len(n.input) > 2 and n.input[2]:
        if n.input[2] not in inits:
            raise TilewiseError(f"node '{label}' ({n.op_type}) takes its bias from a computed tensor; "
                                f"tilewise quantize needs a constant bias")
        b = inits[n.input[2]].reshape(-1)
        if b.size != qw.scale.size:
            raise TilewiseError(f"node '{label}' ({n.op_type}) has a bias of {b.size} values for "
                                f"{qw.scale.size} output channels; give one bias per channel")
        bq, bs = quantize_bias(b, xq.scale, qw.scale)
        bname = f"{label}/bias"
        s = const(f"{bname}/scale", bs)
        z = const(f"{bname}/zero_point", np.zeros(bs.shape, dtype=np.int32))
        q = const(f"{bname}/q", bq)
        nodes.append(helper.make_node("DequantizeLinear", [q, s, z], [f"{bname}/dq"], name=f"{bname}/dequantize",
                                      axis=0))
        out[2] = f"{bname}/dq"
    return out
