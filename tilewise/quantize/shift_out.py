"""Shift-style requantization for PULP / NE16 / DIANA: the float ONNX graph -> a NEMO-style integer
ONNX graph whose every Conv / Gemm requantizes in the targets' shift mode.

Why this form (and not QDQ with power-of-two scales): tilewise's ONNX frontend turns any QDQ group
into an ``onnx``-mode layer (onnxruntime's float multiplier, round half to even), whatever the
scales, so only an integer graph reaches the ``shift`` mode (golden/requant.py: clamp(floor((k·acc
+ λ) / 2^d) + zp)) that NE16's norm-quant and the PULP kernels compute; frontend/onnx_nemo.py reads
NEMO's chains as exactly that, and onnxruntime runs them exactly (the integer part in int64).

Per weighted node (Conv, Gemm, its Relu / Clip fused; notes/integer-onnx.md "NEMO"):

    Conv(u, W, B') → Cast(int64) → Mul(k[c]) → Div(2^d) → Cast(float) → Clip(lo, hi)

- Activations are unsigned 8-bit codes u ∈ [0, 255] carried in float32 (DORY's and NEMO's
  activations; the frontend reads them as uint8), real = s·(u − z): the calibrated int8 range's
  scale with its zero point moved by 128 (the onnx-mode model's codes + 128), z = 0 for a range
  ≥ 0 (s = hi/255). The zero points are implicit: they live in the biases, never in the graph.
- Weights symmetric per output channel (weights.py, ±127), W = q_w; the accumulator on the codes
  is acc = Σ q_w·u = Σ q_w·(x_q + z_x), so B = round(b / (s_x·s_w)) − z_x·Σ q_w makes acc + B the
  accumulator of the real product.
- The layer's real multiplier per channel M[c] = s_x·s_w[c] / s_y becomes an integer k[c] =
  max(1, round(M·2^d)) and one shift d per layer (NE16 has one; NEMO's form, seed 004
  "requantization"); the bias, the output zero point and the rounding half go into the bias, in
  accumulator units: B' = round((M·B + z_y + ½)·2^d / k), so floor(k·(acc + B') / 2^d) ≈
  round(M·(acc + B)) + z_y (B scaled by the real M, not by k/2^d: a channel whose bias dominates
  keeps its constant part to a fraction of a code, as bindings/ne16/shift_requant.py does with λ). onnxruntime's int64
  Div truncates toward zero, the frontend's shift floors; they agree because the Clip's lower bound is ≥ 0 (every
  quotient they differ on is negative and clipped to it; onnx_nemo._requant proves the same).
- d is the largest in [0, 23] such that every value stays where both the targets and onnxruntime
  compute exactly, per channel with A = 255·Σ|q_w| (the largest |Σ q_w·u|): k·(|B'| + 256·Σ|q_w|)
  + 128·2^d < 2^31 (NE16's norm-quant t = k·acc + bias on its u8 input, the output zero point −128
  of the stored uint8 folded: bindings/ne16/normquant.py; the PULP kernels' int32 k·acc + λ), and
  A + |B'| < 2^24 (the float32 Conv / Gemm of onnxruntime sums integers exactly below 2^24, and B'
  is a float32 initializer).
- Clip: [z_y, 255] with a fused Relu (z_y = 0 then: a Relu'd range is ≥ 0), [z_y, min(255, z_y +
  round(6/s_y))] for Clip(0, 6), [0, 255] without one.

Power-of-two form (`pow2`, a target whose accelerator has no multiplier: DIANA's digital core
computes clip((acc + bias) >> d), bindings/diana_digital/arith.py; Target.shift_multiplier False):
every weighted node gets k = 1 on all channels, so M[c] = 2^−d for all c and the weights take one
scale per layer, s_w = s_y·2^−d / s_x (HTVM's and MATCH's DIANA networks: per-tensor power-of-two
requantization). d is the largest in [0, D_MAX] whose s_w is at least the per-tensor step
max|w| / qmax (the weights within ±qmax, their step between 1× and 2× the optimal one), or the
next one (half that step, the largest weights clipped) when its squared weight error is smaller,
and whose values stay exact as above (`pow2_codes`); B' = B + z_y·2^d + 2^(d−1) (the rounding half, none at
d = 0). A layer whose output scale is finer than s_x·max|w| / qmax (d < 0) is refused in one
sentence. A residual Add of two activations takes the core's add (shift_nodes.write_add_pow2): the
writer gives both addends one scale when it writes them, zero point 0 to a ReLU'd one and 128
to a signed one (`pow2_partner`: the larger need of the two, or the scale of the addend written
first); an Add whose
addends could not be so (e.g. one is the network input) keeps NEMO's chain. A global average
pool of a square power-of-two map becomes 2×2-sum stages the core takes (shift_nodes.halvings,
write_halving: the codes keep the input's scale and zero point); other pools keep their
multipliers (the host core runs them).

Moves (Flatten, Reshape, MaxPool, Identity, Transpose) are copied and keep their input's (s, z).
Padding: a padded Conv must read real zeros at the border; on codes with z = 0 its own pads do
that, otherwise the writer puts an explicit Pad of the code z before it (pads moved out of the
Conv), which frontend/onnx_nemo.fold_pads folds back as the layer's padding value.
Residual Add, AveragePool / GlobalAveragePool and a Softmax at the end: shift_nodes.py.

The graph input becomes integer codes u = clamp(round(x / s_in) + z_in, 0, 255) in float32 (the
frontend reads a float32 NEMO input as uint8); the outputs are codes, real = s·(u − z), or the
float Softmax's probabilities. The codes' parameters of the input, the outputs, the tensors a
float tail reads and every other activation are in the model's metadata_props
(`tilewise.quant.<tensor>` = "scale zero_point"; the layers' own let `validate --float-model`
compare each layer with the float model in real units, validate/float_layers.py), and
`ShiftModel.quantize_input` / `dequantize` apply them.

Not taken (refused with the node's name): Concat, MatMul, an Add of a constant, a Softmax that is
not the end of the graph.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import TilewiseError
from .calibrate import QParams
from .graph_out import ACTIVATIONS, MOVES, Plan, _node_label, _weight_axis
from .weights import quantize_weights

#: d at most: 128·2^d (the stored uint8 output's zero point, NE16's norm-quant bias) below 2^31
D_MAX = 23
INT32 = 2**31 - 1
FLOAT32_EXACT = 2**24
META = "tilewise.quant."
#: metadata key prefix of a weighted node's weight bits below 8 (read by frontend/onnx_nemo.py)
W_BITS_META = "tilewise.w_bits."


@dataclass(frozen=True)
class Act:
    """An integer tensor of the written model: real = scale·(u − zero_point), u ∈ [0, 255]."""

    scale: float
    zero_point: int

    def quantize(self, x: np.ndarray) -> np.ndarray:
        q = np.rint(np.asarray(x, np.float64) / self.scale) + self.zero_point
        return np.clip(q, 0, 255).astype(np.float32)

    def dequantize(self, u: np.ndarray) -> np.ndarray:
        return (np.asarray(u, np.float64) - self.zero_point) * self.scale


def act_for(qp: QParams) -> Act:
    """The unsigned 8-bit codes for a tensor calibrated to `qp`'s 8-bit range (module docstring):
    the same scale, the zero point moved by −qmin (int8's −128..127 → 0..255)."""
    lo, hi = qp.scale * (qp.qmin - qp.zero_point), qp.scale * (qp.qmax - qp.zero_point)
    if lo >= 0.0 or qp.zero_point == qp.qmin:
        s = hi / 255.0
        return Act(float(s) if s > 0 else 1.0, 0)
    if qp.qmax - qp.qmin != 255:
        raise TilewiseError(f"the shift-mode writer takes 8-bit activation ranges, not [{qp.qmin}, {qp.qmax}]")
    return Act(float(qp.scale), int(qp.zero_point - qp.qmin))


@dataclass(frozen=True)
class LayerShift:
    """What the writer chose for one weighted node."""

    layer: str
    shift: int
    multipliers: tuple[int, int]     # least and greatest k
    coarsened: int = 0               # the largest j of a channel's weight step × 2^j (layer_codes)
    coarse_channels: int = 0         # channels with j > 0
    w_bits: int = 8                  # weight bits (8, 4, 2)
    weight_elems: int = 0            # weights of a Conv / Gemm (0: the Add / pool constants)


@dataclass(frozen=True, eq=False)
class ShiftModel:
    model: onnx.ModelProto
    acts: dict[str, Act]             # every integer tensor's parameters (inputs, outputs included)
    input_name: str
    output_names: tuple[str, ...]
    layers: tuple[LayerShift, ...]
    tails: tuple[str, ...] = ()      # integer tensors read by the float tail (Softmax)

    def quantize_input(self, x: np.ndarray) -> np.ndarray:
        return self.acts[self.input_name].quantize(x)

    def dequantize(self, name: str, u: np.ndarray) -> np.ndarray:
        """Real values of tensor `name`: codes dequantized, a float tail's output as it is."""
        return self.acts[name].dequantize(u) if name in self.acts else np.asarray(u, np.float64)


def choose_shift(m: np.ndarray, bias: np.ndarray, w_abs: np.ndarray, z_y: int,
                 label: str) -> tuple[int, np.ndarray, np.ndarray]:
    """(d, k, B') per channel for real multipliers m, integer biases B (accumulator units) and
    Σ|q_w| per channel (module docstring); TilewiseError when no d keeps the values exact."""
    m = np.asarray(m, np.float64)
    for d in range(D_MAX, -1, -1):
        k = np.maximum(np.rint(m * 2.0**d), 1).astype(np.int64)
        b = np.rint((m * bias + z_y + 0.5) * 2.0**d / k).astype(np.int64)
        target = k * (np.abs(b) + 256 * w_abs) + 128 * 2**d
        if (target <= INT32).all() and (255 * w_abs + np.abs(b) < FLOAT32_EXACT).all():
            return d, k, b
    raise TilewiseError(f"node '{label}': no shift keeps its requantization within int32 and its "
                        f"accumulator within float32's exact integers (weights too large for the "
                        f"shift-mode writer)")


def layer_codes(w: np.ndarray, b: np.ndarray | None, axis: int, ax: Act, ay: Act, label: str,
                bits: int = 8) -> tuple[np.ndarray, int, np.ndarray, np.ndarray, np.ndarray]:
    """(integer weights in w's layout, d, k, B', j per channel) of a Conv / Gemm with float weights
    w (output channels along `axis`) and bias b between activations ax and ay (module docstring).

    A channel whose bias dominates its accumulator (|B'| ≥ 2^24 − 255·Σ|q_w|: e.g. a calibration
    range where the weighted sum moves the output by a few codes and the bias by hundreds) gets a
    coarser weight step s_w·2^j, the least j ≤ 7 that brings the accumulator back below 2^24 —
    the weights' share of such an output is a few codes, so their lost bits cost little there.
    `bits` < 8: codes within ±(2^(bits−1) − 1), weights.py's sub-byte scales (NE16's 2–7-bit
    weights)."""
    qmax = (1 << (bits - 1)) - 1
    qw = quantize_weights(w, axis, bits, b, ax.scale)
    s0 = qw.scale.astype(np.float64)
    wc = np.moveaxis(np.asarray(w, np.float64), axis, 0).reshape(s0.size, -1)
    bf = np.zeros(s0.size) if b is None else np.asarray(b, np.float64).reshape(-1)
    j = np.zeros(s0.size, np.int64)
    for _ in range(8):
        s_w = s0 * 2.0**j
        q = np.clip(np.rint(wc / s_w[:, None]), -qmax, qmax).astype(np.int64)
        w_abs = np.abs(q).sum(axis=1)
        bias = np.rint(bf / (ax.scale * s_w)).astype(np.int64) - ax.zero_point * q.sum(axis=1)
        m = ax.scale * s_w / ay.scale
        reach = 255 * w_abs + np.abs(bias) + (ay.zero_point + 1) / m
        over = reach >= FLOAT32_EXACT
        if not over.any() or (j[over] >= 7).any():
            break
        j = np.where(over, j + 1, j)
    d, k, b_int = choose_shift(m, bias, w_abs, ay.zero_point, label)
    shape = list(np.moveaxis(np.asarray(w), axis, 0).shape)
    return np.moveaxis(q.reshape(shape), 0, axis), d, k, b_int, j


def pow2_codes(w: np.ndarray, b: np.ndarray | None, axis: int, ax: Act, ay: Act, label: str,
               bits: int = 8) -> tuple[np.ndarray, int, np.ndarray, np.ndarray, np.ndarray]:
    """`layer_codes` in the power-of-two form (module docstring): (integer weights, d, k = 1 per
    channel, B', zeros) with one weight scale s_y·2^−d / s_x for the whole layer."""
    qmax = (1 << (bits - 1)) - 1
    s_min = float(quantize_weights(w, axis, bits, b, ax.scale).scale.astype(np.float64).max())
    channels = np.asarray(w).shape[axis]
    wc = np.moveaxis(np.asarray(w, np.float64), axis, 0).reshape(channels, -1)
    bf = np.zeros(channels) if b is None else np.asarray(b, np.float64).reshape(-1)
    top = int(np.floor(np.log2(ay.scale / (ax.scale * s_min)) + 1e-9))
    if top < 0:
        raise TilewiseError(f"node '{label}': its output scale {ay.scale:.3g} is finer than its input "
                            f"scale times its weight step ({ax.scale * s_min:.3g}), so no right shift "
                            f"gives it a power-of-two requantization; quantize it for a target with "
                            f"multipliers (gap9, pulp-open) or calibrate a wider output range")
    # the first d tried: top (every weight within ±qmax) or top + 1 (half the step, the largest
    # weights clipped), whichever quantizes the weights with the smaller squared error
    def err(d: int) -> float:
        s_w = ay.scale * 2.0**-d / ax.scale
        return float(((np.clip(np.rint(wc / s_w), -qmax, qmax) * s_w - wc) ** 2).sum())

    first = min(top + 1, D_MAX) if top + 1 <= D_MAX and err(top + 1) < err(top) else min(top, D_MAX)
    for d in range(first, -1, -1):
        s_w = ay.scale * 2.0**-d / ax.scale
        q = np.clip(np.rint(wc / s_w), -qmax, qmax).astype(np.int64)
        w_abs = np.abs(q).sum(axis=1)
        bias = np.rint(bf / (ax.scale * s_w)).astype(np.int64) - ax.zero_point * q.sum(axis=1)
        b_int = bias + (ay.zero_point << d) + ((1 << d) >> 1)
        if ((np.abs(b_int) + 256 * w_abs + 128 * 2**d <= INT32).all()
                and (255 * w_abs + np.abs(b_int) < FLOAT32_EXACT).all()):
            shape = list(np.moveaxis(np.asarray(w), axis, 0).shape)
            return (np.moveaxis(q.reshape(shape), 0, axis), d, np.ones(channels, np.int64), b_int,
                    np.zeros(channels, np.int64))
    raise TilewiseError(f"node '{label}': no shift keeps its power-of-two requantization within int32 "
                        f"and its accumulator within float32's exact integers (weights too large for "
                        f"the shift-mode writer)")


def _attrs(n: onnx.NodeProto) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in n.attribute}


def _clip_bounds(n: onnx.NodeProto, inits: dict[str, np.ndarray]) -> tuple[float, float]:
    if n.op_type == "Relu":
        return 0.0, float("inf")
    a = _attrs(n)
    lo, hi = a.get("min", -float("inf")), a.get("max", float("inf"))
    if len(n.input) > 1 and n.input[1]:
        lo = float(inits[n.input[1]])
    if len(n.input) > 2 and n.input[2]:
        hi = float(inits[n.input[2]])
    return lo, hi


def clip_codes(ay: Act, lo_real: float, hi_real: float) -> tuple[int, int]:
    """A fused activation's real bounds as codes of `ay` (Relu: z_y = 0), within the code range."""
    lo = int(max(0, ay.zero_point + np.rint(lo_real / ay.scale))) if np.isfinite(lo_real) else 0
    hi = int(min(255, ay.zero_point + np.rint(hi_real / ay.scale))) if np.isfinite(hi_real) else 255
    return lo, hi


#: the float ops the writer takes besides MOVES and the fused Relu / Clip
TAKEN = ("Conv", "Gemm", "Add", "AveragePool", "GlobalAveragePool", "Softmax")


def write_shift(model: onnx.ModelProto, p: Plan, qp: dict[str, QParams],
                w_bits: dict[str, int] | None = None, pow2: bool = False) -> ShiftModel:
    """The shift-mode integer model of `model` for the calibrated parameters `qp` (module doc);
    `w_bits`: weight bits (8, 4, 2) per weighted node label (default 8); `pow2`: the weighted
    nodes in the power-of-two form (k = 1, one weight scale per layer: `pow2_codes`)."""
    from .shift_nodes import (
        SYM,
        halving_out,
        pool_geometry,
        pow2_codes_for,
        requant_chain,
        softmax_tail,
        write_add,
        write_add_pow2,
        write_halving,
        write_pool,
    )
    from .shift_nodes import halvings as pool_halvings

    w_bits = dict(w_bits or {})
    model = onnx.shape_inference.infer_shapes(model)
    g = model.graph
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim]
              for vi in (*g.input, *g.value_info, *g.output)}
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for n in g.node:
        for x in n.input:
            consumers.setdefault(x, []).append(n)
    outputs = {o.name for o in g.output}
    input_name = next(vi.name for vi in g.input if vi.name not in inits)
    acts: dict[str, Act] = {input_name: act_for(qp[input_name])}
    nodes: list[onnx.NodeProto] = []
    new_inits: list[onnx.TensorProto] = []
    layers: list[LayerShift] = []
    skip: set[int] = set()
    tails: list[str] = []             # integer tensors a float tail reads
    meta: dict[str, str] = {}

    def const(name: str, arr: np.ndarray) -> str:
        new_inits.append(numpy_helper.from_array(arr, name))
        return name

    def fused_output(n: onnx.NodeProto) -> tuple[str, float, float]:
        """(the tensor the node's chain writes, the real bounds of its fused Relu / Clip)."""
        y, readers = n.output[0], consumers.get(n.output[0], [])
        if y not in p.layer_of and len(readers) == 1 and readers[0].op_type in ACTIVATIONS:
            skip.add(list(g.node).index(readers[0]))
            return (readers[0].output[0], *_clip_bounds(readers[0], inits))
        return y, -float("inf"), float("inf")

    # pow2: each residual Add's addends, partner by partner (pow2_partner)
    partner: dict[str, str] = {}
    if pow2:
        for n in g.node:
            if n.op_type == "Add" and len(n.input) == 2 and not any(x in inits for x in n.input) \
                    and n.input[0] != n.input[1] and n.input[0] != input_name \
                    and n.input[1] != input_name:
                partner[n.input[0]], partner[n.input[1]] = n.input[1], n.input[0]

    def pow2_partner(y: str) -> Act | None:
        """The codes of an addend of a power-of-two Add (shift_nodes.pow2_codes_for: zero point 0
        or SYM): on its partner's scale when that is written (with zero point 0 or SYM), else on
        the larger of the two's; None otherwise."""
        other = partner.get(y)
        if other is None:
            return None
        if other in acts:
            ok = acts[other].zero_point in (0, SYM)
            return pow2_codes_for(qp[y], acts[other].scale) if ok else None
        return pow2_codes_for(qp[y], max(pow2_codes_for(qp[y]).scale, pow2_codes_for(qp[other]).scale))

    def out_act(y: str, lo_real: float) -> Act:
        tied = pow2_partner(y)
        if tied is not None:
            return tied
        ay = act_for(qp[y])
        return Act(ay.scale, 0) if lo_real >= 0.0 else ay

    def zero_padded(x: str, base: str, pads) -> tuple[str, list[int]]:
        """(the padded layer's input, its own pads): x and `pads` when its zero point is 0, else
        an explicit Pad of x by its zero point (real zeros) and no pads of its own."""
        pads = [int(v) for v in pads]
        if not any(pads) or acts[x].zero_point == 0:
            return x, pads
        t, l, b, r = pads
        nodes.append(helper.make_node(
            "Pad", [x, const(f"{base}/pads", np.array([0, 0, t, l, 0, 0, b, r], np.int64)),
                    const(f"{base}/pad_value", np.float32(acts[x].zero_point))],
            [f"{base}/padded"], name=f"{base}/pad", mode="constant"))
        return f"{base}/padded", [0, 0, 0, 0]

    for i, n in enumerate(g.node):
        if i in skip:
            continue
        label = _node_label(n, i)
        base = label.replace("/", "_")
        a = _attrs(n)
        if n.op_type in MOVES:
            for x in n.input[1:]:
                if x in inits:
                    new_inits.append(numpy_helper.from_array(inits[x], x))
            nodes.append(n)
            acts[n.output[0]] = acts[n.input[0]]
            continue
        if n.op_type == "Softmax" and n.output[0] in outputs and not consumers.get(n.output[0]):
            x = n.input[0]
            nodes += softmax_tail(n, x, acts[x].scale, const)
            tails.append(x)
            continue
        if n.op_type == "Softmax":
            raise TilewiseError(f"node '{label}' is a Softmax inside the network; the shift-mode "
                                f"writer keeps a Softmax only as the float tail that ends the graph")
        if n.op_type not in TAKEN:
            from ..targets.registry import list_targets

            shift_targets = [t.name for t in list_targets() if t.shift_requant]
            raise TilewiseError(f"node '{label}' is a {n.op_type}, which the shift-mode writer "
                                f"(--target {'/'.join(shift_targets)}) does not take; it takes "
                                f"{', '.join(TAKEN)} (Softmax as the float tail at the end) with "
                                f"Relu/Clip, and {', '.join(MOVES)}")
        if n.op_type == "Add":
            if any(x in inits for x in n.input):
                raise TilewiseError(f"node '{label}' adds a constant; the shift-mode writer takes "
                                    f"the residual Add of two activations")
            y, lo_real, hi_real = fused_output(n)
            xa, xb = (acts[x] for x in n.input[:2])
            if pow2 and xa.scale == xb.scale and {xa.zero_point, xb.zero_point} <= {0, SYM}:
                q = qp[y]
                more, layer, ay = write_add_pow2(
                    base, label, n.input[0], n.input[1], acts, max(q.scale * (q.qmin - q.zero_point), lo_real),
                    q.scale * (q.qmax - q.zero_point), lambda a_y: clip_codes(a_y, lo_real, hi_real), y, const)
            else:
                ay = out_act(y, lo_real)
                more, layer = write_add(base, label, n.input[0], n.input[1], acts, ay,
                                        clip_codes(ay, lo_real, hi_real), y, const)
        elif n.op_type in ("AveragePool", "GlobalAveragePool"):
            y = n.output[0]
            kernel, strides, pads = pool_geometry(n, label, shapes.get(n.input[0], []))
            stages = pool_halvings(kernel, strides, pads, shapes[n.input[0]]) if pow2 else 0
            if stages:
                src, ax = n.input[0], acts[n.input[0]]
                q = qp[y]
                ay, e = halving_out(ax, q.scale * (q.qmin - q.zero_point), q.scale * (q.qmax - q.zero_point))
                for i in range(stages):
                    last = i == stages - 1
                    dst = y if last else f"{base}_half{i}/out"
                    more, layer = write_halving(f"{base}_half{i}", f"{label}/half{i}", src, ax,
                                                shapes[n.input[0]][1], dst, const,
                                                ay if last else None, e if last else 0)
                    nodes += more
                    layers.append(layer)
                    acts[dst] = ay if last else ax
                    src = dst
                continue
            x, pads = zero_padded(n.input[0], base, pads)
            ay = act_for(qp[y])
            more, layer = write_pool(base, label, x, acts[n.input[0]], ay, shapes[n.input[0]][1],
                                     kernel, strides, pads, y, const)
        else:
            more, layer = [], None
        if layer is not None:
            nodes += more
            layers.append(layer)
            acts[y] = ay
            continue
        y, lo_real, hi_real = fused_output(n)
        ay = out_act(y, lo_real)
        ax = acts[n.input[0]]
        x = n.input[0]
        if n.op_type == "Conv":
            x, pads = zero_padded(x, base, a.get("pads", [0, 0, 0, 0]))
            a = {**a, "pads": pads}
        axis = _weight_axis(n)
        w = inits[n.input[1]].astype(np.float64)
        b = inits[n.input[2]].astype(np.float64) if len(n.input) > 2 and n.input[2] else None
        bits = w_bits.get(label, 8)
        q, d, k, b_int, coarse = (pow2_codes if pow2 else layer_codes)(w, b, axis, ax, ay, label, bits)
        layers.append(LayerShift(label, d, (int(k.min()), int(k.max())), int(coarse.max()),
                                 int((coarse > 0).sum()), bits, int(q.size)))
        if bits != 8:
            meta[f"{W_BITS_META}{label}"] = str(bits)
        lo, hi = clip_codes(ay, lo_real, hi_real)
        shape = [1, k.size, 1, 1] if n.op_type == "Conv" else [1, k.size]
        ins = [x, const(f"{base}/weight_q", q.astype(np.float32)),
               const(f"{base}/bias_q", b_int.astype(np.float32))]
        nodes.append(helper.make_node(n.op_type, ins, [f"{base}/acc"], name=label, **a))
        nodes += requant_chain(base, f"{base}/acc", k.reshape(shape), d, lo, hi, y, const)
        acts[y] = ay
    out_names = tuple(o.name for o in g.output)
    graph = helper.make_graph(nodes, f"{g.name}_shift",
                              [vi for vi in g.input if vi.name == input_name],
                              [o for o in g.output], new_inits)
    out = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                            producer_name="tilewise quantize (shift)")
    out.ir_version = 9
    for t in dict.fromkeys((input_name, *tails, *out_names, *acts)):   # every activation's
        if t in acts:
            meta[META + t] = f"{acts[t].scale!r} {acts[t].zero_point}"
    for key, value in meta.items():
        e = out.metadata_props.add()
        e.key, e.value = key, value
    onnx.checker.check_model(out)
    return ShiftModel(out, acts, input_name, out_names, tuple(layers), tuple(tails))


def run_dequantized(sm: ShiftModel, inputs: np.ndarray, names: tuple[str, ...] | None = None
                    ) -> dict[str, list[np.ndarray]]:
    """The shift model's tensors `names` (default its outputs) on float `inputs`, as real values:
    the input quantized to codes, the codes run by onnxruntime, each result dequantized."""
    from .sqnr import run_all, session

    names = sm.output_names if names is None else names
    extra = tuple(t for t in names if t not in sm.output_names)
    got = run_all(session(sm.model, extra), sm.input_name, sm.quantize_input(inputs), list(names))
    return {t: [sm.dequantize(t, v) for v in got[t]] for t in names}


def shift_report(float_model: onnx.ModelProto, sm: ShiftModel, inputs: np.ndarray) -> dict:
    """{"outputs": [...], "layers": [...]}: SQNR vs float per graph output and per requantized
    layer output (sqnr.py's figures for the shift model)."""
    from .sqnr import output_report, run_all, session, sqnr

    made = {o for n in float_model.graph.node for o in n.output}   # not the writer's own tensors
    layer_out = tuple(t for t in sm.acts if t in made and t not in sm.output_names)
    deq = run_dequantized(sm, inputs, (*sm.output_names, *layer_out))
    per_out = output_report(float_model, sm.input_name, inputs, [deq[o] for o in sm.output_names])
    f = run_all(session(float_model, layer_out), sm.input_name, inputs, list(layer_out))
    per_layer = [{**sqnr(t, f[t], deq[t]).to_json(), "layer": t} for t in layer_out]
    return {"outputs": per_out, "layers": per_layer}


def weight_bytes(sm: ShiftModel) -> int:
    """Packed bytes of the Conv / Gemm weights at their widths, ⌈n·b/8⌉ per layer (the sub-byte
    contract's packing, NE16's bit planes hold the same bits)."""
    return sum(-(-x.weight_elems * x.w_bits // 8) for x in sm.layers)


def shift_json(sm: ShiftModel, float_model: onnx.ModelProto | None = None,
               inputs: np.ndarray | None = None,
               compare: list[list[np.ndarray]] | None = None) -> dict:
    """The writer's choices (the codes of the input and outputs, each layer's shift, multipliers
    and coarsened channels) and, with `float_model` and `inputs`, "sqnr": shift_report's figures
    (+ "compare": another integer model's outputs `compare` vs float, per output)."""
    out: dict = {
        "form": "NEMO-style integer ONNX (float32 tensors of 8-bit codes; Conv/Gemm → Cast(int64) "
                "→ Mul(k) → Div(2^d) → Cast(float) → Clip)",
        "codes": {t: {"scale": sm.acts[t].scale, "zero_point": sm.acts[t].zero_point}
                  for t in (sm.input_name, *sm.tails, *sm.output_names) if t in sm.acts},
        "float_tail": list(sm.tails),
        "layers": [{"layer": x.layer, "shift": x.shift, "k_min": x.multipliers[0],
                    "k_max": x.multipliers[1], "coarsened_channels": x.coarse_channels,
                    "w_bits": x.w_bits} for x in sm.layers],
        "weight_bytes": weight_bytes(sm),
        "int8_weight_bytes": sum(x.weight_elems for x in sm.layers)}
    if float_model is not None and inputs is not None:
        from .sqnr import output_report

        rep = shift_report(float_model, sm, inputs)
        if compare is not None:
            rep["compare"] = {"outputs": output_report(float_model, sm.input_name, inputs, compare)}
        out["sqnr"] = rep
    return out
