"""The portable family's bindings of the integer exports' ops (NEMO, QuantLab, Deeploy): exact
integer arithmetic on tensors of any integer width (int8, uint8, int16, int32), each the whole
layer function on the L2 tensors, run by a host core (the modules named "cpu"; host.py adds them).

| binding               | op (mode)                      | bits x(w)→y      | C (tw_int.h)     | golden                |
|-----------------------|--------------------------------|------------------|------------------|-----------------------|
| conv2d_int_x{X}y{Y}   | conv2d (shift, div)            | X, Y ∈           | tw_int_conv      | conv.conv2d_acc +     |
|                       |                                | {8,16,32}, not   |                  | requant               |
|                       |                                | 8→8              |                  |                       |
| depthwise_int_x…y…    | depthwise (shift, div)         | idem             | tw_int_conv      | idem                  |
| fully_connected_int_… | fully_connected (shift, div)   | idem (8→32: a    | tw_int_conv      | conv.dense_acc +      |
|                       |                                | last dense       |                  | requant               |
|                       |                                | layer's          |                  |                       |
|                       |                                | accumulators)    |                  |                       |
| requant_x{X}y{Y}      | requant (shift, div)           | X, Y ∈ {8,16,32} | tw_int_requant   | int_ops.requant       |
| add/sub/mul_int_…     | add, sub, mul (IntArithParams) | X, Y ∈ {8,16,32} | tw_int_binary    | int_ops.arith         |
| matmul_x{X}y{Y}       | matmul (its sums' requant      | idem             | tw_int_matmul    | int_ops.matmul        |
|                       | fused: shift, div)             |                  |                  | (+ requant)           |
| reduce_x{X}y{Y}       | reduce                         | idem             | tw_int_reduce    | int_ops.reduce        |
| hardswish_x{X}y{Y}    | hardswish                      | idem             | tw_int_hardswish | int_ops.hardswish     |
| int_softmax_x8y{Y}    | int_softmax                    | 8 → Y            | tw_int_softmax   | int_ops.int_softmax   |
| rms_norm_x8y{Y}       | rms_norm                       | 8 → Y            | tw_int_rms_norm  | int_ops.rms_norm      |
| layer_norm_x8y{Y}     | layer_norm                     | 8 → Y            | tw_int_layer_    | int_ops.layer_norm    |
|                       |                                |                  | norm             |                       |
| int_gelu_x8y{Y}       | int_gelu                       | 8 → Y            | tw_int_gelu      | int_ops.int_gelu      |
| ita_max_x8y{Y}        | ita_max                        | 8 → Y            | tw_int_ita_max   | int_ops.ita_max       |
| slice_s{B}            | slice                          | B → B, B ∈       | tw_transpose     | int_ops.slice_        |
|                       |                                | {8,16,32}        |                  |                       |

The weighted bindings take the portable constants layout with a per-channel block of the bias
alone (4 bytes per channel, `LAYOUT`; the uint8 input correction folded in as constants.py's
kernel_bias) and one k tile; their requantization (k, λ as int64, d, or the div chain's m and D)
are const arrays of the layer's own C file, like transpose_conv's. Everything else keeps its
constants (an Add's constant operand, a requant's per-channel values) in the layer file too.
uint8 tensors are stored biased (u − 128, common.py): every kernel takes the offset of each
operand and writes its output as value − offset.

Cost: the module's kernel model prices them by their keys, through its copy for these kernels
(`cost.for_int_ops()` where the model has one: bindings/pulp/cost.py prices tw_int_conv per
MAC, tap and output, the elementwise ops per element, matmul per MAC, reduce per input element —
each fitted on its own measurements, bench/calibrate_int.py); a model without one prices the
weighted ones by their geometry and the others as its untiled ("other") ops.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ...ir.params import (
    HardswishParams,
    IntArithParams,
    IntGeluParams,
    IntSoftmaxParams,
    ItaMaxParams,
    LayerNormParams,
    MatMulParams,
    ReduceParams,
    RequantParams,
    RMSNormParams,
    SliceParams,
)
from ...ir.requant import Requant
from ...ir.tensor import dtype_bits, dtype_range
from ..base import Binding, ConstLayout, LayerConstants, Precision, TileRules, per_mode
from . import constants
from .common import FAMILY, render, u8_offset

UNTILED = TileRules(l3=False, untiled=True)
#: the element widths these kernels take (tw_int.h)
BITS = (8, 16, 32)
#: tw_int.h's index walks
MAX_RANK = 8
INT64 = np.iinfo(np.int64)


def _bytes(lg: LayerGraph, name: str) -> int:
    return dtype_bits(lg.tensors[name].dtype) // 8


def _unary_io(layer: Layer, lg: LayerGraph) -> dict:
    """The element bytes and uint8 offsets of a one-input kernel's input x and output y."""
    x, y = layer.inputs[0], layer.output
    return dict(x_bytes=_bytes(lg, x), x_off=u8_offset(lg, x), y_bytes=_bytes(lg, y), y_off=u8_offset(lg, y))


def _int_tensors(layer: Layer, lg: LayerGraph) -> str | None:
    for t in (*layer.inputs, layer.output):
        if lg.tensors[t].dtype not in ("int8", "uint8", "int16", "int32"):
            return f"a {lg.tensors[t].dtype} tensor '{t}'"
    return None


def _rank(layer: Layer, lg: LayerGraph) -> str | None:
    r = len(lg.tensors[layer.output].shape)
    return f"a {layer.op} of rank {r} (at most {MAX_RANK})" if r > MAX_RANK else None


def _first(*reasons: str | None) -> str | None:
    return next((r for r in reasons if r is not None), None)


# --- requantization as the kernels take it ---------------------------------------------------

def _rq_fits(rq: Requant, v_max: int) -> str | None:
    """The reason v·k + λ (·m) could leave int64 for |v| ≤ v_max, or None."""
    k = int(np.abs(np.asarray(rq.multiplier, dtype=np.int64)).max(initial=0))
    lam = 0 if rq.bias is None else int(np.abs(np.asarray(rq.bias, dtype=np.int64)).max(initial=0))
    worst = (v_max * k + lam) * (abs(int(rq.post_multiplier)) if rq.mode == "div" else 1)
    if worst >= 1 << 62:
        return f"a requantization whose products reach {worst} (beyond int64)"
    if rq.mode == "shift":
        d = np.asarray(rq.shift, dtype=np.int64)
        if d.min(initial=0) < 0 or d.max(initial=0) > 63:
            return "shift-mode right shifts outside 0..63"
    return None


def _rq_data(rq: Requant, channels: int, y_off: int) -> dict:
    """The template data of tw_int_rq_t (int_rq.j2) for `channels` channels, the output stored
    with offset `y_off`."""
    def per(a, dtype=np.int64) -> list[int]:
        return [int(v) for v in np.broadcast_to(np.asarray(a, dtype=dtype).reshape(-1), (channels,))]

    lam = np.zeros(1) if rq.bias is None else rq.bias
    return dict(mode={"shift": "TW_RQ_SHIFT", "div": "TW_RQ_DIV"}[rq.mode], channels=channels,
                mult=per(rq.multiplier), lam=per(lam), shift=per(rq.shift),
                post_mult=int(rq.post_multiplier), div_d=int(rq.divisor),
                div_trunc=int(rq.division == "trunc"), zero_point=int(rq.zero_point) - y_off,
                qmin=int(rq.qmin) - y_off, qmax=int(rq.qmax) - y_off)


def _identity(rq: Requant) -> bool:
    lam = 0 if rq.bias is None else rq.bias
    return rq.mode == "shift" and bool(np.all(np.asarray(rq.multiplier) == 1) and np.all(np.asarray(lam) == 0)
                                       and np.all(np.asarray(rq.shift) == 0) and rq.zero_point == 0)


def _value_max(lg: LayerGraph, name: str) -> int:
    lo, hi = dtype_range(lg.tensors[name].dtype)
    return max(abs(lo), abs(hi))


# --- weighted layers ---------------------------------------------------------------------------

def _bias_only(layer: Layer, lg: LayerGraph, s) -> LayerConstants:
    """The blob: one per-channel block of the kernel bias, then the weights (module docstring)."""
    return constants.blob(layer, lg, s, (), constants.weight_blocks(layer, s))


def _check_consts(layer: Layer, lg: LayerGraph) -> str | None:
    bias = constants.kernel_bias(layer, lg)
    if bias.min(initial=0) < constants.INT32.min or bias.max(initial=0) > constants.INT32.max:
        return "a bias that does not fit int32"
    return None


LAYOUTS = {kind: ConstLayout(bytes_per_channel=4, weight_layout=w, build=_bias_only, check=_check_consts)
           for kind, w in (("conv", "k.fy.fx.c"), ("dwconv", "fy.fx.k"), ("fc", "k.c"))}


def _acc_bound(layer: Layer, lg: LayerGraph) -> int:
    """max over output channels of |kernel bias| + Σ|w|·max|x stored|: a bound on every
    accumulator tw_int_conv forms (it reads the stored values, constants.kernel_bias)."""
    nest = layer.nest
    w = np.abs(np.asarray(layer.weights, dtype=np.int64)).reshape(nest.K, -1).sum(axis=1)
    b = np.abs(constants.kernel_bias(layer, lg))
    return int((w * _value_max(lg, layer.inputs[0]) + b).max(initial=0))


def check_weighted(layer: Layer, lg: LayerGraph) -> str | None:
    """A conv / depthwise / dense layer with a shift or div requantization (the identity onto
    int32 included) on integer tensors of any width, its products within int64."""
    rq = layer.requant
    if rq is None or rq.mode not in ("shift", "div"):
        return "a layer without a shift or div requantization"
    if layer.nest.w_bits != 8:
        return f"{layer.nest.w_bits}-bit weights (8 only)"
    nest = layer.nest
    taps = nest.FY * nest.FX * (1 if nest.kind == "dwconv" else nest.C)
    acc = _value_max(lg, layer.inputs[0]) * 128 * taps + (1 << 31)
    return _first(_int_tensors(layer, lg), _rq_fits(rq, acc), _check_consts(layer, lg))


def weighted(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """tw_int_conv on the whole layer (check_weighted)."""
    assert consts is not None and layer.requant is not None, f"layer '{layer.name}' passed its check"
    nest = layer.nest
    x, y = layer.inputs[0], layer.output
    x_off, y_off = u8_offset(lg, x), u8_offset(lg, y)
    g = dict(n=nest.N, ih=nest.IY, iw=nest.IX, c=nest.C, oh=nest.OY, ow=nest.OX, k=nest.K, fh=nest.FY,
             fw=nest.FX, sy=nest.SY, sx=nest.SX, pad_t=nest.pads[0], pad_l=nest.pads[1],
             depthwise=int(nest.kind == "dwconv"), pad_value=int(layer.pad_value) - x_off,
             acc64=int(_acc_bound(layer, lg) >= 1 << 31))
    if nest.kind == "fc":
        rows = lg.tensors[x].size // nest.C
        g.update(n=rows, ih=1, iw=1, oh=1, ow=1, fh=1, fw=1, sy=1, sx=1, pad_t=0, pad_l=0)
    return render("int_conv.c.j2", g=g, rq=_rq_data(layer.requant, nest.K, y_off), w_offset=consts.w_offset,
                  x_bytes=_bytes(lg, x), y_bytes=_bytes(lg, y), what=str(layer.op),
                  identity=_identity(layer.requant))


# --- elementwise and data movement -----------------------------------------------------------

def check_requant(layer: Layer, lg: LayerGraph) -> str | None:
    p = layer.params
    if not isinstance(p, RequantParams):
        return f"a requant with {type(p).__name__}"
    return _first(_int_tensors(layer, lg), _rq_fits(p.requant, _value_max(lg, layer.inputs[0])))


def requant(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, RequantParams)
    x, y = layer.inputs[0], layer.output
    shape = lg.tensors[x].shape
    if p.axis is None:
        channels, inner = 1, 1
    else:
        channels = int(shape[p.axis])
        inner = int(np.prod(shape[p.axis + 1:], dtype=np.int64))
    return render("int_requant.c.j2", rq=_rq_data(p.requant, channels, u8_offset(lg, y)), n=lg.tensors[x].size,
                  channels=channels, inner=inner, x_bytes=_bytes(lg, x), x_off=u8_offset(lg, x),
                  y_bytes=_bytes(lg, y))


def _strides(shape: tuple[int, ...], out: tuple[int, ...]) -> list[int]:
    """Element strides of an operand of `shape` walked along the broadcast output `out` (0 along a
    dim it broadcasts; its dims aligned right)."""
    full = (1,) * (len(out) - len(shape)) + tuple(shape)
    strides, acc = [], 1
    for d in reversed(full):
        strides.append(0 if d == 1 else acc)
        acc *= d
    return list(reversed(strides))


def _coalesce(out: tuple[int, ...], strides: list[list[int]]) -> tuple[tuple[int, ...], list[list[int]]]:
    """The same walk on fewer dims: size-1 dims dropped and each dim merged into the next where
    every operand continues contiguously across them (stride[i] = stride[i+1]·out[i+1], 0 for
    both when it broadcasts both) — so that tw_int_binary's inner loop runs long rows, not a
    [1, 128, 128, 1] tensor's rows of one element."""
    dims = [(int(n), [int(st[i]) for st in strides]) for i, n in enumerate(out) if int(n) != 1]
    if not dims:
        return (1,), [[0] for _ in strides]
    merged = [dims[0]]
    for n, st in dims[1:]:
        m, sm = merged[-1]
        if all(a == b * n for a, b in zip(sm, st)):
            merged[-1] = (m * n, st)
        else:
            merged.append((n, st))
    return tuple(n for n, _ in merged), [[st[k] for _, st in merged] for k in range(len(strides))]


def check_arith(layer: Layer, lg: LayerGraph) -> str | None:
    if not isinstance(layer.params, IntArithParams):
        return f"a {layer.op} with {type(layer.params).__name__}"
    if len(layer.node_inputs) != 2:
        return f"{layer.op} of {len(layer.node_inputs)} operands"
    tensors = {**lg.tensors, **layer.const_inputs}
    for t in layer.node_inputs:
        if tensors[t].dtype not in ("int8", "uint8", "int16", "int32"):
            return f"a {tensors[t].dtype} operand '{t}'"
    return _first(_int_tensors(layer, lg), _rank(layer, lg))


def arith(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, IntArithParams)
    y = lg.tensors[layer.output]
    out = tuple(int(d) for d in y.shape) or (1,)
    acts = iter(("a->x", "a->x2"))
    operands = []
    for i, t in enumerate(layer.node_inputs):
        if t in layer.const_inputs:
            data = [int(v) for v in np.asarray(layer.const_inputs[t].data, dtype=np.int64).reshape(-1)]
            operands.append(dict(index=i, arg=f"OPERAND{i}", data=data, bytes=4, off=0,
                                 stride=_strides(tuple(layer.const_inputs[t].shape), out)))
        else:
            operands.append(dict(index=i, arg=next(acts), data=None, bytes=_bytes(lg, t), off=u8_offset(lg, t),
                                 stride=_strides(tuple(lg.tensors[t].shape), out)))
    out, walk = _coalesce(out, [o["stride"] for o in operands])
    for o, st in zip(operands, walk):
        o["stride"] = st
    op = {Op.ADD: "TW_INT_ADD", Op.SUB: "TW_INT_SUB", Op.MUL: "TW_INT_MUL"}[layer.op]
    return render("int_binary.c.j2", op=op, operands=operands, rank=len(out), out_dims=list(out),
                  y_bytes=_bytes(lg, layer.output), y_off=u8_offset(lg, layer.output), qmin=int(p.qmin),
                  qmax=int(p.qmax), what=str(layer.op))


def check_matmul(layer: Layer, lg: LayerGraph) -> str | None:
    if not isinstance(layer.params, MatMulParams):
        return f"a matmul with {type(layer.params).__name__}"
    if len(layer.inputs) != 2:
        return "a matmul with a constant operand (dense layers take those)"
    rq = layer.requant
    if rq is not None and rq.mode not in ("shift", "div"):
        return f"a matmul with a {rq.mode} requantization (shift or div)"
    bound = _value_max(lg, layer.inputs[0]) * _value_max(lg, layer.inputs[1]) * layer.nest.C
    return _first(_int_tensors(layer, lg), _rank(layer, lg), None if rq is None else _rq_fits(rq, bound))


def matmul(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    a, b = (tuple(lg.tensors[t].shape) for t in layer.inputs)
    y = tuple(lg.tensors[layer.output].shape)
    batch = y[:-2] or (1,)
    m, k, n = a[-2], a[-1], b[-1]

    def bstride(shape: tuple[int, ...]) -> list[int]:
        return _strides(tuple(shape[:-2]) or (1,), batch) if len(shape) > 2 else [0] * len(batch)

    sa = [s * m * k for s in bstride(a)]
    sb = [s * k * n for s in bstride(b)]
    rq = layer.requant
    cols = 1 if rq is None or np.asarray(rq.multiplier).size == 1 and np.asarray(rq.shift).size == 1 \
        and (rq.bias is None or np.asarray(rq.bias).size == 1) else n
    return render("int_matmul.c.j2", batch=list(batch), sa=sa, sb=sb, m=m, k=k, n=n,
                  a_bytes=_bytes(lg, layer.inputs[0]), a_off=u8_offset(lg, layer.inputs[0]),
                  b_bytes=_bytes(lg, layer.inputs[1]), b_off=u8_offset(lg, layer.inputs[1]),
                  y_bytes=_bytes(lg, layer.output),
                  rq=None if rq is None else _rq_data(rq, cols, u8_offset(lg, layer.output)))


def check_reduce(layer: Layer, lg: LayerGraph) -> str | None:
    if not isinstance(layer.params, ReduceParams):
        return f"a reduce with {type(layer.params).__name__}"
    if len(lg.tensors[layer.inputs[0]].shape) > MAX_RANK:
        return f"a reduce of rank {len(lg.tensors[layer.inputs[0]].shape)} (at most {MAX_RANK})"
    return _int_tensors(layer, lg)


def reduce(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, ReduceParams)
    x = layer.inputs[0]
    dims = [int(d) for d in lg.tensors[x].shape] or [1]
    axes = {a % len(dims) for a in p.axes}
    return render("int_reduce.c.j2", dims=dims, reduced=[int(d in axes) for d in range(len(dims))],
                  mean=int(p.average), **_unary_io(layer, lg))


def check_hardswish(layer: Layer, lg: LayerGraph) -> str | None:
    if not isinstance(layer.params, HardswishParams):
        return f"a hardswish with {type(layer.params).__name__}"
    return _int_tensors(layer, lg)


def hardswish(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, HardswishParams)
    x = layer.inputs[0]
    return render("int_hardswish.c.j2", n=lg.tensors[x].size, three=int(p.three), six=int(p.six),
                  one_over_six=int(p.one_over_six), **_unary_io(layer, lg))


def _rows(lg: LayerGraph, x: str, axis: int) -> dict:
    """The [outer][len][inner] view of tensor `x` along `axis` (tw_int.h's row kernels)."""
    shape = [int(d) for d in lg.tensors[x].shape]
    return dict(outer=int(np.prod(shape[:axis], dtype=np.int64)), len=shape[axis],
                inner=int(np.prod(shape[axis + 1:], dtype=np.int64)))


def _row_op(layer: Layer, lg: LayerGraph, params: type) -> str | None:
    if not isinstance(layer.params, params):
        return f"a {layer.op} with {type(layer.params).__name__}"
    return _int_tensors(layer, lg)


def check_int_softmax(layer: Layer, lg: LayerGraph) -> str | None:
    return _row_op(layer, lg, IntSoftmaxParams)


def int_softmax(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, IntSoftmaxParams)
    x = layer.inputs[0]
    return render("int_softmax.c.j2", **_rows(lg, x, p.axis), a=p.coeff_a, b=p.coeff_b, c=p.coeff_c, log2=p.log2,
                  levels_m1=p.n_levels - 1, **_unary_io(layer, lg))


def check_rms_norm(layer: Layer, lg: LayerGraph) -> str | None:
    return _row_op(layer, lg, RMSNormParams)


def rms_norm(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, RMSNormParams)
    x = layer.inputs[0]
    return render("int_rms_norm.c.j2", **_rows(lg, x, p.axis), weight=list(p.weight), log2d=p.log2d, qmin=p.qmin,
                  qmax=p.qmax, **_unary_io(layer, lg))


def check_layer_norm(layer: Layer, lg: LayerGraph) -> str | None:
    return _row_op(layer, lg, LayerNormParams)


def layer_norm(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, LayerNormParams)
    x = layer.inputs[0]
    return render("int_layer_norm.c.j2", **_rows(lg, x, p.axis), weight=list(p.weight), bias=list(p.bias),
                  log2d=p.log2d, qmin=p.qmin, qmax=p.qmax, **_unary_io(layer, lg))


def check_int_gelu(layer: Layer, lg: LayerGraph) -> str | None:
    return _row_op(layer, lg, IntGeluParams)


def int_gelu(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, IntGeluParams)
    x = layer.inputs[0]
    return render("int_gelu.c.j2", n=lg.tensors[x].size, b=p.b, one=p.one, **_unary_io(layer, lg))


def check_ita_max(layer: Layer, lg: LayerGraph) -> str | None:
    return _row_op(layer, lg, ItaMaxParams)


def ita_max(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    p = layer.params
    assert isinstance(p, ItaMaxParams)
    x = layer.inputs[0]
    return render("int_ita_max.c.j2", **_rows(lg, x, p.axis), levels_m1=p.n_levels - 1, **_unary_io(layer, lg))


def check_slice(layer: Layer, lg: LayerGraph) -> str | None:
    if not isinstance(layer.params, SliceParams):
        return f"a slice with {type(layer.params).__name__}"
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    if x.dtype != y.dtype:
        return f"a slice from {x.dtype} to {y.dtype}"
    if len(x.shape) > MAX_RANK or len(x.shape) == 0:
        return f"a slice of rank {len(x.shape)} (1 to {MAX_RANK})"
    return _int_tensors(layer, lg)


def slice_(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """A strided gather: tw_transpose from the first element with the input strides × steps."""
    p = layer.params
    assert isinstance(p, SliceParams)
    x = lg.tensors[layer.inputs[0]]
    shape = [int(d) for d in x.shape]
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    start = sum(s * st for s, st in zip(p.starts, strides))
    out = [int(d) for d in lg.tensors[layer.output].shape]
    if 0 in out:
        return render("reshape.c.j2", size=0)
    return render("int_slice.c.j2", rank=len(shape), out_dims=out,
                  in_stride=[st * step for st, step in zip(strides, p.steps)], start=start,
                  elem_bytes=_bytes(lg, layer.inputs[0]))


# --- the table -----------------------------------------------------------------------------------

def bindings(cost) -> tuple[Binding, ...]:
    """The bindings of the module docstring's table, priced by the kernel cost model `cost` (its
    copy for tw_int.h, `for_int_ops`, when it has one: these keys can equal the 16x8 kernels')."""
    for_int_ops = getattr(cost, "for_int_ops", None)
    cost = cost if for_int_ops is None else for_int_ops()
    out: list[Binding] = []

    def add(name: str, op: Op, modes: tuple[str | None, ...], prec: Precision, kind: str,
            check: Callable, emit: Callable, **kw) -> None:
        out.extend(per_mode(FAMILY, cost, name, op, modes, prec, kind, check, emit=emit, whole=True,
                            tiles=UNTILED, **kw))

    for x, y in product(BITS, BITS):
        sfx = f"_x{x}y{y}"
        for name, op, kind in (("conv2d_int", Op.CONV2D, "conv"), ("depthwise_int", Op.DEPTHWISE, "dwconv"),
                               ("fully_connected_int", Op.FULLY_CONNECTED, "fc")):
            if (x, y) != (8, 8):
                add(name + sfx, op, ("shift", "div"), Precision(x, 8, y), kind, check_weighted, weighted,
                    consts=LAYOUTS[kind])
        p = Precision(x, 0, y)
        add("requant" + sfx, Op.REQUANT, ("shift", "div"), p, "other", check_requant, requant)
        for op in (Op.ADD, Op.SUB, Op.MUL):
            add(f"{op}_int" + sfx, op, (None,), p, "other", check_arith, arith)
        add("matmul" + sfx, Op.MATMUL, (None,), p, "other", check_matmul, matmul)
        add("reduce" + sfx, Op.REDUCE, (None,), p, "other", check_reduce, reduce)
        add("hardswish" + sfx, Op.HARDSWISH, (None,), p, "other", check_hardswish, hardswish)
    for y in BITS:     # Deeploy's row operators and iGELU read 8-bit codes
        p = Precision(8, 0, y)
        add(f"int_softmax_x8y{y}", Op.INT_SOFTMAX, (None,), p, "other", check_int_softmax, int_softmax)
        add(f"rms_norm_x8y{y}", Op.RMS_NORM, (None,), p, "other", check_rms_norm, rms_norm)
        add(f"layer_norm_x8y{y}", Op.LAYER_NORM, (None,), p, "other", check_layer_norm, layer_norm)
        add(f"int_gelu_x8y{y}", Op.INT_GELU, (None,), p, "other", check_int_gelu, int_gelu)
        add(f"ita_max_x8y{y}", Op.ITA_MAX, (None,), p, "other", check_ita_max, ita_max)
    for b in BITS:
        add(f"slice_s{b}", Op.SLICE, (None,), Precision(b, 0, b), "other", check_slice, slice_)
    return tuple(out)


__all__ = ["bindings"]
