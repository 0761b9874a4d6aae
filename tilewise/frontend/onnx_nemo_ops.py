"""NEMO's integer AveragePool and residual Add (notes/integer-onnx.md) -> IR conv2d layers.

Both are exact integer computations that the IR's conv2d with a `shift` / `div` requantization
(ir/requant.py) already states, so they lower to it and run on every kernel that takes the layer:

- Average pooling: `[Pad …] → AveragePool(K×K) → Mul → Mul → Div(2^d) → Floor` (or any chain
  onnx_nemo.py reads). With n = K·H taps, every window's sum S is an integer and the chain computes
  div(m·(k·S/n + λ), D). That is a depthwise conv with all-one weights (acc = S, the pads' zeros
  counted: a folded Pad is part of the window, so AveragePool's own pads need
  count_include_pad = 1) and the requantization div(m·(k·acc + n·λ), n·D) — a floor shift when
  n·D is a power of two and the rounding allows it (onnx_nemo._requant). onnxruntime computes
  S/n and the chain in float32; `_check_float_pool` runs that float32 sequence (with S/n as a
  division and as a multiplication by 1/n, the two ways a runtime computes it) on every window sum
  an 8-bit input can give and refuses the model if any differs from the integer result: a proof by
  exhaustion, not an assumption.
- Residual add: `a → Mul(c_a)`, `b → Mul(c_b)` (each optional), `Add`, then the chain (Div(2^k)
  with Casts, Floor or Clip). With g = gcd(c_a, c_b), c_a·a + c_b·b = g·(w_a·a + w_b·b): the
  channel concatenation [a | b] (a copy, both operands share scale 1) through a 1×1 conv whose
  weights are w_a·I and w_b·I (int8), requantized by the chain with k·g. Exact; it costs the conv's
  2·C MACs per output where an add kernel would do 2 — a dedicated kernel is not written yet.
  The sums are small integers, exact in onnxruntime's float32 as the linear chains' are.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..golden.requant import divide
from ..ir.ops import Op
from ..ir.params import ConcatParams
from ..ir.tensor import dtype_range
from .onnx_lower import NHWC, Lowering, handler
from .onnx_model import TW_DOMAIN, OnnxGraph, ONode, unsupported
from .onnx_nemo import INT1, _absorb, _bound, _requant, clip_dtype, emit_int_conv, fold_pads, lower_two_stage

#: the window sums checked: every sum of n values of an int8 or uint8 input
X_RANGE = (-128, 255)


def fuse_pools_and_adds(g: OnnxGraph) -> OnnxGraph:
    """Rewrite each AveragePool and each residual Add with its chain into IntAvgPool / IntAdd."""
    prod, cons = g.producers(), g.consumers()
    removed: set[int] = set()
    replaced: dict[int, ONode] = {}
    for n in g.nodes:
        if id(n) in removed:
            continue
        if n.op_type == "AveragePool":
            new, gone = _pool(g, prod, cons, n)
        elif n.op_type == "Add" and not any(i in g.consts for i in n.inputs):
            new, gone = _add(g, prod, cons, n)
        else:
            continue
        replaced[id(n)] = new
        removed.update(id(c) for c in gone)
    return g.with_nodes([replaced.get(id(n), n) for n in g.nodes if id(n) not in removed])


def _pool(g: OnnxGraph, prod: dict, cons: dict, n: ONode) -> tuple[ONode, list[ONode]]:
    kernel = [int(v) for v in n.attr("kernel_shape", [])]
    if len(kernel) != 2:
        raise unsupported(g, n, f"pools over {len(kernel)} axes", "tilewise supports 2-D pooling")
    own = [int(v) for v in n.attr("pads", [0, 0, 0, 0])]
    if any(own) and not int(n.attr("count_include_pad", 0)):
        raise unsupported(g, n, "pads without counting the pads (border windows average fewer values)",
                          "pad with an explicit Pad node or set count_include_pad=1")
    src, extra, pads, _ = fold_pads(g, prod, cons, n)   # zero pads only
    ch, out, absorbed = _absorb(g, cons, n, 1, True)
    taps = kernel[0] * kernel[1]
    if ch.adc is not None or not (ch.divided or (ch.d == 0 and ch.divisor == 1 and ch.int_div == 1)):
        raise unsupported(g, n, "is not followed by an integer requantization (Mul, Div by 2^d, Floor)",
                          "requantize the average as NEMO exports it")
    attrs = dict(n.attrs)
    attrs.update(ch.attrs(absorbed))
    # div(m·(k·S/n + λ), D) = div(m·(k·S + n·λ), n·D): the window's n joins the divisor
    attrs.update({"pads": [own[i] + extra[i] for i in range(4)], "tw_lambda": ch.lam.astype(np.int64) * taps,
                  "tw_int_div": ch.int_div * taps,
                  "tw_note": f"AveragePool as a sum of {taps} taps with {taps} joined to the divisor, onnxruntime's "
                             "float32 average checked on every window sum"})
    _check_float_pool(g, n, absorbed, taps, attrs)
    return ONode("IntAvgPool", n.name, (src,), (out,), attrs, TW_DOMAIN), [*absorbed, *pads]


def _add(g: OnnxGraph, prod: dict, cons: dict, n: ONode) -> tuple[ONode, list[ONode]]:
    srcs, scales, gone = [], [], []
    for i in n.inputs[:2]:
        p = prod.get(i)
        c = g.consts.get(next((j for j in p.inputs if j != p.inputs[0]), "")) if p is not None and p.op_type == "Mul" \
            else None
        if c is not None and np.asarray(c).size == 1 and len(cons.get(i, [])) == 1 and i not in g.outputs:
            v = float(np.asarray(c).reshape(-1)[0])
            if not math.isfinite(v) or v != round(v) or v == 0:
                raise unsupported(g, p, f"scales a residual branch by {v}", "scale branches by non-zero integers")
            srcs.append(p.inputs[0])
            scales.append(int(v))
            gone.append(p)
        else:
            srcs.append(i)
            scales.append(1)
    ch, out, absorbed = _absorb(g, cons, n, 1, True)
    if ch.adc is not None:
        raise unsupported(g, n, "adds before an ADC stage", "requantize the sum with Div by 2^d")
    attrs = ch.attrs(absorbed)
    attrs["tw_branch_scales"] = tuple(scales)
    attrs["tw_note"] = f"residual Add of branches scaled by {scales[0]} and {scales[1]}, as a concat and 1×1 conv"
    return ONode("IntAdd", n.name, tuple(srcs), (out,), attrs, TW_DOMAIN), [*absorbed, *gone]


def _emulate(g: OnnxGraph, chain: list[ONode], v: np.ndarray) -> np.ndarray:
    """onnxruntime's arithmetic of the chain's nodes on float32 `v` (int64 after a Cast)."""
    for c in chain:
        other = next((i for i in c.inputs[1:] if i), "")
        k = np.asarray(g.consts[other]) if other in g.consts else None
        if c.op_type == "Cast":
            v = np.trunc(v).astype(np.int64) if int(c.attr("to")) in (6, 7) else v.astype(np.float32)
        elif c.op_type in ("Mul", "Add", "Div") and v.dtype == np.int64:
            k = np.asarray(k, np.int64).reshape(-1)[0]
            v = v * k if c.op_type == "Mul" else v + k if c.op_type == "Add" else divide(v, int(k), "trunc")
        elif c.op_type in ("Mul", "Add", "Div"):
            k = np.float32(np.asarray(k).reshape(-1)[0])
            v = (v * k if c.op_type == "Mul" else v + k if c.op_type == "Add" else v / k).astype(np.float32)
        elif c.op_type == "Floor":
            v = np.floor(v)
        elif c.op_type == "Relu":
            v = np.maximum(v, 0)
        elif c.op_type == "Clip":
            lo, hi = _bound(g, c, 1, "min"), _bound(g, c, 2, "max")
            v = np.clip(v, -np.inf if lo is None else lo, np.inf if hi is None else hi).astype(v.dtype)
    return np.asarray(v)


def _check_float_pool(g: OnnxGraph, n: ONode, chain: list[ONode], taps: int, attrs: dict) -> None:
    """Every window sum through onnxruntime's float32 sequence equals the exact integer result."""
    s = np.arange(X_RANGE[0] * taps, X_RANGE[1] * taps + 1, dtype=np.int64)
    k, lam = int(attrs["tw_k"].reshape(-1)[0]), int(attrs["tw_lambda"].reshape(-1)[0])
    total = (1 << int(attrs["tw_d"])) * int(attrs["tw_int_div"])
    exact = divide(int(attrs["tw_m"]) * (k * s + lam), total, "trunc" if attrs["tw_trunc"] else "floor")
    lo, hi = attrs["tw_lo"], attrs["tw_hi"]
    exact = np.clip(exact, -np.inf if lo is None else lo, np.inf if hi is None else hi)
    f = s.astype(np.float32)
    for avg in (f / np.float32(taps), f * (np.float32(1) / np.float32(taps))):
        got = _emulate(g, chain, avg.astype(np.float32))
        bad = np.flatnonzero(got.astype(np.float64) != exact)
        if bad.size:
            raise unsupported(g, n, f"averages {taps} values in float32, which for the window sum {int(s[bad[0]])} "
                              f"gives {got[bad[0]]} where the exact integer result is {int(exact[bad[0]])}",
                              "use a window whose size is a power of two, or requantize with Mul by the window size")


def _channels(node: ONode, c: int) -> ONode:
    """`node` with its chain's per-channel constants broadcast to c channels."""
    return replace(node, attrs={**node.attrs, "tw_k": np.broadcast_to(node.attr("tw_k"), (c,)).copy(),
                                "tw_lambda": np.broadcast_to(node.attr("tw_lambda"), (c,)).copy()})


@handler("IntAvgPool")
def int_avg_pool(lw: Lowering, node: ONode) -> None:
    x = lw.act(node, node.inputs[0])
    c = lw.t(x).shape[3]
    kh, kw = (int(v) for v in node.attr("kernel_shape"))
    conv = _channels(replace(node, attrs={**node.attrs, "group": c, "dilations": [1, 1]}), c)
    emit_int_conv(lw, conv, x, np.ones((c, 1, kh, kw), np.int8), None, f"{node.name}__ones", "")


def _exact_identity(rq) -> bool:
    """floor((k·s + λ) / 2^d) = s for every integer s: shift mode, k = 2^d and 0 ≤ λ < 2^d."""
    if rq.mode != "shift":
        return False
    k = np.asarray(rq.multiplier, dtype=np.int64)
    d = np.asarray(rq.shift, dtype=np.int64)
    lam = np.zeros_like(k) if rq.bias is None else np.asarray(rq.bias, dtype=np.int64)
    return bool(np.all(k == (1 << d)) and np.all(lam >= 0) and np.all(lam < (1 << d)))


def _by_tables(lw: Lowering, node: ONode, a: str, b: str, ca: int, cb: int) -> bool:
    """The residual add as one add by tables (onnx_int.table_add) where its chain is a floor shift:
    clamp(((k·c_a·a + λ + zp·2^d) + k·c_b·b) >> d); False (nothing emitted) otherwise."""
    from .onnx_int import table_add

    acc = sum(abs(c) * max(abs(v) for v in lw.bound(x)) for c, x in ((ca, a), (cb, b)))
    rq = _requant(lw, node, acc)
    k, lam, d = (np.asarray(v, np.int64).reshape(-1) for v in (rq.multiplier, rq.bias if rq.bias is not None else 0,
                                                               rq.shift))
    if rq.mode != "shift" or k.size != 1 or lam.size != 1 or d.size != 1:
        return False
    k0, lam0, d0 = int(k[0]), int(lam[0]) + (int(rq.zero_point) << int(d[0])), int(d[0])
    return table_add(lw, node, a, b, lambda v: k0 * ca * v + lam0, lambda v: k0 * cb * v, d0, int(rq.qmin),
                     int(rq.qmax), lw.out_name(node.outputs[0])) is not None


@handler("IntAdd")
def int_add(lw: Lowering, node: ONode) -> None:
    """NEMO's residual Add (module docstring): two 8-bit branches of one shape and type whose sum
    is clipped to 8 bits as a concat and a 1×1 conv (the cluster's kernels); otherwise — an
    unclipped sum (NEMO keeps it wide, e.g. a + b in [0, 510]), other types or shapes — the
    exact integer add of the scaled branches and the chain as a requant (onnx_int.py), skipped
    when it is the identity."""
    from .onnx_int import emit_arith, emit_requant, out_dtype, requant_range

    if lower_two_stage(lw, node, int_add):
        return
    a, b = (lw.act(node, i) for i in node.inputs[:2])
    ta, tb = lw.t(a), lw.t(b)
    ca, cb = node.attr("tw_branch_scales")
    gcd = math.gcd(ca, cb)
    wa, wb = ca // gcd, cb // gcd
    lo, hi = node.attr("tw_lo"), node.attr("tw_hi")
    narrow = lo is not None and hi is not None and clip_dtype(lo, hi) in ("int8", "uint8")
    if narrow and _by_tables(lw, node, a, b, ca, cb):
        return
    if (narrow and ta.shape == tb.shape and ta.dtype == tb.dtype and ta.dtype in ("int8", "uint8")
            and len(ta.shape) == 4 and lw.perm[a] == lw.perm[b] == NHWC and max(abs(wa), abs(wb)) <= 127):
        c = ta.shape[3]
        cat = lw.fresh(f"{node.name}__branches")
        lw.emit(node, Op.CONCAT, [a, b], cat, None, ta.dtype, INT1,
                ConcatParams(mode="onnx", axis=3, input_quant=((1.0, 0), (1.0, 0)), output_quant=(1.0, 0)),
                layout=NHWC, suffix="_concat")
        w = np.zeros((c, 2 * c, 1, 1), np.int8)
        w[np.arange(c), np.arange(c), 0, 0] = wa
        w[np.arange(c), c + np.arange(c), 0, 0] = wb
        conv = _channels(node, c)
        conv = replace(conv, attrs={**conv.attrs, "tw_k": conv.attr("tw_k") * gcd, "kernel_shape": [1, 1]})
        emit_int_conv(lw, conv, cat, w, None, f"{node.name}__branch_weights", "")
        return
    branches = []
    for x, w_ in ((a, wa), (b, wb)):
        if w_ != 1:
            x = emit_arith(lw, node, "Mul", (("ir", x), ("const", np.asarray(w_))), lw.fresh(f"{x}__scaled"),
                           suffix="_scale")
        branches.append(("ir", x))
    chain = replace(node, attrs={**node.attrs, "tw_k": np.asarray(node.attr("tw_k")) * gcd})
    bare = node.attr("tw_d") == 0 and node.attr("tw_int_div", 1) == 1 and lo is None and hi is None
    if bare and np.all(np.asarray(chain.attr("tw_k")) == 1) and np.all(np.asarray(node.attr("tw_lambda")) == 0):
        emit_arith(lw, node, "Add", tuple(branches), lw.out_name(node.outputs[0]))
        return
    s = emit_arith(lw, node, "Add", tuple(branches), lw.fresh(f"{node.name}__sum"), suffix="_sum")
    s_lo, s_hi = dtype_range(lw.t(s).dtype)
    rq = _requant(lw, chain, max(abs(s_lo), abs(s_hi)))
    if _exact_identity(rq) and lo is None and hi is None:
        lw.alias(node.outputs[0], s)
        return
    r_lo, r_hi = requant_range(rq, s_lo, s_hi)
    emit_requant(lw, node, s, rq, None, lw.out_name(node.outputs[0]),
                 out_dtype(lw, node, max(r_lo, rq.qmin), min(r_hi, rq.qmax)), suffix="_requant")
