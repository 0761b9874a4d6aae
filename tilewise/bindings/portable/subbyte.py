"""The portable family's sub-byte bindings: conv2d, depthwise and dense layers with packed 4- or
2-bit inputs, weights or outputs (any mix of 8, 4 and 2 bits but 8/8/8), run whole on the L2
tensors by a host core (the modules named "cpu"; host.py adds them to its table).

| binding                         | op              | modes               | bits (x/w→y)       | C                     |
|---------------------------------|-----------------|---------------------|--------------------|-----------------------|
| conv2d_sb_x{X}w{W}y{Y}          | conv2d          | any (tflite, onnx,  | X, W, Y ∈ {8, 4,   | tw_sb_conv            |
|                                 |                 | shift, adc, div)    | 2}, not all 8      |                       |
| depthwise_sb_x{X}w{W}y{Y}       | depthwise       | idem                | idem               | tw_sb_conv            |
|                                 |                 |                     |                    | (depthwise)           |
| fully_connected_sb_x{X}w{W}y{Y} | fully_connected | idem                | idem               | tw_sb_conv (1×1 on    |
|                                 |                 |                     |                    | 1×1)                  |
| max_pool_sb{B}                  | max_pool        | any                 | B→B, B ∈ {4, 2}    | tw_sb_maxpool         |
| reshape_sb{B}                   | reshape         | any                 | B→B                | a byte copy (packed   |
|                                 |                 |                     |                    | order is the element  |
|                                 |                 |                     |                    | order)                |

Layout (docs/subbyte.md, tw_subbyte.h, ir/packing.py): every tensor packed
little-endian within a byte in its stored order — activations HWC (u4 / u2 unsigned; 8-bit ones
int8, uint8 stored biased as for the int8 kernels, common.py), weights in the portable layouts
(conv [K][FY][FX][C], depthwise [FY][FX][K], dense [K][C]) as signed codes. The constants are
the portable blob (constants.py: per-channel bias and two requant words, one k tile) followed by
the packed weights, ⌈weights·w_bits/8⌉ bytes — the size the L2 planner already gives them
(ir/operands.py). The golden arithmetic is the int8 one with narrower clamps, so the requant is
the int8 kernels' (requant.c.j2, tw_requant.h) and the clamp is the output's range.

Other ops (add, average pools, softmax, concat, ...) take 8- and 16-bit tensors only; partition
refuses a layer with a sub-byte operand none of these takes, in one sentence.

What they refuse (one noun phrase each, checks): weights outside the declared bits once their zero
point is removed, and everything checks.weighted_s8 refuses (batch > 1, a depth multiplier, clamps
or zero points beyond a byte). Not tiled and not cut at L3: a host core runs the layer in one
call, unpacking per element (clear C, seed 004's sub-byte kernels are the fast form and live in
the pulp family).

Cost: `SubByteScalar` (cost.py), the cycles of this C (one core, per element unpacking), fitted on
GVSoC's pulp-open host core; a module's int8 model prices other C and is not used for these.
"""

from __future__ import annotations

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ...ir.packing import pack
from ...ir.params import MaxPoolParams
from ...ir.tensor import dtype_bits, dtype_range
from ..base import Binding, ConstLayout, LayerConstants, Precision, TileRules, per_mode
from . import checks, constants, untiled
from .common import FAMILY, batch_one, render, u8_offset
from .cost import SubByteScalar
from .weighted import requant_data, stored_pad

UNTILED = TileRules(l3=False, untiled=True)

BITS = (8, 4, 2)


def check(layer: Layer, lg: LayerGraph) -> str | None:
    """The int8 weighted kernels' rules, and weights that fit their declared bits."""
    reason = checks.weighted_s8(layer, lg)
    if reason is not None:
        return reason
    bits = layer.nest.w_bits
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    w = np.asarray(layer.weights, dtype=np.int64)
    if w.size and (w.min() < lo or w.max() > hi):
        return f"weights in [{int(w.min())}, {int(w.max())}] declared {bits}-bit"
    for t in (*layer.inputs, layer.output):
        if dtype_bits(lg.tensors[t].dtype) < 8 and dtype_range(lg.tensors[t].dtype)[0] < 0:
            return f"the signed sub-byte activation '{t}' (sub-byte activations are unsigned)"
    return None


def packed_constants(layer: Layer, lg: LayerGraph, s) -> LayerConstants:
    """The portable blob (one k tile: the layer runs whole) with the weights packed at w_bits."""
    w1, w2, d = constants.requant_words(layer)
    extra = (("SHIFT_D", d),) if d is not None else ()
    codes = np.frombuffer(constants.weight_blocks(layer, s), dtype=np.int8)
    return constants.blob(layer, lg, s, (w1, w2), pack(codes, layer.nest.w_bits), extra)


def _layout(weights: str) -> ConstLayout:
    return ConstLayout(bytes_per_channel=constants.BYTES_PER_CHANNEL, weight_layout=weights,
                       build=packed_constants, check=constants.check)


def conv(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """tw_sb_conv on the whole L2 tensors (`check` passed)."""
    assert consts is not None, f"layer '{layer.name}': constants built by packed_constants"
    n = layer.nest
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    rq = requant_data(layer, consts, u8_offset(lg, layer.output))
    if n.kind == "fc":
        geo = dict(in_h=1, in_w=1, out_h=1, out_w=1, k_h=1, k_w=1, s_h=1, s_w=1, pad_t=0, pad_l=0)
    else:
        geo = dict(in_h=n.IY, in_w=n.IX, out_h=n.OY, out_w=n.OX, k_h=n.FY, k_w=n.FX, s_h=n.SY,
                   s_w=n.SX, pad_t=n.pads[0], pad_l=n.pads[1])
    return render("subbyte_conv.c.j2", rq=rq, g=geo, in_c=n.C, out_c=n.K,
                  x_bits=dtype_bits(x.dtype), w_bits=n.w_bits, y_bits=dtype_bits(y.dtype),
                  depthwise=int(n.kind == "dwconv"), pad_value=stored_pad(layer, lg),
                  acc_bits=layer.acc_bits, w_offset=consts.w_offset, what=str(layer.op))


def check_max_pool(layer: Layer, lg: LayerGraph) -> str | None:
    """Max pooling keeps the input's dtype (a move: the same quantization)."""
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    if x.dtype != y.dtype:
        return f"a max pool from {x.dtype} to {y.dtype}"
    return batch_one(layer)


def max_pool(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """tw_sb_maxpool on the whole L2 tensors (`check_max_pool` passed)."""
    a, n = layer.params, layer.nest
    assert isinstance(a, MaxPoolParams)
    geo = dict(in_h=n.IY, in_w=n.IX, out_h=n.OY, out_w=n.OX, k_h=n.FY, k_w=n.FX, s_h=n.SY,
               s_w=n.SX, pad_t=n.pads[0], pad_l=n.pads[1])
    return render("subbyte_maxpool.c.j2", g=geo, c=n.K, bits=dtype_bits(lg.tensors[layer.output].dtype),
                  qmin=int(a.qmin), qmax=int(a.qmax))


def bindings(cost: SubByteScalar = SubByteScalar()) -> tuple[Binding, ...]:
    """One binding per op, requant mode and bit mix (module docstring), priced by `cost` (the
    sub-byte C's own model; a module's int8 model prices other C)."""
    out: list[Binding] = []
    table = ((Op.CONV2D, "conv2d_sb", "conv", "k.fy.fx.c"),
             (Op.DEPTHWISE, "depthwise_sb", "dwconv", "fy.fx.k"),
             (Op.FULLY_CONNECTED, "fully_connected_sb", "fc", "k.c"))
    for xb in BITS:
        for wb in BITS:
            for yb in BITS:
                if (xb, wb, yb) == (8, 8, 8):
                    continue
                for op, name, kind, layout in table:
                    # mode None: every requantization mode (requant.c.j2 / tw_requant.h run them all)
                    out.extend(per_mode(FAMILY, cost, f"{name}_x{xb}w{wb}y{yb}", op, (None,),
                                        Precision(xb, wb, yb), kind, check, emit=conv, whole=True,
                                        tiles=UNTILED, consts=_layout(layout)))
    for b in (4, 2):
        out.extend(per_mode(FAMILY, cost, f"max_pool_sb{b}", Op.MAX_POOL, (None,),
                            Precision(b, 0, b), "pool", check_max_pool, emit=max_pool,
                            whole=True, tiles=UNTILED))
        out.extend(per_mode(FAMILY, cost, f"reshape_sb{b}", Op.RESHAPE, (None,),
                            Precision(b, 0, b), "other", checks.reshape, emit=untiled.reshape,
                            whole=True, tiles=UNTILED))
    return tuple(out)

