"""NEMO / QuantLab integer-deployable ONNX graphs -> IR conv2d / fully_connected with ``shift`` / ``div`` requant.

NEMO's "ID" export and QuantLab (the inputs DORY takes, seed 001 §III; DORY's NEMO/Quantlab
frontends) keep float32 tensors that hold integers: Conv/Gemm/MatMul with integer weights (8-bit) and
integer biases, followed by the requantization written out as elementwise ops,
    y = clip(floor((k·acc + λ) / 2^d), lo, hi)
as any sequence of Mul (integer k), Add (integer λ), Div (by 2^d), Floor and Clip/Relu — the
PULP-NN requantization (k·φ + λ) >> d of seed 004 §"requantization". Each such chain becomes one IR
conv2d/fully_connected with Requant(mode="shift", multiplier=k, bias=λ·2^(d − d_at_add), shift=d,
qmin=lo, qmax=hi). A Pad before a Conv is folded into its pads (of zeros, or of one integer value:
Conv2dParams.pad_value). Activation dtypes follow the clip range (DORY's activations are unsigned 8-bit: [0, 255] ->
uint8); the graph input is uint8.

DIANA's analog core (notes/accelerators.md, HTVM's analog conv) writes its 6-bit ADC as a first
stage before that chain: Conv → Div(D) → Floor → Clip(lo, hi) → Mul(m) → Add(a) → Div(2^s) →
Floor → Clip(qmin, qmax). A chain that starts with Div by a positive integer D (any D, not only a
power of two), Floor and Clip, and goes on with a Mul or Add, becomes Requant(mode="adc",
divisor=D, adc_min=lo, adc_max=hi, multiplier=m, bias=a, shift=s) (golden/requant.py); so does
Conv → Div(D) → Floor → Clip alone when D is not a power of two (m = 1, a = 0, s = 0). onnxruntime
computes floor(acc / D) in float32, which equals the integer floor division whenever |acc| < 2^24
and D ≤ 2^18 and the quotient is within 64 of zero (the spacing of float32 there, 2^−18, is below
1/D, so a quotient just below an integer never rounds up to it; beyond ±64 the ADC clips either
way); m·a6 + a stays below 2^24 when m fits int16 and |a| < 2^23.

Weights are int8, or int4 / int2 (values in an int8 container, the IR dtype saying the width: NE16's
2–8-bit weights) for a node the model's metadata_props name in `tilewise.w_bits.<node>` (written by
tilewise quantize's shift writer; `weight_dtype` refuses a weight outside the stated width).

NEMO's own export (notes/integer-onnx.md) writes the requantization with Casts:
Mul(κ) → Add(λ) → Cast(int64) → Mul(m) → Div(D) → Cast(int64) [→ Cast(int64)] → Cast(float) → Clip.
The float part (κ, λ, and Div by 2^d) is read as above; a Cast to int32/int64 after an unfloored
Div(2^d) truncates toward zero (ONNX Cast, C's conversion); in the int64 part a uniform Mul(m) is
kept as m and Div(D) is onnxruntime's int64 division, toward zero, by any D > 0 (NEMO writes 2^d
and 2^d − 1); Casts back to float change nothing. The chain is then div_r(m·(k·acc + λ), D_total)
with r = floor or trunc.

Which semantics a layer gets (`_requant`; its Requant.semantics sentence says why, `analyze`
prints it): the floor shift mode "shift" with k·m, λ·m and d = log2 D_total only where it provably
equals the model — D_total a power of two and either floor rounding, or truncation followed by a
Clip whose lower bound is ≥ 0 (trunc and floor differ only on negative quotients, which both
round to values ≤ 0 that such a clip maps to its bound) — and k·m, λ·m fit int32; otherwise the
exact mode "div" (ir/requant.py), never DORY's shift by round(log2 D). A "div" layer is refused
when m·(|κ|·A + |λ|) could leave int64, A = Σ|w|·max|x| + |bias| bounding the accumulator.

onnxruntime runs these graphs in float32, which equals the integer arithmetic as long as every
intermediate of the float part stays below 2^24 in magnitude (assumed, as for any NEMO graph);
the int64 part is exact in both; the golden model is the integer definition.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..ir.ops import Op
from ..ir.params import FullyConnectedParams, ReshapeParams
from ..ir.requant import Requant
from ..ir.tensor import QuantParams, dtype_range
from . import shift_fit
from .onnx_lower import NHWC, Lowering, handler
from .onnx_model import TW_DOMAIN, OnnxGraph, ONode, unsupported
from .onnx_qop import conv_params, fc_input

LINEAR = ("Conv", "Gemm", "MatMul")
QUANT_OPS = ("QuantizeLinear", "DequantizeLinear")
#: the ops a linear op's requantization chain may hold (`_absorb` ends the chain at any other)
REQUANT_CHAIN = ("Mul", "Add", "Div", "Floor", "Clip", "Relu", "Cast")
INT1 = QuantParams((1.0,), (0,))


def has_quantization(g: OnnxGraph) -> bool:
    return any(n.op_type in QUANT_OPS or n.op_type.startswith("QLinear") or n.op_type == "QGemm" for n in g.nodes)


def _integral(a: np.ndarray) -> bool:
    a = np.asarray(a, dtype=np.float64)
    return bool(np.all(np.isfinite(a)) and np.all(a == np.round(a)))


def is_weighted(g: OnnxGraph, n: ONode) -> bool:
    """A linear op with constant weights (a dense or conv layer); a MatMul of two activations is
    not (onnx_int.py)."""
    return n.op_type in LINEAR and n.input(1) in g.consts


def check_integer_model(g: OnnxGraph) -> None:
    """Raise the 'computes in float' error unless every linear operator has integer weights (a
    graph without one — Deeploy's Add, Pad, Slice ... kernels — is taken as computing on codes)."""
    hint = ("quantize it first (tilewise quantize, or onnxruntime.quantization.quantize_static for QDQ or "
            "QOperator models), or export an integer-deployable NEMO/QuantLab graph")
    for n in g.nodes:
        if n.op_type not in LINEAR or (n.op_type == "MatMul" and n.input(1) not in g.consts):
            continue
        w = g.consts.get(n.input(1))
        if w is None or not _integral(w) or np.abs(w).max(initial=0) > 128:
            raise unsupported(g, n, "computes in float (the model has no quantization operators and these weights "
                              "are not 8-bit integers)", hint)


def per_channel(arr: np.ndarray, channels: int, conv: bool) -> np.ndarray | None:
    """A constant broadcast along the channel axis (NCHW axis 1, or the last axis of a dense output)
    as a [channels] vector; None if it broadcasts along anything else."""
    a = np.asarray(arr, dtype=np.float64)
    if a.size == 1:
        return np.full(channels, a.reshape(-1)[0])
    if a.size != channels:
        return None
    if conv and a.ndim >= 3 and a.shape[-3] == channels:
        return a.reshape(channels)
    if conv and a.ndim >= 2 and a.shape[-2] == channels and a.shape[-1] == 1:
        return a.reshape(channels)      # [1, C, 1] after a 1-D convolution (N×C×W)
    if not conv and a.shape[-1] == channels:
        return a.reshape(channels)
    return None


#: Cast targets (ONNX TensorProto element types): integers the value is exact in, and floats
CAST_INT = (6, 7)        # INT32, INT64
CAST_FLOAT = (1, 11)     # FLOAT, DOUBLE


class _Chain:
    """div_r(m·(k·acc + λ), 2^d · D) with integer k, λ per channel, then clip (module docstring).

    Float phase: k, λ, and a power-of-two divisor 2^d that a Floor ("floor") or a Cast to int64
    ("trunc") finalizes. Integer phase (after a Cast to int32/int64): a uniform multiplier m and
    an int64 Div by D (truncating). `divisor`: a first float Div by an integer that is not a
    power of two (DIANA); `adc`: (D, lo, hi) of a finished first stage Div(D) → Floor → Clip."""

    def __init__(self, channels: int) -> None:
        self.k = np.ones(channels, dtype=np.float64)
        self.lam = np.zeros(channels, dtype=np.float64)
        self.d = 0
        self.divisor = 1
        self.floored = False
        self.lo: float | None = None
        self.hi: float | None = None
        self.adc: tuple[int, int, int] | None = None
        self.integer = False     # after a Cast to an integer type
        self.trunc = False       # the division so far rounds toward zero
        self.m = 1               # integer-phase multiplier
        self.int_div = 1         # integer-phase (int64 Div) divisor
        self.post: int | None = None    # a pending Mul(m) after a floor (`_integer_step`)
        self.post_at = 0
        #: (m, D) of a second stage trunc(m·v / D) after the floor (NEMO's residual outputs)
        self.post_stage: tuple[int, int] | None = None
        self.stage1 = ""         # the ONNX tensor holding the first stage's result
        self.casts: list[str] = []

    @property
    def divided(self) -> bool:
        """A division has been rounded (floored, truncated by a cast, or done in int64)."""
        return self.floored or self.trunc

    def adc_stage(self) -> tuple[int, int, int] | None:
        """(D, lo, hi) when the chain so far is exactly Div(D) → Floor → Clip(lo, hi)."""
        if not (self.floored and self.lo is not None and self.hi is not None and self.adc is None
                and not self.integer and np.all(self.k == 1) and np.all(self.lam == 0)):
            return None
        return self.divisor << self.d, int(self.lo), int(self.hi)

    def start_second_stage(self) -> None:
        """The first stage was the ADC: keep it in `adc`, then read the digital stage afresh."""
        adc = self.adc_stage()
        assert adc is not None
        self.k, self.lam = np.ones_like(self.k), np.zeros_like(self.lam)
        self.d, self.divisor, self.floored, self.lo, self.hi = 0, 1, False, None, None
        self.adc = adc

    @property
    def clipped(self) -> bool:
        return self.lo is not None or self.hi is not None

    def attrs(self, absorbed: list[ONode]) -> dict:
        """The chain as the attributes of the fused node (read back by `_requant`)."""
        return {"tw_k": self.k.astype(np.int64), "tw_lambda": self.lam.astype(np.int64), "tw_d": self.d,
                "tw_lo": self.lo, "tw_hi": self.hi, "tw_adc": self.adc, "tw_m": self.m,
                "tw_int_div": self.int_div, "tw_trunc": self.trunc, "tw_post": self.post_stage,
                "tw_stage1": self.stage1 if self.post_stage else "",
                "tw_chain": tuple(c.name for c in absorbed)}


def _integer_divisor(vec: np.ndarray) -> int | None:
    """A uniform positive integer divisor (not a power of two), else None."""
    if len(set(vec)) != 1 or not math.isfinite(vec[0]) or vec[0] <= 0 or vec[0] != round(vec[0]):
        return None
    return int(vec[0])


def _pow2(vec: np.ndarray) -> int | None:
    """log2 of a uniform positive power of two, else None."""
    if len(set(vec)) != 1 or not vec[0] > 0 or not math.isfinite(vec[0]):
        return None
    e = math.log2(vec[0])
    return int(e) if e == round(e) else None


def _integer_step(g: OnnxGraph, ch: _Chain, c: ONode, vec: np.ndarray) -> bool:
    """Mul / Div of the integer phase (int64 arithmetic, Div toward zero); False: not part of
    the requantization (the chain ends before `c`)."""
    if ch.floored and ch.post is None and ch.post_stage is None and c.op_type == "Mul" and len(set(vec)) == 1 \
            and _integral(vec):
        ch.post = int(vec[0])      # a Mul(m) after the floor: kept only if a Div(m) undoes it
        return True
    if ch.floored and ch.post is not None and c.op_type == "Div" and len(set(vec)) == 1 and vec[0] > 0:
        if vec[0] != ch.post:      # a second requantization trunc(m·v / D) of the floored value
            ch.post_stage = (ch.post, int(vec[0]))
        ch.post = None             # (m = D: trunc(m·v / m) = v, NEMO's rescaling by a ratio of 1)
        return True
    if c.op_type == "Add" or ch.floored or (ch.divided and c.op_type == "Mul"):
        return False
    if not _integral(vec):
        raise unsupported(g, c, "computes on int64 with a non-integer constant", "use integer constants")
    if c.op_type == "Mul":
        if len(set(vec)) == 1:
            ch.m *= int(vec[0])
        else:
            ch.k, ch.lam = ch.k * vec, ch.lam * vec
        return True
    div = _integer_divisor(vec)
    if div is None:
        raise unsupported(g, c, "divides by a non-uniform or non-positive integer", "divide by one positive integer")
    ch.int_div *= div      # trunc(trunc(x / a) / b) = trunc(x / (a·b)) for a, b > 0
    ch.trunc = True
    return True


def _absorb(g: OnnxGraph, cons: dict, node: ONode, channels: int, conv: bool) -> tuple[_Chain, str, list[ONode]]:
    ch = _Chain(channels)
    out = node.outputs[0]
    absorbed: list[ONode] = []
    while out not in g.outputs:
        readers = cons.get(out, [])
        if len(readers) != 1:
            break
        c = readers[0]
        if c.op_type not in REQUANT_CHAIN:
            break
        other = next((i for i in c.inputs if i and i != out), "")
        val = g.consts.get(other) if other else None
        vec = per_channel(val, channels, conv) if val is not None else None
        if c.op_type == "Cast":
            to = int(c.attr("to", 0))
            if to in CAST_INT and not ch.integer:
                if ch.divisor > 1 or ch.adc is not None:
                    break
                if ch.d > 0 and not ch.floored:
                    ch.trunc = True          # float -> int64 rounds toward zero
                ch.integer = True
            elif to in CAST_FLOAT:
                ch.integer = False if not ch.divided else ch.integer
            elif to not in CAST_INT:
                break
            ch.casts.append(c.name)
        elif ch.integer and c.op_type in ("Mul", "Add", "Div"):
            pending = ch.post
            if vec is None or ch.clipped or not _integer_step(g, ch, c, vec):
                break
            if pending is None and ch.post is not None:
                ch.post_at = len(absorbed)
                ch.stage1 = out      # the floored value the second stage reads
        else:
            if c.op_type in ("Mul", "Add") and vec is not None and ch.adc_stage() is not None:
                ch.start_second_stage()
            if c.op_type in ("Mul", "Add", "Div") and (vec is None or ch.divided or ch.clipped):
                break       # arithmetic after a rounding or a clip starts another layer's chain
            if c.op_type == "Mul":
                if _integral(vec):
                    ch.k, ch.lam = ch.k * vec, ch.lam * vec
                elif np.all(vec > 0) and _pow2(1 / vec) is not None:
                    ch.d += _pow2(1 / vec)
                else:
                    raise unsupported(g, c, "multiplies by a non-integer", "NEMO requantization multiplies by integers")
            elif c.op_type == "Add":
                scaled = vec * (2.0 ** ch.d) / ch.m      # value = m·(k·acc + λ) / 2^d
                if not _integral(scaled):
                    raise unsupported(g, c, "adds a non-integer offset", "NEMO requantization adds integers")
                ch.lam = ch.lam + scaled
            elif c.op_type == "Div":
                if _pow2(vec) is not None:
                    ch.d += _pow2(vec)
                elif not absorbed and ch.adc is None and _integer_divisor(vec) is not None:
                    ch.divisor = _integer_divisor(vec)      # DIANA's ADC stage (module docstring)
                else:
                    raise unsupported(g, c, "divides a float by something other than a power of two",
                                      "requantize with Div by 2^d, or Cast to int64 before an integer Div")
            elif c.op_type == "Floor":
                ch.floored = True
            elif c.op_type in ("Clip", "Relu"):
                lo, hi = (0.0, None) if c.op_type == "Relu" else (_bound(g, c, 1, "min"), _bound(g, c, 2, "max"))
                lo = None if lo == -math.inf else lo      # ONNX's own defaults: no bound
                hi = None if hi == math.inf else hi
                for v in (lo, hi):
                    if v is not None and not (math.isfinite(v) and v == round(v)):
                        raise unsupported(g, c, f"clips to the non-integer bound {v}", "clip to integers")
                lo = None if lo is not None and lo <= -2.0 ** 31 else lo   # below int32: no bound
                hi = None if hi is not None and hi >= 2.0 ** 31 - 1 else hi
                for v in (lo, hi):
                    if v is not None and not -2.0 ** 31 < v < 2.0 ** 31 - 1:
                        raise unsupported(g, c, f"clips everything to {v:g}, beyond int32", "clip within int32")
                ch.lo = lo if ch.lo is None else (ch.lo if lo is None else max(ch.lo, lo))
                ch.hi = hi if ch.hi is None else (ch.hi if hi is None else min(ch.hi, hi))
            else:
                break
        absorbed.append(c)
        out = c.outputs[0]
    if ch.post is not None:     # a Mul after the floor that no Div undid: not part of the chain
        absorbed = absorbed[:ch.post_at]
        out = absorbed[-1].outputs[0] if absorbed else node.outputs[0]
        ch.post = None
    if (ch.d > 0 or ch.divisor > 1) and not ch.divided:
        last = absorbed[-1] if absorbed else node
        raise unsupported(g, last, "leaves a non-integer (divided, unfloored) value in float",
                          "follow the Div by a Floor or a Cast to int64, as NEMO/QuantLab integer graphs do")
    if ch.divisor > 1:
        if ch.adc_stage() is None:
            raise unsupported(g, absorbed[-1], "divides by an integer that is not a power of two "
                              "without clipping the floored quotient",
                              "follow Div(D) → Floor by a Clip (the ADC's range), as DIANA's analog chain does")
        ch.start_second_stage()
        ch.lo, ch.hi = float(ch.adc[1]), float(ch.adc[2])
    if not (_integral(ch.k) and _integral(ch.lam)):
        raise unsupported(g, node, "is followed by a non-integer requantization", "use integer multipliers and offsets")
    return ch, out, absorbed


def _bound(g: OnnxGraph, c: ONode, idx: int, attr: str) -> float | None:
    if c.input(idx):
        if c.input(idx) not in g.consts:
            raise unsupported(g, c, "takes a computed clip bound", "make Clip bounds constants")
        return float(np.asarray(g.consts[c.input(idx)]).reshape(-1)[0])
    v = c.attr(attr)
    return None if v is None else float(v)


def _const_pad(g: OnnxGraph, p: ONode) -> tuple[list[int], int] | None:
    """(spatial pads in the ONNX pads order — (top, left, bottom, right) of an N×C×H×W tensor,
    (begin, end) of an N×C×W one — value) of a constant Pad by an integer value of the spatial
    axes, else None (pads as the opset-9 attribute or the opset-11 input)."""
    if str(p.attr("mode", "constant")) != "constant":
        return None
    pads = p.attr("pads")
    if pads is None:
        pads = g.consts.get(p.input(1))
    value = g.consts.get(p.input(2), np.zeros(1)) if p.input(2) else np.asarray(p.attr("value", 0.0))
    pads = [int(v) for v in np.asarray(pads).reshape(-1)] if pads is not None else None
    v = float(np.asarray(value).reshape(-1)[0])
    if pads is None or len(pads) not in (6, 8) or v != round(v):
        return None
    r = len(pads) // 2
    if any(pads[i] for i in (0, 1, r, r + 1)):
        return None
    return pads[2:r] + pads[r + 2:], int(v)


def fold_pads(g: OnnxGraph, prod: dict, cons: dict, reader: ONode,
              value_ok: bool = False, spatial: int = 2) -> tuple[str, list[int], list[ONode], int]:
    """The chain of constant Pads (NEMO writes a Pad of zeros, often followed by a second one whose
    pads are all zero) feeding `reader`'s first input only: (source tensor, summed spatial pads,
    the Pad nodes, the padded taps' value) — folded into the reader's own pads. A value other
    than 0 only with `value_ok` (a Conv: IR Conv2dParams.pad_value; tilewise quantize's shift
    writer pads codes with their zero point), one value for the chain, and a reader without
    pads of its own."""
    src, total, nodes, value = reader.inputs[0], [0] * (2 * spatial), [], 0
    own = any(int(v) for v in reader.attr("pads", []))
    while True:
        p = prod.get(src)
        if p is None or p.op_type != "Pad" or len(cons.get(p.outputs[0], [])) != 1 or p.outputs[0] in g.outputs:
            return src, total, nodes, value
        got = _const_pad(g, p)
        if got is None:
            return src, total, nodes, value
        extra, v = got
        if len(extra) != len(total):
            return src, total, nodes, value
        if any(extra):   # the first Pad with an extent sets the value, the others must share it
            if (any(total) and v != value) or (v != 0 and (not value_ok or own)):
                return src, total, nodes, value
            value = v
        total = [a + b for a, b in zip(total, extra)]
        nodes.append(p)
        src = p.inputs[0]


def to_integer_ops(g: OnnxGraph) -> OnnxGraph:
    """Fuse each linear op and its requantization chain into one tilewise IntConv / IntGemm node."""
    check_integer_model(g)
    prod, cons = g.producers(), g.consumers()
    removed: set[int] = set()
    replaced: dict[int, ONode] = {}
    for n in g.nodes:
        if not is_weighted(g, n):
            continue
        w = np.asarray(g.consts[n.inputs[1]])
        conv = n.op_type == "Conv"
        if w.ndim < (3 if conv else 2):
            raise unsupported(g, n, f"has {w.ndim}-D weights '{n.inputs[1]}'",
                              "give [K, C, ...] conv or 2-D dense weights; the model is malformed")
        if conv:
            channels = w.shape[0]
        elif n.op_type == "Gemm":
            channels = w.shape[0] if int(n.attr("transB", 0)) else w.shape[1]
        else:
            channels = w.shape[1]
        ch, out, absorbed = _absorb(g, cons, n, channels, conv)
        attrs = dict(n.attrs)
        inputs = list(n.inputs)
        if conv:
            src, extra, pad_nodes, value = fold_pads(g, prod, cons, n, value_ok=True, spatial=w.ndim - 2)
            if pad_nodes:
                p = [int(v) for v in attrs.get("pads", [0] * len(extra))]
                attrs["pads"] = [p[i] + extra[i] for i in range(len(extra))]
                attrs["tw_pad_value"] = value
                inputs[0] = src
                removed.update(id(p) for p in pad_nodes)
        for what, v in (("multiplies its accumulators by {:g}", ch.k), ("adds {:g} to its accumulators", ch.lam)):
            bad = ~(np.abs(v) < 2.0 ** 62)   # nan, inf or beyond int64 (the int64 cast would wrap)
            if bad.any():
                raise unsupported(g, n, what.format(v[bad][0]) + " in its requantization chain, beyond int64",
                                  "keep its chain's constants within int32")
        attrs.update(ch.attrs(absorbed))
        attrs["tw_op"] = n.op_type
        replaced[id(n)] = ONode("IntConv" if conv else "IntGemm", n.name, tuple(inputs), (out,), attrs, TW_DOMAIN)
        removed.update(id(c) for c in absorbed)
    nodes = [replaced.get(id(n), n) for n in g.nodes if id(n) not in removed]
    return g.with_nodes(nodes)


def clip_dtype(lo: float | None, hi: float | None) -> str:
    if lo is None or hi is None:
        return "int32"
    for dt, (a, b) in (("uint8", (0, 255)), ("int8", (-128, 127)), ("int16", (-32768, 32767))):
        if lo >= a and hi <= b:
            return dt
    return "int32"


def _acc_bound(x_range: tuple[int, int] | str, w: np.ndarray, bias: np.ndarray | None) -> int:
    """max over output channels of Σ|w|·max|x| + |bias|: a bound on every accumulator (x's values
    within `x_range`, or within an IR dtype's range)."""
    lo, hi = dtype_range(x_range) if isinstance(x_range, str) else x_range
    w_abs = np.abs(np.asarray(w, dtype=np.int64)).reshape(w.shape[0], -1).sum(axis=1)
    b = np.zeros_like(w_abs) if bias is None else np.abs(np.asarray(bias, dtype=np.int64)).reshape(-1)
    return int((w_abs * max(abs(lo), abs(hi)) + b).max(initial=0))


def _fits_int32(a: np.ndarray) -> bool:
    return bool(np.all(np.abs(np.asarray(a, dtype=np.float64)) < 2 ** 31))


def _requant(lw: Lowering, node: ONode, acc_bound: int) -> Requant:
    """The layer's Requant: shift mode where it provably equals the model's division, else the
    exact div mode (module docstring "Which semantics"); `semantics` says which and why. A
    no-op chain (no clip, no division) gives the identity onto int32: the accumulator output."""
    k = np.asarray(node.attr("tw_k"), dtype=np.int64)
    lam = np.asarray(node.attr("tw_lambda"), dtype=np.int64)
    # onnxruntime runs the float part of the chain (the accumulation, κ·acc + λ) in float32
    lw.float_max = max(lw.float_max, acc_bound,
                       acc_bound * int(np.abs(k).max(initial=1)) + int(np.abs(lam).max(initial=0)))
    lo, hi = node.attr("tw_lo"), node.attr("tw_hi")
    qmin = int(lo) if lo is not None else -(1 << 31)
    qmax = int(hi) if hi is not None else (1 << 31) - 1
    d = int(node.attr("tw_d"))
    if d < 0:
        raise unsupported(lw.g, node, f"requantizes by a net multiplication by 2^{-d} (its chain's Mul / Div "
                          "constants)", "requantize by dividing by a power of two")
    adc = node.attr("tw_adc")
    if adc is not None:
        divisor, adc_min, adc_max = adc
        return Requant(mode="adc", multiplier=k, shift=np.full(k.size, d, dtype=np.int64),
                       zero_point=0, qmin=qmin, qmax=qmax, bias=lam,
                       divisor=int(divisor), adc_min=int(adc_min), adc_max=int(adc_max))
    m, int_div, trunc = int(node.attr("tw_m", 1)), int(node.attr("tw_int_div", 1)), bool(node.attr("tw_trunc"))
    if not (abs(m) < 1 << 31 and 0 < int_div < 1 << 31):
        raise unsupported(lw.g, node, f"requantizes with the multiplier {m} and the divisor {int_div}",
                          "keep its chain's constants within int32")
    total = (1 << d) * int_div
    if total >= 1 << 62:
        raise unsupported(lw.g, node, f"requantizes by dividing by about 2^{total.bit_length() - 1}, beyond int64 "
                          "arithmetic (its chain's Mul / Div constants)", "keep its chain's constants within int32")
    pow2 = total & (total - 1) == 0
    what = f"the model divides by {total}" + (" rounding toward zero (int64 Div / Cast to int64)" if trunc else "")
    note = node.attr("tw_note", "")
    what = f"{note}; {what}" if note else what
    if pow2 and (not trunc or total == 1 or (lo is not None and lo >= 0)) \
            and _fits_int32(k.astype(np.float64) * m) and _fits_int32(lam.astype(np.float64) * m):
        shift = int(total).bit_length() - 1
        why = note
        if trunc and total > 1:
            why = (f"{what}; equal to the floor shift by {shift} because the Clip's lower bound {int(lo)} ≥ 0 "
                   "maps every negative quotient (where truncation and floor differ) to it either way")
        return Requant(mode="shift", multiplier=k * m, shift=np.full(k.size, shift, dtype=np.int64),
                       zero_point=0, qmin=qmin, qmax=qmax, bias=lam * m, semantics=why)
    if lo is not None and hi is not None and total > 1:
        a, b = np.broadcast_arrays(k * m, lam * m)
        form = shift_fit.fit(a, b, total, trunc, qmin, qmax, -acc_bound, acc_bound)
        if form is not None:
            why = (f"{what}; equal, on every accumulator within ±{acc_bound}, to the floor shift "
                   f"(K·acc + L) >> {form.shift} with int32 K and L (frontend/shift_fit.py: each of "
                   f"the {qmax - qmin} output steps starts at the same accumulator)")
            return Requant(mode="shift", multiplier=form.multiplier,
                           shift=np.full(form.multiplier.size, form.shift, dtype=np.int64), zero_point=0,
                           qmin=qmin, qmax=qmax, bias=form.bias, semantics=why)
    if pow2 and trunc and total > 1 and not (lo is not None and lo >= 0):
        why = (f"{what} and its clip lower bound {lo} lets negative quotients through, where truncation "
               "differs from a floor shift: exact int64 division")
    elif pow2 and total > 1:
        why = f"{what}; κ·m or λ·m does not fit int32, nor does an equal shift form: exact int64 division"
    elif total > 1:
        why = (f"{what}, not a power of two (a shift by {round(math.log2(total))}, as DORY writes it, would "
               "differ) and no int32 shift form equals it: exact int64 division")
    else:
        why = "κ·m or λ·m does not fit int32: exact int64 product"
    worst = m * (int(np.abs(k).max(initial=0)) * acc_bound + int(np.abs(lam).max(initial=0)))
    if abs(worst) >= 1 << 63:
        raise unsupported(lw.g, node, f"requantizes with m·(κ·acc + λ) up to {abs(worst)}, beyond 64 bits",
                          "use smaller requantization constants")
    return Requant(mode="div", multiplier=k, shift=np.zeros(k.size, dtype=np.int64), zero_point=0,
                   qmin=qmin, qmax=qmax, bias=lam, divisor=total, post_multiplier=m,
                   division="trunc" if trunc else "floor", semantics=why)


#: metadata_props key prefix of a node's weight bits below 8 (tilewise quantize's shift writer)
W_BITS_KEY = "tilewise.w_bits."


def weight_dtype(lw: Lowering, node: ONode, w: np.ndarray) -> str:
    """int8, or int4 / int2 when the model's metadata gives the node's weights that width
    (`tilewise.w_bits.<node>` = 4 or 2: NE16's 2–8-bit weights); refused when a weight lies
    outside the stated width."""
    bits = lw.g.metadata.get(W_BITS_KEY + node.name)
    if bits is None:
        return "int8"
    if bits not in ("4", "2"):
        raise unsupported(lw.g, node, f"states {bits}-bit weights in its metadata", "state 4 or 2 (8 is the default)")
    lo, hi = -(1 << (int(bits) - 1)), (1 << (int(bits) - 1)) - 1
    if w.size and (int(w.min()) < lo or int(w.max()) > hi):
        raise unsupported(lw.g, node,
                          f"states {bits}-bit weights but holds weights in [{int(w.min())}, {int(w.max())}]",
                          f"keep the weights within [{lo}, {hi}] or drop the metadata entry")
    return f"int{bits}"


def _int_const(lw: Lowering, node: ONode, name: str, what: str, dtype: str, lo: int, hi: int) -> np.ndarray:
    a = lw.const(node, name, what)
    if not _integral(a) or (a.size and (a.min() < lo or a.max() > hi)):
        raise unsupported(lw.g, node, f"has {what} that are not {dtype} integers", f"export integer {what}")
    return np.round(a).astype(np.dtype(dtype))


@handler("IntConv")
def int_conv(lw: Lowering, node: ONode) -> None:
    x = lw.act(node, node.inputs[0])
    w = _int_const(lw, node, node.inputs[1], "weights", "int8", -128, 127)
    b = _int_const(lw, node, node.inputs[2], "biases", "int32", -(1 << 31), (1 << 31) - 1) if node.input(2) else None
    if w.ndim == 3 and len(lw.onnx_shape(x)) == 3:
        # a 1-D convolution: the 2-D one on [N, C, 1, W] (onnx_int.py)
        from .onnx_int import as_4d, node_2d, to_3d

        n2 = node_2d(node)
        y4 = emit_int_conv(lw, n2, as_4d(lw, node, x), w[:, :, None, :], b, node.inputs[1], node.input(2),
                           out=lw.fresh(f"{node.outputs[0]}__4d"))
        to_3d(lw, node, y4, node.outputs[0])
        return
    emit_int_conv(lw, node, x, w, b, node.inputs[1], node.input(2))


def split_post(node: ONode) -> tuple[ONode, tuple[int, int, float | None, float | None] | None]:
    """A chain with a second stage trunc(m·v / D) (`_Chain.post_stage`): the node of its first
    stage (unclipped: the clip ends the second) and (m, D, lo, hi) of the second; else (node, None)."""
    post = node.attr("tw_post")
    if post is None:
        return node, None
    first = replace(node, attrs={**node.attrs, "tw_post": None, "tw_lo": None, "tw_hi": None})
    return first, (int(post[0]), int(post[1]), node.attr("tw_lo"), node.attr("tw_hi"))


def lower_two_stage(lw: Lowering, node: ONode, lower) -> bool:
    """A node with NEMO's two-stage chain (split_post): `lower(lw, first)` writes the first
    stage into the model's tensor of its result (`tw_stage1`), then the second stage's requant;
    False (nothing emitted) for a node with one stage."""
    first, post = split_post(node)
    if post is None:
        return False
    stage1 = node.attr("tw_stage1")
    lower(lw, replace(first, outputs=(stage1,)))
    emit_post(lw, first, lw.ir[stage1], post, lw.out_name(node.outputs[0]))
    return True


def emit_post(lw: Lowering, node: ONode, v: str, post: tuple[int, int, float | None, float | None],
              out: str) -> str:
    """The second stage clip(trunc(m·v / D)) of a chain (split_post) as a div-mode requant of the
    first stage's result `v`, bound to IR name `out`."""
    from .onnx_int import emit_requant, out_dtype, requant_range

    m, d, lo, hi = post
    if not (abs(m) < 1 << 31 and 0 < d < 1 << 31):
        raise unsupported(lw.g, node, f"requantizes its result a second time with the multiplier {m} and the "
                          f"divisor {d}", "keep its chain's constants within int32")
    qmin = int(lo) if lo is not None else -(1 << 31)
    qmax = int(hi) if hi is not None else (1 << 31) - 1
    v_lo, v_hi = lw.bound(v)
    form = (shift_fit.fit(np.array([m]), np.array([0]), d, True, qmin, qmax, v_lo, v_hi)
            if lo is not None and hi is not None else None)
    if form is not None:
        rq = Requant(mode="shift", multiplier=form.multiplier, shift=np.array([form.shift], np.int64),
                     zero_point=0, qmin=qmin, qmax=qmax, bias=form.bias,
                     semantics=(f"NEMO's second requantization trunc({m}·v / {d}) of the floored value; equal, "
                                f"on every v in [{v_lo}, {v_hi}], to the floor shift (K·v + L) >> {form.shift} "
                                f"(frontend/shift_fit.py)"))
    else:
        rq = Requant(mode="div", multiplier=np.ones(1, np.int64), shift=np.zeros(1, np.int64), zero_point=0,
                     qmin=qmin, qmax=qmax, bias=np.zeros(1, np.int64), divisor=d, post_multiplier=m,
                     division="trunc",
                     semantics=f"NEMO's second requantization trunc({m}·v / {d}) of the floored value")
    r_lo, r_hi = requant_range(rq, *lw.bound(v))
    dtype = clip_dtype(lo, hi) if lo is not None and hi is not None else out_dtype(lw, node, r_lo, r_hi)
    return emit_requant(lw, node, v, rq, None, out, dtype, suffix="_post")


def emit_int_conv(lw: Lowering, node: ONode, x: str, w: np.ndarray, b: np.ndarray | None, w_name: str,
                  b_name: str, out: str | None = None) -> str:
    """The IR conv2d of `node` (geometry from its attributes, requantization from its chain) on the
    IR activation `x`, with int8 OIHW weights `w` and int32 biases `b`, written to IR name `out`
    (default: the node's output); returns the output's IR name."""
    node, post = split_post(node)
    if post is not None:
        v = emit_int_conv(lw, node, x, w, b, w_name, b_name, lw.out_name(node.attr("tw_stage1")))
        return emit_post(lw, node, v, post, out or lw.out_name(node.outputs[0]))
    if w.ndim != 4 or (b is not None and np.asarray(b).size != w.shape[0]):
        raise unsupported(lw.g, node, f"has weights of shape {tuple(w.shape)} and "
                          f"{'no' if b is None else np.asarray(b).size} biases", "give [K, C, FY, FX] weights and "
                          "K biases; the model is malformed")
    acc = _acc_bound(lw.bound(x), w, b)
    rq = _requant(lw, node, acc)
    dtype = out_dtype_of(lw, node, rq, acc)
    params = conv_params(lw, node, lw.t(x).shape, w.shape, rq)
    if node.attr("tw_pad_value", 0):
        params = replace(params, pad_value=int(node.attr("tw_pad_value")))
    w_ir = lw.add_const(f"{w_name}__ohwi", np.ascontiguousarray(w.transpose(0, 2, 3, 1)),
                        weight_dtype(lw, node, w), INT1)
    ins = [x, w_ir]
    if b is not None:
        ins.append(lw.add_const(f"{b_name}__bias", b.reshape(-1), "int32"))
    y = lw.emit(node, Op.CONV2D, ins, out or lw.out_name(node.outputs[0]), None, dtype, INT1, params, layout=NHWC)
    lw.bounds[y] = out_range(rq, acc)
    return y


def out_range(rq: Requant, acc: int) -> tuple[int, int]:
    """The values `rq` gives on accumulators within ±acc, within its clamp."""
    from .onnx_int import requant_range

    lo, hi = requant_range(rq, -acc, acc)
    return max(lo, int(rq.qmin)), min(hi, int(rq.qmax))


def out_dtype_of(lw: Lowering, node: ONode, rq: Requant, acc: int) -> str:
    """The output type of a layer requantized by `rq`: its clip's (clip_dtype), or without a clip
    the narrowest type holding what the requantization gives on accumulators within ±acc (an
    identity requantization: the accumulators' own range)."""
    from .onnx_int import out_dtype

    lo, hi = node.attr("tw_lo"), node.attr("tw_hi")
    if lo is not None and hi is not None:
        return clip_dtype(lo, hi)
    return out_dtype(lw, node, *out_range(rq, acc))


def _is_identity(rq: Requant) -> bool:
    lam = 0 if rq.bias is None else rq.bias
    return rq.mode == "shift" and bool(np.all(np.asarray(rq.multiplier) == 1) and np.all(np.asarray(lam) == 0)
                                       and np.all(np.asarray(rq.shift) == 0))


def _gemm_scalar(lw: Lowering, node: ONode, name: str) -> int:
    v = float(node.attr(name, 1.0))
    if not math.isfinite(v) or v != round(v):
        raise unsupported(lw.g, node, f"has the non-integer {name} {v}", f"export the Gemm with an integer {name}")
    if abs(v) >= 1 << 31:
        raise unsupported(lw.g, node, f"has {name} {v:g}, beyond int32", f"export the Gemm with an int32 {name}")
    return int(v)


@handler("IntGemm")
def int_gemm(lw: Lowering, node: ONode) -> None:
    """A dense layer: Gemm (transB, integer alpha and beta, a bias per output or a matrix C) or a
    MatMul with constant weights on inputs of any rank (rows of the last axis), with its chain.
    alpha folds into the weights and a per-output C into the bias where they fit; otherwise the
    layer leaves its int32 accumulator to an exact integer Mul (alpha) and Add (beta·C), and the
    chain becomes a requant after them (onnx_int.py)."""
    if lower_two_stage(lw, node, int_gemm):
        return
    gemm = node.attr("tw_op") == "Gemm"
    if gemm and int(node.attr("transA", 0)):
        raise unsupported(lw.g, node, "uses transA", "export the Gemm with transA=0")
    alpha = _gemm_scalar(lw, node, "alpha") if gemm else 1
    beta = _gemm_scalar(lw, node, "beta") if gemm else 1
    x = lw.act(node, node.inputs[0])
    w = _int_const(lw, node, node.inputs[1], "weights", "int8", -128, 127)
    trans_b = gemm and int(node.attr("transB", 0))
    w_kc = w if trans_b else w.T
    k = w_kc.shape[0]
    shape = lw.onnx_shape(x) if x not in lw.flat else lw.t(x).shape
    if w.ndim != 2 or not shape or shape[-1] != w_kc.shape[1]:
        raise unsupported(lw.g, node, f"multiplies a tensor of shape {shape} by weights {w.shape}",
                          "give 2-D weights whose inputs match the tensor's last axis")
    if alpha != 1 and int(np.abs(w_kc.astype(np.int64) * alpha).max(initial=0)) <= 127:
        w_kc, alpha = (w_kc.astype(np.int64) * alpha).astype(np.int8), 1
    c = None
    if node.input(2):
        c = np.asarray(lw.const(node, node.inputs[2], "bias C"), dtype=np.float64)
        if not _integral(c):
            raise unsupported(lw.g, node, "has a non-integer bias", "export integer biases")
        c = np.round(c).astype(np.int64) * beta
    per_out = c is not None and (c.size == 1 or (c.size == k and c.shape[-1] == k))
    src, w_kc = fc_input(lw, node, x, w_kc)
    ins = [src, lw.add_const(f"{node.inputs[1]}__kc", np.ascontiguousarray(w_kc), weight_dtype(lw, node, w_kc), INT1)]
    b = None
    if per_out:
        b = np.broadcast_to(c.reshape(-1), (k,)).astype(np.int64)
        if np.abs(b).max(initial=0) >= 1 << 31:
            raise unsupported(lw.g, node, "has biases beyond int32", "export int32 biases")
        ins.append(lw.add_const(f"{node.inputs[2]}__bias", b.astype(np.int32), "int32"))
    acc = _acc_bound(lw.bound(x), w_kc, b)
    rq = _requant(lw, node, acc)
    out_shape = tuple(shape[:-1]) + (k,)
    rows = (int(np.prod(shape[:-1], dtype=np.int64)), k)
    simple = alpha == 1 and (c is None or per_out)
    if simple:
        fc_rq, fc_dtype = rq, out_dtype_of(lw, node, rq, acc)
    else:
        fc_rq = Requant(mode="shift", multiplier=np.ones(k, np.int64), shift=np.zeros(k, np.int64), zero_point=0,
                        qmin=-(1 << 31), qmax=(1 << 31) - 1, bias=np.zeros(k, np.int64))
        fc_dtype = "int32"
        if acc * max(abs(alpha), 1) >= 1 << 31:
            raise unsupported(lw.g, node, f"accumulates up to {acc}·{alpha}, beyond int32",
                              "use smaller weights or alpha")
    last = simple and len(out_shape) == 2
    y = lw.emit(node, Op.FULLY_CONNECTED, ins,
                lw.out_name(node.outputs[0]) if last else lw.fresh(f"{node.outputs[0]}__fc"),
                rows, fc_dtype, INT1, FullyConnectedParams(requant=fc_rq))
    lw.bounds[y] = out_range(fc_rq, acc)
    if last:
        return
    if len(out_shape) != 2:
        y = lw.emit(node, Op.RESHAPE, [y], lw.fresh(f"{node.outputs[0]}__nd"), out_shape, fc_dtype, INT1,
                    ReshapeParams(shape=out_shape), suffix="_reshape")
        if lw.perm[y] != tuple(range(len(out_shape))) or len(out_shape) == 4:
            raise unsupported(lw.g, node, f"gives a {len(out_shape)}-D result", "flatten the input to rows first")
    if simple:
        lw.alias(node.outputs[0], y)
        return
    from .onnx_int import emit_arith, emit_requant, out_dtype, requant_range

    if alpha != 1:
        y = emit_arith(lw, node, "Mul", (("ir", y), ("const", np.asarray(alpha))),
                       lw.fresh(f"{node.outputs[0]}__alpha"),
                       suffix="_alpha")
    if c is not None:
        y = emit_arith(lw, node, "Add", (("ir", y), ("const", c)), lw.fresh(f"{node.outputs[0]}__c"), suffix="_c")
    if _is_identity(rq) and node.attr("tw_lo") is None:
        lw.alias(node.outputs[0], y)
        return
    lo, hi = requant_range(rq, *dtype_range(lw.t(y).dtype))
    lo, hi = max(lo, rq.qmin), min(hi, rq.qmax)
    emit_requant(lw, node, y, rq, len(out_shape) - 1, lw.out_name(node.outputs[0]), out_dtype(lw, node, lo, hi),
                 suffix="_requant")
