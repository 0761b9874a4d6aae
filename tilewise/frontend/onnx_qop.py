"""QOperator nodes -> IR nodes of mode ``onnx`` (QLinearConv, QLinearMatMul, QGemm, QLinearAdd,
QLinearAveragePool, QLinearGlobalAveragePool, QLinearSoftmax, QLinearConcat, and the tilewise
Requant that onnx_qdq.py makes of DQ -> [Relu/Clip] -> Q).

conv2d / fully_connected carry an ``onnx`` Requant whose per-channel float32 scale is the one the
kernel computes (onnx_qparams.py); the other ops carry, in their Onnx* parameters (ir/params.py),
the float32 constants their onnxruntime kernel derives (golden/onnx_ops.py documents the
arithmetic). A fused Relu/Clip (the ONNX-level node attribute "tw_clip") becomes the output clamp
[Q(low), Q(high)]. uint8 weights are stored as int8 (w − 128, zero point − 128), which leaves every
product (w − zp_w)·x unchanged.
"""

from __future__ import annotations

import numpy as np

from ..ir.ops import Op
from ..ir.params import (
    ClampParams,
    ConcatParams,
    Conv2dParams,
    FullyConnectedParams,
    OnnxAddParams,
    OnnxAvgPoolParams,
    OnnxMeanParams,
    OnnxQuantizeParams,
    OnnxSoftmaxParams,
    ReshapeParams,
)
from ..ir.requant import Requant
from ..ir.tensor import QuantParams
from .onnx_lower import NHWC, Lowering, canonical_perm, handler, int_range, window_pads
from .onnx_model import ONode, unsupported
from .onnx_qparams import (
    add_params,
    conv_scales,
    gemm_scales,
    global_pool_scale,
    quantize_value,
    softmax_table,
    softmax_y_scale_inv,
)


def clip_range(lw: Lowering, node: ONode, scale: float, zp: int, dtype: str) -> tuple[int, int]:
    """[qmin, qmax] of an output of `dtype`, narrowed by a fused Relu/Clip (tw_clip, real bounds)."""
    lo, hi = int_range(dtype)
    clip = node.attr("tw_clip")
    if clip is not None:
        if clip[0] is not None:
            lo = max(lo, quantize_value(clip[0], scale, zp, dtype))
        if clip[1] is not None:
            hi = min(hi, quantize_value(clip[1], scale, zp, dtype))
        if lo > hi:
            raise unsupported(lw.g, node, f"clips its output to the empty range {clip}", "the model is malformed")
    return lo, hi


def onnx_requant(scales: np.ndarray, zp: int, qmin: int, qmax: int) -> Requant:
    n = int(np.size(scales))
    return Requant(mode="onnx", multiplier=np.ones(n, dtype=np.int64), shift=np.zeros(n, dtype=np.int64),
                   zero_point=int(zp), qmin=int(qmin), qmax=int(qmax), scale=np.asarray(scales, dtype=np.float32))


def weights_int8(lw: Lowering, node: ONode, w: np.ndarray, zp: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    """int8 weights and zero points, and the IR dtype of the weights; uint8 weights are shifted by
    −128 (products unchanged); int4 / int2 weights (sub-byte, docs/subbyte.md) keep their values in an
    int8 container and their dtype."""
    if w.dtype == np.uint8:
        return (w.astype(np.int16) - 128).astype(np.int8), zp.astype(np.int64) - 128, "int8"
    if str(w.dtype) in ("int4", "int2"):
        return w.astype(np.int8), zp.astype(np.int64), str(w.dtype)
    if w.dtype != np.int8:
        raise unsupported(lw.g, node, f"has {w.dtype} weights", "quantize the weights to int8, uint8, int4 or int2")
    return w, zp.astype(np.int64), "int8"


def weight_quant(lw: Lowering, node: ONode, scale_name: str, zp_name: str,
                 channels: int) -> tuple[np.ndarray, np.ndarray]:
    ws = lw.const(node, scale_name, "weight scale").astype(np.float32).reshape(-1)
    wz = lw.const(node, zp_name, "weight zero point").reshape(-1) if zp_name else np.zeros(1, dtype=np.int8)
    if ws.size not in (1, channels) or wz.size not in (1, channels, ws.size):
        raise unsupported(lw.g, node, f"has {ws.size} weight scales for {channels} output channels",
                          "quantize weights per tensor or per output channel")
    if wz.size == 1 and ws.size > 1:
        wz = np.repeat(wz, ws.size)
    return ws, wz


def make_weight(lw: Lowering, node: ONode, base: str, w: np.ndarray, ws: np.ndarray, wz: np.ndarray) -> str:
    w8, z, dtype = weights_int8(lw, node, w, wz)
    quant = QuantParams(tuple(float(v) for v in ws), tuple(int(v) for v in z), 0 if ws.size > 1 else None)
    return lw.add_const(base, w8, dtype, quant)


def make_bias(lw: Lowering, node: ONode, name: str, channels: int) -> list[str]:
    if not name:
        return []
    b = lw.const(node, name, "bias")
    if b.dtype != np.int32 or b.size != channels:
        raise unsupported(lw.g, node, f"has a {b.dtype} bias of {b.size} values for {channels} channels",
                          "give an int32 bias with one value per output channel")
    return [lw.add_const(f"{name}__bias", b.reshape(-1).astype(np.int32), "int32")]


def conv_params(lw: Lowering, node: ONode, x_shape: tuple[int, ...], w_shape: tuple[int, ...],
                rq: Requant) -> Conv2dParams:
    """The Conv2dParams of a QLinearConv / Conv node: its geometry (checked) and `rq`."""
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise unsupported(lw.g, node, f"is a {len(x_shape) - 2}-D convolution", "tilewise supports 2-D convolutions")
    if node.attr("channels_last"):
        raise unsupported(lw.g, node, "is an onnxruntime-internal NHWC convolution",
                          "give the model as exported (NCHW)")
    kernel = tuple(int(v) for v in node.attr("kernel_shape", w_shape[2:]))
    if kernel != tuple(w_shape[2:]):
        raise unsupported(lw.g, node, f"declares kernel {kernel} for weights {w_shape}", "the model is malformed")
    stride = tuple(int(v) for v in node.attr("strides", [1, 1]))
    dilation = tuple(int(v) for v in node.attr("dilations", [1, 1]))
    groups = int(node.attr("group", 1))
    c = x_shape[3]
    if groups < 1 or c % groups or w_shape[1] * groups != c or w_shape[0] % groups:
        raise unsupported(lw.g, node, f"has {groups} groups for {c} input channels and weights {w_shape}",
                          "the model is malformed")
    pads = window_pads(lw, node, x_shape[1:3], kernel, stride, dilation)
    return Conv2dParams(stride=stride, dilation=dilation, pads=pads, groups=groups, requant=rq)


@handler("QLinearConv")
def qlinear_conv(lw: Lowering, node: ONode) -> None:
    xs, xz, xdt = lw.qparams(node, node.inputs[1], node.input(2), "input", node.inputs[0])
    ys, yz, ydt = lw.qparams(node, node.inputs[6], node.input(7), "output")
    x = lw.act(node, node.inputs[0], xs, xz, xdt)
    w = lw.const(node, node.inputs[3], "weights")
    k = w.shape[0]
    ws, wz = weight_quant(lw, node, node.inputs[4], node.input(5), k)
    lo, hi = clip_range(lw, node, ys, yz, ydt)
    params = conv_params(lw, node, lw.t(x).shape, w.shape, onnx_requant(conv_scales(xs, ws, ys), yz, lo, hi))
    w_ir = make_weight(lw, node, f"{node.inputs[3]}__ohwi", np.transpose(w, (0, 2, 3, 1)), ws, wz)
    bias = make_bias(lw, node, node.input(8), k)
    lw.emit(node, Op.CONV2D, [x, w_ir, *bias], lw.out_name(node.outputs[0]), None, ydt, QuantParams((ys,), (yz,)),
            params, layout=NHWC)


def fc_input(lw: Lowering, node: ONode, x: str, w_kc: np.ndarray) -> tuple[str, np.ndarray]:
    """The IR input of a dense layer and its weights [K, C], columns permuted for HWC-flattened inputs."""
    if x in lw.flat:
        c, h, w = lw.flat[x]
        k = w_kc.shape[0]
        return x, w_kc.reshape(k, c, h, w).transpose(0, 2, 3, 1).reshape(k, c * h * w)
    return lw.in_onnx_order(node, x), w_kc


def emit_dense(lw: Lowering, node: ONode, x: str, w_kc: np.ndarray, ws: np.ndarray, wz: np.ndarray,
               bias: str, wname: str, rq: Requant, ydt: str, yquant: QuantParams) -> None:
    a_shape = lw.onnx_shape(x) if x not in lw.flat else lw.t(x).shape
    if a_shape[-1] != w_kc.shape[1]:
        raise unsupported(lw.g, node, f"multiplies {a_shape} by weights of {w_kc.shape[1]} inputs",
                          "the model is malformed")
    src, w_kc = fc_input(lw, node, x, w_kc)
    w_ir = make_weight(lw, node, f"{wname}__kc", np.ascontiguousarray(w_kc), ws, wz)
    b = make_bias(lw, node, bias, w_kc.shape[0])
    out_shape = tuple(a_shape[:-1]) + (w_kc.shape[0],)
    params = FullyConnectedParams(requant=rq)
    if len(out_shape) == 2:
        lw.emit(node, Op.FULLY_CONNECTED, [src, w_ir, *b], lw.out_name(node.outputs[0]), out_shape, ydt, yquant, params)
        return
    mid = lw.fresh(f"{node.outputs[0]}__2d")
    lw.emit(node, Op.FULLY_CONNECTED, [src, w_ir, *b], mid, None, ydt, yquant, params)
    shape = ReshapeParams(shape=out_shape)
    if canonical_perm(len(out_shape)) == tuple(range(len(out_shape))):
        lw.emit(node, Op.RESHAPE, [mid], lw.out_name(node.outputs[0]), out_shape, ydt, yquant, shape, suffix="_reshape")
    else:
        mid2 = lw.fresh(f"{node.outputs[0]}__onnx_order")
        lw.emit(node, Op.RESHAPE, [mid], mid2, out_shape, ydt, yquant, shape, suffix="_reshape")
        lw.from_onnx_order(node, mid2, node.outputs[0])


@handler("QLinearMatMul")
def qlinear_matmul(lw: Lowering, node: ONode) -> None:
    as_, az, adt = lw.qparams(node, node.inputs[1], node.input(2), "input A", node.inputs[0])
    ys, yz, ydt = lw.qparams(node, node.inputs[6], node.input(7), "output")
    a = lw.act(node, node.inputs[0], as_, az, adt)
    b = lw.const(node, node.inputs[3], "weights (input B)")
    if b.ndim != 2:
        raise unsupported(lw.g, node, f"has {b.ndim}-D weights", "use a 2-D weight matrix")
    ws, wz = weight_quant(lw, node, node.inputs[4], node.input(5), b.shape[1])
    lo, hi = clip_range(lw, node, ys, yz, ydt)
    rq = onnx_requant(conv_scales(as_, ws, ys), yz, lo, hi)
    emit_dense(lw, node, a, b.T, ws, wz, "", node.inputs[3], rq, ydt, QuantParams((ys,), (yz,)))


@handler("QGemm")
def qgemm(lw: Lowering, node: ONode) -> None:
    if int(node.attr("transA", 0)):
        raise unsupported(lw.g, node, "transposes its input A", "export the Gemm with transA=0")
    if not node.input(7):
        raise unsupported(lw.g, node, "produces a float output", "quantize the Gemm output too")
    as_, az, adt = lw.qparams(node, node.inputs[1], node.input(2), "input A", node.inputs[0])
    ys, yz, ydt = lw.qparams(node, node.inputs[7], node.input(8), "output")
    a = lw.act(node, node.inputs[0], as_, az, adt)
    b = lw.const(node, node.inputs[3], "weights (input B)")
    w_kc = b if int(node.attr("transB", 0)) else b.T
    ws, wz = weight_quant(lw, node, node.inputs[4], node.input(5), w_kc.shape[0])
    lo, hi = clip_range(lw, node, ys, yz, ydt)
    rq = onnx_requant(gemm_scales(float(node.attr("alpha", 1.0)), as_, ws, ys), yz, lo, hi)
    emit_dense(lw, node, a, w_kc, ws, wz, node.input(6), node.inputs[3], rq, ydt, QuantParams((ys,), (yz,)))


def _operand(lw: Lowering, node: ONode, name: str, s: float, z: int, dt: str, rank: int, perm: tuple[int, ...]) -> str:
    if name in lw.g.consts:
        data = lw.const(node, name, "operand")
        if str(data.dtype) != dt:
            raise unsupported(lw.g, node, f"has a {data.dtype} constant operand quantized as {dt}",
                              "the model is malformed")
        return lw.const_like(node, f"{name}__const", data, rank, perm, dt, QuantParams((s,), (z,)))
    return lw.act(node, name, s, z, dt)


@handler("QLinearAdd")
def qlinear_add(lw: Lowering, node: ONode) -> None:
    sa, za, dta = lw.qparams(node, node.inputs[1], node.input(2), "input A", node.inputs[0])
    sb, zb, dtb = lw.qparams(node, node.inputs[4], node.input(5), "input B", node.inputs[3])
    sc, zc, dtc = lw.qparams(node, node.inputs[6], node.input(7), "output")
    if not dta == dtb == dtc:
        raise unsupported(lw.g, node, f"mixes {dta}, {dtb} and {dtc}", "quantize both inputs and the output alike")
    acts = [n for n in node.inputs[:4:3] if n not in lw.g.consts]
    if not acts:
        raise unsupported(lw.g, node, "adds two constants", "fold the constant addition before quantizing")
    ref = lw.act(node, acts[0])
    rank, perm = len(lw.t(ref).shape), lw.perm[ref]
    ins = [_operand(lw, node, node.inputs[0], sa, za, dta, rank, perm),
           _operand(lw, node, node.inputs[3], sb, zb, dtb, rank, perm)]
    shapes = [lw.onnx_shape(i) for i in ins]
    if any(lw.perm[i] != perm or len(lw.t(i).shape) != rank for i in ins):
        raise unsupported(lw.g, node, f"adds tensors of shapes {shapes[0]} and {shapes[1]}",
                          "add tensors of equal rank")
    try:
        out_shape = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise unsupported(lw.g, node, f"adds tensors of shapes {shapes[0]} and {shapes[1]}, which do not broadcast",
                          "the model is malformed") from None
    # onnxruntime's broadcaster passes the full-size operand as the kernel's "A"
    a_index = 1 if shapes[0] != out_shape and shapes[1] == out_shape else 0
    pa, pb = ((sa, za), (sb, zb)) if a_index == 0 else ((sb, zb), (sa, za))
    ra, rb, fixed = add_params(pa[0], pa[1], pb[0], pb[1], sc, zc)
    lo, hi = clip_range(lw, node, sc, zc, dtc)
    lw.emit(node, Op.ADD, ins, lw.out_name(node.outputs[0]), None, dtc, QuantParams((sc,), (zc,)),
            OnnxAddParams(a_index=a_index, ratio_a=ra, ratio_b=rb, fixed=fixed, qmin=lo, qmax=hi), layout=perm)


def _global_mean(lw: Lowering, node: ONode, x: str, xs: float, xz: int, ys: float, yz: int, ydt: str) -> None:
    t = lw.t(x)
    count = int(t.shape[1] * t.shape[2])
    scale = global_pool_scale(xs, ys, count)
    if scale is None:
        raise unsupported(lw.g, node, f"averages {count} values with input scale {xs} and output scale {ys}, which "
                          "onnxruntime rejects as out of range", "requantize the pooled tensor with a sensible scale")
    lo, hi = clip_range(lw, node, ys, yz, ydt)
    rq = onnx_requant(np.asarray([scale], dtype=np.float32), yz, lo, hi)
    lw.emit(node, Op.MEAN, [x], lw.out_name(node.outputs[0]), None, ydt, QuantParams((ys,), (yz,)),
            OnnxMeanParams(axes=(1, 2), keepdims=True, x_zero_point=xz, count=count, requant=rq), layout=NHWC)


def _pool_io(lw: Lowering, node: ONode) -> tuple[str, float, int, float, int, str]:
    if node.attr("channels_last"):
        raise unsupported(lw.g, node, "is an onnxruntime-internal NHWC pool", "give the model as exported (NCHW)")
    xs, xz, xdt = lw.qparams(node, node.inputs[1], node.input(2), "input", node.inputs[0])
    ys, yz, ydt = lw.qparams(node, node.inputs[3], node.input(4), "output")
    if xdt != ydt:
        raise unsupported(lw.g, node, f"maps {xdt} to {ydt}", "quantize input and output alike")
    x = lw.act(node, node.inputs[0], xs, xz, xdt)
    if len(lw.t(x).shape) != 4:
        raise unsupported(lw.g, node, f"pools a {len(lw.t(x).shape)}-D tensor",
                          "tilewise supports 2-D pooling on N×C×H×W tensors")
    return x, xs, xz, ys, yz, ydt


@handler("QLinearGlobalAveragePool")
def qlinear_global_avg(lw: Lowering, node: ONode) -> None:
    x, xs, xz, ys, yz, ydt = _pool_io(lw, node)
    _global_mean(lw, node, x, xs, xz, ys, yz, ydt)


@handler("QLinearAveragePool")
def qlinear_avg_pool(lw: Lowering, node: ONode) -> None:
    x, xs, xz, ys, yz, ydt = _pool_io(lw, node)
    t = lw.t(x)
    kernel = tuple(int(v) for v in node.attr("kernel_shape"))
    stride = tuple(int(v) for v in node.attr("strides", [1, 1]))
    if tuple(int(v) for v in node.attr("dilations", [1, 1])) != (1, 1):
        raise unsupported(lw.g, node, "has dilations", "use an undilated AveragePool")
    pads = window_pads(lw, node, t.shape[1:3], kernel, stride)
    if kernel == tuple(t.shape[1:3]) and pads == (0, 0, 0, 0):
        _global_mean(lw, node, x, xs, xz, ys, yz, ydt)  # onnxruntime's fallback to the global pool
        return
    lo, hi = clip_range(lw, node, ys, yz, ydt)
    params = OnnxAvgPoolParams(kernel=kernel, stride=stride, pads=pads,
                               count_include_pad=bool(int(node.attr("count_include_pad", 0))),
                               x_scale=xs, x_zero_point=xz, y_scale=ys, y_zero_point=yz, qmin=lo, qmax=hi)
    lw.emit(node, Op.AVG_POOL, [x], lw.out_name(node.outputs[0]), None, ydt, QuantParams((ys,), (yz,)), params,
            layout=NHWC)


@handler("QLinearSoftmax")
def qlinear_softmax(lw: Lowering, node: ONode) -> None:
    xs, xz, xdt = lw.qparams(node, node.inputs[1], node.input(2), "input", node.inputs[0])
    ys, yz, ydt = lw.qparams(node, node.inputs[3], node.input(4), "output")
    if xdt != ydt:
        raise unsupported(lw.g, node, f"maps {xdt} to {ydt}", "quantize input and output alike")
    x = lw.act(node, node.inputs[0], xs, xz, xdt)
    oshape = lw.onnx_shape(x)
    rank = len(oshape)
    opset = int(node.attr("opset", lw.g.opset))
    axis = int(node.attr("axis", 1 if opset < 13 else -1)) % rank
    reduce_dims = list(range(axis, rank)) if opset < 13 else [axis]
    big = [d for d in reduce_dims if oshape[d] > 1]
    if len(big) > 1:
        raise unsupported(lw.g, node, f"normalizes over {len(big)} axes (opset {opset} softmax of shape {oshape})",
                          "apply Softmax to one axis (opset 13 or a 2-D input)")
    onnx_axis = big[0] if big else axis
    ir_axis = lw.perm[x].index(onnx_axis)
    d = int(np.prod([oshape[i] for i in reduce_dims], dtype=np.int64))
    params = OnnxSoftmaxParams(axis=ir_axis, table=softmax_table(xs, d), y_scale_inv=softmax_y_scale_inv(ys),
                               y_zero_point=yz)
    lw.emit(node, Op.SOFTMAX, [x], lw.out_name(node.outputs[0]), None, ydt, QuantParams((ys,), (yz,)), params,
            layout=lw.perm[x])


def _check_concat(lw: Lowering, node: ONode, ins: list[str], axis: int) -> None:
    shapes = [lw.t(i).shape for i in ins]
    if any(len(sh) != len(shapes[0]) or any(a != b for d, (a, b) in enumerate(zip(sh, shapes[0])) if d != axis)
           for sh in shapes):
        raise unsupported(lw.g, node, f"concatenates tensors of shapes {[lw.onnx_shape(i) for i in ins]}",
                          "the model is malformed")


@handler("QLinearConcat")
def qlinear_concat(lw: Lowering, node: ONode) -> None:
    ys, yz, ydt = lw.qparams(node, node.inputs[0], node.input(1), "output")
    triples = [node.inputs[i:i + 3] for i in range(2, len(node.inputs), 3)]
    params = [lw.qparams(node, s, z, "input", x) for x, s, z in triples]
    acts = [x for (x, _, _) in triples if x not in lw.g.consts]
    if not acts:
        raise unsupported(lw.g, node, "concatenates constants only", "fold the constants before quantizing")
    ref = lw.act(node, acts[0])
    rank, perm = len(lw.t(ref).shape), lw.perm[ref]
    ins = [_operand(lw, node, x, s, z, dt, rank, perm) for (x, _, _), (s, z, dt) in zip(triples, params)]
    if any(dt != ydt for _, _, dt in params) or any(lw.perm[i] != perm for i in ins):
        raise unsupported(lw.g, node, "concatenates tensors of different types or ranks", "the model is malformed")
    axis = int(node.attr("axis")) % rank
    _check_concat(lw, node, ins, perm.index(axis))
    lw.emit(node, Op.CONCAT, ins, lw.out_name(node.outputs[0]), None, ydt, QuantParams((ys,), (yz,)),
            ConcatParams(mode="onnx", axis=perm.index(axis), input_quant=tuple((s, z) for s, z, _ in params),
                         output_quant=(ys, yz)), layout=perm)


@handler("Concat")
def concat(lw: Lowering, node: ONode) -> None:
    """Concat of integer tensors (QOperator graphs, NEMO graphs): no rescaling."""
    ins = [lw.act(node, x) for x in node.inputs]
    t0 = lw.t(ins[0])

    def key(t):
        return (t.dtype, None) if t.quant is None else (t.dtype, float(np.float32(t.quant.scale[0])), t.quant.zp)

    if len({key(lw.t(i)) for i in ins}) != 1:
        raise unsupported(lw.g, node, "concatenates integer tensors quantized differently",
                          "use QLinearConcat or requantize first")
    perm = lw.perm[ins[0]]
    if not perm:
        raise unsupported(lw.g, node, "concatenates 0-D tensors", "concatenate tensors of rank 1 or more; the model "
                          "is malformed")
    axis = int(node.attr("axis")) % len(perm)
    qs = (t0.quant.scale[0], t0.quant.zp) if t0.quant is not None else (1.0, 0)
    _check_concat(lw, node, ins, perm.index(axis))
    lw.emit(node, Op.CONCAT, ins, lw.out_name(node.outputs[0]), None, t0.dtype, t0.quant,
            ConcatParams(mode="onnx", axis=perm.index(axis), input_quant=tuple(qs for _ in ins), output_quant=qs),
            layout=perm)


@handler("Requant")
def requant(lw: Lowering, node: ONode) -> None:
    """tilewise Requant from onnx_qdq.py: DequantizeLinear -> [Relu/Clip] -> QuantizeLinear."""
    xs, xz, xdt = lw.qparams(node, node.inputs[1], node.input(2), "input", node.inputs[0])
    ys, yz, ydt = lw.qparams(node, node.inputs[3], node.input(4), "output")
    x = lw.act(node, node.inputs[0], xs, xz, xdt)
    lo, hi = clip_range(lw, node, ys, yz, ydt)
    same = xdt == ydt and np.float32(xs) == np.float32(ys) and xz == yz
    quant = QuantParams((ys,), (yz,))
    out = node.outputs[0]
    if same and (lo, hi) == int_range(ydt):
        lw.alias(out, x)
    elif same:
        lw.emit(node, Op.CLAMP, [x], lw.out_name(out), None, ydt, quant, ClampParams(qmin=lo, qmax=hi),
                layout=lw.perm[x])
    else:
        lw.emit(node, Op.QUANTIZE, [x], lw.out_name(out), None, ydt, quant,
                OnnxQuantizeParams(x_scale=xs, x_zero_point=xz, y_scale=ys, y_zero_point=yz, qmin=lo, qmax=hi),
                layout=lw.perm[x])
