"""Requantization of an int32 accumulator to the output integer type: one IR concept, four modes.

Modes (../shared/DESIGN.md "Integer semantics"):
- ``tflite``: y = clamp(SRDHM(acc << max(shift,0), M0) >>rnd max(-shift,0) + zp). `multiplier` holds
  the Q31 M0 per channel and `shift` the power-of-two exponent (positive = left), exactly as TFLite's
  QuantizeMultiplier derives them from s_x*s_w/s_y in double precision.
- ``onnx``: y = saturate(round_half_even(acc * scale) + zp) in float32, as onnxruntime's QLinear*
  kernels compute; `scale` holds the float32 per-channel s_x*s_w/s_y.
- ``shift``: y = clamp((k*acc + lambda) >> d) with floor shift (DORY / PULP-NN, seed 004
  "(k*phi + lambda) >> d"); `multiplier` holds k, `bias` lambda, `shift` d. NEMO/QuantLab integer
  graphs lower to it.
- ``adc``: DIANA's analog core (notes/accelerators.md "Analog core (HTVM)"): the array's sum goes
  through a 6-bit ADC, then a digital multiply-add-shift:
  a6 = clamp(floor(acc / D), adc_min, adc_max); y = clamp(floor((m·a6 + a) / 2^s) + zp).
  `divisor` holds the per-layer D (> 0), `adc_min`/`adc_max` the ADC range ([−32, 31]),
  `multiplier` m, `bias` a and `shift` s per channel. Exact integers throughout (golden/requant.py
  states the semantics once); the analog binding's checks keep every value in the chip's widths.
- ``div``: NEMO's integer requantization as exported (notes/integer-onnx.md): the float32
  Mul(κ) → Add(λ) → Cast(int64) → int64 Mul(m) → Div(D) → Cast chain,
  y = clamp(div(m·(κ·acc + λ), D) + zp) with `division` "trunc" (int64 Div, onnxruntime's C++
  `/`: toward zero) or "floor", and any D > 0 (2^d or 2^d − 1 alike). `multiplier` holds κ and
  `bias` λ per channel, `post_multiplier` m and `divisor` D per layer. Exact int64 arithmetic:
  the frontend only builds it where no intermediate can leave int64 (frontend/onnx_nemo.py).

`semantics`: one sentence the frontend writes on how the source model's arithmetic became this
Requant (e.g. why a truncating division became a floor shift); `describe` puts it in words for
`tilewise analyze`.

Fused activations (ReLU, ReLU6, ...) are folded into `qmin`/`qmax` in the output's integer domain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

RequantMode = Literal["tflite", "onnx", "shift", "adc", "div"]


@dataclass(frozen=True, eq=False)
class Requant:
    mode: RequantMode
    #: tflite: int32 M0 (Q31); shift: int32/int64 k; adc: m (after the ADC); onnx: unused (ones)
    multiplier: np.ndarray = field(repr=False)
    #: tflite: int32 exponent (positive = left shift); shift: int32 d; adc: s (right shift); onnx:
    #: unused
    shift: np.ndarray = field(repr=False)
    #: output zero point (tflite, onnx); 0 for shift mode unless the graph adds one
    zero_point: int = 0
    qmin: int = -128
    qmax: int = 127
    #: onnx: float32 per-channel scale s_x*s_w/s_y; tflite with rounding "real": the float64 one
    scale: np.ndarray | None = field(default=None, repr=False)
    #: shift: int32/int64 lambda per channel, added after the multiply; adc: a, idem
    bias: np.ndarray | None = field(default=None, repr=False)
    #: tflite: int64 accumulator and TFLite's int64 MultiplyByQuantizedMultiplier (16x8 conv/fc with
    #: int64 bias); False = int32 accumulator and the int32 MultiplyByQuantizedMultiplier
    wide: bool = False
    #: tflite: "double" = SRDHM then RoundingDivideByPOT (gemmlowp, LiteRT's conv kernels); "single" =
    #: one rounding of x*M0/2^(31-shift), ties upward (LiteRT's int8 FULLY_CONNECTED kernel);
    #: "real" = round(double(acc) · scale) half away from zero, `scale` the float64 per-channel
    #: double(s_x)·double(s_w)/double(s_y) — LiteRT's reference 16x8 FULLY_CONNECTED
    #: (reference_integer_ops::FullyConnected / FullyConnectedPerChannel with float scales)
    rounding: Literal["double", "single", "real"] = "double"
    #: adc: the per-layer divisor D (> 0) before the ADC, and the ADC's output range; div: the
    #: final divisor D (> 0)
    divisor: int = 1
    adc_min: int = -32
    adc_max: int = 31
    #: div: the per-layer integer m applied after κ·acc + λ, and how the division rounds
    post_multiplier: int = 1
    division: Literal["floor", "trunc"] = "floor"
    #: the frontend's sentence on where these semantics come from ("" = nothing to add)
    semantics: str = ""

    @property
    def channels(self) -> int:
        arr = self.scale if self.mode == "onnx" else self.multiplier
        return int(np.size(arr))


def _identity(rq: Requant) -> bool:
    lam = 0 if rq.bias is None else rq.bias
    return bool(np.all(np.asarray(rq.multiplier) == 1) and np.all(np.asarray(lam) == 0)
                and np.all(np.asarray(rq.shift) == 0) and rq.zero_point == 0
                and (int(rq.qmin), int(rq.qmax)) == (-(1 << 31), (1 << 31) - 1))


def describe(rq: Requant | None) -> str:
    """The requantization's arithmetic in one line (per-channel values summarized), then the
    frontend's `semantics` sentence if any."""
    if rq is None:
        return ""
    lo, hi = int(rq.qmin), int(rq.qmax)
    clamp = f"clamp [{lo}, {hi}]" if (lo, hi) != (-(1 << 31), (1 << 31) - 1) else "int32, no clamp"
    if rq.mode == "tflite":
        text = f"tflite: MultiplyByQuantizedMultiplier ({rq.rounding} rounding), {clamp}"
    elif rq.mode == "onnx":
        text = f"onnx: round_half_even(acc·scale) in float32, {clamp}"
    elif rq.mode == "shift" and _identity(rq):
        text = "none: the int32 accumulator is the output"
    elif rq.mode == "shift":
        d = sorted({int(v) for v in np.atleast_1d(rq.shift)})
        text = f"shift: floor((k·acc + λ) / 2^{d[0] if len(d) == 1 else d}), {clamp}"
    elif rq.mode == "adc":
        text = f"adc: floor(acc / {rq.divisor}) clamped to [{rq.adc_min}, {rq.adc_max}], then shift, {clamp}"
    else:
        m = f"{rq.post_multiplier}·" if rq.post_multiplier != 1 else ""
        text = f"div: {rq.division}({m}(κ·acc + λ) / {rq.divisor}) exact in int64, {clamp}"
    return f"{text} — {rq.semantics}" if rq.semantics else text


def quantize_multiplier(real: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplier: real = M0 * 2^shift / 2^31 with M0 in [2^30, 2^31).

    Mirrors tensorflow/lite/kernels/internal/quantization_util.cc (frexp, TfLiteRound = std::round:
    half away from zero, not numpy's half to even; the 2^31 carry, then shifts below -31 flush to
    zero). Pinned against hand-computed values in tests/test_quant_constants.py.
    """
    if real == 0.0:
        return 0, 0
    mant, shift = np.frexp(np.float64(real))
    scaled = float(mant) * float(1 << 31)          # exact: a power-of-two product
    q = int(scaled)                                # toward zero; the remainder is exact too
    if abs(scaled - q) >= 0.5:
        q += 1 if scaled > 0 else -1
    if q == (1 << 31):
        q //= 2
        shift += 1
    if shift < -31:
        shift = 0
        q = 0
    return q, int(shift)


def tflite_requant(real_scales: np.ndarray, zero_point: int, qmin: int, qmax: int) -> Requant:
    """Build a ``tflite`` Requant from per-channel real (double) scales s_x*s_w/s_y."""
    pairs = [quantize_multiplier(float(s)) for s in np.atleast_1d(real_scales)]
    return Requant(
        mode="tflite",
        multiplier=np.asarray([p[0] for p in pairs], dtype=np.int64),
        shift=np.asarray([p[1] for p in pairs], dtype=np.int64),
        zero_point=int(zero_point),
        qmin=int(qmin),
        qmax=int(qmax),
    )
