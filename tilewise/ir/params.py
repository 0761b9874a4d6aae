"""Typed op parameters: one frozen dataclass per op of the IR (and per semantics mode where the
parameter set differs). `Node.params` and `Layer.params` hold one of them; `PARAMS_OF` says which
classes each op accepts, and Node / Layer check it when they are built, so a frontend that builds
the wrong dataclass, forgets a field or misspells one fails at construction (every class is
keyword-only, with no defaults except a fixed `mode`).

`mode` is the integer semantics the parameters follow (DESIGN.md "Integer semantics"): "tflite"
(LiteRT's reference kernels), "onnx" (onnxruntime's QLinear* kernels) or "shift" (DORY/PULP-NN
(k·φ + λ) >> d, via the Requant; "div" and "adc" are the Requant's NEMO and DIANA forms). A
class made for one mode fixes it (not an argument); conv2d and fully_connected take theirs from
their Requant; mode-independent ops have mode None. The golden
model looks its kernels up by (op, params.mode) (golden/registry.py).

| class | op (mode) | fields, and where they come from |
|---|---|---|
| Conv2dParams | conv2d (any) | stride, dilation, pads (top, left, bottom, right), groups from the TFLite |
|              |              | Conv2DOptions / DepthwiseConv2DOptions (SAME -> explicit pads,            |
|              |              | ComputePaddingHeightWidth) or ONNX QLinearConv/Conv attributes; requant   |
|              |              | (ir/requant.py)                                                           |
| FullyConnectedParams | fully_connected (any) | requant |
| TfliteAddSubParams | add, sub (tflite) | left_shift, input_multipliers, input_shifts, output_multiplier, |
|                    |                   | output_shift, qmin, qmax: LiteRT add.cc / sub.cc Prepare        |
|                    |                   | (PrepareGeneralSubOp)                                           |
| TfliteMulParams | mul (tflite) | output_multiplier, output_shift, qmin, qmax: LiteRT mul.cc Prepare |
| OnnxAddParams | add (onnx) | a_index, ratio_a, ratio_b, fixed, qmin, qmax: onnxruntime QLinearAdd, MlasQLinearAdd |
|               |            | (qladd_avx2.cpp)                                                                     |
| TfliteAvgPoolParams | avg_pool (tflite) | kernel, stride, pads, qmin, qmax: Pool2DOptions, fused activation |
| OnnxAvgPoolParams | avg_pool (onnx) | kernel, stride, pads, count_include_pad, x/y scale and zero point, qmin, qmax: |
|                   |                 | QLinearAveragePool (qlinear_pool.cc)                                           |
| MaxPoolParams | max_pool (none) | kernel, stride, pads, qmin, qmax: Pool2DOptions / MaxPool attributes |
| TfliteMeanParams | mean, global_avg_pool (tflite) | axes, keepdims, multiplier, shift: LiteRT reduce.cc |
|                  |                                | (QuantizeMultiplier(s_x/s_y))                       |
| OnnxMeanParams | mean, global_avg_pool (onnx) | axes, keepdims, x_zero_point, count, requant: |
|                |                              | QLinearGlobalAveragePool (qlgavgpool.cpp)     |
| PadParams | pad (none) | pads per dim, value: TFLite PAD / PADV2 (output zero point or the constant input) |
| ReshapeParams | reshape (none) | shape |
| TransposeParams | transpose (none) | perm |
| TransposeConvParams | transpose_conv (tflite) | stride, pads (top, left), output_hw from TFLite TransposeConvOptions |
|                     |                         | and its output_shape input; requant                                  |
| ConcatParams | concat (tflite, onnx) | axis, input_quant, output_quant: TFLite ConcatenationWithScaling / |
|              |                       | onnxruntime QLinearConcat                                          |
| TfliteSoftmaxParams | softmax (tflite) | input_multiplier, input_left_shift, diff_min: PreprocessSoftmaxScaling, |
|                     |                  | CalculateInputRadius (5 integer bits)                                   |
| OnnxSoftmaxParams | softmax (onnx) | axis, table, y_scale_inv, y_zero_point: QLinearSoftmax (qlinear_softmax.cc) |
| TfliteLogisticParams | logistic, tanh (tflite) | table: LUTPopulate of the float sigmoid / tanh |
| TfliteRequantizeParams | quantize int->int (tflite) | multiplier, shift, input_zero_point, zero_point: |
|                        |                            | reference_ops::Requantize                        |
| TfliteAffineQuantizeParams | quantize float->int (tflite) | scale, zero_point: reference_ops::AffineQuantize |
| OnnxQuantizeParams | quantize (onnx) | x/y scale and zero point, qmin, qmax: DequantizeLinear -> [Relu/Clip] -> |
|                    |                 | QuantizeLinear                                                           |
| TfliteDequantizeParams | dequantize (tflite) | scale, zero_point: reference_ops::Dequantize |
| ClampParams | clamp (none) | qmin, qmax: a Relu/Clip between equal quantizations |
| IntArithParams | add, sub, mul (none) | qmin, qmax: integer exports' plain Add / Sub / Mul of codes |
|                |                      | (frontend/onnx_int.py)                                      |
| TableAddParams | add (none) | table_a, table_b (256 each), shift, qmin, qmax: a requantized add of two 8-bit codes |
|                |            | by tables                                                                            |
| RequantParams | requant (shift, div) | requant, axis: a standalone RequantShift / NEMO chain on any integer tensor |
| MatMulParams | matmul (none) | —: MatMul of two activations (Deeploy), int32 accumulators |
| SliceParams | slice (none) | starts, ends, steps per axis (ONNX Slice, normalized) |
| ReduceParams | reduce (none) | axes, keepdims, average: ReduceSum, and ReduceMean as Deeploy computes it |
| HardswishParams | hardswish (none) | three, six, one_over_six: Deeploy's iHardswish |
| IntSoftmaxParams | int_softmax (none) | coeff_a, coeff_b, coeff_c, log2, n_levels, axis: Deeploy's iSoftmax (I-BERT) |
| RMSNormParams | rms_norm (none) | weight, log2d, qmin, qmax, axis: Deeploy's iRMSNorm |
| LayerNormParams | layer_norm (none) | weight, bias, log2d, qmin, qmax, axis: Deeploy's iLayerNorm |
| IntGeluParams | int_gelu (none) | b, one: Deeploy's iGELU (I-BERT's integer GELU) |
| ItaMaxParams | ita_max (none) | n_levels, axis: Deeploy's ITAMax (ITA's softmax by shifts) |
| SvdfParams | svdf (tflite) | rank, feature / output multiplier and shift, input / output zero point: LiteRT's |
|            |               | integer SVDF (int16 state)                                                       |
| LstmParams | lstm (tflite) | geometry, per-gate (M0, shift) of the input and recurrent products, hidden rescale, |
|            |               | cell scale and clip: LiteRT's integer LSTM (golden/lstm.py)                         |

Shared fields live in base classes that no op takes by themselves: WindowParams (kernel, stride,
pads of the pools), MeanParams (axes, keepdims) and OnnxRescaleParams (x/y scale and zero point,
qmin, qmax of the onnx ops that dequantize, compute in float32 and quantize).

The frontends compute every value (frontend/tflite_ops.py, tflite_act.py, onnx_qparams.py document
the formulas); the golden kernels only apply them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from .ops import WEIGHTED_LAYER_OPS, Op
from .requant import Requant, RequantMode

if TYPE_CHECKING:  # pragma: no cover
    from .layer import Layer
    from .tensor import Tensor

Mode = RequantMode

_params = dataclass(frozen=True, kw_only=True, eq=False)


@_params
class OpParams:
    """Base of every op's parameters. `mode`: the semantics they follow, None when the op has one
    meaning in every source format."""

    mode: Mode | None = field(default=None, init=False)

    def _check_lengths(self, **lengths: int) -> None:
        for name, n in lengths.items():
            if len(getattr(self, name)) != n:
                raise ValueError(f"{type(self).__name__}.{name} must have {n} values, got {getattr(self, name)!r}")


# ------------------------------------------------------------------------------ weighted ops

@_params
class Conv2dParams(OpParams):
    """conv2d: x [N,H,W,C], w [K,FY,FX,C/groups] (OHWI), optional int32/int64 bias [K]."""

    mode: Mode = field(init=False)
    stride: tuple[int, int]
    dilation: tuple[int, int]
    #: (top, left, bottom, right) input pixels; padded taps take the input zero point
    pads: tuple[int, int, int, int]
    #: 1 (dense) .. C (depthwise, output channel k reads input channel k // (K/C))
    groups: int
    requant: Requant
    #: the stored value of a padded tap when it is not the input zero point (a NEMO Pad of a
    #: constant folded into the conv, frontend/onnx_nemo.fold_pads); None: the zero point
    pad_value: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", self.requant.mode)
        self._check_lengths(stride=2, dilation=2, pads=4)


@_params
class FullyConnectedParams(OpParams):
    """fully_connected: x [..., C] read as [N, C], w [K, C], optional bias [K]."""

    mode: Mode = field(init=False)
    requant: Requant

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", self.requant.mode)


@_params
class TransposeConvParams(OpParams):
    """transpose_conv: x [N,H,W,C], w [K,FY,FX,C] (OHWI), optional bias [K] (int32; int64 for
    16x8); the output [N, OH, OW, K] of TFLite TRANSPOSE_CONV (its output_shape input). Input pixel
    (iy, ix) adds (x − zp_x)·w[k, fy, fx] to output (iy·sy − pad_top + fy, ix·sx − pad_left + fx)
    when that lies inside the output; `pads` are (top, left), LiteRT's ComputePaddingHeightWidth
    on the output size (frontend/tflite_ops.py)."""

    mode: Mode = field(init=False)
    stride: tuple[int, int]
    pads: tuple[int, int]
    output_hw: tuple[int, int]
    requant: Requant

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", self.requant.mode)
        self._check_lengths(stride=2, pads=2, output_hw=2)


# ------------------------------------------------------------------------------ elementwise

@_params
class TfliteAddSubParams(OpParams):
    """add / sub, tflite: each input (q − zp) << left_shift, scaled by its (multiplier, shift),
    summed, scaled by the output's, + zp_out, clamped (golden/elementwise.py)."""

    mode: Literal["tflite"] = field(default="tflite", init=False)
    #: 20 for int8/uint8, 15 for int16
    left_shift: int
    #: QuantizeMultiplier(s_a / (2·max s)), of (s_b / (2·max s)): (a, b)
    input_multipliers: tuple[int, int]
    input_shifts: tuple[int, int]
    #: QuantizeMultiplier(2·max s / (2^left_shift · s_y))
    output_multiplier: int
    output_shift: int
    #: the fused activation's range (CalculateActivationRangeQuantized)
    qmin: int
    qmax: int

    def __post_init__(self) -> None:
        self._check_lengths(input_multipliers=2, input_shifts=2)


@_params
class TfliteMulParams(OpParams):
    """mul, tflite: (a − zp_a)·(b − zp_b) scaled by QuantizeMultiplier(float(s_a·s_b/s_y))."""

    mode: Literal["tflite"] = field(default="tflite", init=False)
    output_multiplier: int
    output_shift: int
    qmin: int
    qmax: int


@_params
class OnnxAddParams(OpParams):
    """add, onnx (QLinearAdd): r = fma(a, ratio_a, fma(b, ratio_b, fixed)) in float32."""

    mode: Literal["onnx"] = field(default="onnx", init=False)
    #: which input is the kernel's "a": the full-size operand (onnxruntime's broadcaster), 0 when both are
    a_index: int
    #: float32 s_a/s_c, s_b/s_c and zp_c − (zp_a·ratio_a + zp_b·ratio_b) (onnx_qparams.add_params)
    ratio_a: float
    ratio_b: float
    fixed: float
    qmin: int
    qmax: int

    def __post_init__(self) -> None:
        if self.a_index not in (0, 1):
            raise ValueError(f"OnnxAddParams.a_index must be 0 or 1, got {self.a_index!r}")


# ------------------------------------------------------------------------------ pooling, reductions

@_params
class WindowParams(OpParams):
    """The window of a pooling: kernel (ky, kx), stride (sy, sx), pads (top, left, bottom, right)."""

    kernel: tuple[int, int]
    stride: tuple[int, int]
    pads: tuple[int, int, int, int]

    def __post_init__(self) -> None:
        self._check_lengths(kernel=2, stride=2, pads=4)


@_params
class MaxPoolParams(WindowParams):
    """max_pool: the maximum over the valid taps, clamped to [qmin, qmax] (every mode)."""

    qmin: int
    qmax: int


@_params
class TfliteAvgPoolParams(WindowParams):
    """avg_pool, tflite: rounded mean of the valid taps, clamped (reference_integer_ops::AveragePool)."""

    mode: Literal["tflite"] = field(default="tflite", init=False)
    qmin: int
    qmax: int


@_params
class OnnxRescaleParams(OpParams):
    """The float32 rescaling of an onnx op that dequantizes its input with (x_scale, x_zero_point),
    quantizes its output with (y_scale, y_zero_point) (round half to even, saturate) and clamps to
    [qmin, qmax] (a fused Relu/Clip)."""

    mode: Literal["onnx"] = field(default="onnx", init=False)
    x_scale: float
    x_zero_point: int
    y_scale: float
    y_zero_point: int
    qmin: int
    qmax: int


@_params
class OnnxAvgPoolParams(OnnxRescaleParams, WindowParams):
    """avg_pool, onnx (QLinearAveragePool): float32 window mean of s_x·(x − zp_x), rescaled to y."""

    # OnnxRescaleParams comes first: dataclass fields are collected in reverse MRO, so its
    # mode "onnx" must be the last one seen (WindowParams carries OpParams' mode None)

    #: divide by FY·FX (True) or by the valid taps (False)
    count_include_pad: bool


@_params
class MeanParams(OpParams):
    """The reduction of a mean: axes (non-negative) and whether they are kept as size 1."""

    axes: tuple[int, ...]
    keepdims: bool


@_params
class TfliteMeanParams(MeanParams):
    """mean, tflite (QuantizedMeanOrSum): Σ − n·zp_x scaled by (multiplier, shift) with 1/n folded in."""

    mode: Literal["tflite"] = field(default="tflite", init=False)
    #: QuantizeMultiplier(double(s_x) / double(s_y))
    multiplier: int
    shift: int


@_params
class OnnxMeanParams(MeanParams):
    """mean, onnx (QLinearGlobalAveragePool): int Σ(x) − zp_x·count, then the onnx requant (whose
    scale is s_x / (s_y·count) and whose [qmin, qmax] is the output clamp)."""

    mode: Literal["onnx"] = field(default="onnx", init=False)
    x_zero_point: int
    #: pixels averaged (H·W)
    count: int
    requant: Requant


# ------------------------------------------------------------------------------ data movement

@_params
class PadParams(OpParams):
    """pad: constant padding, (before, after) per dimension."""

    pads: tuple[tuple[int, int], ...]
    value: int


@_params
class ReshapeParams(OpParams):
    """reshape: the output shape (element order unchanged)."""

    shape: tuple[int, ...]


@_params
class TransposeParams(OpParams):
    """transpose: output dim i is input dim perm[i]."""

    perm: tuple[int, ...]


@_params
class ConcatParams(OpParams):
    """concat along `axis`; an input whose (scale, zero point) differs from the output's is
    requantized as the mode's kernel does (golden/shape_ops.py, golden/onnx_ops.py)."""

    mode: Literal["tflite", "onnx"]
    axis: int
    #: (scale, zero point) of each input, in input order
    input_quant: tuple[tuple[float, int], ...]
    output_quant: tuple[float, int]

    def __post_init__(self) -> None:
        if self.mode not in ("tflite", "onnx"):
            raise ValueError(f"ConcatParams.mode must be 'tflite' or 'onnx', got {self.mode!r}")


# ------------------------------------------------------------------------------ activations

@_params
class TfliteSoftmaxParams(OpParams):
    """softmax over the last axis, tflite (reference_ops::Softmax, int8/uint8; SoftmaxInt16 for
    int16, with its two 513-entry tables: exp on [-10, 0] and 1/(1 + x) on [0, 1])."""

    mode: Literal["tflite"] = field(default="tflite", init=False)
    input_multiplier: int
    input_left_shift: int
    diff_min: int
    #: int16 only: LUTPopulate's exp table and 1/(1+x) table (frontend/tflite_act.py)
    exp_lut: tuple[int, ...] = ()
    recip_lut: tuple[int, ...] = ()


@_params
class OnnxSoftmaxParams(OpParams):
    """softmax, onnx (QLinearSoftmax): exp table lookup, float32 sum, scaled by ⌊1/s_y⌋."""

    mode: Literal["onnx"] = field(default="onnx", init=False)
    #: the IR (NHWC) axis normalized over
    axis: int
    #: float32[256]: table[i] = exp((i − 255 + shift)·s_x) (onnx_qparams.softmax_table)
    table: np.ndarray = field(repr=False)
    y_scale_inv: float
    y_zero_point: int

    def __post_init__(self) -> None:
        self._check_lengths(table=256)


@_params
class TfliteLogisticParams(OpParams):
    """logistic and tanh, tflite: output = table[q − qmin] (256 entries, int8/uint8; LiteRT's
    LUTPopulate of the float sigmoid or tanh)."""

    mode: Literal["tflite"] = field(default="tflite", init=False)
    table: tuple[int, ...] = field(repr=False)

    def __post_init__(self) -> None:
        self._check_lengths(table=256)


# ------------------------------------------------------------------------------ (de)quantization

@_params
class TfliteRequantizeParams(OpParams):
    """quantize int -> int, tflite: MultiplyByQuantizedMultiplier(q − zp_in, M, shift) + zp_out."""

    mode: Literal["tflite"] = field(default="tflite", init=False)
    #: QuantizeMultiplier(double(s_in) / double(s_out))
    multiplier: int
    shift: int
    input_zero_point: int
    zero_point: int


@_params
class TfliteAffineQuantizeParams(OpParams):
    """quantize float -> int, tflite: round_half_away(x / scale) + zero_point in float32."""

    mode: Literal["tflite"] = field(default="tflite", init=False)
    scale: float
    zero_point: int


@_params
class OnnxQuantizeParams(OnnxRescaleParams):
    """quantize int -> int, onnx: QuantizeLinear(DequantizeLinear(x)), then [qmin, qmax]."""


@_params
class TfliteDequantizeParams(OpParams):
    """dequantize, tflite: float32(double(scale)·(q − zero_point))."""

    mode: Literal["tflite"] = field(default="tflite", init=False)
    scale: float
    zero_point: int


@_params
class ClampParams(OpParams):
    """clamp to [qmin, qmax] (input and output quantized alike)."""

    qmin: int
    qmax: int


# ------------------------------------------------------------------------------ integer exports

@_params
class IntArithParams(OpParams):
    """add / sub / mul of integer codes, exact (the integer exports' plain arithmetic: a Deeploy
    Add of two int8 tensors gives their int16 sum), operands of any broadcastable shapes, then
    clamped to [qmin, qmax] (the output type's range unless a Clip was fused)."""

    qmin: int
    qmax: int


@_params
class TableAddParams(OpParams):
    """add of two 8-bit codes through one table each: y = clamp((ta[a − lo_a] + tb[b − lo_b]) >>
    shift, qmin, qmax), lo the input type's minimum — an integer export's requantized add whose
    every branch term is a function of its own code (QuantLab's DORY adder: clip((a·m + c) >> s)
    per input; NEMO's residual (k·c_a·a + λ) and k·c_b·b), exact by construction
    (frontend/onnx_int.py `table_add`)."""

    table_a: tuple[int, ...] = field(repr=False)
    table_b: tuple[int, ...] = field(repr=False)
    shift: int
    qmin: int
    qmax: int

    def __post_init__(self) -> None:
        self._check_lengths(table_a=256, table_b=256)


@_params
class RequantParams(OpParams):
    """requant: y = the Requant of x element by element (golden/requant.py apply_requant), its
    per-channel values along IR axis `axis` (None: one value for the whole tensor). Modes shift
    (QuantLab's RequantShift, DORY's adder inputs) and div (NEMO's chains)."""

    mode: Mode = field(init=False)
    requant: Requant
    axis: int | None

    def __post_init__(self) -> None:
        if self.requant.mode not in ("shift", "div"):
            raise ValueError(f"RequantParams takes a shift or div Requant, got {self.requant.mode!r}")
        object.__setattr__(self, "mode", self.requant.mode)


@_params
class MatMulParams(OpParams):
    """matmul: y[..., m, n] = Σ_k a[..., m, k]·b[..., k, n] of two activations (batch dims
    broadcast as numpy.matmul), exact; the frontend gives y a type that holds every sum."""


@_params
class SliceParams(OpParams):
    """slice: y = x[starts[0]:ends[0]:steps[0], ...] per axis, starts and ends within [0, dim],
    steps positive (ONNX Slice with its negative and out-of-range indices normalized)."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    steps: tuple[int, ...]


@_params
class ReduceParams(MeanParams):
    """reduce over `axes`: the exact sum, or with `average` Deeploy's integer ReduceMean
    floor((Σ + n/2) / n) with n the reduced count (round half up)."""

    average: bool


@_params
class HardswishParams(OpParams):
    """hardswish, Deeploy's iHardswish (Generic/src/Hardswish_s8.c): y = x·(clamp(x + three, 0,
    six)·one_over_six), exact in int32 (the frontend checks it cannot overflow)."""

    three: int
    six: int
    one_over_six: int


@_params
class IntSoftmaxParams(OpParams):
    """int_softmax, Deeploy's iSoftmax (Generic/src/Softmax_s8.c, PULPOpen/src/iSoftmax.c: I-BERT's
    integer exponential) along IR axis `axis`: per row m = max(x), d = x − m,
    z = min(⌊−d / log2⌋, 31), p = d + z·log2, e = (coeff_a·(p + coeff_b)² + coeff_c) >> z,
    y = ⌊e·(n_levels − 1) / Σe⌋ — codes in [0, n_levels − 1]."""

    coeff_a: int
    coeff_b: int
    coeff_c: int
    log2: int
    n_levels: int
    axis: int


@_params
class RMSNormParams(OpParams):
    """rms_norm, Deeploy's iRMSNorm (Generic/src/iRMSNorm_s8.c) along IR axis `axis` of length N:
    per row s = ⌊Σx² / N⌋ + 1, r = ⌊√s⌋, y = clamp(trunc(x·weight[j] / r) >> log2d, qmin, qmax)
    with `weight` one integer per element of the row (trunc: C's division toward zero)."""

    weight: tuple[int, ...]
    log2d: int
    qmin: int
    qmax: int
    axis: int


@_params
class LayerNormParams(OpParams):
    """layer_norm, Deeploy's iLayerNorm (Generic/src/Layernorm_s8.c; QuantLab's PACTIntegerLayerNorm)
    along IR axis `axis` of length N: per row μ = trunc(Σx / N), d = x − μ, s = ⌊Σd² / N⌋ + 1,
    r = ⌊√s⌋, y = clamp((trunc(d·weight[j] / r) + bias[j]) >> log2d, qmin, qmax) with `weight` and
    `bias` one integer per element of the row (trunc: C's division toward zero)."""

    weight: tuple[int, ...]
    bias: tuple[int, ...]
    log2d: int
    qmin: int
    qmax: int
    axis: int


@_params
class IntGeluParams(OpParams):
    """int_gelu, Deeploy's iGELU (Generic/src/GELU_s8.c; I-BERT's integer GELU as QuantLab's
    PACTIntegerGELU exports it) per element: q = min(|x|, −b), L = sign(x)·(one − (q + b)²),
    y = x·⌊(one + L) / 2⌋, exact in int32 (the frontend checks it cannot overflow)."""

    b: int
    one: int


@_params
class ItaMaxParams(OpParams):
    """ita_max, Deeploy's ITAMax (Generic/src/Softmax_s8.c ITAMax_s8; QuantLab's PACTIntegerITAMax)
    along IR axis `axis` with n_levels = 256: per row m = max(x), s_j = (m − x_j + 16) >> 5 (the
    difference times B / 2^B = 1/32, rounded half up), Σ = Σ_j 256 >> s_j,
    y_j = ⌊(n_levels − 1)·256 / Σ⌋ >> s_j — codes in [0, n_levels − 1]."""

    n_levels: int
    axis: int


@_params
class SvdfParams(OpParams):
    """svdf, tflite: LiteRT's integer SVDF (reference_ops::EvalIntegerSVDF, kernels/svdf.cc) on
    x [N, C] int8 with weights_feature int8 [F, C], weights_time int16 [F, M], an optional int32
    bias [U] (U = F / rank) and the int16 state [N, F·M] (filter f's M values at f·M .. f·M + M − 1,
    oldest first). Per invocation: the state moves one column left; its newest column f·M + M − 1
    gets clamp_int16(MBQM(Σ_c w_f[f, c]·(x_c − input_zero_point), feature_multiplier,
    feature_shift)); then acc_u = bias_u + Σ_{r<rank} Σ_m w_t[u·rank + r, m]·state[(u·rank + r)·M + m]
    (int32) and y_u = clamp_int8(MBQM(acc_u, output_multiplier, output_shift) + output_zero_point)
    — no activation clamp beyond int8 (LiteRT requires RELU on the op and does not apply it).
    MBQM is TFLite's double-rounding MultiplyByQuantizedMultiplier; the multipliers are
    QuantizeMultiplier(s_x·s_wf / s_state) and (s_state·s_wt / s_y) in double."""

    mode: Literal["tflite"] = field(default="tflite", init=False)
    rank: int
    memory: int
    feature_multiplier: int
    feature_shift: int
    output_multiplier: int
    output_shift: int
    input_zero_point: int
    output_zero_point: int


@_params
class LstmParams(OpParams):
    """lstm, TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM as LiteRT's integer kernel computes it
    (lstm_eval.cc EvalInteger8x8_16; the constants as unidirectional_sequence_lstm.cc's
    PopulateQuantizedLstmParams8x8_16 derives them, frontend/tflite_lstm.py). Gates in the order
    input, forget, cell, output; per gate g the (M0, shift) of the input product (`in_mult`,
    `in_shift`) and of the recurrent product (`rec_mult`, `rec_shift`) into the gate's Q3.12;
    the hidden state h = clamp(MBQM(o·tanh(c), hidden_mult, hidden_shift) + hidden_zp);
    `cell_scale` = log2 of the cell state's scale (-15: Q0.15), `cell_clip` its quantized clip
    (0: none); `state_zp` the output state's zero point (h before the first step).

    `form` "16x8" is TFLite Micro's kernel for int16 activations (lstm_eval.h EvalLstm<int16_t,
    int8_t, int16_t, int64_t>, golden/lstm16.py, frontend/tflite_lstm16.py): `in_*` / `rec_*` the
    gate FCs' (M0, shift) into Q3.12, applied by the int64 MultiplyByQuantizedMultiplier; b_x the
    int64 biases, no b_h input (TFLM's recurrent FC has no bias); `cell_mul` the (M0, shift) of the
    two cell-update Muls (forget·c, input·cell gate), `hidden_*` the output Mul's; both states
    start at 0 (TFLM resets an int16 variable tensor to 0)."""

    mode: Mode = field(default="tflite", init=False)
    time_major: bool
    steps: int
    batch: int
    n_input: int
    n_cell: int
    in_mult: tuple[int, ...]
    in_shift: tuple[int, ...]
    rec_mult: tuple[int, ...]
    rec_shift: tuple[int, ...]
    hidden_mult: int
    hidden_shift: int
    hidden_zp: int
    cell_scale: int
    cell_clip: int
    state_zp: int
    #: "8x8_16" (LiteRT's int8 kernel) or "16x8" (TFLite Micro's int16-activation kernel)
    form: str = "8x8_16"
    #: 16x8: (M0, shift) of forget·c → c and of input·cell gate → c
    cell_mul: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        self._check_lengths(in_mult=4, in_shift=4, rec_mult=4, rec_shift=4)
        if self.form not in ("8x8_16", "16x8"):
            raise ValueError(f"LstmParams.form must be '8x8_16' or '16x8', got {self.form!r}")
        if self.form == "16x8":
            self._check_lengths(cell_mul=4)


@_params
class AttentionParams(OpParams):
    """attention (a layer only, passes/fuse_attention.py): the layers `scores` (a MatMul of q by
    k with its requantization fused), `rows` (a row op along the scores' last axis: int_softmax or
    ita_max; None when the context reads the scores directly) and `context` (a MatMul of the row
    op's output by v, requantized), computed one row tile of one head at a time so that the
    scores never exist whole; `inner` the tensors between them (no other layer reads them). The
    numbers are the three layers' (golden/layers.py)."""

    scores: Layer
    rows: Layer | None
    context: Layer
    inner: Mapping[str, Tensor]


@_params
class ResidualAddParams(OpParams):
    """conv2d_add (a layer only, passes/fuse_residual.py): the conv2d layer `conv` (its weights,
    bias and requantization are the fused layer's own) whose int8 output `inner` only the add
    layer `add` reads, and `add` (two inputs: that output and the skip tensor, the fused layer's
    second input). The numbers are the two layers' (golden/layers.py); the mode the add's."""

    conv: Layer
    add: Layer
    inner: Mapping[str, Tensor]

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", self.add.mode)


_MEAN = (TfliteMeanParams, OnnxMeanParams)

#: the parameter classes each op accepts on a graph node (depthwise is never a node)
PARAMS_OF: Mapping[Op, tuple[type[OpParams], ...]] = {
    Op.CONV2D: (Conv2dParams,),
    Op.FULLY_CONNECTED: (FullyConnectedParams,),
    Op.TRANSPOSE_CONV: (TransposeConvParams,),
    Op.ADD: (TfliteAddSubParams, OnnxAddParams, IntArithParams, TableAddParams),
    Op.SUB: (TfliteAddSubParams, IntArithParams),
    Op.MUL: (TfliteMulParams, IntArithParams),
    Op.AVG_POOL: (TfliteAvgPoolParams, OnnxAvgPoolParams),
    Op.MAX_POOL: (MaxPoolParams,),
    Op.MEAN: _MEAN,
    Op.PAD: (PadParams,),
    Op.RESHAPE: (ReshapeParams,),
    Op.CONCAT: (ConcatParams,),
    Op.TRANSPOSE: (TransposeParams,),
    Op.SOFTMAX: (TfliteSoftmaxParams, OnnxSoftmaxParams),
    Op.LOGISTIC: (TfliteLogisticParams,),
    Op.TANH: (TfliteLogisticParams,),
    Op.QUANTIZE: (TfliteRequantizeParams, TfliteAffineQuantizeParams, OnnxQuantizeParams),
    Op.DEQUANTIZE: (TfliteDequantizeParams,),
    Op.CLAMP: (ClampParams,),
    Op.REQUANT: (RequantParams,),
    Op.MATMUL: (MatMulParams,),
    Op.SLICE: (SliceParams,),
    Op.REDUCE: (ReduceParams,),
    Op.HARDSWISH: (HardswishParams,),
    Op.INT_SOFTMAX: (IntSoftmaxParams,),
    Op.RMS_NORM: (RMSNormParams,),
    Op.LAYER_NORM: (LayerNormParams,),
    Op.INT_GELU: (IntGeluParams,),
    Op.ITA_MAX: (ItaMaxParams,),
    Op.SVDF: (SvdfParams,),
    Op.LSTM: (LstmParams,),
    Op.ATTENTION: (AttentionParams,),
    Op.CONV2D_ADD: (ResidualAddParams,),
    Op.DEPTHWISE: (),
    Op.GLOBAL_AVG_POOL: _MEAN,
}


def check_params(op: Op, params: OpParams | None, where: str) -> None:
    """Raise TypeError unless `op` is an Op and `params` one of PARAMS_OF[op]'s classes."""
    if not isinstance(op, Op):
        raise TypeError(f"{where}: op {op!r} is not an ir.ops.Op")
    allowed = PARAMS_OF[op]
    if type(params) not in allowed:
        names = " or ".join(c.__name__ for c in allowed) or "no params"
        raise TypeError(f"{where}: op '{op}' takes {names}, got {type(params).__name__}")


def check_layer_params(op: Op, params: OpParams | None, where: str) -> None:
    """As check_params, for layers: conv2d, depthwise and fully_connected layers take no params
    (their arithmetic is the Layer's weights, bias, requant and pad_value)."""
    if isinstance(op, Op) and op in WEIGHTED_LAYER_OPS:
        if params is not None:
            raise TypeError(f"{where}: a {op} layer keeps its parameters in the Layer's fields, "
                            f"not in params ({type(params).__name__})")
        return
    check_params(op, params, where)
