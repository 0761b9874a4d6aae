"""Integer exports' plain ops and Deeploy / QuantLab / DORY operators -> IR (exact integer arithmetic).

NEMO, QuantLab and Deeploy export graphs on integer codes carried in float32 (or int32 / int64)
tensors (notes/integer-onnx.md; ../shared/models/integer_onnx). Beside the requantized linear
layers (onnx_nemo.py, onnx_quantlab.py) they hold ops that compute on the codes directly, which
this module lowers to the IR's integer ops (ir/params.py "integer exports", golden/int_ops.py):

| ONNX node | IR | semantics (golden) |
|---|---|---|
| Add / Sub / Mul of activations or integer constants | add / sub / mul (IntArithParams) | exact, numpy broadcasting |
| MatMul of two activations | matmul | exact, batch dims broadcast |
| Pad (constant) | pad | numpy.pad |
| Slice | slice | x[start:end:step] (negative / out-of-range indices normalized, steps > 0) |
| ReduceSum, ReduceMean | reduce | Σ; Deeploy's floor((Σ + n/2) / n) (also its IntegerMean: onnx_deeploy.py) |
| Gather (constant indices forming one run) | slice, reshape | the run; a scalar index drops the axis |
| iHardswish (Deeploy) | hardswish | x·(clamp(x + three, 0, six)·one_over_six) |
| TrueIntegerDiv → RequantShift (Deeploy) | requant | merged as Deeploy's MergeTrueIntegerDivRequantShiftPass does: |
|                                         |         | mul·⌊Δ·η / (y·η + ε)⌋·256, div·256                            |
| Add with in1_rq / in2_rq / out_rq  | requant, requant, add, [requant] | PULP-NN's pulp_nn_add: each input     |
| attributes (QuantLab's DORY adder) |                                  | (x·mul + add) >> shift clipped to its |
|                                    |                                  | levels, summed, the sum optionally    |
|                                    |                                  | requantized, clipped to out_n_levels  |
| 1-D Conv / MaxPool | conv2d / max_pool on [N, 1, W, C] | as 2-D with a unit height (`as_4d`) |

Output types: an op's result gets the narrowest of int8, uint8, int16, int32 that holds every
value its operands' types allow (`fit_dtype`, from the operands' type ranges and the constants'
values) — exact by construction; an op whose results could leave int32 is refused in one
sentence. A rank-3 tensor [N, C, W] that a 1-D conv or pool reads or writes is kept in the IR as
[N, W, C] (perm (0, 2, 1): channels last, as the 2-D kernels read it); ops that index elements
see ONNX order through the lowering's perms (onnx_lower.py).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir.ops import Op
from ..ir.params import (
    HardswishParams,
    IntArithParams,
    MatMulParams,
    PadParams,
    ReduceParams,
    RequantParams,
    ReshapeParams,
    SliceParams,
    TableAddParams,
    TransposeParams,
)
from ..ir.requant import Requant
from ..ir.tensor import QuantParams, dtype_range
from .onnx_lower import INTEGER_STYLES, Lowering, emit_reshape, handler, inverse, moves_data
from .onnx_model import TW_DOMAIN, OnnxGraph, ONode, unsupported

INT1 = QuantParams((1.0,), (0,))
NWC = (0, 2, 1)
#: the ONNX op types this module lowers for the integer exports (its handlers; `tilewise ops`
#: and docs/inputs.md list them): the module docstring's table
INTEGER_OPS = ("Add", "Sub", "Mul", "MatMul", "Pad", "Slice", "Gather", "ReduceSum", "ReduceMean")
INT32_RANGE = dtype_range("int32")


# ---------------------------------------------------------------------------------------------
# value ranges and output types
# ---------------------------------------------------------------------------------------------

def fit_dtype(lo: int, hi: int) -> str | None:
    """The narrowest IR integer type holding [lo, hi] (int8 before uint8), None beyond int32."""
    for dt in ("int8", "uint8", "int16", "int32"):
        a, b = dtype_range(dt)
        if a <= lo and hi <= b:
            return dt
    return None


def value_range(lw: Lowering, node: ONode, name: str) -> tuple[int, int]:
    """[lo, hi] of an operand: a constant's values (integral, checked), an activation's type."""
    if name in lw.g.consts:
        a = np.asarray(lw.g.consts[name], dtype=np.float64)
        if not (np.all(np.isfinite(a)) and np.all(a == np.round(a))):
            raise unsupported(lw.g, node, f"computes with the non-integer constant '{name}'",
                              "integer exports compute on integer codes; requantize with integers")
        return (int(a.min()), int(a.max())) if a.size else (0, 0)
    return lw.bound(lw.act(node, name))


def out_dtype(lw: Lowering, node: ONode, lo: int, hi: int) -> str:
    dt = fit_dtype(lo, hi)
    if dt is None:
        hint = "requantize the operands to narrower codes first"
        if lw.wide_inputs:
            names = ", ".join(sorted(lw.wide_inputs))
            hint = (f"give the code type of the input(s) {names}, held in a wide container, with --input-dtype "
                    f"(e.g. --input-dtype int8), or {hint}")
        raise unsupported(lw.g, node, f"computes values in [{lo}, {hi}], beyond int32", hint)
    return dt


def integer_style(lw: Lowering, node: ONode) -> None:
    """These handlers take the integer exports only: elsewhere the node is float work."""
    if lw.style not in INTEGER_STYLES:
        raise lw.no_handler(node)


# ---------------------------------------------------------------------------------------------
# 1-D convolution and pooling as 2-D with a unit height
# ---------------------------------------------------------------------------------------------

def node_2d(node: ONode) -> ONode:
    """A 1-D Conv / MaxPool node's attributes as the 2-D node on [N, C, 1, W]."""
    a = dict(node.attrs)
    for key, unit in (("kernel_shape", 1), ("strides", 1), ("dilations", 1)):
        if key in a:
            a[key] = [unit, *[int(v) for v in a[key]]]
    if "pads" in a:
        b, e = (int(v) for v in a["pads"])
        a["pads"] = [0, b, 0, e]
    return replace(node, attrs=a)


def as_4d(lw: Lowering, node: ONode, x: str) -> str:
    """The IR tensor of a rank-3 ONNX activation [N, C, W] as NHWC [N, 1, W, C]: its data in
    (N, W, C) order (a transpose when it is in ONNX order and that moves data), then a reshape."""
    t = lw.t(x)
    n, c, w = lw.onnx_shape(x)
    if lw.perm[x] != NWC:
        q = tuple(inverse(lw.perm[x])[i] for i in NWC)      # IR dims in (N, W, C) order
        op, params = ((Op.TRANSPOSE, TransposeParams(perm=q)) if moves_data(t.shape, q)
                      else (Op.RESHAPE, ReshapeParams(shape=(n, w, c))))
        x = lw.emit(node, op, [x], lw.fresh(f"{x}__nwc"), (n, w, c), t.dtype, t.quant, params, layout=NWC,
                    suffix="_to_nwc")
    shape = (n, 1, w, c)
    return lw.emit(node, Op.RESHAPE, [x], lw.fresh(f"{x}__4d"), shape, t.dtype, t.quant,
                   ReshapeParams(shape=shape), layout=(0, 2, 3, 1), suffix="_to_4d")


def to_3d(lw: Lowering, node: ONode, y4: str, onnx_out: str) -> str:
    """The NHWC [N, 1, W, K] result of a 1-D op bound to its rank-3 ONNX output [N, K, W] (kept
    as [N, W, K]: perm (0, 2, 1))."""
    t = lw.t(y4)
    n, _, w, k = t.shape
    shape = (n, w, k)
    return lw.emit(node, Op.RESHAPE, [y4], lw.out_name(onnx_out), shape, t.dtype, t.quant,
                   ReshapeParams(shape=shape), layout=NWC, suffix="_to_3d")


# ---------------------------------------------------------------------------------------------
# requantization of any integer tensor
# ---------------------------------------------------------------------------------------------

def channel_axis(lw: Lowering, node: ONode, x: str, arrays: tuple[np.ndarray, ...], what: str) -> int | None:
    """The ONNX axis of `x` along which per-channel `arrays` vary (broadcast against x's ONNX
    shape, right-aligned), None when every array is a single value."""
    shape = lw.onnx_shape(x)
    axis = None
    for a in arrays:
        a = np.asarray(a)
        if a.size == 1:
            continue
        if a.ndim > len(shape):
            squeezed = a.reshape([d for d in a.shape if d != 1] or [1])
            a = squeezed if squeezed.ndim <= len(shape) else a
        full = (1,) * (len(shape) - a.ndim) + tuple(a.shape)
        varying = [i for i, d in enumerate(full) if d != 1]
        ok = len(varying) == 1 and full[varying[0]] == shape[varying[0]]
        if not ok and len(shape) >= 2 and sum(d != 1 for d in a.shape) == 1 and a.size == shape[1]:
            varying, ok = [1], True     # [C, 1, 1] on a rank-3 N×C×W tensor: QuantLab's per-channel form
        if not ok or (axis is not None and axis != varying[0]):
            raise unsupported(lw.g, node, f"has a {what} of shape {tuple(np.asarray(a).shape)} for a tensor of shape "
                              f"{shape}", "give one value per channel along one axis, or a scalar")
        axis = varying[0]
    return axis


def emit_requant(lw: Lowering, node: ONode, x: str, rq: Requant, onnx_axis: int | None, out: str,
                 dtype: str, suffix: str = "") -> str:
    """An IR requant of activation `x` (any integer type) to `dtype` bound to the IR name `out`,
    its per-channel values along ONNX axis `onnx_axis` (None: per tensor)."""
    axis = None if onnx_axis is None else lw.perm[x].index(onnx_axis)
    y = lw.emit(node, Op.REQUANT, [x], out, None, dtype, INT1, RequantParams(requant=rq, axis=axis),
                layout=lw.perm[x], suffix=suffix)
    lo, hi = requant_range(rq, *lw.bound(x))
    lw.bounds[y] = (max(lo, rq.qmin), min(hi, rq.qmax))
    return y


def requant_range(rq: Requant, lo: int, hi: int) -> tuple[int, int]:
    """The values a requantization gives on inputs in [lo, hi] (monotone per channel: its ends)."""
    from ..golden.requant import apply_requant

    k = np.atleast_1d(np.asarray(rq.multiplier))
    ends = np.array([[lo] * k.size, [hi] * k.size], dtype=np.int64)
    y = apply_requant(ends, rq)
    return int(y.min()), int(y.max())


def shift_requant(k, lam, d: int, lo: int, hi: int, channels: int = 1) -> Requant:
    """A shift-mode Requant floor((x·k + λ) / 2^d) clamped to [lo, hi]."""
    k = np.broadcast_to(np.asarray(k, dtype=np.int64).reshape(-1), (channels,)).copy()
    lam = np.broadcast_to(np.asarray(lam, dtype=np.int64).reshape(-1), (channels,)).copy()
    return Requant(mode="shift", multiplier=k, shift=np.full(channels, int(d), dtype=np.int64), zero_point=0,
                   qmin=int(lo), qmax=int(hi), bias=lam)


# ---------------------------------------------------------------------------------------------
# the graph rewrite: Deeploy's and QuantLab's operators that merge with their neighbours
# ---------------------------------------------------------------------------------------------

#: attribute names of QuantLab's DORY adder (an Add that requantizes its inputs, pulp_nn_add)
DORY_ADDER = ("in1_rq", "in2_rq", "out_rq")
#: Deeploy's TrueIntegerDiv merge stretch (MergeTrueIntegerDivRequantShiftPass)
TID_STRETCH = 256


def _scalar(v) -> float:
    return float(np.asarray(v).reshape(-1)[0])


def _attr_int(g: OnnxGraph, node: ONode, name: str, default: int | None = None) -> int:
    """An exporter's integer attribute (an int, or a one-value tensor or list), refused when absent
    without a default."""
    v = node.attr(name, default)
    if v is None or np.asarray(v).size == 0:
        raise unsupported(g, node, f"lacks its attribute '{name}'", "the model is malformed; re-export it")
    return int(_scalar(v))


def rewrite(g: OnnxGraph) -> OnnxGraph:
    """Deeploy's TrueIntegerDiv merged into the RequantShift after it, and QuantLab's DORY adders
    (Add with in1_rq / in2_rq / out_rq) made explicit TwDoryAdd nodes (module docstring)."""
    cons = g.consumers()
    consts = dict(g.consts)
    nodes: list[ONode] = []
    skip: set[int] = set()
    for n in g.nodes:
        if id(n) in skip:
            continue
        if n.op_type == "TrueIntegerDiv":
            readers = cons.get(n.outputs[0], [])
            r = readers[0] if len(readers) == 1 else None
            if r is None or r.op_type != "RequantShift" or n.outputs[0] in g.outputs:
                raise unsupported(g, n, "is not followed by a RequantShift alone",
                                  "tilewise deploys TrueIntegerDiv merged into the RequantShift that follows it, "
                                  "as Deeploy does")
            mul, add = consts.get(r.input(1)), consts.get(r.input(2))
            if mul is None or add is None or np.asarray(mul).size != 1 or np.asarray(add).size != 1 \
                    or _scalar(add) != 0:
                raise unsupported(g, r, "follows a TrueIntegerDiv with a per-channel mul or a non-zero add",
                                  "Deeploy merges TrueIntegerDiv only into a RequantShift with scalar mul and add 0")
            delta, eta, eps, y = (_attr_int(g, n, a) for a in ("Delta", "eta", "eps", "y"))
            if y * eta + eps == 0:
                raise unsupported(g, n, f"divides by y·η + ε = {y}·{eta} + {eps} = 0", "the model is malformed")
            coeff = (delta * eta) // (y * eta + eps) * TID_STRETCH
            if not (np.isfinite(_scalar(mul)) and abs(_scalar(mul) * coeff) < 2.0 ** 62):
                raise unsupported(g, r, f"multiplies by {_scalar(mul):g}·{coeff} after the TrueIntegerDiv, "
                                  "beyond int64",
                                  "keep the RequantShift's mul within int32")
            new_mul = f"{r.name}__tid_mul"
            consts[new_mul] = np.asarray(round(_scalar(mul) * coeff), dtype=np.float64)
            attrs = dict(r.attrs)
            attrs["div"] = _attr_int(g, r, "div") * TID_STRETCH
            attrs["tw_note"] = (f"TrueIntegerDiv '{n.name}' merged into it as Deeploy does: mul·⌊Δ·η/(y·η+ε)⌋·"
                                f"{TID_STRETCH} = {int(consts[new_mul])}, div·{TID_STRETCH}")
            nodes.append(ONode("RequantShift", r.name, (n.inputs[0], new_mul, r.input(2)), r.outputs, attrs, r.domain))
            skip.add(id(r))
        elif n.op_type == "Add" and any(a in n.attrs for a in DORY_ADDER):
            nodes.append(ONode("TwDoryAdd", n.name, n.inputs, n.outputs, dict(n.attrs), TW_DOMAIN))
        else:
            nodes.append(n)
    if len(nodes) == len(g.nodes) and all(a is b for a, b in zip(nodes, g.nodes)):
        return g
    return g.with_nodes(nodes, consts)


# ---------------------------------------------------------------------------------------------
# handlers
# ---------------------------------------------------------------------------------------------

ARITH = {"Add": Op.ADD, "Sub": Op.SUB, "Mul": Op.MUL}
EIGHT_BIT = ("int8", "uint8")


def table_add(lw: Lowering, node: ONode, a: str, b: str, term_a, term_b, shift: int, lo: int, hi: int,
              out: str) -> str | None:
    """y = clamp((term_a(a) + term_b(b)) >> shift, lo, hi) as an add by two tables (TableAddParams)
    bound to IR name `out` — None (nothing emitted) unless a and b are 8-bit activations of one
    shape and layout, the result's range is an 8-bit type's and no sum of two terms leaves int32.
    `term_*` map an int64 array of an input's values to int64 terms."""
    ta, tb = lw.t(a), lw.t(b)
    dtype = fit_dtype(lo, hi)
    if (ta.dtype not in EIGHT_BIT or tb.dtype not in EIGHT_BIT or dtype not in EIGHT_BIT or ta.shape != tb.shape
            or lw.perm[a] != lw.perm[b] or a in lw.flat or b in lw.flat):
        return None
    exact = []
    for t, term in ((ta, term_a), (tb, term_b)):
        low = dtype_range(t.dtype)[0]
        # Python integers (an object array): a term past int64 is seen, not wrapped or raised
        exact.append([int(v) for v in term(np.arange(low, low + 256, dtype=np.int64).astype(object))])
    if max(map(abs, exact[0])) + max(map(abs, exact[1])) >= 1 << 31 or not 0 <= shift <= 31:
        return None
    tables = [np.asarray(v, dtype=np.int64) for v in exact]
    y = lw.emit(node, Op.ADD, [a, b], out, None, dtype, INT1,
                TableAddParams(table_a=tuple(int(v) for v in tables[0]), table_b=tuple(int(v) for v in tables[1]),
                               shift=int(shift), qmin=int(lo), qmax=int(hi)), layout=lw.perm[a])
    lw.bounds[y] = (lo, hi)
    return y


def _arith_range(op: str, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    if op == "Add":
        return a[0] + b[0], a[1] + b[1]
    if op == "Sub":
        return a[0] - b[1], a[1] - b[0]
    ends = [x * y for x in a for y in b]
    return min(ends), max(ends)


def _same_order(lw: Lowering, node: ONode, names: list[str]) -> tuple[list[str], tuple[int, ...]]:
    """Activations `names` in one layout: theirs when they agree, else each in ONNX order (the
    layout of the highest rank's ONNX order: operands of lower rank broadcast aligned right, numpy's
    and ONNX's rule, which the golden kernel and tw_int_binary's strides follow)."""
    perms = {lw.perm[n] for n in names}
    if len(perms) == 1 and not any(n in lw.flat for n in names):
        return names, perms.pop()
    return [lw.in_onnx_order(node, n) for n in names], tuple(range(max(len(lw.onnx_shape(n)) for n in names)))


#: an operand of emit_arith: an IR activation ("ir", name), an ONNX tensor ("onnx", name: an
#: activation or a constant) or a constant value ("const", array)
Operand = tuple


def emit_arith(lw: Lowering, node: ONode, op: str, operands: tuple[Operand, Operand], out: str,
               clip: tuple[int, int] | None = None, suffix: str = "") -> str:
    """An exact integer add / sub / mul of two operands (`Operand`) bound to IR name `out`; returns
    it. The output type holds every result (or the clip's range)."""
    resolved = []
    for kind, v in operands:
        if kind == "onnx" and v in lw.g.consts:
            kind, v = "const", np.asarray(lw.g.consts[v])
        elif kind == "onnx":
            kind, v = "ir", lw.act(node, v)
        resolved.append((kind, v))
    acts = [v for kind, v in resolved if kind == "ir"]
    if not acts:
        raise unsupported(lw.g, node, "computes on constants only", "fold the constants before exporting")
    ranges = []
    for kind, v in resolved:
        if kind == "ir":
            ranges.append(lw.bound(v))
        else:
            a = np.asarray(v, dtype=np.float64)
            if not (np.all(np.isfinite(a)) and np.all(a == np.round(a))):
                raise unsupported(lw.g, node, "computes with a non-integer constant",
                                  "integer exports compute on integer codes; requantize with integers")
            ranges.append((int(a.min()), int(a.max())) if a.size else (0, 0))
    lo, hi = _arith_range(op, ranges[0], ranges[1])
    if clip is not None:
        lo, hi = max(lo, clip[0]), min(hi, clip[1])
    dtype = out_dtype(lw, node, lo, hi)
    ir_acts, perm = _same_order(lw, node, acts)
    rank = len(perm)
    it = iter(ir_acts)
    ins = []
    for kind, v in resolved:
        if kind == "const":
            data = np.round(np.asarray(v, np.float64))
            if np.abs(data).max(initial=0) >= 1 << 31:
                raise unsupported(lw.g, node, "computes with a constant beyond int32", "use int32 constants")
            ins.append(lw.const_like(node, f"{node.name}__operand", data.astype(np.int32), rank, perm, "int32", INT1))
        else:
            ins.append(next(it))
    y = lw.emit(node, ARITH[op], ins, out, None, dtype, INT1, IntArithParams(qmin=lo, qmax=hi), layout=perm,
                suffix=suffix)
    lw.bounds[y] = (lo, hi)
    return y


@handler("Add", "Sub", "Mul")
def int_arith(lw: Lowering, node: ONode) -> None:
    integer_style(lw, node)
    if len(node.inputs) != 2:
        raise unsupported(lw.g, node, f"has {len(node.inputs)} inputs", "give two operands")
    emit_arith(lw, node, node.op_type, (("onnx", node.inputs[0]), ("onnx", node.inputs[1])),
               lw.out_name(node.outputs[0]))


@handler("TwDoryAdd")
def dory_adder(lw: Lowering, node: ONode) -> None:
    """QuantLab's DORY adder (module docstring; PULP-NN pulp_nn_add): each input with inN_rq
    requantized (x·inN_mul + inN_add) >> inN_shift and clipped to its levels, the sum, with out_rq
    requantized the same way, clipped to out_n_levels — on 8-bit codes one add by two tables
    (out_mul distributes over the sum), else requant ops and an exact add."""
    xs = [lw.act(node, x) for x in node.inputs[:2]]
    stages = []
    for i, xi in enumerate(xs, start=1):
        signed = dtype_range(lw.t(xi).dtype)[0] < 0
        if _attr_int(lw.g, node, f"in{i}_rq", 0):
            n = _attr_int(lw.g, node, f"in{i}_n_levels", 256)
            lo, hi = (-(n // 2), n // 2 - 1) if signed else (0, n - 1)
            stages.append(shift_requant(_attr_int(lw.g, node, f"in{i}_mul"), _attr_int(lw.g, node, f"in{i}_add"),
                                        _attr_int(lw.g, node, f"in{i}_shift"), lo, hi))
        else:
            stages.append(None)
    n_out = _attr_int(lw.g, node, "out_n_levels", 256)
    out_rq = _attr_int(lw.g, node, "out_rq", 0)
    om, oa, os_ = ((_attr_int(lw.g, node, "out_mul"), _attr_int(lw.g, node, "out_add"),
                    _attr_int(lw.g, node, "out_shift")) if out_rq else (1, 0, 0))

    def branch_range(x: str, rq: Requant | None) -> tuple[int, int]:
        return lw.bound(x) if rq is None else requant_range(rq, *lw.bound(x))

    (lo_a, hi_a), (lo_b, hi_b) = (branch_range(x, rq) for x, rq in zip(xs, stages))
    signed = min(lo_a, lo_b) < 0
    lo, hi = (-(n_out // 2), n_out // 2 - 1) if signed else (0, n_out - 1)

    def term(rq: Requant | None, mult: int, add: int):
        from ..golden.requant import apply_requant

        return lambda v: mult * (v if rq is None else apply_requant(v.astype(np.int64), rq).astype(object)) + add

    if table_add(lw, node, xs[0], xs[1], term(stages[0], om, oa), term(stages[1], om, 0), os_, lo, hi,
                 lw.out_name(node.outputs[0])):
        return
    branches = []
    for i, (xi, rq) in enumerate(zip(xs, stages), start=1):
        if rq is not None:
            xi = emit_requant(lw, node, xi, rq, None, lw.fresh(f"{node.name}__in{i}"),
                              out_dtype(lw, node, int(rq.qmin), int(rq.qmax)), suffix=f"_in{i}")
        branches.append(("ir", xi))
    pair = (branches[0], branches[1])
    if not out_rq:
        emit_arith(lw, node, "Add", pair, lw.ir[node.outputs[0]], clip=(lo, hi))
        return
    s = emit_arith(lw, node, "Add", pair, lw.fresh(f"{node.name}__sum"), suffix="_sum")
    emit_requant(lw, node, s, shift_requant(om, oa, os_, lo, hi), None, lw.ir[node.outputs[0]],
                 out_dtype(lw, node, lo, hi))


@handler("MatMul")
def int_matmul(lw: Lowering, node: ONode) -> None:
    """MatMul of two activations (a MatMul with a constant operand is a dense layer: onnx_nemo.py)."""
    integer_style(lw, node)
    a, b = (lw.act(node, i) for i in node.inputs[:2])
    sa, sb = lw.onnx_shape(a), lw.onnx_shape(b)
    if len(sa) < 2 or len(sb) < 2 or sa[-1] != sb[-2]:
        raise unsupported(lw.g, node, f"multiplies shapes {sa} and {sb}", "give two matrices (batched) that match")
    ra, rb = lw.bound(a), lw.bound(b)
    m = max(abs(ra[0]), abs(ra[1])) * max(abs(rb[0]), abs(rb[1])) * sa[-1]
    dtype = out_dtype(lw, node, -m, m)
    a, b = lw.in_onnx_order(node, a), lw.in_onnx_order(node, b)
    out = lw.out_name(node.outputs[0])
    lw.emit(node, Op.MATMUL, [a, b], out, None, dtype, INT1, MatMulParams())
    lw.bounds[out] = (-m, m)


@handler("iHardswish")
def int_hardswish(lw: Lowering, node: ONode) -> None:
    integer_style(lw, node)
    x = lw.act(node, node.inputs[0])
    three, six, sixth = (_attr_int(lw.g, node, a) for a in ("three", "six", "one_over_six"))
    lo, hi = lw.bound(x)
    ends = [v * (min(max(v + three, 0), six) * sixth) for v in (lo, hi, -three, 0)]
    # the product is monotone on each side of the clamp's knees: its ends and the knees bound it
    span = max(abs(lo), abs(hi)) * six * abs(sixth)
    dtype = out_dtype(lw, node, min(ends + [-span]), max(ends + [span]))
    lw.emit(node, Op.HARDSWISH, [x], lw.out_name(node.outputs[0]), None, dtype, INT1,
            HardswishParams(three=three, six=six, one_over_six=sixth), layout=lw.perm[x])


def _ints(lw: Lowering, node: ONode, idx: int, attr: str, what: str) -> list[int] | None:
    if node.input(idx):
        return lw.ints(node, node.input(idx), what)
    v = node.attr(attr)
    return None if v is None else [int(x) for x in np.asarray(v).reshape(-1)]


@handler("Pad")
def int_pad(lw: Lowering, node: ONode) -> None:
    integer_style(lw, node)
    x = lw.act(node, node.inputs[0])
    if str(node.attr("mode", "constant")) != "constant":
        raise unsupported(lw.g, node, f"pads in mode '{node.attr('mode')}'", "use constant padding")
    pads = _ints(lw, node, 1, "pads", "pads")
    shape = lw.onnx_shape(x)
    r = len(shape)
    if pads is None or len(pads) != 2 * r:
        raise unsupported(lw.g, node, f"has pads {pads} for a rank-{r} tensor", "the model is malformed")
    if node.input(3):
        raise unsupported(lw.g, node, "pads only some axes", "give pads for every axis")
    value = (float(np.asarray(lw.const(node, node.input(2), "pad value")).reshape(-1)[0]) if node.input(2)
             else float(_scalar(node.attr("value", 0.0))))
    t = lw.t(x)
    lo, hi = dtype_range(t.dtype)
    if value != round(value) or not lo <= value <= hi or min(pads) < 0:
        raise unsupported(lw.g, node, f"pads {t.dtype} codes with {value} (pads {pads})",
                          "pad with a value of the tensor's type, by non-negative amounts")
    p = lw.perm[x]
    ir_pads = tuple((pads[p[i]], pads[r + p[i]]) for i in range(r))
    y = lw.emit(node, Op.PAD, [x], lw.out_name(node.outputs[0]), None, t.dtype, t.quant,
                PadParams(pads=ir_pads, value=int(value)), layout=p)
    b_lo, b_hi = lw.bound(x)
    lw.bounds[y] = (min(b_lo, int(value)), max(b_hi, int(value)))


@handler("Slice")
def int_slice(lw: Lowering, node: ONode) -> None:
    integer_style(lw, node)
    x = lw.act(node, node.inputs[0])
    shape = lw.onnx_shape(x)
    r = len(shape)
    starts = _ints(lw, node, 1, "starts", "starts")
    ends = _ints(lw, node, 2, "ends", "ends")
    axes = _ints(lw, node, 3, "axes", "axes") or list(range(len(starts or [])))
    steps = _ints(lw, node, 4, "steps", "steps") or [1] * len(axes)
    if starts is None or ends is None or not (len(starts) == len(ends) == len(axes) == len(steps)):
        raise unsupported(lw.g, node, "has starts, ends, axes and steps of different lengths", "the model is malformed")
    s0, e0, st0 = [0] * r, list(shape), [1] * r
    for s, e, a, st in zip(starts, ends, axes, steps):
        a %= r
        if st <= 0:
            raise unsupported(lw.g, node, f"slices axis {a} with step {st}", "slice with positive steps")
        d = shape[a]
        s0[a] = min(max(s + d if s < 0 else s, 0), d)
        e0[a] = min(max(e + d if e < 0 else e, 0), d)
        st0[a] = st
    p = lw.perm[x]
    t = lw.t(x)
    params = SliceParams(starts=tuple(s0[p[i]] for i in range(r)),
                         ends=tuple(max(e0[p[i]], s0[p[i]]) for i in range(r)),
                         steps=tuple(st0[p[i]] for i in range(r)))
    lw.emit(node, Op.SLICE, [x], lw.out_name(node.outputs[0]), None, t.dtype, t.quant, params, layout=p)


@handler("Gather")
def int_gather(lw: Lowering, node: ONode) -> None:
    """Gather by constant indices that form one slice (a scalar index drops the axis: a slice and a
    reshape, as Deeploy's attention picks a head); any other gather is one sentence."""
    integer_style(lw, node)
    x = lw.act(node, node.inputs[0])
    shape = lw.onnx_shape(x)
    r = len(shape)
    if not node.input(1) or node.input(1) not in lw.g.consts:
        raise unsupported(lw.g, node, "gathers by computed indices", "gather by constant indices")
    idx = np.asarray(lw.g.consts[node.input(1)])
    axis = int(node.attr("axis", 0))
    if not -r <= axis < r or idx.ndim > 1 or idx.size == 0 or not np.all(idx == np.round(idx)):
        raise unsupported(lw.g, node, f"gathers indices of shape {idx.shape} along axis {axis} of a {r}-D tensor",
                          "gather one index or a 1-D run of indices")
    axis %= r
    d = shape[axis]
    v = [int(i) % d if -d <= int(i) < d else -1 for i in idx.reshape(-1)]
    step = v[1] - v[0] if len(v) > 1 else 1
    if min(v) < 0 or step <= 0 or v != list(range(v[0], v[0] + step * len(v), step)):
        raise unsupported(lw.g, node, f"gathers indices {v} along axis {axis}, not one slice of its {d} elements",
                          "gather indices that form one increasing run")
    p = lw.perm[x]
    t = lw.t(x)
    starts, ends, steps = [0] * r, list(shape), [1] * r
    starts[axis], ends[axis], steps[axis] = v[0], v[-1] + 1, step
    out_shape = tuple(d if i != axis else len(v) for i, d in enumerate(shape))
    y = x
    if out_shape != shape:
        params = SliceParams(starts=tuple(starts[p[i]] for i in range(r)), ends=tuple(ends[p[i]] for i in range(r)),
                             steps=tuple(steps[p[i]] for i in range(r)))
        y = lw.emit(node, Op.SLICE, [x], lw.fresh(f"{node.name}__slice"), None, t.dtype, t.quant, params, layout=p)
        lw.bounds[y] = lw.bound(x)
    target = out_shape[:axis] + out_shape[axis + 1:] if idx.ndim == 0 else out_shape
    emit_reshape(lw, node, y, target, node.outputs[0])


@handler("ReduceSum", "ReduceMean")
def int_reduce(lw: Lowering, node: ONode) -> None:
    integer_style(lw, node)
    x = lw.act(node, node.inputs[0])
    shape = lw.onnx_shape(x)
    r = len(shape)
    axes = _ints(lw, node, 1, "axes", "axes")
    if axes is None:
        if int(node.attr("noop_with_empty_axes", 0)):
            lw.alias(node.outputs[0], x)
            return
        axes = list(range(r))
    axes = sorted({a % r for a in axes})
    keep = bool(int(node.attr("keepdims", 1)))
    p = lw.perm[x]
    ir_axes = tuple(sorted(p.index(a) for a in axes))
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    lo, hi = lw.bound(x)
    average = node.op_type != "ReduceSum"      # ReduceMean, Deeploy's IntegerMean
    dtype = lw.t(x).dtype if average else out_dtype(lw, node, lo * n, hi * n)
    if keep:
        layout = p
    else:
        kept = [p[i] for i in range(r) if i not in ir_axes]          # their ONNX axes, in IR order
        order = sorted(kept)
        layout = tuple(order.index(a) for a in kept)
    y = lw.emit(node, Op.REDUCE, [x], lw.out_name(node.outputs[0]), None, dtype, INT1,
                ReduceParams(axes=ir_axes, keepdims=keep, average=average), layout=layout)
    lw.bounds[y] = (lo, hi) if average else (lo * n, hi * n)


__all__ = ["as_4d", "channel_axis", "emit_arith", "emit_requant", "fit_dtype", "node_2d", "requant_range",
           "rewrite", "shift_requant", "to_3d"]
