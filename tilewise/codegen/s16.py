"""The 16x8 path of `tilewise generate`: which int16 layers the C kernels run and their calls.

16x8 layers (TFLite: int16 activations, int8 weights, int64 or int32 bias, golden Requant.wide =
TFLite's int64 MultiplyByQuantizedMultiplier, golden/fixedpoint.py multiply_by_quantized_multiplier_64)
map to the kernels of tw_kernels/tw_s16.h:

| layer op          | kernel                   | golden                                          |
|-------------------|--------------------------|-------------------------------------------------|
| conv2d (any FY·FX)| tw_conv2d_s16            | golden/conv.py conv2d_acc + requant.py (wide)   |
| fully_connected   | tw_fully_connected_s16   | golden/conv.py dense_acc + requant.py (wide)    |
| add / sub (tflite, same-shaped operands) | tw_add_s16 / tw_sub_s16 | golden/elementwise.py add / sub |
| reshape           | byte copy (layer_c.py)   | —                                               |

Everything else touching an int16 tensor (depthwise, pools, mul, broadcast add/sub, softmax,
layers tiled at L3->L2, the non-wide int32-bias 16x8 form) is refused with a one-sentence error.

The kernels accumulate in int64 but keep C-tile partial sums in the schedule's int32 psum buffer
(Module.psum_bytes = 4): a layer whose C dimension is tiled is generated only when
|bias| + 32768·Σ|w| fits int32 for every output channel, which bounds every partial sum, so the
int32 psum is exact.
"""

from __future__ import annotations

import numpy as np

from ..errors import TilewiseError
from ..ir.layer import Layer, LayerGraph
from ..ir.params import TfliteAddSubParams
from ..schedule.space import LayerSchedule

S16_OPS = ("conv2d", "fully_connected")
S16_ELEMENTWISE = ("add", "sub")
INT32_MAX = 2**31 - 1


def is_int16(layer: Layer, lg: LayerGraph) -> bool:
    """Whether any activation of `layer` is int16."""
    return any(lg.tensors[t].dtype == "int16" for t in (*layer.inputs, layer.output) if t in lg.tensors)


def _refuse(layer: Layer, what: str) -> TilewiseError:
    return TilewiseError(f"layer '{layer.name}' ({layer.op}): {what} is not supported by the 16x8 "
                         f"C kernels of `tilewise generate` (they are int8 (and uint8) only, plus "
                         f"int16 conv2d and fully_connected)")


def acc_bound(layer: Layer) -> int:
    """max over output channels of |bias| + 32768·Σ|w|: a bound on every partial sum."""
    k = layer.nest.K
    w = np.abs(np.asarray(layer.weights, dtype=np.int64)).reshape(k, -1).sum(axis=1)
    b = np.zeros(k, np.int64) if layer.bias is None else np.abs(np.asarray(layer.bias, dtype=np.int64))
    return int((b + 32768 * w).max(initial=0))


def check_int16(layer: Layer, lg: LayerGraph, s: LayerSchedule | None, in_l3: bool) -> None:
    """One-sentence errors for int16 layers the 16x8 kernels do not run (module docstring)."""
    if not is_int16(layer, lg):
        return
    dts = {lg.tensors[t].dtype for t in (*layer.inputs, layer.output) if t in lg.tensors}
    if layer.op == "reshape" and dts == {"int16"}:
        return
    if layer.op not in (*S16_OPS, *S16_ELEMENTWISE):
        raise _refuse(layer, "an int16 layer of this kind")
    if dts != {"int16"}:
        raise _refuse(layer, "mixing int16 with other activation types")
    if layer.op in S16_ELEMENTWISE:
        shapes = {tuple(lg.tensors[t].shape) for t in (*layer.inputs, layer.output) if t in lg.tensors}
        if (layer.nest.kind != "add" or len(layer.inputs) != 2 or len(shapes) != 1
                or layer.mode != "tflite" or in_l3):
            raise _refuse(layer, "an int16 add/sub that broadcasts, has a constant operand or is tiled at L3")
        return
    rq = layer.requant
    if rq is None or rq.mode != "tflite" or not rq.wide:
        raise _refuse(layer, "the int32-bias (non-wide) 16x8 form")
    if in_l3:
        raise _refuse(layer, "an int16 layer tiled at L3->L2")
    if int(layer.pad_value) != 0:
        raise _refuse(layer, "a non-zero int16 input zero point")
    if not -32768 <= int(rq.qmin) <= int(rq.qmax) <= 32767:
        raise _refuse(layer, f"an output clamp of [{rq.qmin}, {rq.qmax}]")
    if np.max(np.atleast_1d(rq.shift)) > 14:
        raise _refuse(layer, "a requant left shift above 14")
    c_tiled = s is not None and not s.untiled and s.tiling("c").count > 1
    if c_tiled and acc_bound(layer) > INT32_MAX:
        raise _refuse(layer, "C tiling with partial sums that may exceed int32 "
                             "(give a larger --l1 so that C is not tiled)")


def requant16_function(layer: Layer) -> str:
    """`requant16(b, k_t)`: the tw_requant16_t of a tile from its per-channel block."""
    rq = layer.requant
    assert rq is not None
    return ("/* Requantization (16x8, int64 MultiplyByQuantizedMultiplier) of a tile's k_t output\n"
            " * channels from its per-channel block [bias | M0 | shift] (constants.py). */\n"
            "static tw_requant16_t requant16(const int8_t *b, int k_t)\n{\n"
            "    const int32_t *words = (const int32_t *)(const void *)b;\n"
            "    tw_requant16_t rq;\n"
            "    rq.mult = words + k_t;\n    rq.shift = words + 2 * k_t;\n"
            f"    rq.zero_point = {int(rq.zero_point)};\n"
            f"    rq.qmin = {int(rq.qmin)};\n    rq.qmax = {int(rq.qmax)};\n"
            "    return rq;\n}\n")


def _zp(lg: LayerGraph, name: str) -> int:
    q = lg.tensors[name].quant
    return q.zp if q is not None else 0


def add_s16(layer: Layer, lg: LayerGraph) -> tuple[str, str]:
    """(PARAMS, body of compute()) of an int16 add / sub (tw_add_params_t, tw_elementwise.h)."""
    a = layer.params
    assert isinstance(a, TfliteAddSubParams)
    (m1, m2), (s1, s2) = a.input_multipliers, a.input_shifts
    z0, z1, zo = (_zp(lg, t) for t in (*layer.inputs, layer.output))
    pre = ("static const tw_add_params_t PARAMS = {\n"
           f"    {z0}, {int(m1)}, {int(s1)},   /* a: zero point, multiplier, shift */\n"
           f"    {z1}, {int(m2)}, {int(s2)},   /* b */\n"
           f"    {int(a.left_shift)},                            /* left shift */\n"
           f"    {int(a.output_multiplier)}, {int(a.output_shift)}, {zo},  /* out */\n"
           f"    {int(a.qmin)}, {int(a.qmax)}\n}};\n\n")
    fn = "tw_add_s16" if layer.op == "add" else "tw_sub_s16"
    body = (f"    {fn}(&PARAMS, (const int16_t *)(const void *)m->x, (const int16_t *)(const void *)m->x2,\n"
            f"               (int16_t *)(void *)m->y, t->oy_t * t->ox_t * t->k_t, core, cores);\n"
            "    (void)flags;\n")
    return pre, body


def compute_s16(layer: Layer, lg: LayerGraph, window: str) -> tuple[str, str]:
    """(helpers, body of compute()) of an int16 conv2d / fully_connected / add / sub layer;
    `window` is the tw_window_t assignment text of kernel_calls.py."""
    if layer.op in S16_ELEMENTWISE:
        return add_s16(layer, lg)
    common = ("    k.in = (const int16_t *)(const void *)m->x;\n    k.in_c = t->c_t;\n    k.w = m->w;\n"
              "    k.bias = (const int32_t *)(const void *)m->b;\n"
              "    k.out = (int16_t *)(void *)m->y;\n    k.out_c = t->k_t;\n"
              "    k.pad_value = 0;\n    k.psum = m->psum;\n    k.acc_flags = flags;\n"
              "    k.rq = requant16(m->b, t->k_t);\n")
    if layer.op == "conv2d":
        body = "    tw_conv16_args_t k;\n" + window + common + "    tw_conv2d_s16(&k, core, cores);\n"
    else:
        body = ("    tw_conv16_args_t k;   /* k.win is not read by the fc kernel */\n" + common
                + "    tw_fully_connected_s16(&k, core, cores);\n")
    return requant16_function(layer) + "\n", body
