"""QuantLab integer ONNX (Deeploy's networks): the custom `RequantShift` node -> IR ``shift`` requant.

QuantLab exports float32 (or int8/uint8) tensors holding integers: Conv (dense, depthwise, strided),
Gemm (transB) and MatMul with integer weights, MaxPool, Reshape, Flatten, integer Add, and its
requantization as one custom node in the default domain (notes/integer-onnx.md "QuantLab"):

    RequantShift(x, mul, add; div, n_levels_out, signed)
    y = clip(floor((x·mul + add + div/2) / div), lo, hi)
    [lo, hi] = [−n/2, n/2 − 1] if signed else [0, n − 1]

with `mul`, `add` per channel ([C,1,1], [1,C,1,1], [C], [1,C]) or scalars and `div` a power of two
(the rounding term div/2 is not in `add`; div = 1 adds nothing, floor(v + 1/2) = v for integer v).
That is the IR ``shift`` Requant (golden/requant.py: ((acc·k + λ) >> d), clamp) with k = mul,
λ = add + div/2 and d = log2(div) — bit for bit, as the floor shift of an integer is floor division
by 2^d. `to_integer_ops` rewrites the graph before lowering (onnx_lower.py); each user of a
constant gets its own derived arrays (a `mul`/`add` shared by several RequantShifts, or an `add`
that is also a Gemm's bias, is read, never edited):

- Conv / Gemm / MatMul -> RequantShift: one IntConv / IntGemm node (onnx_nemo.py lowers them) with
  the layer's Requant. A linear output read by several RequantShifts gives each its own layer (the
  accumulation is recomputed per reader, so every layer keeps the 8-bit output the kernels take).
- Add(a, b) -> RequantShift, a and b activations of one shape and type: QlAddRequantShift, lowered
  to a concat of a and b along channels (NHWC: each pixel holds a's C values, then b's), read as
  [N, H, 2W, C] by a reshape (no data moves: column 2x is a's pixel x, column 2x + 1 is b's), and a
  depthwise 1×2 conv with stride (1, 2) and weights 1, so the accumulator is exactly a + b and the
  layer's shift Requant does the rest: 2 MACs per output, on kernels every target already runs
  exactly (the sum needs 9 bits, so no 8-bit add kernel could hold it in between).
- a Conv / Gemm / MatMul without a RequantShift reader: left to onnx_nemo.py's rewrite (its
  Mul/Add/Div/Floor/Clip chain, or none: the int32 accumulator).
- any other RequantShift (e.g. an identity requantization of a residual branch): QlRequantShift,
  lowered to a depthwise 1×1 conv with weights 1 (a per-channel scale layer) and the shift Requant;
  a 2-D [N, C] tensor is reshaped to [N, 1, 1, C] around it.

Graph inputs: a float32 input holds integers in [0, 255] (uint8, as DORY's and Deeploy's image
inputs); an int8 or uint8 typed input is taken as it is. Graph outputs are float32 (scale 1).

Reference. onnxruntime has no RequantShift kernel; `expanded_model` writes a copy where every
RequantShift is Cast(int64) → Mul(mul) → Add(add + div/2 + 2^62) → Div(div) → Sub(2^62/div) →
Cast(float32) → Clip(lo, hi), and integer-typed inputs are Cast to float32. The int64 part is
exact floor division: onnxruntime's integer Div truncates toward zero, so the dividend is first
lifted by 2^62 (a multiple of div) to be non-negative and the quotient lowered by 2^62/div after —
exact while |x·mul + add + div/2| < 2^62. The rest of the copy (Conv/Gemm/MatMul, Add, MaxPool)
runs in float32, which equals integer arithmetic while every value — each partial sum of a
linear op, each sum of an Add — is an integer below 2^24 in magnitude (float32's 24-bit
significand). `value_bound` proves both bounds by interval arithmetic over the graph (input
range from its type, Σ|w|·max|x| + |b| per output channel, the clip range after a RequantShift,
sums after an Add); validate uses onnxruntime on the copy only when they hold and otherwise
compares with the golden model alone and says why (validate/reference.py).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..ir.ops import Op
from ..ir.params import ConcatParams, Conv2dParams, ReshapeParams
from ..ir.requant import Requant
from .onnx_int import channel_axis, emit_arith, emit_requant, shift_requant, table_add
from .onnx_lower import NHWC, Lowering, handler
from .onnx_model import TW_DOMAIN, OnnxGraph, ONode, unsupported
from .onnx_nemo import INT1, LINEAR, check_integer_model, clip_dtype, is_weighted, per_channel
from .onnx_nemo import to_integer_ops as nemo_integer_ops

REQUANT_SHIFT = "RequantShift"
#: float32 holds every integer up to 2^24 exactly
F32_EXACT = 1 << 24
#: the expanded RequantShift lifts its int64 dividend by this multiple of every div (< 2^63 − 2^62)
I64_LIFT = 1 << 62
HINT = "export RequantShift as QuantLab does: inputs (x, mul, add), attributes div (2^d), n_levels_out, signed"


#: QuantLab's and Deeploy's own operators (any domain: "", PACTOps, ai.onnx.contrib ...)
QUANTLAB_OPS = (REQUANT_SHIFT, "iHardswish", "TrueIntegerDiv", "iSoftmax", "ITAMax", "iRMSNorm", "iNoNorm",
                "iLayerNorm", "iGELU", "IntegerMean")


#: the QuantLab / Deeploy operators tilewise deploys (the rest of QUANTLAB_OPS belongs to the
#: sequence-and-attention work and is refused in one sentence)
DEPLOYED_OPS = (REQUANT_SHIFT, "iHardswish", "TrueIntegerDiv", "iSoftmax", "iRMSNorm", "iNoNorm", "iLayerNorm",
                "iGELU", "ITAMax", "IntegerMean")


def has_quantlab_ops(g: OnnxGraph) -> bool:
    """A QuantLab / Deeploy graph: one of their operators, or a DORY adder (an Add with in1_rq /
    in2_rq / out_rq attributes)."""
    return any(n.op_type in QUANTLAB_OPS or (n.op_type == "Add" and "in1_rq" in n.attrs) for n in g.nodes)


def _integer_vec(g: OnnxGraph, node: ONode, idx: int, what: str) -> np.ndarray:
    name = node.input(idx)
    if not name or name not in g.consts:
        raise unsupported(g, node, f"takes its {what} from a computed tensor", f"make {what} a constant; {HINT}")
    a = np.array(g.consts[name], dtype=np.float64)     # a copy: the initializer may have other readers
    if not (np.all(np.isfinite(a)) and np.all(a == np.round(a))):
        raise unsupported(g, node, f"has a non-integer {what}", f"give integer {what} values; {HINT}")
    return a


def shift_terms(g: OnnxGraph, node: ONode) -> tuple[np.ndarray, np.ndarray, int, int, int]:
    """(mul, add, d, lo, hi) of a RequantShift: mul and add as given (scalar or per channel, new
    arrays), div = 2^d, [lo, hi] its output levels."""
    if len(node.inputs) != 3 or len([o for o in node.outputs if o]) != 1:
        raise unsupported(g, node, f"has {len(node.inputs)} inputs and {len(node.outputs)} outputs", HINT)
    attrs = node.attrs
    n_levels = attrs.get("n_levels_out", attrs.get("n_levels"))
    if "div" not in attrs or n_levels is None or "signed" not in attrs:
        missing = [a for a, ok in (("div", "div" in attrs), ("n_levels_out", n_levels is not None),
                                   ("signed", "signed" in attrs)) if not ok]
        raise unsupported(g, node, f"lacks the attribute(s) {', '.join(missing)}", HINT)
    div, n = int(np.asarray(attrs["div"]).reshape(-1)[0]), int(np.asarray(n_levels).reshape(-1)[0])
    if div < 1 or div & (div - 1):
        raise unsupported(g, node, f"divides by {div}, not a power of two", HINT)
    if n < 2:
        raise unsupported(g, node, f"has n_levels_out = {n}", "give at least two output levels")
    lo, hi = (-(n // 2), n // 2 - 1) if int(np.asarray(attrs["signed"]).reshape(-1)[0]) else (0, n - 1)
    mul = _integer_vec(g, node, 1, "mul")
    add = _integer_vec(g, node, 2, "add")
    return mul, add, int(math.log2(div)), lo, hi


def _vec(g: OnnxGraph, node: ONode, arr: np.ndarray, channels: int, conv: bool, what: str) -> np.ndarray:
    v = per_channel(arr, channels, conv)
    if v is None:
        raise unsupported(g, node, f"has a {what} of shape {tuple(arr.shape)} for {channels} channels",
                          "give one value per channel ([C,1,1] after a convolution, [C] after a dense layer) "
                          "or a scalar")
    return v


def _requant_attrs(g: OnnxGraph, node: ONode, channels: int | None, conv: bool) -> dict:
    """The tw_* attributes (onnx_nemo.py's IntConv/IntGemm contract) of a RequantShift; per channel
    when `channels` is known, else as given (expanded when lowered)."""
    mul, add, d, lo, hi = shift_terms(g, node)
    lam = add + float((1 << d) // 2)
    if channels is not None:
        mul, lam = _vec(g, node, mul, channels, conv, "mul"), _vec(g, node, lam, channels, conv, "add")
    return {"tw_k": mul.astype(np.int64), "tw_lambda": lam.astype(np.int64), "tw_d": d,
            "tw_lo": float(lo), "tw_hi": float(hi), "tw_adc": None}


def _channels(g: OnnxGraph, n: ONode) -> tuple[int, bool]:
    w = np.asarray(g.consts[n.inputs[1]])
    if n.op_type == "Conv":
        return w.shape[0], True
    if n.op_type == "Gemm":
        return (w.shape[0] if int(n.attr("transB", 0)) else w.shape[1]), False
    return w.shape[-1], False


def _fusable(g: OnnxGraph, r: ONode, channels: int, conv: bool) -> bool:
    """The RequantShift's mul and add are per output channel of the linear op before it (or
    scalars): its requantization can be the layer's own."""
    mul, add, _, _, _ = shift_terms(g, r)
    return per_channel(mul, channels, conv) is not None and per_channel(add, channels, conv) is not None


def to_integer_ops(g: OnnxGraph) -> OnnxGraph:
    """Rewrite every RequantShift (module docstring) into IntConv / IntGemm, QlAddRequantShift or
    QlRequantShift nodes; other nodes are kept."""
    check_integer_model(g)
    prod, cons = g.producers(), g.consumers()
    removed: set[int] = set()
    replaced: dict[int, ONode] = {}
    for r in g.nodes:
        if r.op_type != REQUANT_SHIFT:
            continue
        src = r.inputs[0]
        p = prod.get(src)
        readers = cons.get(src, [])
        private = src not in g.outputs
        biased = _bias_add(g, p, prod, cons) if p is not None and private and len(readers) == 1 else None
        if biased is not None and _fusable(g, r, *_channels(g, biased[0])):
            # MatMul -> Add(bias) -> RequantShift: one biased layer
            removed.update((id(p), id(biased[1])))
            p = biased[0]
        if (p is not None and is_weighted(g, p) and private and not _wide_gemm(g, p)
                and all(c.op_type == REQUANT_SHIFT and c.inputs[0] == src and src not in c.inputs[1:]
                        and _fusable(g, c, *_channels(g, p)) for c in readers)):
            channels, conv = _channels(g, p)
            attrs = dict(p.attrs)
            attrs.update(_requant_attrs(g, r, channels, conv))
            attrs["tw_op"] = p.op_type
            name = p.name if len(readers) == 1 else f"{p.name}__{r.name}"
            replaced[id(r)] = ONode("IntConv" if conv else "IntGemm", name, p.inputs, r.outputs, attrs, TW_DOMAIN)
            removed.add(id(p))
        elif (p is not None and p.op_type == "Add" and private and len(readers) == 1
              and not any(i in g.consts for i in p.inputs) and not p.attrs):
            replaced[id(r)] = ONode("QlAddRequantShift", r.name, p.inputs[:2], r.outputs,
                                    _requant_attrs(g, r, None, True), TW_DOMAIN)
            removed.add(id(p))
        else:
            replaced[id(r)] = ONode("QlRequantShift", r.name, r.inputs[:1], r.outputs,
                                    _requant_attrs(g, r, None, True), TW_DOMAIN)
    nodes = [replaced.get(id(n), n) for n in g.nodes if id(n) not in removed]
    out = g.with_nodes(nodes)
    if any(is_weighted(g, n) for n in nodes):
        out = nemo_integer_ops(out)     # a linear op without a RequantShift: NEMO's chains (or none)
    return out


def _bias_add(g: OnnxGraph, add: ONode, prod: dict[str, ONode],
              cons: dict[str, list[ONode]]) -> tuple[ONode, ONode] | None:
    """For an Add of a constant per-output bias ([K] or [1, K], integer) to the only use of a
    MatMul / Gemm with constant weights and no bias of its own (EEGFormer's linear layers:
    MatMul -> Add(bias) -> RequantShift): that layer with the bias as its third input, named and
    writing as the Add (the caller drops the Add; the linear node, read by nothing else, goes
    with it), and the linear node; else None."""
    if add.op_type != "Add" or add.attrs or len(add.inputs) != 2:
        return None
    consts = [i for i in add.inputs if i in g.consts]
    acts = [i for i in add.inputs if i not in g.consts]
    if len(consts) != 1 or len(acts) != 1:
        return None
    lin = prod.get(acts[0])
    if (lin is None or lin.op_type not in ("MatMul", "Gemm") or not is_weighted(g, lin) or lin.input(2)
            or len(cons.get(acts[0], [])) != 1 or acts[0] in g.outputs):
        return None
    bias = np.asarray(g.consts[consts[0]])
    k = _channels(g, lin)[0]
    if bias.size != k or bias.shape[-1] != k or not np.array_equal(bias, np.round(bias)):
        return None
    return replace(lin, inputs=(*lin.inputs[:2], consts[0]), outputs=add.outputs), lin


def _wide_gemm(g: OnnxGraph, p: ONode) -> bool:
    """A Gemm whose alpha, beta or matrix C keeps its requantization out of the layer
    (onnx_nemo.int_gemm computes alpha·acc + beta·C first)."""
    if p.op_type != "Gemm":
        return False
    if float(p.attr("alpha", 1.0)) != 1.0 or (p.input(2) and float(p.attr("beta", 1.0)) != 1.0):
        return True
    c = g.consts.get(p.input(2)) if p.input(2) else None
    k = _channels(g, p)[0]
    return c is not None and not (np.size(c) == 1 or (np.size(c) == k and np.shape(c)[-1] == k))


# ---------------------------------------------------------------------------------------------
# lowering
# ---------------------------------------------------------------------------------------------

def _as_nhwc(lw: Lowering, node: ONode, x: str) -> tuple[str, tuple[int, ...] | None]:
    """`x` as a 4-D NHWC IR tensor whose channels are its last IR axis: itself, or any other
    shape read as [1, 1, rows, last] by a reshape (no data moves) — then also the shape to
    give back (None when it is itself)."""
    t = lw.t(x)
    if len(t.shape) == 4 and lw.perm[x] == NHWC:
        return x, None
    rows = int(np.prod(t.shape[:-1], dtype=np.int64)) if len(t.shape) > 1 else 1
    shape = (1, 1, rows, int(t.shape[-1]) if t.shape else 1)
    out = lw.fresh(f"{x}__nhwc")
    return lw.emit(node, Op.RESHAPE, [x], out, shape, t.dtype, t.quant, ReshapeParams(shape=shape),
                   suffix="_to_4d"), tuple(t.shape)


def _emit_depthwise(lw: Lowering, node: ONode, x: str, taps: int, back: tuple[int, ...] | None,
                    layout: tuple[int, ...] | None, rq: Requant) -> None:
    """A depthwise 1×`taps` conv of `x` (NHWC), stride (1, taps), weights 1, requantized by `rq`
    (one value, or one per channel: x's last axis), bound to the node's output (reshaped back to
    `back` in `layout` when the tensor came in another shape, _as_nhwc)."""
    c = lw.t(x).shape[3]
    rq = replace(rq, **{f: np.broadcast_to(np.asarray(getattr(rq, f)).reshape(-1), (c,)).copy()
                        for f in ("multiplier", "shift", "bias")})
    params = Conv2dParams(stride=(1, taps), dilation=(1, 1), pads=(0, 0, 0, 0), groups=c, requant=rq)
    w_ir = lw.add_const(f"{node.name}__ones", np.ones((c, 1, taps, 1), np.int8), "int8", INT1)
    dtype = clip_dtype(node.attr("tw_lo"), node.attr("tw_hi"))
    out = lw.out_name(node.outputs[0])
    if back is None:
        lw.emit(node, Op.CONV2D, [x, w_ir], out, None, dtype, INT1, params, layout=NHWC)
        return
    mid = lw.emit(node, Op.CONV2D, [x, w_ir], lw.fresh(f"{node.outputs[0]}__nhwc"), None, dtype, INT1, params)
    lw.emit(node, Op.RESHAPE, [mid], out, back, dtype, INT1, ReshapeParams(shape=back), layout=layout,
            suffix="_back")


def _standalone(lw: Lowering, node: ONode, x: str) -> tuple[int | None, Requant]:
    """The ONNX channel axis of a standalone RequantShift on `x` and its shift Requant over that
    axis's channels (one value for the whole tensor when axis is None)."""
    k, lam = np.asarray(node.attr("tw_k")), np.asarray(node.attr("tw_lambda"))
    axis = channel_axis(lw, node, x, (k, lam), "mul or add")
    channels = 1 if axis is None else lw.onnx_shape(x)[axis]
    return axis, shift_requant(k.reshape(-1), lam.reshape(-1), int(node.attr("tw_d")), int(node.attr("tw_lo")),
                               int(node.attr("tw_hi")), channels)


def _depthwise_ok(lw: Lowering, x: str, axis: int | None) -> bool:
    """The depthwise-conv form runs it: an 8-bit tensor whose channels, if any, are its last IR
    axis (any rank: read as [1, 1, rows, C])."""
    t = lw.t(x)
    last = axis is None or (bool(t.shape) and lw.perm[x].index(axis) == len(t.shape) - 1)
    return t.dtype in ("int8", "uint8") and x not in lw.flat and last


@handler("QlRequantShift")
def requant_shift(lw: Lowering, node: ONode) -> None:
    """A RequantShift on its own: a depthwise 1×1 conv with weights 1 on an 8-bit tensor whose
    channels are its per-channel axis (module docstring), else the requant op (onnx_int.py)."""
    x = lw.act(node, node.inputs[0])
    axis, rq = _standalone(lw, node, x)
    if _depthwise_ok(lw, x, axis):
        x4, back = _as_nhwc(lw, node, x)
        _emit_depthwise(lw, node, x4, 1, back, lw.perm[x], rq)
        return
    emit_requant(lw, node, x, rq, axis, lw.out_name(node.outputs[0]),
                 clip_dtype(node.attr("tw_lo"), node.attr("tw_hi")))


@handler("QlAddRequantShift")
def add_requant_shift(lw: Lowering, node: ONode) -> None:
    """Add(a, b) → RequantShift: with one mul and add for the tensor, an add by tables
    (onnx_int.table_add); else, for two 8-bit tensors of one shape and type, a and b interleaved
    pixel by pixel (concat along channels, read as [N, H, 2W, C]), then a depthwise 1×2 conv,
    stride (1, 2), weights 1 (module docstring); else the exact integer add and the requant op."""
    a, b = (lw.act(node, i) for i in node.inputs)
    ta, tb = lw.t(a), lw.t(b)
    axis, rq = _standalone(lw, node, a)
    if axis is None:    # one (mul, add) for the tensor: an add by tables, clamp((mul·a + add' + mul·b) >> d)
        k, lam, d = (int(np.asarray(v).reshape(-1)[0]) for v in (rq.multiplier, rq.bias, rq.shift))
        if table_add(lw, node, a, b, lambda v: k * v + lam, lambda v: k * v, d, int(rq.qmin), int(rq.qmax),
                     lw.out_name(node.outputs[0])):
            return
    if not (lw.onnx_shape(a) == lw.onnx_shape(b) and lw.perm[a] == lw.perm[b] and ta.dtype == tb.dtype
            and _depthwise_ok(lw, a, axis)):
        s = emit_arith(lw, node, "Add", (("ir", a), ("ir", b)), lw.fresh(f"{node.name}__sum"), suffix="_sum")
        emit_requant(lw, node, s, rq, axis, lw.out_name(node.outputs[0]),
                     clip_dtype(node.attr("tw_lo"), node.attr("tw_hi")), suffix="_requant")
        return
    a4, back = _as_nhwc(lw, node, a)
    b4, _ = _as_nhwc(lw, node, b)
    n, h, w, c = lw.t(a4).shape
    cat = lw.emit(node, Op.CONCAT, [a4, b4], lw.fresh(f"{node.outputs[0]}__branches"), None, ta.dtype, INT1,
                  ConcatParams(mode="onnx", axis=3, input_quant=((1.0, 0), (1.0, 0)), output_quant=(1.0, 0)),
                  suffix="_branches")
    pairs = (n, h, 2 * w, c)
    pairs = lw.emit(node, Op.RESHAPE, [cat], lw.fresh(f"{node.outputs[0]}__pairs"), pairs, ta.dtype, INT1,
                    ReshapeParams(shape=pairs), suffix="_pairs")
    _emit_depthwise(lw, node, pairs, 2, back, lw.perm[a], rq)


# ---------------------------------------------------------------------------------------------
# the reference: onnxruntime on an expanded copy
# ---------------------------------------------------------------------------------------------

_INPUT_MAX = {"float32": 255, "uint8": 255, "int8": 128}
#: ops that keep their input's value range (listed by `tilewise ops`)
KEEPS_RANGE = ("MaxPool", "Reshape", "Flatten", "Identity", "Dropout", "Transpose", "Relu")


#: node attributes onnxruntime refuses or ignores (QuantLab's DORY exports annotate Conv, Mul, Add
#: and Clip with bit widths, and its DORY adder requantizes its inputs through attributes)
FOREIGN_ATTRS = ("weight_bits", "bias_bits", "mult_bits", "add_bits", "out_bits", "in1_rq", "in2_rq", "out_rq")


def value_bound(g: OnnxGraph) -> int | None:
    """The largest |value| any float32 intermediate of the expanded copy can take (module
    docstring): the inputs, every partial sum of a linear op, every sum of an Add, every
    RequantShift output. None when an op outside the ones QuantLab exports leaves a range unknown,
    a node carries attributes onnxruntime refuses or ignores (FOREIGN_ATTRS), or a
    RequantShift's int64 dividend could reach 2^62."""
    m: dict[str, int] = {n: _INPUT_MAX.get(dt, 1 << 31) for n, (dt, _) in g.inputs.items()}
    worst = max(m.values(), default=0)
    for n in g.nodes:
        if any(a in n.attrs for a in FOREIGN_ATTRS):
            return None
        ins = [m.get(i) for i in n.inputs[:1]]
        if ins[0] is None:
            return None
        x = ins[0]
        if n.op_type in LINEAR and n.input(1) in g.consts:
            w = np.abs(np.asarray(g.consts[n.inputs[1]], dtype=np.float64))
            channels, _ = _channels(g, n)
            if n.op_type == "Conv":
                per_k = w.reshape(channels, -1).sum(axis=1)
            elif n.op_type == "Gemm" and int(n.attr("transB", 0)):
                per_k = w.sum(axis=1)
            else:
                per_k = w.sum(axis=0)
            alpha = abs(float(n.attr("alpha", 1.0))) if n.op_type == "Gemm" else 1.0
            beta = abs(float(n.attr("beta", 1.0))) if n.op_type == "Gemm" else 1.0
            bias = (np.abs(np.asarray(g.consts[n.input(2)], dtype=np.float64)).max(initial=0) * beta
                    if n.input(2) else 0.0)
            y = int((per_k * x * alpha + bias).max(initial=0))
            worst = max(worst, y)
        elif n.op_type == "MatMul":
            return None     # two activations: the reduction's length is not known here
        elif n.op_type == REQUANT_SHIFT:
            mul, add, d, lo, hi = shift_terms(g, n)
            if int(np.abs(mul).max(initial=0)) * x + int(np.abs(add).max(initial=0)) + (1 << d) >= I64_LIFT:
                return None     # the int64 dividend of the expanded copy could leave its lifted range
            y = max(abs(lo), abs(hi))
        elif n.op_type in ("Add", "Sub"):
            b = m.get(n.input(1))
            if b is None and n.input(1) in g.consts:
                b = int(np.abs(np.asarray(g.consts[n.input(1)], dtype=np.float64)).max(initial=0))
            if b is None:
                return None
            y = x + b
            worst = max(worst, y)
        elif n.op_type in KEEPS_RANGE:
            y = x
        else:
            return None
        for o in n.outputs:
            if o:
                m[o] = y
    return worst


def _ranks(g: OnnxGraph) -> dict[str, int]:
    """The rank of every tensor the graph's ops produce, where the ops say it (standard ops and
    RequantShift keep their first input's; the others QuantLab exports are listed)."""
    r = {name: len(shape) for name, (_, shape) in g.inputs.items()}
    r.update({name: np.ndim(v) for name, v in g.consts.items()})
    for n in g.nodes:
        x = r.get(n.input(0))
        if n.op_type in ("Gemm", "Flatten"):
            y = 2
        elif n.op_type == "Reshape" and n.input(1) in g.consts:
            y = int(np.size(g.consts[n.input(1)]))
        elif n.op_type == "MatMul":
            y = max(x or 0, r.get(n.input(1), 0)) or None
        elif n.op_type.startswith("Reduce"):
            axes = n.attr("axes")
            y = x if x is None or int(n.attr("keepdims", 1)) or axes is None else x - len(axes)
        else:
            y = x
        for o in n.outputs:
            if o and y is not None:
                r[o] = y
    return r


def _broadcastable(a: np.ndarray, rank: int | None) -> np.ndarray:
    """A RequantShift's per-channel mul / add as numpy broadcasts it over a rank-`rank` N×C×…
    tensor: QuantLab writes [C, 1, 1] whatever the rank (a 1-D convolution's N×C×W output
    included), which onnxruntime would broadcast along the batch axis: there it is axis 1; any
    other form broadcasts right-aligned, as written."""
    a = np.asarray(a)
    if rank is None or a.size <= 1 or rank < 2 or sum(d != 1 for d in a.shape) != 1:
        return a
    full = (1,) * (rank - a.ndim) + tuple(a.shape) if a.ndim <= rank else None
    if full is not None and (full.index(a.size) != 0 or rank == 2):
        return a.reshape(full)           # right-aligned (a matrix's rows included)
    shape = [1] * rank
    shape[1] = a.size
    return a.reshape(shape)


def expanded_model(model, g: OnnxGraph):
    """A copy of the onnx.ModelProto `model` with every RequantShift written as standard ops and
    integer graph inputs Cast to float32 (module docstring); `model` is not changed."""
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.ModelProto()
    m.CopyFrom(model)
    graph = m.graph
    nodes = []
    for vi in graph.input:
        if vi.name in g.inputs and g.inputs[vi.name][0] != "float32":
            fname = f"{vi.name}__float"
            nodes.append(helper.make_node("Cast", [vi.name], [fname], to=onnx.TensorProto.FLOAT,
                                          name=f"{vi.name}__cast"))
            for n in graph.node:
                for i, name in enumerate(n.input):
                    if name == vi.name:
                        n.input[i] = fname
    inits = []
    by_name = {n.name: n for n in g.nodes}
    ranks = _ranks(g)
    for i, n in enumerate(graph.node):
        if n.op_type != REQUANT_SHIFT:
            nodes.append(n)
            continue
        mul, add, d, lo, hi = shift_terms(g, by_name[n.name or f"{n.op_type}_{i}"])
        base = n.name or f"requant_shift_{i}"
        c = {k: f"{base}__const_{k}" for k in ("k", "lam", "div", "off", "lo", "hi")}

        def const(key: str, v) -> None:
            inits.append(numpy_helper.from_array(np.asarray(v), c[key]))

        # floor((x·mul + add + div/2) / div) in int64; int64 Div truncates, so the dividend is
        # lifted by 2^62 (a multiple of div) to be non-negative and the quotient lowered after
        rank = ranks.get(n.input[0])
        const("k", _broadcastable(mul, rank).astype(np.int64))
        const("lam", _broadcastable(add + (1 << d) // 2, rank).astype(np.int64) + I64_LIFT)
        const("div", np.int64(1 << d))
        const("off", np.int64(I64_LIFT >> d))
        t = [f"{base}__{s}" for s in ("int", "mul", "add", "div", "floor", "float")]
        nodes += [helper.make_node("Cast", [n.input[0]], [t[0]], to=onnx.TensorProto.INT64, name=t[0]),
                  helper.make_node("Mul", [t[0], c["k"]], [t[1]], name=t[1]),
                  helper.make_node("Add", [t[1], c["lam"]], [t[2]], name=t[2]),
                  helper.make_node("Div", [t[2], c["div"]], [t[3]], name=t[3]),
                  helper.make_node("Sub", [t[3], c["off"]], [t[4]], name=t[4]),
                  helper.make_node("Cast", [t[4]], [t[5]], to=onnx.TensorProto.FLOAT, name=t[5])]
        # the float32 clip is exact: values inside [lo, hi] are small integers, and rounding a
        # value outside keeps it outside (lo and hi are representable)
        if g.opset >= 11:
            const("lo", np.float32(lo))
            const("hi", np.float32(hi))
            nodes.append(helper.make_node("Clip", [t[5], c["lo"], c["hi"]], [n.output[0]], name=f"{base}__clip"))
        else:
            nodes.append(helper.make_node("Clip", [t[5]], [n.output[0]], min=float(lo), max=float(hi),
                                          name=f"{base}__clip"))
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(inits)
    from .onnx_io import untyped_outputs

    return untyped_outputs(m)
