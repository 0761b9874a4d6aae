"""The pulp family's sub-byte conv (c/tw_pulp_subbyte.h): byte layouts and legality.

Storage is the issue-15 sub-byte contract (DESIGN.md): a b-bit tensor, b in {8, 4, 2}, packed
little-endian within a byte — element i in byte ⌊i·b/8⌋ at bit offset (i mod 8/b)·b; 4/2-bit
activations unsigned (u4/u2), 8-bit ones int8 as the project stores every 8-bit activation (uint8
biased by −128, as the portable sub-byte kernels take them), weights signed two's complement
(i8/i4/i2); values are plain integers in Python and are packed only here, where bytes are laid
out.

Lane order (tw_pulp_subbyte.h LANES): the kernels unpack a 32-bit word of n = 32/b packed values
into 8/b words of four 8-bit lanes, lane l of word j holding value l·(8/b) + j — one mask and
shift per word (seed 004 §3.3.1 unpacks with bit-extract + pack instead, 3 instructions per value
rather than 3 per 8 int4 values). The im2col unpacks activations that way, the MatMul weights, so a
weight row is stored permuted to meet its column: stored[U_w(t)] = w[U_x(t)], U_b = `lane_order`.
With x_bits == w_bits the permutation is the identity: the plain contract order.

`refusal` is the kernel's legality in one sentence (None when it takes the geometry): whole words
per input pixel and per weight row, output pixels on byte boundaries, dilation 1. `check` is the
same on a layer (LoopNest.x_bits / w_bits / y_bits), inert for 8-bit layers (the int8 kernels
keep them), plus the int8 weighted kernels' rules (portable checks.weighted_s8) and unsigned
sub-byte activations.

The binding (`bindings`, registered by bindings/pulp/__init__.py on every cluster module of the
pulp family — pulp-open, gap8, gap9 — not on host cores nor on the kernels built for Arm):

| binding                         | op              | modes               | bits x, w → y                 |
|---------------------------------|-----------------|---------------------|-------------------------------|
| conv2d_sb_x{X}w{W}y{Y}          | conv2d          | tflite, onnx, shift | X, W, Y ∈ {8, 4, 2}, not all 8 |
| fully_connected_sb_x{X}w{W}y{Y} | fully_connected | tflite, onnx, shift | idem (a 1×1 conv on a 1×1 input) |

- constants (`layer_constants`): the pulp blob of constants.py — per k tile [bias | (m a b c)]
  (20 bytes per channel) — then the weight rows of `weight_bytes` (lane order, packed); a k tile's
  rows are one run at k0·FY·FX·C·w_bits/8 (C is never tiled), the loader of codegen's packed
  weights (layer_loaders.j2);
- scratch (`im2col_bytes`): per core two unpacked receptive fields, one for a one-pixel tile;
- L1 tiles (`tile_rules`): C whole (the kernel reduces whole rows, no partial sums), output
  channels in multiples of 8/y_bits (every k tile starts and ends on a byte of the packed HWC
  output; C·x_bits whole words makes every input pixel whole bytes), rows and columns free;
  not cut at L3 (codegen/l3_c.py moves byte-addressed rows). Under these the tile DMA of
  layer_loaders.j2 moves packed pixels (`el(v, bits)`: v·bits/8 bytes);
- C: conv2d_sb.c.j2, the tile's tw_pulp_conv2d_sb_w<W>_<variant> call in the tile loop of
  codegen (the int8 kernels' weighted_s8.c.j2 base: the same requant words after the biases);
- cost: `SubbyteCost` (cost.py, fitted on GVSoC), its requantization the module's PulpKernels'.

Not written: depthwise sub-byte on the cluster (the host core's portable kernel runs it), the
L3 cut of a packed layer, DORY's tiler on packed tensors (schedule/dory.py refuses them).
"""

from __future__ import annotations

import numpy as np

from ...ir.layer import Layer, LayerGraph, LoopNest
from ...ir.ops import Op
from ...ir.params import Conv2dParams
from ...ir.tensor import dtype_bits, dtype_range
from ..base import Binding, ConstLayout, LayerConstants, Precision, TileRules, per_mode
from ..portable import checks as portable_checks
from ..portable import constants as portable_constants
from ..portable.weighted import stored_pad
from . import constants
from .common import FAMILY, render
from .cost import SubbyteCost
from .weighted import output_clamp

#: the element widths the kernels take
BITS = (8, 4, 2)


def pack(values, bits: int) -> np.ndarray:
    """The flattened integer `values` (each fitting `bits` bits, signed or unsigned) packed per
    the contract, as uint8 (a last partial byte padded with zero bits)."""
    v = np.asarray(values, np.int64).reshape(-1) & ((1 << bits) - 1)
    per = 8 // bits
    v = np.concatenate([v, np.zeros((-v.size) % per, np.int64)]).reshape(-1, per)
    return (v << (np.arange(per) * bits)).sum(axis=1).astype(np.uint8)


def unpack(data, bits: int, n: int, signed: bool) -> np.ndarray:
    """The first n `bits`-bit values of packed bytes `data` (int64; two's complement if signed)."""
    b = np.asarray(data, np.uint8).astype(np.int64)
    per = 8 // bits
    v = ((b[:, None] >> (np.arange(per) * bits)) & ((1 << bits) - 1)).reshape(-1)[:n]
    return np.where(v >= 1 << (bits - 1), v - (1 << bits), v) if signed else v


def lane_order(bits: int, n: int) -> np.ndarray:
    """U_b: the element index at each unpacked 8-bit lane of a run of n `bits`-bit values (n a
    multiple of 32/bits)."""
    group, per = 32 // bits, 8 // bits
    t = np.arange(n)
    r = t % group
    return t - r + (r % 4) * per + r // 4


def weight_bytes(w, x_bits: int, w_bits: int) -> np.ndarray:
    """Conv weights [K, FY, FX, C] (signed ints) as the kernel's packed rows: per output channel
    the FY·FX·C values permuted to the lane order of the columns (module docstring), packed."""
    w = np.asarray(w, np.int64)
    k = w.shape[0]
    rows = w.reshape(k, -1)
    n = rows.shape[1]
    stored = np.empty_like(rows)
    stored[:, lane_order(w_bits, n)] = rows[:, lane_order(x_bits, n)]
    return pack(stored, w_bits)


def scratch_bytes(fy: int, fx: int, in_c: int, cores: int, pixels: int = 2) -> int:
    """tw_pulp_conv2d_sb_scratch: per core two unpacked receptive fields of FY·FX·C bytes (one
    when the tile has a single output pixel)."""
    return cores * (2 if pixels > 1 else 1) * fy * fx * in_c


def refusal(in_c: int, out_c: int, fy: int, fx: int, x_bits: int, w_bits: int, y_bits: int,
            dilation: tuple[int, int] = (1, 1)) -> str | None:
    """Why tw_pulp_conv2d_sb cannot run this conv, or None."""
    for name, b in (("input", x_bits), ("weight", w_bits), ("output", y_bits)):
        if b not in BITS:
            return f"the {name} is {b}-bit; the pulp sub-byte conv takes 8, 4 or 2 bits"
    if (in_c * x_bits) % 32:
        return (f"an input pixel of {in_c} {x_bits}-bit channels is not whole 32-bit words "
                f"(the pulp sub-byte im2col unpacks words)")
    if (fy * fx * in_c * w_bits) % 32:
        return f"a weight row of {fy}x{fx}x{in_c} {w_bits}-bit values is not whole 32-bit words"
    if (out_c * y_bits) % 8:
        return f"an output pixel of {out_c} {y_bits}-bit channels does not end on a byte"
    if tuple(dilation) != (1, 1):
        return "the pulp sub-byte conv takes dilation 1 only"
    return None


def check(layer: Layer, lg: LayerGraph) -> str | None:
    """Why tw_pulp_conv2d_sb cannot run `layer` (conv2d, or dense as a 1×1 conv on a 1×1 input),
    or None; an 8-bit layer is refused (the int8 kernels run it)."""
    n = layer.nest
    bits = (n.x_bits, n.w_bits, n.y_bits)
    if bits == (8, 8, 8):
        return f"layer '{layer.name}' is 8-bit throughout (the pulp int8 kernels run it)"
    if n.kind not in ("conv", "fc") or n.N != 1:
        return f"layer '{layer.name}' is not a conv2d or dense layer of batch 1"
    dil = layer.params.dilation if isinstance(layer.params, Conv2dParams) else (1, 1)
    if isinstance(layer.params, Conv2dParams) and layer.params.groups != 1:
        return f"layer '{layer.name}' is a grouped conv (the pulp sub-byte conv is dense)"
    why = refusal(n.C, n.K, n.FY, n.FX, *bits, dilation=dil)
    if why is not None:
        return f"layer '{layer.name}': {why}"
    w = np.asarray(layer.weights, np.int64)
    lo, hi = -(1 << (n.w_bits - 1)), (1 << (n.w_bits - 1)) - 1
    if w.size and (w.min() < lo or w.max() > hi):
        return f"layer '{layer.name}' has weights in [{w.min()}, {w.max()}] declared {n.w_bits}-bit"
    for t in (*layer.inputs, layer.output):
        if dtype_bits(lg.tensors[t].dtype) < 8 and dtype_range(lg.tensors[t].dtype)[0] < 0:
            return f"layer '{layer.name}' has the signed sub-byte activation '{t}' (unsigned only)"
    return portable_checks.weighted_s8(layer, lg)




# -- the binding: constants, scratch, tiles, C ---------------------------------------------------

def layer_constants(layer: Layer, lg: LayerGraph, s) -> LayerConstants:
    """The pulp blob (constants.py: per k tile [bias | (m a b c)] words) followed by the weight
    rows of `weight_bytes`: C is never tiled, so a k tile's rows are one contiguous run starting
    on a word (every row is whole words, `refusal`), at k0·FY·FX·C·w_bits/8."""
    n = layer.nest
    w = np.asarray(layer.weights, np.int64).reshape(n.K, n.FY, n.FX, n.C)
    x_bits = dtype_bits(lg.tensors[layer.inputs[0]].dtype)
    rows = weight_bytes(w, x_bits, n.w_bits).tobytes()
    return portable_constants.blob(layer, lg, s, (np.stack(constants.words(layer, lg), axis=1),),
                                   rows)


LAYOUT = ConstLayout(bytes_per_channel=constants.BYTES_PER_CHANNEL, weight_layout="k.fy.fx.c",
                     build=layer_constants, check=constants.check)


def im2col_bytes(nest: LoopNest, cores: int, k, c, oy, ox):
    """`scratch_bytes` of a tile (tw_pulp_conv2d_sb_scratch): per core two unpacked receptive
    fields of FY·FX·c bytes, one for a tile of one output pixel (a 1×1 conv and a dense layer
    too: the im2col unpacks)."""
    cols = np.where(np.asarray(oy) * np.asarray(ox) > 1, 2, 1)
    return 0 * np.asarray(k) + cores * cols * nest.FY * nest.FX * np.asarray(c)


def tile_rules(y_bits: int) -> TileRules:
    """C whole (the kernel reduces a whole row: no partial sums); k tiles of whole output bytes
    (multiples of 8/y_bits, so every tile's k0 and k_t end on a byte of the packed output);
    not cut at L3→L2 (the L3 tiler moves byte-addressed rows: codegen/l3_c.py)."""
    k = max(1, 8 // y_bits)
    return TileRules(whole=frozenset({"c"}), multiple=(("k", k),) if k > 1 else (), l3=False,
                     l3_k_step=4, why="the pulp sub-byte conv takes whole bytes and no partial sums")


def emit(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """compute(): tw_pulp_conv2d_sb_w<W>_<variant> on the tile (conv2d_sb.c.j2)."""
    assert consts is not None and consts.const_bytes == constants.BYTES_PER_CHANNEL
    n = layer.nest
    zp, qmin, qmax = output_clamp(layer, lg)
    kernel = f"tw_pulp_conv2d_sb_w{n.w_bits}_{constants.variant(layer, lg)}"
    return render("conv2d_sb.c.j2", kernel=kernel, args="tw_pulp_conv_sb_args_t",
                  zeroed="every field is set below",
                  rq=dict(zero_point=zp, qmin=qmin, qmax=qmax), pad_value=stored_pad(layer, lg),
                  x_bits=dtype_bits(lg.tensors[layer.inputs[0]].dtype),
                  y_bits=dtype_bits(lg.tensors[layer.output].dtype))


def bindings(module_cost: object,
             modes: tuple[str, ...] = ("tflite", "onnx", "shift")) -> tuple[Binding, ...]:
    """conv2d_sb_x{X}w{W}y{Y} and fully_connected_sb_x{X}w{W}y{Y} of the pulp family: one per
    requantization mode and bit mix (X, W, Y in BITS, not all 8), priced by SubbyteCost with the
    requantization figures of `module_cost`, the model the target gives the module."""
    cost = SubbyteCost().priced_by(module_cost)
    out: list[Binding] = []
    for xb in BITS:
        for wb in BITS:
            for yb in BITS:
                if (xb, wb, yb) == (8, 8, 8):
                    continue
                for name, op, kind in (("conv2d_sb", Op.CONV2D, "conv"),
                                       ("fully_connected_sb", Op.FULLY_CONNECTED, "fc")):
                    out.extend(per_mode(FAMILY, cost, f"{name}_x{xb}w{wb}y{yb}", op, modes,
                                        Precision(xb, wb, yb), kind, check, emit=emit,
                                        scratch=im2col_bytes, consts=LAYOUT,
                                        tiles=tile_rules(yb)))
    return tuple(out)
