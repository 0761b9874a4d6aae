"""The portable family's C for a layer: the `compute()` function of a generated layer file (one
tile's kernel call), or the whole function of an untiled op.

Each binding maps to one kernel of the family's library (c/, copied into projects as tw_kernels/;
its headers hold the call contracts) with the arithmetic its golden kernel defines:

| layer op (mode)                   | kernel                        | golden                          |
|-----------------------------------|-------------------------------|---------------------------------|
| conv2d (FY·FX > 1)                | tw_conv2d_s8 (im2col + 4x2)   | golden/conv.py + requant.py     |
| conv2d 1x1                        | tw_conv1x1_s8                 | idem                            |
| depthwise (multiplier 1)          | tw_depthwise_s8               | idem (groups = C)               |
| fully_connected                   | tw_fully_connected_s8         | golden/conv.py dense_acc        |
| add / sub / mul (tflite)          | tw_add_s8 / tw_sub_s8 / tw_mul_s8 | golden/elementwise.py       |
| add (onnx)                        | tw_add_onnx_s8 (uint8: _u8)   | golden/onnx_ops.py add          |
| avg_pool (tflite), max_pool (any) | tw_avgpool_s8 / tw_maxpool_s8 | golden/pool.py, onnx_ops.py     |
| avg_pool (onnx)                   | tw_avgpool_onnx_s8            | golden/onnx_ops.py avg_pool     |
| global_avg_pool (tflite mean)     | tw_global_avgpool_s8          | golden/pool.py mean             |
| global_avg_pool (onnx)            | tw_global_avgpool_rq_s8       | golden/onnx_ops.py mean         |

Untiled ops (layer kind "other", `other_body`: the whole layer function, on the L2 tensors):

| softmax (onnx)                    | tw_softmax_onnx_s8            | golden/onnx_ops.py softmax      |
| logistic (tflite)                 | tw_lut_s8 (256-entry table)   | golden/activation.py logistic   |
| concat (onnx, two activations)    | tw_concat2_s8 + golden tables | golden/onnx_ops.py concat       |
| add / sub / mul with a per-channel vector, scalar or constant operand | the elementwise kernel once per pixel | as above |

Depthwise layers with a channel multiplier > 1 arrive as dense conv2d (passes/lower.py). The
16x8 path (int16 activations, Requant.wide: conv2d and fully_connected; int16 add/sub) is
s16.py's.

`compute(t, m, flags, core, cores)` gets the tile's position (`tw_tile_pos_t`: channel, row and
column ranges and the input spans with their pads) and its buffers (`tw_tile_bufs_t`), so that the
tiled loop nest (layer_c.py) and untiled layers call the same code. Per-channel constants come
from the layer's `b` block (constants.py): bias, then two requant words per channel.
Everything here runs after the binding's check (checks.py) passed: what it refuses is never
emitted (an AssertionError here is a bug).

uint8 tensors (onnxruntime's QUInt8 activations) are stored biased, as the int8 bytes u − 128
(u ^ 0x80; the network converts its input and output, network_c.py), and run through the int8
kernels with every zero point, pad value and clamp bound lowered by 128 and the weighted layers'
bias raised by 128·Σw (constants.py). This is exact wherever the arithmetic only uses x − zp_x,
adds the output zero point to an integer and clamps — conv, depthwise, dense (all requant modes),
max pool, global average pool (tflite mean and onnx), tflite add/sub/mul (int32 x − zp, the
output zero point and clamp lowered):
Σw·((x−128) − (zp−128)) = Σw·(x − zp), and clamp(r + zp − 128, lo − 128, hi − 128) =
clamp(r + zp, lo, hi) − 128 (tests/test_codegen_ops.py checks it on the golden model). onnx add
computes with the uint8 values in float32 (tw_add_onnx_u8); the onnx average pool adds y_zp in
float32, so it gets y_zp and its clamp in the value domain and an output offset. The tflite average pool rounds the
raw window sum half away from zero, which a shift of every value by −128 does not commute with,
so its binding refuses uint8, as the family has no binding for an op not listed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...golden.pool import _mean_scale
from ...ir.layer import Layer, LayerGraph
from ...ir.ops import WEIGHTED_LAYER_OPS
from ...ir.params import (ConcatParams, MaxPoolParams, OnnxAddParams, OnnxAvgPoolParams, OnnxMeanParams,
                          OnnxSoftmaxParams, TfliteAddSubParams, TfliteAvgPoolParams, TfliteLogisticParams,
                          TfliteMeanParams, TfliteMulParams, TfliteSoftmaxParams)
from ...ir.tensor import dtype_range
from ..base import LayerConstants
from .common import u8_offset
from .s16 import compute_s16, is_int16



def c_float(v: float) -> str:
    """A C float literal that is exactly the float32 value of v (hex float, C99)."""
    f = float(np.float32(v))
    if f == 0.0:
        return "0.0f"
    return f"{f.hex()}f"


def _zp(lg: LayerGraph, name: str) -> int:
    q = lg.tensors[name].quant
    return q.zp if q is not None else 0


def _mode(layer: Layer) -> str:
    return str(layer.mode or "tflite")


def _unsupported(layer: Layer, what: str) -> AssertionError:
    """What the binding's check (checks.py) refuses never reaches emission: a bug if it does."""
    return AssertionError(f"layer '{layer.name}' ({layer.op}): {what} passed its binding's check")


def _window(fy: str, fx: str, sy: str, sx: str) -> str:
    return (f"    k.win.in_h = t->ry.size;\n    k.win.in_w = t->rx.size;\n"
            f"    k.win.out_h = t->oy_t;\n    k.win.out_w = t->ox_t;\n"
            f"    k.win.k_h = {fy};\n    k.win.k_w = {fx};\n    k.win.s_h = {sy};\n    k.win.s_w = {sx};\n"
            f"    k.win.d_h = 1;\n    k.win.d_w = 1;\n"
            f"    k.win.pad_t = t->ry.pad_lo;\n    k.win.pad_l = t->rx.pad_lo;\n"
            f"    k.win.pad_b = t->ry.pad_hi;\n    k.win.pad_r = t->rx.pad_hi;\n")


def requant_function(layer: Layer, consts: LayerConstants, out_off: int = 0) -> str:
    """`requant(b, k_t, k0)`: the tw_requant_t of a tile from its per-channel block; `out_off` is
    128 for a uint8 output (zero point and clamp lowered by it)."""
    rq = layer.requant
    assert rq is not None
    lines = ["/* Requantization of a tile's k_t output channels from its per-channel block\n"
             " * [bias | word1 | word2] (k_t int32 each; constants.py). */",
             "static tw_requant_t requant(const int8_t *b, int k_t, int k0)", "{",
             "    const int32_t *words = (const int32_t *)(const void *)b;",
             "    tw_requant_t rq;"]
    if rq.mode == "tflite":
        mode = "TW_RQ_TFLITE_SINGLE" if rq.rounding == "single" else "TW_RQ_TFLITE"
        lines += [f"    rq.mode = {mode};", "    rq.mult = words + k_t;",
                  "    rq.shift = words + 2 * k_t;", "    rq.lambda = NULL;", "    rq.scale = NULL;",
                  "    (void)k0;"]
    elif rq.mode == "onnx":
        lines += ["    rq.mode = TW_RQ_ONNX;", "    rq.mult = NULL;", "    rq.shift = NULL;",
                  "    rq.lambda = NULL;",
                  "    rq.scale = (const float *)(const void *)(words + k_t);", "    (void)k0;"]
    else:
        lines += ["    rq.mode = TW_RQ_SHIFT;", "    rq.mult = words + k_t;",
                  "    rq.lambda = words + 2 * k_t;", "    rq.shift = SHIFT_D + k0;",
                  "    rq.scale = NULL;"]
    zp, qmin, qmax = int(rq.zero_point) - out_off, int(rq.qmin) - out_off, int(rq.qmax) - out_off
    if not -128 <= qmin <= qmax <= 127:
        raise _unsupported(layer, f"an output clamp of [{rq.qmin}, {rq.qmax}]")
    lines += ["    rq.per_channel = 1;", f"    rq.zero_point = {zp};",
              f"    rq.qmin = {qmin};", f"    rq.qmax = {qmax};", "    return rq;", "}"]
    out = "\n".join(lines) + "\n"
    if rq.mode == "shift":
        d = dict(consts.extra).get("SHIFT_D")
        assert d is not None and len(d) == layer.nest.K
        vals = ", ".join(str(v) for v in d)
        out = (f"/* shift mode: the right shift d of each output channel */\n"
               f"static const int32_t SHIFT_D[{layer.nest.K}] = {{{vals}}};\n\n") + out
    return out


def compute_function(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """The static helpers and `compute()` of a tiled or untiled layer of kind conv ... gap."""
    nest, op, mode = layer.nest, layer.op, _mode(layer)
    head = ("static void compute(const tw_tile_pos_t *t, const tw_tile_bufs_t *m, int flags, "
            "int core, int cores)\n{\n")
    pre = ""
    x_off, y_off = u8_offset(lg, layer.inputs[0]), u8_offset(lg, layer.output)
    if is_int16(layer, lg):     # the 16x8 path (s16.py; checks.py passed the layer)
        pre, body = compute_s16(layer, lg, _window("FY", "FX", "SY", "SX"))
        return pre + head + body + "}\n"
    if op in WEIGHTED_LAYER_OPS:
        assert consts is not None
        pre = requant_function(layer, consts, y_off) + "\n"
        pad = int(layer.pad_value) - x_off
        if not -128 <= pad <= 127:
            raise _unsupported(layer, f"an input zero point of {pad + x_off}")
    elif op in ("avg_pool", "max_pool", "global_avg_pool") and x_off != y_off:
        raise _unsupported(layer, "an output dtype that differs from the input's")
    if op == "conv2d":
        pointwise = nest.FY == 1 and nest.FX == 1
        body = ("    tw_conv_args_t k;\n" + _window("FY", "FX", "SY", "SX") +
                "    k.in = m->x;\n    k.in_c = t->c_t;\n    k.w = m->w;\n"
                "    k.bias = (const int32_t *)(const void *)m->b;\n"
                "    k.out = m->y;\n    k.out_c = t->k_t;\n"
                f"    k.pad_value = {pad};\n    k.psum = m->psum;\n    k.acc_flags = flags;\n"
                "    k.rq = requant(m->b, t->k_t, t->k0);\n"
                + ("    k.im2col = NULL;\n    tw_conv1x1_s8(&k, core, cores);\n" if pointwise else
                   "    k.im2col = m->scratch;\n    tw_conv2d_s8(&k, core, cores);\n"))
    elif op == "depthwise":
        if nest.K != nest.C:
            raise _unsupported(layer, f"a depth multiplier of {nest.K // max(nest.C, 1)}")
        body = ("    tw_dw_args_t k;\n" + _window("FY", "FX", "SY", "SX") +
                "    k.in = m->x;\n    k.in_c = t->k_t;\n    k.depth_mult = 1;\n    k.w = m->w;\n"
                "    k.bias = (const int32_t *)(const void *)m->b;\n    k.out = m->y;\n"
                f"    k.pad_value = {pad};\n"
                "    k.rq = requant(m->b, t->k_t, t->k0);\n    (void)flags;\n"
                "    tw_depthwise_s8(&k, core, cores);\n")
    elif op == "fully_connected":
        body = ("    tw_fc_args_t k;\n    k.in = m->x;\n    k.n_rows = 1;\n    k.in_c = t->c_t;\n"
                "    k.w = m->w;\n    k.bias = (const int32_t *)(const void *)m->b;\n"
                "    k.out = m->y;\n    k.out_c = t->k_t;\n    k.psum = m->psum;\n"
                "    k.acc_flags = flags;\n    k.rq = requant(m->b, t->k_t, t->k0);\n"
                "    tw_fully_connected_s8(&k, core, cores);\n")
    elif op == "avg_pool" and mode == "onnx":
        pre, body = _avgpool_onnx(layer, lg, x_off, y_off)
    elif op in ("avg_pool", "max_pool"):
        a = layer.params
        assert isinstance(a, (TfliteAvgPoolParams, MaxPoolParams))
        if op == "avg_pool" and mode != "tflite":
            raise _unsupported(layer, f"average pooling in {mode} mode")
        if op == "avg_pool" and x_off:
            raise _unsupported(layer, "tflite average pooling of uint8 tensors")
        lo, hi = dtype_range(lg.tensors[layer.output].dtype)
        qmin, qmax = max(lo, int(a.qmin)), min(hi, int(a.qmax))
        qmin, qmax = qmin - y_off, qmax - y_off
        fn = "tw_avgpool_s8" if op == "avg_pool" else "tw_maxpool_s8"
        body = ("    tw_pool_args_t k;\n" + _window("FY", "FX", "SY", "SX") +
                f"    k.in = m->x;\n    k.c = t->k_t;\n    k.out = m->y;\n"
                f"    k.qmin = {qmin};\n    k.qmax = {qmax};\n    (void)flags;\n"
                f"    {fn}(&k, core, cores);\n")
    elif op == "global_avg_pool":
        body = _gap_body(layer, lg, mode)
    elif op in ("add", "sub", "mul"):
        pre, body = _elementwise(layer, lg, mode)
    else:
        raise _unsupported(layer, "this op")
    return pre + head + body + "}\n"


def _avgpool_onnx(layer: Layer, lg: LayerGraph, x_off: int, y_off: int) -> tuple[str, str]:
    """QLinearAveragePool: tw_avgpool_onnx_s8 with the float32 constants of the node."""
    a = layer.params
    assert isinstance(a, OnnxAvgPoolParams)
    lo, hi = dtype_range(lg.tensors[layer.output].dtype)
    qmin, qmax = max(lo, int(a.qmin)), min(hi, int(a.qmax))
    pre = ("/* onnxruntime QLinearAveragePool: x_scale, y_scale (float32), x_zp (as stored), y_zp,\n"
           " * count_include_pad, clamp (value domain), output offset (uint8 stored as u - 128) */\n"
           "static const tw_avgpool_onnx_params_t PARAMS = {\n"
           f"    {c_float(a.x_scale)}, {c_float(a.y_scale)},\n"
           f"    {int(a.x_zero_point) - x_off}, {int(a.y_zero_point)}, "
           f"{1 if a.count_include_pad else 0},\n"
           f"    {qmin}, {qmax}, {y_off}\n}};\n\n")
    body = ("    tw_pool_args_t k;\n" + _window("FY", "FX", "SY", "SX") +
            "    k.in = m->x;\n    k.c = t->k_t;\n    k.out = m->y;\n"
            "    k.qmin = -128;\n    k.qmax = 127;\n    (void)flags;\n"
            "    tw_avgpool_onnx_s8(&k, &PARAMS, core, cores);\n")
    return pre, body


def _gap_body(layer: Layer, lg: LayerGraph, mode: str) -> str:
    a, nest = layer.params, layer.nest
    lo, hi = dtype_range(lg.tensors[layer.output].dtype)
    x_off, y_off = u8_offset(lg, layer.inputs[0]), u8_offset(lg, layer.output)
    pixels = nest.IY * nest.IX
    common = ("    k.in = m->x;\n    k.pixels = IY * IX;\n    k.c = t->k_t;\n    k.acc = NULL;\n"
              "    k.acc_flags = TW_ACC_WHOLE;\n    k.out = m->y;\n    (void)flags;\n")
    if isinstance(a, TfliteMeanParams):
        mult, shift = _mean_scale(int(a.multiplier), int(a.shift), pixels)
        return ("    tw_gap_args_t k;\n" + common +
                f"    k.divisor = 1;\n    k.in_zp = {_zp(lg, layer.inputs[0]) - x_off};\n"
                f"    k.mult = {mult};\n    k.shift = {shift};\n"
                f"    k.out_zp = {_zp(lg, layer.output) - y_off};\n"
                f"    k.qmin = {lo - y_off};\n    k.qmax = {hi - y_off};\n"
                "    tw_global_avgpool_s8(&k, core, cores);\n")
    if isinstance(a, OnnxMeanParams):
        rq = a.requant
        if rq.mode != "onnx" or int(a.count) != pixels or np.size(rq.scale) != 1:
            raise _unsupported(layer, "this global average pooling")
        qmin = max(lo, int(rq.qmin))
        qmax = min(hi, int(rq.qmax))
        scale = c_float(float(np.atleast_1d(rq.scale)[0]))
        return ("    static const float scale[1] = {" + scale + "};\n"
                "    tw_gap_rq_args_t k;\n" + common +
                f"    k.in_zp = {int(a.x_zero_point) - x_off};\n"
                "    k.rq.mode = TW_RQ_ONNX;\n    k.rq.per_channel = 0;\n    k.rq.mult = NULL;\n"
                "    k.rq.shift = NULL;\n    k.rq.lambda = NULL;\n    k.rq.scale = scale;\n"
                f"    k.rq.zero_point = {int(rq.zero_point) - y_off};\n"
                f"    k.rq.qmin = {qmin - y_off};\n    k.rq.qmax = {qmax - y_off};\n"
                "    tw_global_avgpool_rq_s8(&k, core, cores);\n")
    raise _unsupported(layer, f"global average pooling in {mode} mode")


def _elementwise(layer: Layer, lg: LayerGraph, mode: str) -> tuple[str, str]:
    pre, call = _elementwise_call(layer, lg, mode, layer.inputs, "m->x", "m->x2", "m->y",
                                  "t->oy_t * t->ox_t * t->k_t", "core, cores")
    return pre, f"{call}    (void)flags;\n"


def _elementwise_call(layer: Layer, lg: LayerGraph, mode: str, names: tuple[str, ...], x: str,
                      x2: str, y: str, n: str, cores: str) -> tuple[str, str]:
    """PARAMS and the kernel call of add / sub / mul on operands `names` (tensors of lg, in node
    input order) at C expressions x, x2 (-> y, n elements)."""
    a, op = layer.params, layer.op
    tail = ""
    offs = {u8_offset(lg, t) for t in (*names, layer.output)}
    if offs != {0} and offs != {128}:
        raise _unsupported(layer, f"{op} mixing int8 and uint8 tensors")
    # tflite: x − zp and out + zp, clamp are integer — exact on storage (module docstring)
    z0, z1, zo = (_zp(lg, t) - u8_offset(lg, t) for t in (*names, layer.output))
    off = u8_offset(lg, layer.output)
    if isinstance(a, TfliteAddSubParams):
        (m1, m2), (s1, s2) = a.input_multipliers, a.input_shifts
        pre = ("static const tw_add_params_t PARAMS = {\n"
               f"    {z0}, {int(m1)}, {int(s1)},   /* a: zero point, multiplier, shift */\n"
               f"    {z1}, {int(m2)}, {int(s2)},   /* b */\n"
               f"    {int(a.left_shift)},                            /* left shift */\n"
               f"    {int(a.output_multiplier)}, {int(a.output_shift)}, {zo},  /* out */\n"
               f"    {int(a.qmin) - off}, {int(a.qmax) - off}\n}};\n\n")
        fn = "tw_add_s8" if op == "add" else "tw_sub_s8"
        return pre, f"    {fn}(&PARAMS, {x}, {x2}, {y}, {n}, {cores});\n{tail}"
    if isinstance(a, TfliteMulParams):
        pre = ("static const tw_mul_params_t PARAMS = {\n"
               f"    {z0}, {z1},\n"
               f"    {int(a.output_multiplier)}, {int(a.output_shift)}, {zo},\n"
               f"    {int(a.qmin) - off}, {int(a.qmax) - off}\n}};\n\n")
        return pre, f"    tw_mul_s8(&PARAMS, {x}, {x2}, {y}, {n}, {cores});\n{tail}"
    if isinstance(a, OnnxAddParams):
        lo, hi = dtype_range(lg.tensors[layer.output].dtype)
        qmin, qmax = max(lo, int(a.qmin)), min(hi, int(a.qmax))
        pre = ("/* onnxruntime QLinearAdd: ratio_a, ratio_b, fixed (float32), clamp */\n"
               "static const tw_add_onnx_params_t PARAMS = {\n"
               f"    {c_float(a.ratio_a)}, {c_float(a.ratio_b)}, {c_float(a.fixed)},\n"
               f"    {qmin}, {qmax}\n}};\n\n")
        first, second = (x2, x) if a.a_index == 1 else (x, x2)
        fn = "tw_add_onnx_u8" if offs == {128} else "tw_add_onnx_s8"   # u8: clamp in uint8 values
        return pre, f"    {fn}(&PARAMS, {first}, {second}, {y}, {n}, {cores});\n{tail}"
    raise _unsupported(layer, f"{op} in {mode} mode")


def other_body(layer: Layer, lg: LayerGraph) -> str:
    """The whole function (`void @FN@(tw_layer_args_t *a)`, run by the calling core on the L2
    tensors) of an untiled op (its binding's check passed): softmax (tw_softmax_s8,
    tw_softmax_onnx_s8), the TFLite logistic table (tw_lut_s8), onnx concat (tw_concat2_s8),
    broadcast add / sub / mul, and byte-identical reshapes."""
    mode = layer.mode
    if layer.op == "softmax" and mode == "onnx":
        return _softmax_onnx(layer, lg)
    if layer.op == "softmax":
        return _softmax_tflite(layer, lg)
    if layer.op == "logistic":
        return _logistic(layer, lg)
    if layer.op == "concat":
        return _concat_onnx(layer, lg)
    if layer.op in ("add", "sub", "mul"):
        return _broadcast_elementwise(layer, lg, str(mode))
    assert layer.op == "reshape", layer.op
    return ("/* reshape: the bytes do not change in HWC */\n"
            "void @FN@(tw_layer_args_t *a)\n{\n"
            f"    memmove(a->y, a->x, {lg.tensors[layer.output].nbytes});\n}}\n")


def _softmax_tflite(layer: Layer, lg: LayerGraph) -> str:
    """TFLite int8 softmax (its check: output scale 1/256, zero point -128)."""
    x = lg.tensors[layer.inputs[0]]
    depth = int(x.shape[-1])
    rows = int(np.prod(x.shape[:-1], dtype=np.int64)) if len(x.shape) > 1 else 1
    a = layer.params
    assert isinstance(a, TfliteSoftmaxParams)
    return ("/* softmax over the last dimension (tw_softmax.h), one core, on the L2 tensors */\n"
            "void @FN@(tw_layer_args_t *a)\n{\n    tw_softmax_args_t k;\n"
            f"    k.in = a->x;\n    k.out = a->y;\n    k.rows = {rows};\n    k.depth = {depth};\n"
            f"    k.input_beta_multiplier = {int(a.input_multiplier)};\n"
            f"    k.input_beta_left_shift = {int(a.input_left_shift)};\n"
            f"    k.diff_min = {int(a.diff_min)};\n"
            "    tw_softmax_s8(&k, 0, 1);\n}\n")


def _broadcast_elementwise(layer: Layer, lg: LayerGraph, mode: str) -> str:
    """add / sub / mul whose operands are the output's shape or a per-channel vector broadcast
    over the pixels (shape [..., 1, C]; e.g. squeeze-excite scales or a constant per-channel
    offset), activations or constants: the elementwise kernel once per pixel on C elements, the
    vector operand at the same address every time. Constants are emitted as the tensor is
    stored (uint8: value − 128)."""
    names = layer.node_inputs
    consts = layer.const_inputs
    y = lg.tensors[layer.output]
    if len(names) != 2 or not y.shape:
        raise _unsupported(layer, f"{layer.op} of {len(names)} operands")
    chans = int(y.shape[-1])
    pixels = y.nbytes // max(chans, 1)
    view = replace(lg, tensors={**lg.tensors, **consts})
    ptrs, decls, act = [], [], iter(("a->x", "a->x2"))
    for i, nm in enumerate(names):
        t = view.tensors[nm]
        size = int(np.prod(t.shape, dtype=np.int64)) if t.shape else 1
        full = tuple(t.shape) == tuple(y.shape)
        vector = size == chans and (not t.shape or int(t.shape[-1]) == chans)
        if nm in consts:
            if not (full or vector or size == 1):
                raise _unsupported(layer, f"a constant operand of shape {list(t.shape)}")
            vals = np.broadcast_to(np.asarray(t.data, dtype=np.int64).reshape(-1),
                                   (size if size != 1 else chans,)) - u8_offset(view, nm)
            decls.append(f"static const int8_t OPERAND{i}[{vals.size}] = {{"
                         + ", ".join(str(int(v)) for v in vals) + "};\n")
            base = f"OPERAND{i}"
        else:
            if not (full or vector):
                raise _unsupported(layer, f"an operand of shape {list(t.shape)} broadcast to "
                                          f"{list(y.shape)} (per-channel vectors only)")
            base = next(act)
        ptrs.append(f"{base} + (size_t)p * {chans}" if full and size > 1 else base)
    pre, call = _elementwise_call(layer, view, mode, names, ptrs[0], ptrs[1],
                                  f"a->y + (size_t)p * {chans}", str(chans), "0, 1")
    return ("/* " + f"{layer.op} ({mode}) with a per-channel operand broadcast over {pixels} pixels: "
            "the kernel once per pixel, one core, on the L2 tensors */\n"
            + "".join(decls) + pre +
            "void @FN@(tw_layer_args_t *a)\n{\n    int p;\n"
            f"    for (p = 0; p < {pixels}; p++) {{\n        {call.strip()}\n    }}\n}}\n")


def _concat_onnx(layer: Layer, lg: LayerGraph) -> str:
    """QLinearConcat of two activations: tw_concat2_s8 with a requantization table per input
    whose scale or zero point differs from the output's (golden onnx_ops.requantize_values on
    every input value, so the table is the golden function itself)."""
    from ...golden.onnx_ops import requantize_values

    a = layer.params
    assert isinstance(a, ConcatParams)
    if len(layer.inputs) != 2 or layer.const_inputs:
        raise _unsupported(layer, f"a concat of {len(layer.node_inputs)} inputs "
                                  "(two activations only)")
    y = lg.tensors[layer.output]
    axis = int(a.axis) % len(y.shape)
    outer = int(np.prod(y.shape[:axis], dtype=np.int64))
    inner = [int(np.prod(lg.tensors[t].shape[axis:], dtype=np.int64)) for t in layer.inputs]
    ys, yz = a.output_quant
    y_off = u8_offset(lg, layer.output)
    tables, args = [], []
    for i, (t, (xs, xz)) in enumerate(zip(layer.inputs, a.input_quant)):
        if lg.tensors[t].dtype != y.dtype:
            raise _unsupported(layer, f"a concat of {lg.tensors[t].dtype} into {y.dtype}")
        if np.float32(xs) == np.float32(ys) and int(xz) == int(yz):
            args.append("NULL")
            continue
        lo, hi = dtype_range(y.dtype)
        lut = requantize_values(np.arange(lo, hi + 1), xs, xz, ys, yz, y.dtype) - y_off
        vals = ",\n".join("    " + ", ".join(str(int(v)) for v in lut[j:j + 16]) for j in range(0, 256, 16))
        tables.append(f"/* input {i} requantized to the output (stored byte + 128 -> stored) */\n"
                      f"static const int8_t LUT{i}[256] = {{\n{vals}\n}};\n")
        args.append(f"LUT{i}")
    return ("/* onnxruntime QLinearConcat of two tensors (tw_elementwise.h tw_concat2_s8), one core,\n"
            " * on the L2 tensors */\n" + "\n".join(tables) + "\n"
            "void @FN@(tw_layer_args_t *a)\n{\n"
            f"    tw_concat2_s8(a->x, {args[0]}, {inner[0]}, a->x2, {args[1]}, {inner[1]}, a->y, "
            f"{outer}, 0, 1);\n}}\n")


def _softmax_onnx(layer: Layer, lg: LayerGraph) -> str:
    a = layer.params
    assert isinstance(a, OnnxSoftmaxParams)
    x = lg.tensors[layer.inputs[0]]
    ndim = len(x.shape)
    if int(a.axis) % max(ndim, 1) != ndim - 1:
        raise _unsupported(layer, f"softmax over axis {a.axis} (not the last)")
    lo, hi = dtype_range(lg.tensors[layer.output].dtype)
    y_off = u8_offset(lg, layer.output)
    yz = int(a.y_zero_point)
    table = np.asarray(a.table, dtype=np.float32)
    assert table.shape == (256,)
    depth = int(x.shape[-1])
    rows = int(np.prod(x.shape[:-1], dtype=np.int64)) if ndim > 1 else 1
    vals = ",\n".join("    " + ", ".join(c_float(v) for v in table[i:i + 4]) for i in range(0, 256, 4))
    return ("/* onnxruntime QLinearSoftmax over the last dimension (tw_softmax.h), one core, on the\n"
            " * L2 tensors: exp table, y_scale_inv (float32), zero point as stored */\n"
            f"static const float TABLE[256] = {{\n{vals}\n}};\n\n"
            "void @FN@(tw_layer_args_t *a)\n{\n    tw_softmax_onnx_args_t k;\n"
            f"    k.in = a->x;\n    k.out = a->y;\n    k.rows = {rows};\n    k.depth = {depth};\n"
            f"    k.table = TABLE;\n    k.y_scale_inv = {c_float(a.y_scale_inv)};\n"
            f"    k.y_zp = {yz - y_off};\n"
            f"    k.y_nonfinite = {(hi if yz < 0 else lo) - y_off};\n"
            "    tw_softmax_onnx_s8(&k, 0, 1);\n}\n")


def _logistic(layer: Layer, lg: LayerGraph) -> str:
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    if x.dtype not in ("int8", "uint8") or y.dtype not in ("int8", "uint8"):
        raise _unsupported(layer, f"a logistic from {x.dtype} to {y.dtype}")
    p = layer.params
    assert isinstance(p, TfliteLogisticParams)
    table = np.asarray(p.table, dtype=np.int64) - u8_offset(lg, layer.output)
    assert table.shape == (256,) and table.min() >= -128 and table.max() <= 127
    vals = ",\n".join("    " + ", ".join(str(int(v)) for v in table[i:i + 16]) for i in range(0, 256, 16))
    return ("/* TFLite LOGISTIC: the 256-entry table (LUTPopulate) indexed by the stored byte + 128,\n"
            " * entries as the output is stored (tw_elementwise.h tw_lut_s8), one core, on L2 */\n"
            f"static const int8_t TABLE[256] = {{\n{vals}\n}};\n\n"
            "void @FN@(tw_layer_args_t *a)\n{\n"
            f"    tw_lut_s8(TABLE, a->x, a->y, {y.nbytes}, 0, 1);\n}}\n")
