"""The portable family's 16x8 kernel calls: int16 conv, dense, add and sub.

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
layers tiled at L3->L2, the non-wide int32-bias 16x8 form) has no binding, or is refused by the
binding's check (checks.py), at partition time.

The kernels accumulate in int64 but keep C-tile partial sums in the schedule's int32 psum buffer
(the binding's psum_bits = 32): the binding's tile rules tile C only when |bias| + 32768·Σ|w| fits
int32 for every output channel (checks.s16_rules), which bounds every partial sum, so the int32
psum is exact.
"""

from __future__ import annotations

from ...ir.layer import Layer, LayerGraph
from ...ir.params import TfliteAddSubParams

S16_ELEMENTWISE = ("add", "sub")


def is_int16(layer: Layer, lg: LayerGraph) -> bool:
    """Whether any activation of `layer` is int16."""
    return any(lg.tensors[t].dtype == "int16" for t in (*layer.inputs, layer.output) if t in lg.tensors)


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
