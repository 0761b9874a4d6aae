"""The shift-mode writer's non-weighted nodes: residual Add, average pools and the float Softmax
tail (shift_out.py writes the
Conv / Gemm chains and calls these).

Each function returns the ONNX nodes it writes (constants through `const`, shift_out's initializer
list) in the NEMO forms frontend/onnx_nemo.py and onnx_nemo_ops.py read — exact integer
arithmetic in onnxruntime (every float32 value an integer below 2^24, the rest in int64):

- Residual Add of codes a (s_a, z_a) and b (s_b, z_b) to y (s_y, z_y): the real sum is
  y = z_y + M_a·(a − z_a) + M_b·(b − z_b), M = s/s_y. Written as NEMO's residual chain
      Mul(a, w_a), Mul(b, w_b) → Add → Add(B') → Cast(int64) → Mul(k) → Div(2^d) → Cast → Clip
  with small integers w_a, w_b ≤ 127 (frontend/onnx_nemo_ops.py lowers the branches to a concat
  and a 1×1 conv of weights w·I, int8) and one multiplier m ≈ M_a/w_a ≈ M_b/w_b: `branch_weights`
  takes the pair whose ratio w_a/w_b is closest to M_a/M_b (the best rational approximation with
  both terms ≤ 127: exact or ~1e-4 for ratios near 1, up to ~0.3 % for a ratio of 30, where the
  small branch gets w ≤ 4), m the least-squares fit of both (each branch then within half that); then k, d and B' (the
  zero points, z_y and the rounding half) come from shift_out.choose_shift exactly as for a Conv whose weights are (w_a,
  w_b) — so the same int32 (NE16 norm-quant, PULP) and float32 bounds hold.
- Residual Add in the power-of-two form (`write_add_pow2`, DIANA: its digital core adds the
  stored int8 values, shifts and clips, bindings/diana_digital/add.py): both addends on one
  scale s, each with zero point 0 (a range ≥ 0: a ReLU'd tensor keeps 8 bits) or 128 (signed:
  stored int8 zero point 0); the output on s·2^d with zero point z_y = 128 + (z_a + z_b − 256) /
  2^d — then the stored sum is the core's (a' + b') >> d exactly —, d ≥ 0 the least where z_y is
  an integer code and the output's calibrated range fits: y = z_y + (a − z_a + b − z_b) / 2^d,
  written as Add(a, b) → Add(B' = z_y·2^d − z_a − z_b) → the chain with k = 1, floored (no
  rounding term: the core has no bias). shift_out.py chooses the addends' codes when it writes
  them (`pow2_partner`, `pow2_codes_for`).
- A global average pool of a square power-of-two map in the power-of-two form (`halvings`,
  `write_halving`: DIANA's digital core takes kernels of 1, 3, 5 or 7 only): j stages of a 2×2
  sum at stride 2, each a depthwise 3×3 Conv at stride 2 whose taps are 1 on the top-left 2×2 and
  0 elsewhere, padded by one row and column at the bottom and right (read with weight 0), then
  floor((S + 2) / 4) (k = 1, d = 2, B' = 2: the mean of the four, rounded); the codes keep the
  input's scale and zero point (4·z / 4 = z) through the stages. The last stage may write finer
  codes (`halving_out`): scale s_x / 2^e (e ≤ 2, the largest whose codes hold the output's
  calibrated range) with its own zero point z_y, d = 2 − e, B' = z_y·2^d − 4·z_x (+ 2^(d−1)).
- Softmax at the end: kept in float on the real logits, Mul(codes, s) → Softmax (softmax is
  invariant to the constant −z·s, so the zero point is left out); tilewise's frontend cuts that
  float tail (frontend/onnx_tail.py, with the dequantizing Mul before it) and compares the
  integer logits codes, and says so in its one "float tail" note.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import TensorProto, helper

from ..errors import TilewiseError

if TYPE_CHECKING:
    from .shift_out import LayerShift

Const = Callable[[str, np.ndarray], str]
#: branch weights of a residual Add at most (int8 weights of the frontend's 1×1 conv)
W_MAX = 127


def requant_chain(base: str, acc: str, k: np.ndarray, d: int, lo: int, hi: int, y: str,
                  const: Const) -> list[onnx.NodeProto]:
    """acc (float32 integers) → Cast(int64) → Mul(k) → Div(2^d) → Cast(float) → Clip(lo, hi) → y."""
    return [
        helper.make_node("Cast", [acc], [f"{base}/acc64"], name=f"{base}/cast64", to=TensorProto.INT64),
        helper.make_node("Mul", [f"{base}/acc64", const(f"{base}/k", np.asarray(k, np.int64))],
                         [f"{base}/scaled"], name=f"{base}/mul_k"),
        helper.make_node("Div", [f"{base}/scaled", const(f"{base}/div", np.int64(1 << d))],
                         [f"{base}/shifted"], name=f"{base}/shift"),
        helper.make_node("Cast", [f"{base}/shifted"], [f"{base}/codes"], name=f"{base}/cast32",
                         to=TensorProto.FLOAT),
        helper.make_node("Clip", [f"{base}/codes", const(f"{base}/lo", np.float32(lo)),
                                  const(f"{base}/hi", np.float32(hi))], [y], name=f"{base}/clip"),
    ]


def branch_weights(m_a: float, m_b: float) -> tuple[int, int, float]:
    """(w_a, w_b, m): integers 1..W_MAX with w_a/w_b closest to m_a/m_b (relative error of the
    worse branch), and m minimising Σ (m·w/M − 1)² over both branches (module docstring)."""
    best: tuple[float, int, int, float] | None = None
    big, small = max(m_a, m_b), min(m_a, m_b)
    for w_big in range(1, W_MAX + 1):
        w_small = min(W_MAX, max(1, round(w_big * small / big)))
        r_big, r_small = w_big / big, w_small / small
        m = (r_big + r_small) / (r_big ** 2 + r_small ** 2)
        err = max(abs(m * r_big - 1.0), abs(m * r_small - 1.0))
        if best is None or err < best[0] * (1 - 1e-9):
            best = (err, w_big, w_small, m)
    assert best is not None
    _, w_big, w_small, m = best
    return (w_big, w_small, m) if m_a >= m_b else (w_small, w_big, m)


def write_add(base: str, label: str, a: str, b: str, acts: dict, ay, bounds: tuple[int, int],
              y: str, const: Const) -> tuple[list[onnx.NodeProto], LayerShift]:
    """NEMO's residual chain (module docstring) adding codes a and b (parameters in `acts`) into
    y's codes `ay`, clipped to the code `bounds`: (nodes, the layer's choices)."""
    from .shift_out import LayerShift, choose_shift

    aa, ab = acts[a], acts[b]
    w_a, w_b, m = branch_weights(aa.scale / ay.scale, ab.scale / ay.scale)
    bias = -(w_a * aa.zero_point + w_b * ab.zero_point)
    d, k, b_int = choose_shift(np.array([m]), np.array([bias]), np.array([w_a + w_b]),
                               ay.zero_point, label)
    nodes: list[onnx.NodeProto] = []
    terms = []
    for name, src, w in (("a", a, w_a), ("b", b, w_b)):
        if w == 1:
            terms.append(src)
            continue
        nodes.append(helper.make_node("Mul", [src, const(f"{base}/w_{name}", np.float32(w))],
                                      [f"{base}/{name}_scaled"], name=f"{base}/scale_{name}"))
        terms.append(f"{base}/{name}_scaled")
    nodes.append(helper.make_node("Add", terms, [f"{base}/sum"], name=label))
    nodes.append(helper.make_node("Add", [f"{base}/sum", const(f"{base}/bias_q", np.float32(b_int[0]))],
                                  [f"{base}/acc"], name=f"{base}/bias"))
    nodes += requant_chain(base, f"{base}/acc", np.int64(k[0]), d, *bounds, y, const)
    return nodes, LayerShift(label, d, (int(k[0]), int(k[0])))


#: the zero point of the power-of-two form's signed addends (stored int8 zero point 0)
SYM = 128


def pow2_codes_for(qp, scale: float | None = None):
    """The codes of an addend of a power-of-two Add calibrated to `qp`: zero point 0 for a range
    ≥ 0 (a ReLU'd tensor keeps its 8 bits), else SYM; on `scale`, or the least that holds the
    range."""
    from .shift_out import Act

    lo, hi = qp.scale * (qp.qmin - qp.zero_point), qp.scale * (qp.qmax - qp.zero_point)
    z = 0 if lo >= 0.0 or qp.zero_point == qp.qmin else SYM
    need = max(hi / (255 - z), -lo / z if z else 0.0, 0.0)
    return Act(float(scale) if scale else (float(need) if need > 0 else 1.0), z)


def write_add_pow2(base: str, label: str, a: str, b: str, acts: dict, lo: float, hi: float,
                   bounds_of, y: str, const: Const):
    """The power-of-two residual Add (module docstring) of codes a and b, which share one scale s
    and have zero points 0 or SYM, into y whose calibrated real range is [lo, hi]: (nodes, the
    layer's choices, y's Act); `bounds_of(Act)`: the output's code bounds (its fused Relu / Clip).
    The output's zero point is z_y = 128 + (z_a + z_b − 256) / 2^d, what makes the stored sum
    exactly the core's (a' + b') >> d, at the least d ≥ 0 where it is an integer code and s·2^d
    holds [lo, hi] (the largest d tried, 7, otherwise)."""
    from .shift_out import Act, LayerShift

    s = acts[a].scale
    z_a, z_b = acts[a].zero_point, acts[b].zero_point
    assert acts[b].scale == s and {z_a, z_b} <= {0, SYM}
    for d in range(8):
        num = z_a + z_b - 2 * SYM
        if num % (1 << d) or not 0 <= SYM + num // (1 << d) <= 255:
            continue
        z_y = SYM + num // (1 << d)
        if (lo >= -z_y * s * 2**d and hi <= (255 - z_y) * s * 2**d) or d == 7:
            break
    ay = Act(s * 2.0**d, z_y)
    nodes = [helper.make_node("Add", [a, b], [f"{base}/sum"], name=label),
             helper.make_node("Add", [f"{base}/sum", const(f"{base}/bias_q", np.float32((z_y << d) - z_a - z_b))],
                              [f"{base}/acc"], name=f"{base}/bias")]
    nodes += requant_chain(base, f"{base}/acc", np.int64(1), d, *bounds_of(ay), y, const)
    return nodes, LayerShift(label, d, (1, 1)), ay


def pool_geometry(n: onnx.NodeProto, label: str, shape: list[int]
                  ) -> tuple[tuple[int, int], tuple[int, int], tuple[int, ...]]:
    """(kernel, strides, pads) of an AveragePool / GlobalAveragePool on an NCHW input of `shape`;
    TilewiseError for the windows the sum + shift form does not compute."""
    if len(shape) != 4 or not all(shape[1:]):
        raise TilewiseError(f"node '{label}': the shape of its input '{n.input[0]}' is not known (a "
                            f"4-D tensor of fixed size is needed to write the pool)")
    if n.op_type == "GlobalAveragePool":
        return (shape[2], shape[3]), (1, 1), (0, 0, 0, 0)
    a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
    pads = tuple(a.get("pads", (0, 0, 0, 0)))
    if any(pads) and not a.get("count_include_pad", 0):
        raise TilewiseError(f"node '{label}': an AveragePool whose border windows do not count the "
                            f"pads (count_include_pad = 0); the shift-mode writer divides every "
                            f"window by the full kernel size")
    if a.get("ceil_mode", 0) or any(v != 1 for v in a.get("dilations", (1, 1))) \
            or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise TilewiseError(f"node '{label}': an AveragePool with ceil_mode, dilations or auto_pad; "
                            f"the shift-mode writer takes explicit plain windows")
    return tuple(a["kernel_shape"]), tuple(a.get("strides", (1, 1))), pads


def write_pool(base: str, label: str, x: str, ax, ay, channels: int, kernel: tuple[int, int],
               strides: tuple[int, int], pads, y: str, const: Const
               ) -> tuple[list[onnx.NodeProto], LayerShift]:
    """An average pool of codes x (`ax`) into y (`ay`) as a depthwise Conv of ones (the window sum)
    and the shift chain: (nodes, the layer's choices)."""
    from .shift_out import LayerShift, choose_shift, clip_codes

    taps = kernel[0] * kernel[1]
    d, k, b_int = choose_shift(np.full(channels, ax.scale / (taps * ay.scale)),
                               np.full(channels, -ax.zero_point * taps), np.full(channels, taps),
                               ay.zero_point, label)
    ones = np.ones((channels, 1, *kernel), np.float32)
    conv = helper.make_node("Conv", [x, const(f"{base}/weight_q", ones),
                                     const(f"{base}/bias_q", np.asarray(b_int, np.float32))],
                            [f"{base}/acc"], name=label, group=channels, kernel_shape=list(kernel),
                            strides=list(strides), pads=list(pads))
    chain = requant_chain(base, f"{base}/acc", k.reshape(1, -1, 1, 1), d,
                          *clip_codes(ay, -float("inf"), float("inf")), y, const)
    return [conv, *chain], LayerShift(label, d, (int(k.min()), int(k.max())))


def halvings(kernel: tuple[int, int], strides: tuple[int, int], pads, shape: list[int]) -> int:
    """j when the pool is global over a square 2^j × 2^j map (j ≥ 2: a 2 × 2 one is a 3×3
    job already), unpadded: the stages `write_halving` writes; else 0."""
    h, w = shape[2], shape[3]
    if tuple(kernel) != (h, w) or h != w or any(pads) or h < 4 or h & (h - 1):
        return 0
    return int(h).bit_length() - 1


def halving_out(ax, lo: float, hi: float):
    """The codes of a halving pool's output (module docstring): (Act, e) for the input codes `ax`
    and the output's calibrated real range [lo, hi]."""
    from .shift_out import Act

    for e in (2, 1):
        s = ax.scale / 2**e
        z = int(np.clip(np.rint(-lo / s), 0, 255))
        if lo >= -z * s and hi <= (255 - z) * s:
            return Act(s, z), e
    return Act(ax.scale, ax.zero_point), 0


def write_halving(base: str, label: str, x: str, ax, channels: int, y: str, const: Const, ay=None,
                  e: int = 0) -> tuple[list[onnx.NodeProto], LayerShift]:
    """One 2×2-sum stage of a power-of-two global pool (module docstring) from codes x (`ax`)
    into y (`ay`, scale ax.scale / 2^e; default: x's codes): (nodes, the stage's choices)."""
    from .shift_out import LayerShift

    d = 2 - e
    z_y = ax.zero_point if ay is None else ay.zero_point
    bias = (z_y << d) - 4 * ax.zero_point + ((1 << d) >> 1)
    w = np.zeros((channels, 1, 3, 3), np.float32)
    w[:, 0, :2, :2] = 1.0
    conv = helper.make_node("Conv", [x, const(f"{base}/weight_q", w),
                                     const(f"{base}/bias_q", np.full(channels, bias, np.float32))],
                            [f"{base}/acc"], name=label, group=channels, kernel_shape=[3, 3],
                            strides=[2, 2], pads=[0, 0, 1, 1])
    chain = requant_chain(base, f"{base}/acc", np.ones((1, channels, 1, 1), np.int64), d, 0, 255, y,
                          const)
    return [conv, *chain], LayerShift(label, d, (1, 1))


def softmax_tail(n: onnx.NodeProto, x: str, scale: float, const: Const) -> list[onnx.NodeProto]:
    """The float tail Mul(x, s) → Softmax (n's attributes and output) on the codes x."""
    attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
    real = f"{x}/real"
    return [helper.make_node("Mul", [x, const(f"{x}/scale", np.float32(scale))], [real],
                             name=f"{x}/dequantize"),
            helper.make_node("Softmax", [real], list(n.output), name=n.name or "softmax", **attrs)]
