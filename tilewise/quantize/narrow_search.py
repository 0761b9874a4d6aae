"""Quantization for a narrow accumulator: the 1-D bit-width search of seed 002 §4.5.

`tilewise quantize ... --acc-bits N` (N < 32, e.g. 16 on the idsp dsp) chooses per Conv / Gemm /
MatMul layer the bit width of its input BW(in) and of its weights BW(w) (2..8 bits, stored in
int8 containers) so that the layer's accumulator provably fits N bits, and among those the pair
that loses least on the calibration inputs.

Search (seed 002 §4.5, "a straightforward heuristic which iteratively quantizes the network"):
greedy, layer by layer in graph order; for layer L every earlier layer keeps its chosen widths,
every later layer is still at int8 with a wide accumulator (the seed keeps later layers in float;
tilewise's QDQ writer has no float pass-through, and int8 is ≥ 30 dB on the tests' networks, so
it barely masks L's error — a stated substitution). The candidates of L are the seed's 1-D line
BW(in) + BW(w) = BW(acc) + 1 − Δ (eq. 4.14), with Δ taken from the exact integer form of the
weights bound instead of one of the three float bounds: for every BW(in) the widest BW(w) whose
quantized layer passes the proof below (`acc_bounds.int_acc_range` over the BW(in)-bit input
window, bias included, → `acc_bits_needed` ≤ N). That is the set of pairs that fully use the
accumulator; the three §4.4 bounds (worst case, weights, data-driven output bound) are reported
per layer for comparison, but only the integer proof decides (the output bound is not a proof).
The quality of a candidate is the output SQNR against the float model on the calibration inputs
(the seed measures classification accuracy on a test set; `quantize` has no labels).

Widths in int8 containers (how the written ONNX restricts values):
- weights of b bits: per-channel symmetric codes within ±(2^(b−1) − 1) (weights.py with `bits`);
- an activation of b < 8 bits: the b-bit affine parameters of its calibrated range
  (calibrate.qparams_for(range, b): codes [−2^(b−1), 2^(b−1) − 1]) and, after its int8
  QuantizeLinear, DequantizeLinear -> Clip(real bounds of the b-bit window) -> QuantizeLinear (same
  parameters) -> DequantizeLinear. onnxruntime runs that Clip in float, exactly (every value is a
  grid point, the bounds are the float32 products DequantizeLinear computes); tilewise reads it as
  a clipped Requant layer (frontend/onnx_qdq.py). So every input the model can see, the network
  input included, stays in the window the proof assumed. A Relu / Clip fused into the producing
  op is dropped when the window's clip implies it (a Relu output's window starts at real 0),
  so that the producer stays an integer QLinear group in onnxruntime (its Relu fusion needs the
  int8 zero point −128).

Because the final accumulator of every layer provably fits N bits, the golden model's and the
C's modulo-2^N accumulators equal onnxruntime's 32-bit ones: the model validates bit-exactly on a
target whose module has `acc_bits` = N (`validate --acc-bits dsp=16`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import TilewiseError
from ..golden import acc_bounds as ab
from .calibrate import Observer, QParams
from .graph_out import ACTIVATIONS, WEIGHTED, Plan, _node_label, _weight_axis, resolve, write_qdq
from .pipeline import QuantizeResult, observe
from .sqnr import run_all, session, sqnr
from .weights import quantize_bias, quantize_weights

MIN_BITS, MAX_BITS = 2, 8


@dataclass(frozen=True)
class Weighted:
    """One Conv / Gemm / MatMul of the float model."""

    label: str
    input: str          # the activation point whose parameters its input uses
    output: str         # the op's float output (before a fused Relu/Clip)
    weight: str
    bias: str | None
    axis: int           # output-channel axis of the weight
    taps: int           # K of seed 002: multiply-accumulates per output value


@dataclass(frozen=True)
class Candidate:
    in_bits: int
    w_bits: int
    acc_bits_needed: int
    sqnr_db: float | None    # output SQNR vs float on the calibration inputs; None = exact

    def to_json(self) -> dict:
        return {"in_bits": self.in_bits, "w_bits": self.w_bits, "acc_bits_needed": self.acc_bits_needed,
                "sqnr_db": None if self.sqnr_db is None else round(float(self.sqnr_db), 3)}


@dataclass(frozen=True)
class LayerChoice:
    layer: str
    input: str
    taps: int
    in_bits: int
    w_bits: int
    acc_bits: int                  # the register the layer must fit
    acc_bits_needed: int           # the integer proof's bits (≤ acc_bits)
    acc_range: tuple[int, int]     # least and greatest final accumulator over every input
    bounds: dict[str, int]         # Δ of the three §4.4 bounds
    candidates: tuple[Candidate, ...]

    def to_json(self) -> dict:
        return {"layer": self.layer, "input": self.input, "taps": self.taps,
                "in_bits": self.in_bits, "w_bits": self.w_bits, "acc_bits": self.acc_bits,
                "acc_bits_needed": self.acc_bits_needed, "acc_range": list(self.acc_range),
                "delta": dict(self.bounds),
                "available_bits": {k: ab.available_bits(self.acc_bits, d) for k, d in self.bounds.items()},
                "candidates": [c.to_json() for c in self.candidates]}


@dataclass(frozen=True, eq=False)
class NarrowResult:
    result: QuantizeResult
    acc_bits: int
    choices: tuple[LayerChoice, ...]


def weighted_layers(model: onnx.ModelProto, p: Plan) -> list[Weighted]:
    inits = {t.name: t for t in model.graph.initializer}
    out = []
    for i, n in enumerate(model.graph.node):
        if n.op_type not in WEIGHTED:
            continue
        x = n.input[0]
        w = numpy_helper.to_array(inits[n.input[1]])
        axis = _weight_axis(n)
        taps = int(np.prod(w.shape[1:])) if n.op_type == "Conv" else int(w.shape[1 - axis])
        bias = n.input[2] if len(n.input) > 2 and n.input[2] else None
        out.append(Weighted(_node_label(n, i), p.shared.get(x, x), n.output[0], n.input[1], bias, axis, taps))
    return out


def window(obs: Observer, bits: int) -> QParams:
    """The `bits`-bit affine parameters of an observed tensor (codes in [−2^(b−1), 2^(b−1) − 1])."""
    o = copy.copy(obs)
    o.bits, o.signed = bits, True   # signed codes in an int8 container, not a sub-byte tensor
    return o.qparams()


def int_layer(layer: Weighted, inits: dict[str, np.ndarray], xq: QParams,
              w_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(weights [K, taps] int64, bias folded with the input zero point [K] int64) of the layer as
    graph_out.write_qdq writes it (same weights.py calls): acc = bias' + Σ w·x_stored."""
    w = inits[layer.weight]
    b = inits[layer.bias].reshape(-1) if layer.bias else None
    qw = quantize_weights(w, axis=layer.axis, bits=w_bits, bias=b, input_scale=xq.scale)
    wk = np.moveaxis(qw.q, layer.axis, 0).reshape(qw.q.shape[layer.axis], -1).astype(np.int64)
    bq = quantize_bias(b, xq.scale, qw.scale)[0].astype(np.int64) if b is not None else np.zeros(wk.shape[0], np.int64)
    return wk, bq - int(xq.zero_point) * wk.sum(axis=1)


def proof(layer: Weighted, inits: dict[str, np.ndarray], xq: QParams, w_bits: int) -> tuple[int, int, int]:
    """(bits needed, least, greatest) final accumulator over every input code in [qmin, qmax]."""
    wk, bias = int_layer(layer, inits, xq, w_bits)
    lo, hi = ab.int_acc_range(wk, bias, xq.qmin, xq.qmax)
    lo_, hi_ = int(lo.min()), int(hi.max())
    return ab.acc_bits_needed(max(abs(lo_), abs(hi_))), lo_, hi_


def seed_bounds(layer: Weighted, inits: dict[str, np.ndarray], max_in: float, max_acc: float) -> dict[str, int]:
    """Δ of seed 002 §4.4's three bounds on the float layer (the weights bound: its worst channel)."""
    w = np.moveaxis(inits[layer.weight], layer.axis, 0).reshape(inits[layer.weight].shape[layer.axis], -1)
    live = [c for c in w if np.abs(c).max() > 0]
    max_w = float(np.abs(w).max())
    out = {"worst_case": ab.delta_worst_case(layer.taps),
           "weights": max(ab.delta_weights(c) for c in live) if live else 0}
    if max_in > 0 and max_w > 0 and max_acc > 0:
        out["output"] = ab.delta_output(max_in, max_w, max_acc)
    return out


def narrow_activations(model: onnx.ModelProto, narrowed: dict[str, QParams], input_name: str) -> onnx.ModelProto:
    """Restrict each tensor of `narrowed` to its b-bit window in the written QDQ model (module doc)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    nodes = list(g.node)
    by_name = {n.name: n for n in nodes}
    producer = {o: n for n in nodes for o in n.output}
    inits = []
    new_nodes: dict[str, list[onnx.NodeProto]] = {}
    drop: set[str] = set()
    for t, q in narrowed.items():
        qn, dq = by_name[f"{t}/quantize"], by_name[f"{t}/dequantize"]
        out = dq.output[0]
        s, z = qn.input[1], qn.input[2]
        lo = np.float32(np.float32(q.qmin - q.zero_point) * np.float32(q.scale))
        hi = np.float32(np.float32(q.qmax - q.zero_point) * np.float32(q.scale))
        inits += [numpy_helper.from_array(np.array(lo, np.float32), f"{t}/narrow/min"),
                  numpy_helper.from_array(np.array(hi, np.float32), f"{t}/narrow/max")]
        qn.output[0] = f"{t}/wide/q"
        dq.input[0] = f"{t}/wide/q"
        dq.output[0] = f"{t}/wide"
        new_nodes[dq.name] = [
            helper.make_node("Clip", [f"{t}/wide", f"{t}/narrow/min", f"{t}/narrow/max"], [f"{t}/clipped"],
                             name=f"{t}/narrow"),
            helper.make_node("QuantizeLinear", [f"{t}/clipped", s, z], [f"{t}/q"], name=f"{t}/narrow/quantize"),
            helper.make_node("DequantizeLinear", [f"{t}/q", s, z], [out], name=f"{t}/narrow/dequantize")]
        act = producer.get(qn.input[0]) if t != input_name else None
        if act is not None and act.op_type in ACTIVATIONS and _implied(act, g, lo, hi):
            qn.input[0] = act.input[0]
            drop.add(act.name)
    kept = []
    for n in nodes:
        if n.name in drop:
            continue
        kept.append(n)
        kept += new_nodes.get(n.name, [])
    del g.node[:]
    g.node.extend(kept)
    g.initializer.extend(inits)
    used = {x for n in g.node for x in n.input}
    keep_inits = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep_inits)
    onnx.checker.check_model(m)
    return m


def _implied(act: onnx.NodeProto, g: onnx.GraphProto, lo: float, hi: float) -> bool:
    """Whether clipping to [lo, hi] implies the Relu / Clip node `act`."""
    if act.op_type == "Relu":
        return lo >= 0.0
    consts = {t.name: float(numpy_helper.to_array(t).reshape(-1)[0]) for t in g.initializer}
    attrs = {a.name: helper.get_attribute_value(a) for a in act.attribute}
    a_lo = consts.get(act.input[1]) if len(act.input) > 1 and act.input[1] else attrs.get("min")
    a_hi = consts.get(act.input[2]) if len(act.input) > 2 and act.input[2] else attrs.get("max")
    return (a_lo is None or lo >= a_lo) and (a_hi is None or hi <= a_hi)


def _write(model: onnx.ModelProto, p: Plan, observers: dict[str, Observer], in_bits: dict[str, int],
           w_bits: dict[str, int], input_name: str) -> tuple[onnx.ModelProto, dict[str, QParams]]:
    cal = {t: (window(o, in_bits[t]) if t in in_bits else o.qparams()) for t, o in observers.items()}
    qp = resolve(p, cal)
    m = write_qdq(model, p, qp, container_bits=w_bits)
    narrowed = {t: cal[t] for t, b in in_bits.items() if b < 8}
    return (narrow_activations(m, narrowed, input_name) if narrowed else m), qp


def _outputs_sqnr(model: onnx.ModelProto, name: str, inputs: np.ndarray, ref: dict[str, list]) -> float | None:
    outs = list(ref)
    got = run_all(session(model), name, inputs, outs)
    s = sqnr("outputs", [a for o in outs for a in ref[o]], [a for o in outs for a in got[o]])
    return s.db


def search(model: onnx.ModelProto, inputs: np.ndarray, acc_bits: int, method: str = "minmax",
           percentile: float = 99.99) -> NarrowResult:
    """The greedy §4.5 search (module doc) and the written model."""
    p, name, observers = observe(model, inputs, method, 8, percentile)
    inits = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    layers = weighted_layers(model, p)
    outs = [o.name for o in model.graph.output]
    pre = [layer.output for layer in layers if layer.output not in outs]
    ref = run_all(session(model, tuple(pre)), name, inputs, outs + pre)
    max_acc = {t: max(float(np.abs(v).max()) for v in ref[t]) for t in outs + pre}
    ref = {o: ref[o] for o in outs}
    in_bits: dict[str, int] = {}
    w_bits: dict[str, int] = {}
    choices = []
    for layer in layers:
        if layer.input not in observers:
            raise TilewiseError(f"layer '{layer.label}' reads '{layer.input}', which has fixed quantization "
                                f"parameters; --acc-bits cannot narrow its input")
        obs = observers[layer.input]
        widths = [in_bits[layer.input]] if layer.input in in_bits else range(MIN_BITS, MAX_BITS + 1)
        line = []
        for bi in widths:
            xq = window(obs, bi)
            for bw in range(MAX_BITS, MIN_BITS - 1, -1):
                need, lo, hi = proof(layer, inits, xq, bw)
                if need <= acc_bits:
                    line.append((bi, bw, need, lo, hi))
                    break
        if not line:
            need = proof(layer, inits, window(obs, min(widths)), MIN_BITS)[0]
            raise TilewiseError(f"layer '{layer.label}': no input and weight widths of {MIN_BITS} to {MAX_BITS} "
                                f"bits fit a {acc_bits}-bit accumulator ({MIN_BITS}-bit weights need {need} bits)")
        cands = []
        for bi, bw, need, _, _ in line:
            m, _ = _write(model, p, observers, {**in_bits, layer.input: bi}, {**w_bits, layer.label: bw}, name)
            cands.append(Candidate(bi, bw, need, _outputs_sqnr(m, name, inputs, ref)))
        best = max(range(len(cands)), key=lambda k: np.inf if cands[k].sqnr_db is None else cands[k].sqnr_db)
        bi, bw, need, lo, hi = line[best]
        in_bits[layer.input], w_bits[layer.label] = bi, bw
        max_in = max(abs(obs.lo), abs(obs.hi))
        choices.append(LayerChoice(layer.label, layer.input, layer.taps, bi, bw, acc_bits, need, (lo, hi),
                                   seed_bounds(layer, inits, max_in, max_acc[layer.output]), tuple(cands)))
    m, qp = _write(model, p, observers, in_bits, w_bits, name)
    return NarrowResult(QuantizeResult(m, p, qp, name), acc_bits, tuple(choices))
