"""ONNX frontend entry: `read_onnx(data, source) -> Graph` for QDQ, QOperator and NEMO/QuantLab models.

Pipeline (each step its own module):
1. onnx_model.py  decode the protobuf into an OnnxGraph (corrupt file -> ModelFormatError);
   onnx_fold.py   fold every node computing on constants or static shapes;
2. onnx_qdq.py    fuse DequantizeLinear -> op -> QuantizeLinear groups into QLinear nodes, as
                  onnxruntime does at session creation — or, for a model without any quantization
                  operator, onnx_nemo.py fuses integer Conv/Gemm + Mul/Add/Div/Floor/Clip/Cast chains
                  and onnx_nemo_ops.py NEMO's AveragePool and residual Add with theirs;
3. onnx_lower.py  walk the nodes in order and emit IR nodes in NHWC (handlers in onnx_qop.py and
                  onnx_nemo.py), turning quantized graph inputs/outputs into integer IR edges.

Semantics: every arithmetic node gets the Onnx* parameters of its op (ir/params.py, mode "onnx": what
onnxruntime's QLinear* kernels compute, golden/onnx_ops.py); conv2d / fully_connected take their mode
from their Requant: "onnx", or "shift" for NEMO layers. Anything outside
SUPPORTED_OPS, or float computation left in the graph, is an UnsupportedOpError naming the file,
the node and its op type. QuantLab graphs (custom RequantShift nodes) are rewritten by
onnx_quantlab.py instead of onnx_nemo.py. graph.meta: "format" = "onnx", "onnx_style" in {"qdq",
"qoperator", "nemo", "quantlab"}, "onnx_no_reference" (integer exports onnxruntime cannot check:
why, `no_reference`), "onnx_value_bound" (nemo: the largest |value| onnxruntime computes in float32
on the model as written, Lowering.float_bound; quantlab: the largest |float32 value| of the
expanded copy validate runs, onnx_quantlab.value_bound; None when not bounded), "onnx_opset",
"source_layout" = "NCHW", "onnx_inputs" / "onnx_outputs" (onnx_lower.py; frontend/onnx_io.py
converts arrays between the ONNX model and the IR with them), and "onnx_session_config": the
onnxruntime session config entries under which onnxruntime computes what the golden model does
({"session.qdqisint8allowed": "1"} for QDQ models, see onnx_io.py); for a NEMO graph whose float
tail was cut (onnx_tail.py), "notes" (sentences every command prints) and "onnx_cut".
"""

from __future__ import annotations

from collections.abc import Mapping

from ..ir.graph import Graph
from . import (  # noqa: F401  (register their lowering handlers)
    onnx_deeploy,
    onnx_int,
    onnx_nemo,
    onnx_nemo_ops,
    onnx_qop,
    onnx_quantlab,
)
from .onnx_fold import fold_constants
from .onnx_lower import Lowering
from .onnx_model import read_graph
from .onnx_qdq import fuse_qdq
from .onnx_tail import cut_float_tail

SUPPORTED_OPS = (
    "QuantizeLinear/DequantizeLinear around Conv, Gemm, MatMul, Add, AveragePool, MaxPool, GlobalAveragePool, "
    "Relu, Clip, Reshape, Flatten, Transpose, Concat, Softmax",
    "QLinearConv", "QLinearMatMul", "QGemm", "QLinearAdd", "QLinearAveragePool", "QLinearGlobalAveragePool",
    "QLinearSoftmax", "QLinearConcat", "MaxPool/Reshape/Flatten/Transpose/Concat/Identity on integer tensors",
    "NEMO/QuantLab integer Conv/Gemm/MatMul with Mul/Add/Div/Floor/Clip/Cast requantization (int64 Div by any D), "
    "Pad, AveragePool and residual Add with the same requantization",
    "QuantLab RequantShift after Conv/Gemm/MatMul, after an integer Add, or on its own",
    "Deeploy's iHardswish and TrueIntegerDiv (before a RequantShift), iSoftmax, iRMSNorm, iNoNorm, iLayerNorm, "
    "iGELU; QuantLab's DORY adder",
    "integer Add/Sub/Mul, MatMul of two activations, Pad, Slice, ReduceSum/ReduceMean, 1-D Conv/MaxPool on "
    "integer codes",
)


def model_style(g) -> str:
    """'qdq' when any DequantizeLinear feeds a float operator, 'qoperator' for QLinear graphs (and graphs
    on 8-bit and sub-byte integer inputs without quantization operators), 'quantlab' for graphs with
    QuantLab / Deeploy operators (RequantShift, iHardswish, TrueIntegerDiv, a DORY adder) and no
    quantization operators, 'nemo' for the other integer exports (codes in float32 or wide integer
    containers)."""
    if not onnx_nemo.has_quantization(g) and onnx_quantlab.has_quantlab_ops(g):
        return "quantlab"
    if not onnx_nemo.has_quantization(g):
        narrow = ("int8", "uint8", "uint4", "uint2")
        return "qoperator" if all(dt in narrow for dt, _ in g.inputs.values()) else "nemo"
    cons = g.consumers()
    for n in g.nodes:
        if n.op_type == "DequantizeLinear" and any(c.op_type != "QuantizeLinear" for c in cons.get(n.outputs[0], [])):
            return "qdq"
    return "qoperator"


#: ops whose onnxruntime result on an integer export's float32 codes is not its integer value
REAL_VALUED = {"ReduceMean": "onnxruntime's ReduceMean gives the real mean, which Deeploy rounds to an integer "
                             "(floor((Σ + n/2) / n))"}


def no_reference(g) -> str:
    """Why onnxruntime cannot be the reference of an integer export ('' when it can): an op
    whose float result is not the exporter's integer (REAL_VALUED), Deeploy's iSoftmax / iRMSNorm /
    iNoNorm / iLayerNorm / iGELU (no onnxruntime kernel), QuantLab's DORY adder (it requantizes its
    inputs through attributes onnxruntime ignores)."""
    prod = g.producers()
    live, todo = set(), list(g.outputs)
    while todo:     # the nodes an output depends on: a dead ReduceMean changes nothing
        p = prod.get(todo.pop())
        if p is not None and id(p) not in live:
            live.add(id(p))
            todo.extend(i for i in p.inputs if i)
    for n in g.nodes:
        if id(n) not in live:
            continue
        if n.op_type in REAL_VALUED:
            return f"node '{n.name}': {REAL_VALUED[n.op_type]}"
        if n.op_type in onnx_deeploy.DEEPLOY_OPS:
            return f"node '{n.name}': {n.op_type} is Deeploy's own operator, which onnxruntime does not have"
        if n.op_type == "TwDoryAdd":
            return (f"node '{n.name}': QuantLab's DORY adder requantizes its inputs through attributes "
                    "(in1_mul, in1_shift, ...) that onnxruntime ignores")
    return ""


def read_onnx(data: bytes, source: str, input_dtypes: Mapping[str, str] | None = None) -> Graph:
    """Read an ONNX model (bytes of the .onnx file) into an integer IR Graph (not yet verified);
    `input_dtypes`: the IR dtype of inputs whose container does not say it (frontend/__init__.py)."""
    g = fold_constants(read_graph(data, source))
    style = model_style(g)
    source_graph = g
    cut = None
    if style in ("quantlab", "nemo"):
        # one pipeline for the integer exports: the float tail cut, Deeploy's and QuantLab's
        # operators merged, RequantShifts and NEMO chains fused into their layers, then NEMO's
        # pools and residual adds
        g, cut = cut_float_tail(g)
        g = onnx_quantlab.to_integer_ops(onnx_int.rewrite(g))
        g = onnx_nemo_ops.fuse_pools_and_adds(g)
    else:
        g = fuse_qdq(g)
    lw = Lowering(g, style, input_dtypes)
    lw.lower_inputs()
    lw.lower_nodes()
    # onnxruntime on x86-64 fuses int8-activation QDQ groups into its QLinear kernels only with this entry
    session_config = {"session.qdqisint8allowed": "1"} if style == "qdq" else {}
    meta = {"format": "onnx", "onnx_style": style, "onnx_opset": g.opset, "onnx_session_config": session_config}
    if cut is not None:
        meta.update(notes=list(g.notes), onnx_cut=cut)
    if style in ("quantlab", "nemo"):
        from .onnx_io import attribute_pads
        from .onnx_model import decode_model

        pads = attribute_pads(decode_model(data, source))
        if pads:
            meta.setdefault("notes", []).append(
                f"{source}: Pad {', '.join(repr(p) for p in pads[:3])} give{'s' if len(pads) == 1 else ''} the pads "
                f"as attributes, the opset-2 form its opset {g.opset} no longer has: tilewise reads it; onnxruntime "
                "runs a copy with them as inputs")
    if style == "quantlab":
        meta["onnx_value_bound"] = onnx_quantlab.value_bound(source_graph)
    elif style == "nemo":
        meta["onnx_value_bound"] = lw.float_bound()
    if style in ("quantlab", "nemo"):
        why = no_reference(g)
        if why:
            meta["onnx_no_reference"] = why
    return lw.finish(g.name, meta)
