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
  small branch gets w ≤ 4), m the least-squares fit of both (each branch then within half that); then k, d and B' (the zero points, z_y and the rounding half) come from
  shift_out.choose_shift exactly as for a Conv whose weights are (w_a, w_b) — so the same int32
  (NE16 norm-quant, PULP) and float32 bounds hold.
- AveragePool / GlobalAveragePool over n = K_h·K_w taps: the window sum S (integer) times
  M = s_x/(n·s_y), written as a depthwise Conv whose weights are all 1 (a "sum + shift": the
  frontend reads it as any NEMO Conv, a shift-mode depthwise layer; NEMO's AveragePool → Mul →
  Div chain would give an exact division by n, not a shift, whenever n is not a power of two —
  KWS's 25×5 and VWW's 3×3 windows). Bias −z_x·n; the Clip of the output codes. AveragePool's
  own pads are allowed with count_include_pad = 1 only (the conv counts the padded taps, real
  zeros: shift_out pads codes with their zero point).
- Softmax at the end: kept in float on the real logits, Mul(codes, s) → Softmax (softmax is
  invariant to the constant −z·s, so the zero point is left out); tilewise's frontend cuts that
  float tail (frontend/onnx_tail.py, with the dequantizing Mul before it) and compares the
  integer logits codes, and says so in its one "float tail" note.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper

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


def residual_add(base: str, label: str, a: str, b: str, w_a: int, w_b: int, b_int: int, k: int,
                 d: int, lo: int, hi: int, y: str, const: Const) -> list[onnx.NodeProto]:
    """NEMO's residual chain (module docstring) on codes a, b with the choices of `branch_weights`
    and `shift_out.choose_shift`."""
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
    nodes.append(helper.make_node("Add", [f"{base}/sum", const(f"{base}/bias_q", np.float32(b_int))],
                                  [f"{base}/acc"], name=f"{base}/bias"))
    return nodes + requant_chain(base, f"{base}/acc", np.int64(k), d, lo, hi, y, const)


def sum_pool(base: str, label: str, x: str, channels: int, kernel: tuple[int, int],
             strides: tuple[int, int], pads: tuple[int, ...], b_int: np.ndarray, k: np.ndarray,
             d: int, lo: int, hi: int, y: str, const: Const) -> list[onnx.NodeProto]:
    """An average pool as a depthwise Conv of ones (the window sum) and the shift chain."""
    ones = np.ones((channels, 1, *kernel), np.float32)
    conv = helper.make_node("Conv", [x, const(f"{base}/weight_q", ones),
                                     const(f"{base}/bias_q", np.asarray(b_int, np.float32))],
                            [f"{base}/acc"], name=label, group=channels, kernel_shape=list(kernel),
                            strides=list(strides), pads=list(pads))
    return [conv, *requant_chain(base, f"{base}/acc", np.asarray(k).reshape(1, -1, 1, 1), d, lo, hi,
                                 y, const)]


def softmax_tail(n: onnx.NodeProto, x: str, scale: float, const: Const) -> list[onnx.NodeProto]:
    """The float tail Mul(x, s) → Softmax (n's attributes and output) on the codes x."""
    attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
    real = f"{x}/real"
    return [helper.make_node("Mul", [x, const(f"{x}/scale", np.float32(scale))], [real],
                             name=f"{x}/dequantize"),
            helper.make_node("Softmax", [real], list(n.output), name=n.name or "softmax", **attrs)]
