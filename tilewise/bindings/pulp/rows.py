"""The pulp family's cluster bindings of the integer exports' row-wise operators and of the
transpose (issue 28): the layers the host core ran alone on the L2 tensors (bindings/portable/
int_ops.py, host.py), now on the cluster's cores through L1 (c/tw_pulp_rows.h).

| binding                 | op (mode)            | bits x→y | each core's rows (C)           | tw_int.h's form  |
|-------------------------|----------------------|----------|--------------------------------|------------------|
| layer_norm_rows_x8y{Y}  | layer_norm           | 8 → Y    | tw_pulp_layer_norm_rows        | tw_int_layer_norm|
| rms_norm_rows_x8y{Y}    | rms_norm             | 8 → Y    | tw_pulp_rms_norm_rows          | tw_int_rms_norm  |
| int_softmax_rows_x8y{Y} | int_softmax          | 8 → Y    | tw_pulp_softmax_rows           | tw_int_softmax   |
| ita_max_rows_x8y{Y}     | ita_max              | 8 → Y    | tw_pulp_ita_max_rows           | tw_int_ita_max   |
| int_gelu_rows_x8y{Y}    | int_gelu             | 8 → Y    | tw_pulp_gelu_rows              | tw_int_gelu      |
| hardswish_rows_x{X}y{Y} | hardswish            | X → Y    | tw_int_hardswish itself        |                  |
| requant_rows_x{X}y{Y}   | requant (shift, div) | X → Y    | tw_int_requant itself          |                  |
| transpose_l1_s{B}       | transpose            | B → B    | tw_pulp_transpose (whole)      | tw_transpose     |
| reduce_l1_x{X}y{Y}      | reduce               | X → Y    | tw_pulp_reduce (whole)         | tw_int_reduce    |

X, Y ∈ {8, 16, 32}. Rows: the op's axis is the tensor's last (the layer's K, rows = the other
dims; Deeploy's exports put it there); an elementwise op's rows are its elements (the cores
split a block's elements), and its requant takes one value for the tensor (a per-channel one
stays on the host core). Each core's rows
are computed by the host core's kernel on its [n][len] rows in L1 — tw_int.h's own for the
requant and hardswish, for the others tw_pulp_rows.h's copies of tw_int.c's loops step for step
(the integer square root digit by digit, C's truncating divisions), which read the int8 input
without a width switch and divide in 32 bits where both operands fit (tw_pulp_div: the same
quotient) — so the results are the host core's and the golden model's (golden/int_ops.py) bit
for bit; tests/test_pulp_rows.py holds them to it.

L1: the layer runs untiled for the scheduler (its kind is "other", whose layers are never cut into
the scheduler's tiles), its L1 use declared as kernel scratch (`scratch_bytes`, at the start of
the L1 arena, checked against the L1 free like every untiled kernel's scratch): the kernel streams
blocks of `block_rows` whole rows through two input and two output buffers with the cluster DMA
(tw_pulp_rows). `ROW_BLOCK_BYTES` bounds one block's input plus output; a row that does not fit
it is refused (one sentence; the host core's binding takes the layer). The transpose and the
reduce (a sum or IntegerMean over a contiguous run of axes, its outputs over the cores) hold their
whole input and output in L1 (`transpose_bytes`, `reduce_bytes`); a tensor too large for L1 is
refused by the scratch check and stays on the host core.

Not built for Arm (`pulp.bindings(arm=True)` leaves them out): stm32h7's one core reads its SRAM
directly, where a copy through DTCM buys nothing; it keeps the portable kernels, priced by their
counted instructions (targets/stm32h7.py). The cost model is rows_cost.RowsCost.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...ir.layer import Layer, LayerGraph, LoopNest
from ...ir.ops import Op
from ...ir.params import (
    HardswishParams,
    IntGeluParams,
    IntSoftmaxParams,
    ItaMaxParams,
    LayerNormParams,
    ReduceParams,
    RequantParams,
    RMSNormParams,
    TransposeParams,
)
from ...ir.tensor import dtype_bits
from ..base import Binding, LayerConstants, Precision, TileRules, per_mode
from ..portable import host as portable_host
from ..portable import int_ops
from .common import FAMILY, render

UNTILED = TileRules(l3=False, untiled=True)
#: bytes of one block's input rows plus its output rows in L1 (the kernel holds two blocks)
ROW_BLOCK_BYTES = 12 * 1024
#: rows of a block are a multiple of this when there are that many (the cluster's cores)
ROW_MULTIPLE = 8
BITS = (8, 16, 32)
#: the ops whose rows run along their params' axis
ALONG_AXIS = (Op.LAYER_NORM, Op.RMS_NORM, Op.INT_SOFTMAX, Op.ITA_MAX)
#: the elementwise ones (rows of one element: rows.geometry)
ELEMENTWISE = ("int_gelu", "hardswish", "requant")


def _round4(v):
    return (np.asarray(v) + 3) // 4 * 4


def block_rows(rows: int, length: int, x_bytes: int, y_bytes: int) -> int:
    """Rows per L1 block: as many as ROW_BLOCK_BYTES holds (in and out), a multiple of
    ROW_MULTIPLE when that many fit, at most `rows`, then evened out over the blocks that makes;
    0 when one row does not fit."""
    b = ROW_BLOCK_BYTES // max(length * (x_bytes + y_bytes), 1)
    if b >= ROW_MULTIPLE:
        b -= b % ROW_MULTIPLE
    b = min(b, rows)
    if b <= 0:
        return 0
    # as few blocks, of rows as even as the multiple allows (64 rows by 48: two blocks of 32)
    blocks = -(-rows // b)
    even = -(-rows // blocks)
    if b >= ROW_MULTIPLE:
        even = -(-even // ROW_MULTIPLE) * ROW_MULTIPLE
    return int(min(b, even))


def geometry(nest: LoopNest, op: str) -> tuple[int, int, int, int]:
    """(rows, len, x_bytes, y_bytes) of a row op's loop nest: its K is the tensor's last dim; an
    elementwise op's rows are its elements (len 1), so that a block's elements, not its few long
    rows, are what the cores split."""
    xb, yb = max(nest.x_bits // 8, 1), max(nest.y_bits // 8, 1)
    if op in ELEMENTWISE:
        return nest.N * nest.OY * nest.OX * nest.K, 1, xb, yb
    return nest.N * nest.OY * nest.OX, nest.K, xb, yb


def rows_scratch(rows: int, length: int, xb: int, yb: int) -> int:
    b = block_rows(rows, length, xb, yb)
    return int(2 * _round4(b * length * xb) + 2 * _round4(b * length * yb))


def scratch_of(op: str):
    """tw_pulp_rows' L1 for op `op`: two blocks of input rows and two of output rows (module
    docstring)."""
    def scratch_bytes(nest: LoopNest, cores: int, k, c, oy, ox):
        return 0 * np.asarray(k) * np.asarray(oy) + rows_scratch(*geometry(nest, op))
    return scratch_bytes


def transpose_bytes(nest: LoopNest, cores: int, k, c, oy, ox):
    """tw_pulp_transpose's L1: the whole input, then the whole output (round4 apart)."""
    n = nest.N * nest.OY * nest.OX * nest.K * max(nest.x_bits // 8, 1)
    return 0 * np.asarray(k) * np.asarray(oy) + int(_round4(n) + n)


def dma_of(op: str):
    """tw_pulp_rows' DMA for op `op` (Binding.own_dma): one 1-D copy in and one out per block."""
    def rows_dma(nest: LoopNest) -> tuple[tuple[str, int, int, int], ...]:
        rows, length, xb, yb = geometry(nest, op)
        blocks = -(-rows // max(block_rows(rows, length, xb, yb), 1))
        return (("x", blocks, blocks, rows * length * xb), ("y", blocks, blocks, rows * length * yb))
    return rows_dma


def transpose_dma(nest: LoopNest) -> tuple[tuple[str, int, int, int], ...]:
    """tw_pulp_transpose's DMA: the whole input in, the whole output out, one 1-D copy each."""
    n = nest.N * nest.OY * nest.OX * nest.K * max(nest.x_bits // 8, 1)
    return (("x", 1, 1, n), ("y", 1, 1, n))


# --- checks ----------------------------------------------------------------------------------------

def _io(layer: Layer, lg: LayerGraph) -> tuple[tuple[int, ...], int, int]:
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    return tuple(int(d) for d in x.shape), dtype_bits(x.dtype) // 8, dtype_bits(y.dtype) // 8


def _row_fits(layer: Layer, lg: LayerGraph) -> str | None:
    if str(layer.op) in ELEMENTWISE:
        return None
    shape, xb, yb = _io(layer, lg)
    length = shape[-1] if shape else 1
    if block_rows(1, length, xb, yb) == 0:
        return (f"its rows of {length} elements take {length * (xb + yb)} bytes in and out, more "
                f"than the {ROW_BLOCK_BYTES} of an L1 block")
    if layer.nest.K != length:
        return "its last dimension is not the loop nest's channels"
    return None


def _last_axis(layer: Layer, lg: LayerGraph) -> str | None:
    shape = lg.tensors[layer.inputs[0]].shape
    axis = getattr(layer.params, "axis", None)
    if axis is None or axis % max(len(shape), 1) != len(shape) - 1:
        return f"a {layer.op} along IR axis {axis}, not the last (the cluster's rows are the last axis)"
    return None


def check(portable: Callable[[Layer, LayerGraph], str | None]) -> Callable[[Layer, LayerGraph], str | None]:
    """The portable binding's check, then the rows' (along the last axis, a row fits a block)."""
    def f(layer: Layer, lg: LayerGraph) -> str | None:
        reason = portable(layer, lg)
        if reason is None and layer.op in ALONG_AXIS:
            reason = _last_axis(layer, lg)
        if reason is None and layer.op == Op.REQUANT:
            p = layer.params
            assert isinstance(p, RequantParams)
            if p.axis is not None:
                reason = f"a requant per channel (along IR axis {p.axis}; the cluster's takes one value per tensor)"
        return reason or _row_fits(layer, lg)
    return f


# --- emission -------------------------------------------------------------------------------------

def _data(layer: Layer, lg: LayerGraph) -> dict:
    shape, xb, yb = _io(layer, lg)
    length = shape[-1] if shape and str(layer.op) not in ELEMENTWISE else 1
    rows = int(np.prod(shape, dtype=np.int64)) // max(length, 1)
    return dict(rows=rows, len=length, block=block_rows(rows, length, xb, yb), x_row=length * xb,
                y_row=length * yb, **int_ops._unary_io(layer, lg))


def _emit(layer: Layer, lg: LayerGraph, call: str, what: str, consts: str = "") -> str:
    return render("rows.c.j2", call=call, what=what, consts=consts, op=str(layer.op), **_data(layer, lg))


def _io_args(d: dict) -> str:
    return f"x, {d['x_bytes']}, {d['x_off']}, y, {d['y_bytes']}, {d['y_off']}"


def _row_args(d: dict) -> str:
    """The int8-input row kernels' (tw_pulp_rows.h ROW KERNELS) x, y and their offsets."""
    assert d["x_bytes"] == 1, "the row kernels' keys take 8-bit inputs"
    return f"(const int8_t *)x, {d['x_off']}, y, {d['y_bytes']}, {d['y_off']}"


def _int_list(name: str, values) -> str:
    return f"static const int32_t {name}[{len(values)}] = {{ {', '.join(str(int(v)) for v in values)} }};\n"


def layer_norm(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, LayerNormParams)
    d = _data(layer, lg)
    call = (f"tw_pulp_layer_norm_rows({_row_args(d)}, n, {d['len']}, WEIGHT, BIAS, {p.log2d}, {p.qmin}LL, "
            f"{p.qmax}LL)")
    return _emit(layer, lg, call, "iLayerNorm", _int_list("WEIGHT", p.weight) + _int_list("BIAS", p.bias))


def rms_norm(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, RMSNormParams)
    d = _data(layer, lg)
    call = f"tw_pulp_rms_norm_rows({_row_args(d)}, n, {d['len']}, WEIGHT, {p.log2d}, {p.qmin}LL, {p.qmax}LL)"
    return _emit(layer, lg, call, "iRMSNorm", _int_list("WEIGHT", p.weight))


def softmax_call(layer: Layer, lg: LayerGraph, host: bool = False) -> tuple[str, str]:
    """The C call of a softmax-like row op (int_softmax, ita_max) on `n` rows at x into y, and
    its name: rows.c.j2's, and a depth-first attention's (attention.py) — with `host` tw_int.h's
    own kernel (a Cortex-M, which builds no tw_pulp_rows.c)."""
    p = layer.params
    d = _data(layer, lg)
    if host:
        io = f"x, 1, {d['x_off']}, y, {d['y_bytes']}, {d['y_off']}, n, {d['len']}, 1"
        if isinstance(p, IntSoftmaxParams):
            return (f"tw_int_softmax({io}, {p.coeff_a}LL, {p.coeff_b}LL, {p.coeff_c}LL, {p.log2}LL, "
                    f"{p.n_levels - 1}LL)"), "iSoftmax"
        assert isinstance(p, ItaMaxParams), layer.name
        return f"tw_int_ita_max({io}, {p.n_levels - 1}LL)", "ITAMax"
    if isinstance(p, IntSoftmaxParams):
        return (f"tw_pulp_softmax_rows({_row_args(d)}, n, {d['len']}, {p.coeff_a}LL, {p.coeff_b}LL, "
                f"{p.coeff_c}LL, {p.log2}LL, {p.n_levels - 1}LL)"), "iSoftmax"
    assert isinstance(p, ItaMaxParams), layer.name
    return f"tw_pulp_ita_max_rows({_row_args(d)}, n, {d['len']}, {p.n_levels - 1}LL)", "ITAMax"


def int_softmax(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return _emit(layer, lg, *softmax_call(layer, lg))


def ita_max(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return _emit(layer, lg, *softmax_call(layer, lg))


def int_gelu(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, IntGeluParams)
    d = _data(layer, lg)
    return _emit(layer, lg, f"tw_pulp_gelu_rows({_row_args(d)}, n * {d['len']}, {p.b}LL, {p.one}LL)", "iGELU")


def hardswish(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, HardswishParams)
    d = _data(layer, lg)
    call = (f"tw_int_hardswish({_io_args(d)}, n * {d['len']}, {p.three}LL, {p.six}LL, "
            f"{p.one_over_six}LL)")
    return _emit(layer, lg, call, "iHardswish")


def requant(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """tw_int_requant on each core's elements, one value for the tensor (check)."""
    p = layer.params
    assert isinstance(p, RequantParams) and p.axis is None, f"layer '{layer.name}' passed its check"
    d = _data(layer, lg)
    rq = int_ops._rq_data(p.requant, 1, d["y_off"])
    call = f"tw_int_requant(&RQ, x, {d['x_bytes']}, {d['x_off']}, y, {d['y_bytes']}, n, 1, 1)"
    return _emit(layer, lg, call, f"RequantShift ({p.requant.mode})", render("int_rq.j2", rq=rq))


def _merged(out: list[int], stride: list[int]) -> tuple[list[int], list[int]]:
    """The same walk on fewer dims: size-1 dims dropped, a dim merged into the next where the
    input continues contiguously across them (stride[i] = stride[i+1]·out[i+1])."""
    dims = [(n, s) for n, s in zip(out, stride) if n != 1] or [(1, 1)]
    merged = [dims[0]]
    for n, s in dims[1:]:
        m, sm = merged[-1]
        if sm == s * n:
            merged[-1] = (m * n, s)
        else:
            merged.append((n, s))
    return [n for n, _ in merged], [s for _, s in merged]


def transpose_walk(shape: tuple[int, ...], perm: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """numpy.transpose(x, perm)'s output dims and the input stride of each (elements), merged."""
    strides = [int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape))]
    perm = tuple(int(d) % len(shape) for d in perm)
    return _merged([int(shape[d]) for d in perm], [strides[d] for d in perm])


def transpose(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, TransposeParams)
    shape, xb, _ = _io(layer, lg)
    out, stride = transpose_walk(shape, p.perm)
    n = int(np.prod(shape, dtype=np.int64))
    return render("transpose_l1.c.j2", rank=len(out), out_dims=out, in_stride=stride, n=n, elem_bytes=xb,
                  perm=[int(d) % len(shape) for d in p.perm])


def _reduce_view(layer: Layer, lg: LayerGraph) -> tuple[int, int, int] | None:
    """(outer, count, inner) of a reduce over a contiguous run of axes, else None."""
    p = layer.params
    assert isinstance(p, ReduceParams)
    shape = [int(d) for d in lg.tensors[layer.inputs[0]].shape] or [1]
    axes = sorted({a % len(shape) for a in p.axes})
    if not axes or axes != list(range(axes[0], axes[-1] + 1)):
        return None
    prod = lambda v: int(np.prod(v, dtype=np.int64))   # noqa: E731
    return prod(shape[:axes[0]]), prod(shape[axes[0]:axes[-1] + 1]), prod(shape[axes[-1] + 1:])


def check_reduce(layer: Layer, lg: LayerGraph) -> str | None:
    """The portable check, axes in one run, and the loop nest's sizes the tensors' (scratch)."""
    reason = int_ops.check_reduce(layer, lg)
    if reason is not None:
        return reason
    view = _reduce_view(layer, lg)
    if view is None:
        return "a reduce over axes that are not one contiguous run"
    n = layer.nest
    if n.N * n.IY * n.IX * n.C != lg.tensors[layer.inputs[0]].size or \
            n.N * n.OY * n.OX * n.K != lg.tensors[layer.output].size:
        return "a reduce whose loop nest does not hold its tensors' sizes (a reduced batch)"
    return None


def reduce_bytes(nest: LoopNest, cores: int, k, c, oy, ox):
    """tw_pulp_reduce's L1: the whole input, then the outputs (round4 apart)."""
    n_in = nest.N * nest.IY * nest.IX * nest.C * max(nest.x_bits // 8, 1)
    n_out = nest.N * nest.OY * nest.OX * nest.K * max(nest.y_bits // 8, 1)
    return 0 * np.asarray(k) * np.asarray(oy) + int(_round4(n_in) + n_out)


def reduce_dma(nest: LoopNest) -> tuple[tuple[str, int, int, int], ...]:
    """tw_pulp_reduce's DMA: the whole input in, the outputs out, one 1-D copy each."""
    return (("x", 1, 1, nest.N * nest.IY * nest.IX * nest.C * max(nest.x_bits // 8, 1)),
            ("y", 1, 1, nest.N * nest.OY * nest.OX * nest.K * max(nest.y_bits // 8, 1)))


def reduce(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, ReduceParams)
    view = _reduce_view(layer, lg)
    assert view is not None, f"layer '{layer.name}' passed its check"
    outer, count, inner = view
    return render("reduce_l1.c.j2", outer=outer, count=count, inner=inner, mean=int(p.average),
                  **int_ops._unary_io(layer, lg))


def check_transpose(layer: Layer, lg: LayerGraph) -> str | None:
    reason = portable_host.check_transpose(layer, lg)
    if reason is None and lg.tensors[layer.inputs[0]].dtype != lg.tensors[layer.output].dtype:
        return "a transpose that changes the element type"
    return reason


# --- the table ------------------------------------------------------------------------------------

def bindings(cost) -> tuple[Binding, ...]:
    """The module docstring's table, priced by rows_cost.RowsCost (`cost`)."""
    out: list[Binding] = []

    whole = {Op.TRANSPOSE: (transpose_bytes, transpose_dma), Op.REDUCE: (reduce_bytes, reduce_dma)}

    def add(name: str, op: Op, modes: tuple[str | None, ...], prec: Precision, chk, emit) -> None:
        scratch, dma = whole.get(op, (scratch_of(str(op)), dma_of(str(op))))
        out.extend(per_mode(FAMILY, cost, name, op, modes, prec, "other", chk, emit=emit, whole=True,
                            tiles=UNTILED, scratch=scratch, own_dma=dma))

    for y in BITS:
        p = Precision(8, 0, y)
        for name, op, portable, emit in (
                ("layer_norm", Op.LAYER_NORM, int_ops.check_layer_norm, layer_norm),
                ("rms_norm", Op.RMS_NORM, int_ops.check_rms_norm, rms_norm),
                ("int_softmax", Op.INT_SOFTMAX, int_ops.check_int_softmax, int_softmax),
                ("ita_max", Op.ITA_MAX, int_ops.check_ita_max, ita_max),
                ("int_gelu", Op.INT_GELU, int_ops.check_int_gelu, int_gelu)):
            add(f"{name}_rows_x8y{y}", op, (None,), p, check(portable), emit)
    for x in BITS:
        for y in BITS:
            p = Precision(x, 0, y)
            add(f"hardswish_rows_x{x}y{y}", Op.HARDSWISH, (None,), p, check(int_ops.check_hardswish), hardswish)
            add(f"requant_rows_x{x}y{y}", Op.REQUANT, ("shift", "div"), p, check(int_ops.check_requant), requant)
            add(f"reduce_l1_x{x}y{y}", Op.REDUCE, (None,), p, check_reduce, reduce)
    for b in BITS:
        add(f"transpose_l1_s{b}", Op.TRANSPOSE, (None,), Precision(b, 0, b), check_transpose, transpose)
    return tuple(out)


__all__ = ["ELEMENTWISE", "bindings", "block_rows", "dma_of", "geometry", "reduce_bytes", "reduce_dma",
           "rows_scratch", "scratch_of", "softmax_call", "transpose_bytes", "transpose_dma", "transpose_walk"]
