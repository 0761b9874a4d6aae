"""The portable C kernel library (tilewise/bindings/portable/c) against the golden model, bit for bit.

The kernels and the host HAL are built once per session with the system compiler under
-std=c99 -Wall -Wextra -Werror -pedantic and called through ctypes (tests/tw_kernel_calls.py) on
random tiles, on 1, 3 and 8 host cores. References: golden/conv.py conv2d_acc / dense_acc +
golden/requant.py apply_requant (conv, pointwise, depthwise, fully connected; tflite, shift and onnx
requant), golden/elementwise.py add/sub/mul, golden/pool.py avg_pool/max_pool/mean,
golden/activation.py softmax, golden/fixedpoint.py multiply_by_quantized_multiplier. Layers are
also cut into tiles the way the tiler does (border tiles with their own pads, halos as data, K and
C tiles with int32 partial sums) and the assembled result must equal the untiled golden output.
"""

from __future__ import annotations

import os
import subprocess
import zlib
from dataclasses import replace

import numpy as np
import pytest

from tilewise.frontend.onnx_qparams import add_params as onnx_add_params
from tilewise.frontend.onnx_qparams import global_pool_scale
from tilewise.golden import activation as g_act
from tilewise.golden import elementwise as g_elt
from tilewise.golden import onnx_ops as g_onnx
from tilewise.golden import pool as g_pool
from tilewise.golden.conv import conv2d_acc, dense_acc
from tilewise.golden.fixedpoint import multiply_by_quantized_multiplier, multiply_by_quantized_multiplier_single
from tilewise.golden.requant import apply_requant
from tilewise.ir.graph import Graph, Node
from tilewise.ir.ops import Op
from tilewise.ir.params import (
    ConcatParams,
    MaxPoolParams,
    OnnxAddParams,
    OnnxAvgPoolParams,
    OnnxMeanParams,
    OnnxSoftmaxParams,
    OpParams,
    TfliteAddSubParams,
    TfliteAvgPoolParams,
    TfliteLogisticParams,
    TfliteMeanParams,
    TfliteMulParams,
    TfliteSoftmaxParams,
)
from tilewise.ir.requant import Requant, quantize_multiplier, tflite_requant
from tilewise.ir.shapes import conv_out
from tilewise.ir.tensor import QuantParams, Tensor

from . import tw_kernel_calls as kc
from .tw_kernel_calls import ACC_FIRST, ACC_LAST, Window

CORES = (1, 3, 8)
MODES = ("tflite", "tflite_single", "shift", "onnx")


@pytest.fixture(scope="session")
def lib():
    return kc.load_library()


# ------------------------------------------------------------------------------------------ helpers

def seed(*parts) -> int:
    """A stable seed from test parameters (str hashes are randomized per process)."""
    return zlib.crc32(repr(parts).encode())


def make_requant(mode: str, acc: np.ndarray, rng: np.random.Generator, per_channel: bool = True,
                 ties: bool = False) -> Requant:
    """A requant of `mode` scaled so that the outputs of `acc` spread over the int8 range."""
    k = acc.shape[-1]
    spread = acc.reshape(-1, k).std(axis=0) + 1.0
    real = rng.uniform(0.5, 2.0, k) * 50.0 / spread
    if ties:  # power-of-two scales: acc * scale lands on .5 often (round-half-even in onnx mode)
        real = 2.0 ** np.round(np.log2(real))
    if not per_channel:
        real = real[:1]
    zp = int(rng.integers(-20, 21))
    qmin, qmax = (zp, 127) if rng.random() < 0.3 else (-128, 127)
    n = real.size
    if mode in ("tflite", "tflite_single"):
        rq = tflite_requant(real, zp, qmin, qmax)
        return replace(rq, rounding="single") if mode == "tflite_single" else rq
    if mode == "shift":
        d = 16
        return Requant("shift", multiplier=np.maximum(1, np.round(real * 2.0**d)).astype(np.int64),
                       shift=np.full(n, d), zero_point=zp, qmin=qmin, qmax=qmax,
                       bias=rng.integers(-(1 << 15), 1 << 15, n))
    return Requant("onnx", multiplier=np.ones(n, dtype=np.int64), shift=np.zeros(n, dtype=np.int64),
                   zero_point=zp, qmin=qmin, qmax=qmax, scale=real.astype(np.float32))


def random_conv(rng, h, w, c, k, fy, fx, depthwise_mult=0):
    """Input, weights (OHWI, or [K,FY,FX,1] for depthwise), folded bias and the input zero point."""
    zp_x = int(rng.integers(-30, 31))
    x = rng.integers(-128, 128, (h, w, c)).astype(np.int8)
    kk = c * depthwise_mult if depthwise_mult else k
    wt = rng.integers(-127, 128, (kk, fy, fx, 1 if depthwise_mult else c)).astype(np.int8)
    bias = rng.integers(-4000, 4000, kk) - zp_x * wt.astype(np.int64).sum(axis=(1, 2, 3))
    return x, wt, bias.astype(np.int32), zp_x


def conv_acc(x, wt, bias, stride, pads, dil, pad_value, groups=1) -> np.ndarray:
    """Golden int64 accumulators [OY, OX, K] of a layer in folded form (zp_x = 0, pads = pad_value)."""
    return conv2d_acc(x[None], wt, bias, 0, 0, stride, pads, dil, groups=groups, pad_value=pad_value)[0]


def requantized(acc: np.ndarray, rq: Requant) -> np.ndarray:
    return apply_requant(acc, rq).astype(np.int8)


def tile_range(lo: int, hi: int, stride: int, k: int, dil: int, pad_before: int, size: int):
    """Input rows [a0, a1) and (pad_before, pad_after) of the tile producing output rows [lo, hi)."""
    a = lo * stride - pad_before
    b = (hi - 1) * stride - pad_before + dil * (k - 1) + 1
    return max(a, 0), min(b, size), max(-a, 0), max(b - size, 0)


def tiles_of(n: int, step: int):
    return [(i, min(n, i + step)) for i in range(0, n, step)]


def run_windowed_tiled(lib, x, fy, fx, stride, pads, dil, tiles, call):
    """Cut the output [OY, OX] into tiles of tiles=(toy, tox) and call call(win, x_tile, (oy0,oy1,ox0,ox1))."""
    h, w = x.shape[:2]
    (sy, sx), (dy, dx) = stride, dil
    oy_n = conv_out(h, fy, sy, pads[0], pads[2], dy)
    ox_n = conv_out(w, fx, sx, pads[1], pads[3], dx)
    for oy0, oy1 in tiles_of(oy_n, tiles[0]):
        y0, y1, pt, pb = tile_range(oy0, oy1, sy, fy, dy, pads[0], h)
        for ox0, ox1 in tiles_of(ox_n, tiles[1]):
            x0, x1, pl, pr = tile_range(ox0, ox1, sx, fx, dx, pads[1], w)
            win = Window(y1 - y0, x1 - x0, oy1 - oy0, ox1 - ox0, fy, fx, sy, sx, dy, dx, (pt, pl, pb, pr))
            assert kc.window_valid(lib, win), win
            call(win, x[y0:y1, x0:x1], (oy0, oy1, ox0, ox1))
    return oy_n, ox_n


def conv_tiled(lib, x, wt, bias, rq, stride, pads, dil, pad_value, tiles, cores, pointwise=False):
    """Run a conv layer as tiles (toy, tox, tk, tc): spatial, output-channel and input-channel tiles."""
    k, fy, fx, c = wt.shape
    out = {}

    def call(win, xt, box):
        for k0, k1 in tiles_of(k, tiles[2]):
            ctiles = tiles_of(c, tiles[3])
            psum = None if len(ctiles) == 1 else np.zeros((win.out_h, win.out_w, k1 - k0), dtype=np.int32)
            for i, (c0, c1) in enumerate(ctiles):
                flags = (ACC_FIRST if i == 0 else 0) | (ACC_LAST if i == len(ctiles) - 1 else 0)
                y = kc.conv(lib, win, xt[..., c0:c1], wt[k0:k1, ..., c0:c1], bias[k0:k1],
                            kc.RequantArrays(rq, k0, k1), pad_value, cores, psum, flags, pointwise)
            out[box + (k0, k1)] = y

    oy_n, ox_n = run_windowed_tiled(lib, x, fy, fx, stride, pads, dil, tiles, call)
    full = np.zeros((oy_n, ox_n, k), dtype=np.int8)
    for (oy0, oy1, ox0, ox1, k0, k1), y in out.items():
        full[oy0:oy1, ox0:ox1, k0:k1] = y
    return full


def softmax_params(beta: float, s_in: float) -> tuple[int, int, int]:
    """(input_multiplier, input_left_shift, diff_min) as TFLite's SoftmaxPrepare derives them for the
    reference kernel: PreprocessSoftmaxScaling and CalculateInputRadius with 5 integer bits
    (quantization_util.cc, double-rounding build)."""
    real = min(beta * s_in * float(1 << 26), float((1 << 31) - 1))
    mult, shift = quantize_multiplier(real)
    radius = int(np.floor(31.0 * float(1 << 26) / float(1 << shift)))
    return mult, shift, -radius


def golden_node(fn, op: Op, params: OpParams, inputs: list[tuple[np.ndarray, int, float]], out_shape,
                out_zp: int, out_scale: float = 0.1, dtype: str = "int8"):
    """Call a graph-level golden kernel on one node built from (array, zero point, scale) inputs
    (all tensors of `dtype`; the result is returned as int8 for int8, int64 otherwise)."""
    tensors = {f"in{i}": Tensor(f"in{i}", a.shape, dtype, QuantParams((s,), (zp,)))
               for i, (a, zp, s) in enumerate(inputs)}
    tensors["out"] = Tensor("out", tuple(out_shape), dtype, QuantParams((out_scale,), (out_zp,)))
    names = tuple(f"in{i}" for i in range(len(inputs)))
    node = Node("n", op, names, ("out",), params)
    graph = Graph("g", tensors, (node,), names, ("out",))
    y = np.asarray(fn(node, graph, [a for a, _, _ in inputs]))
    return y.astype(np.int8) if dtype == "int8" else y.astype(np.int64)


# ------------------------------------------------------------------------------ fixed point

def test_mbqm_matches_golden(lib):
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.integers(-(1 << 31), 1 << 31, 1500), rng.integers(-5000, 5000, 500),
                        [-(1 << 31), (1 << 31) - 1, 0, -1, 1]])
    m = rng.integers(1 << 30, 1 << 31, x.size)
    m[-5:] = [-(1 << 31), (1 << 31) - 1, 1 << 30, (1 << 31) - 1, 1 << 30]
    shift = rng.integers(-31, 13, x.size)
    want = multiply_by_quantized_multiplier(x, m, shift)
    got = np.array([lib.shim_mbqm(int(a), int(b), int(s), 0) for a, b, s in zip(x, m, shift)])
    assert np.array_equal(got, want)
    want = multiply_by_quantized_multiplier_single(x, m, shift)
    got = np.array([lib.shim_mbqm(int(a), int(b), int(s), 1) for a, b, s in zip(x, m, shift)])
    assert np.array_equal(got, want)


@pytest.mark.parametrize("d", [1, 3, 1023, 2 ** 21 - 1, 2 ** 24 - 1, 2 ** 21, 2 ** 26, 12345679,
                               2 ** 31 - 1, 2 ** 32 + 5, 2 ** 40])
@pytest.mark.parametrize("lo,hi", [(0, 255), (-128, 127), (-32768, 32767), (-(2 ** 31), 2 ** 31 - 1)])
def test_div_mode_division_clamped_matches_golden(lib, d, lo, hi):
    """tw_div64_clamp (the div requant mode's 32-bit fast paths) is clamp(golden divide) for
    quotients below, inside and above the clamp, on and beside multiples of d, both roundings."""
    from tilewise.golden.requant import divide

    rng = np.random.default_rng(d % 1000 + abs(lo))
    m = min(d, 10 ** 9)
    edges = [v for v in (0, -1, 1, lo * d, lo * d - 1, (hi + 1) * d, (hi + 1) * d - 1) if abs(v) < 2 ** 62]
    q = np.concatenate([rng.integers(-300, 300, 4000) * d + rng.integers(-2, 3, 4000),
                        rng.integers(-300 * m, 300 * m, 4000), rng.integers(-(2 ** 61), 2 ** 61, 500),
                        edges]).astype(np.int64)
    out = np.zeros_like(q)
    for trunc in (0, 1):
        lib.shim_div64_clamp(q.ctypes.data, q.size, d, trunc, lo, hi, out.ctypes.data)
        want = np.clip(divide(q, d, "trunc" if trunc else "floor"), lo, hi)
        assert np.array_equal(out, want), (trunc, q[out != want][:5], out[out != want][:5])


# ------------------------------------------------------------------------------ convolution

# (H, W, C, K, FY, FX, stride, dilation, pads (t, l, b, r))
CONV_CASES = {
    "3x3_s1_same_c3_k8": (9, 7, 3, 8, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1)),
    "5x5_s2_asym_c5_k7": (11, 9, 5, 7, 5, 5, (2, 2), (1, 1), (2, 1, 1, 2)),
    "7x7_s3_c8_k13": (8, 10, 8, 13, 7, 7, (3, 3), (1, 1), (3, 3, 2, 3)),
    "1x1_c16_k6": (6, 5, 16, 6, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0)),
    "3x1_dil2_s21_c4_k9": (10, 10, 4, 9, 3, 1, (2, 1), (2, 1), (1, 0, 0, 0)),
    "2x4_s13_c7_k4": (5, 13, 7, 4, 2, 4, (1, 3), (1, 1), (0, 2, 1, 1)),
    "6x6_valid_c12_k10_one_row": (6, 7, 12, 10, 6, 6, (1, 1), (1, 1), (0, 0, 0, 0)),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("case", list(CONV_CASES))
def test_conv_single_tile(lib, case, cores, mode):
    h, w, c, k, fy, fx, stride, dil, pads = CONV_CASES[case]
    rng = np.random.default_rng(seed((case, cores, mode)))
    x, wt, bias, zp_x = random_conv(rng, h, w, c, k, fy, fx)
    acc = conv_acc(x, wt, bias, stride, pads, dil, zp_x)
    rq = make_requant(mode, acc, rng, per_channel=cores != 3)
    want = requantized(acc, rq)
    win = Window(h, w, want.shape[0], want.shape[1], fy, fx, *stride, *dil, pads)
    got = kc.conv(lib, win, x, wt, bias, kc.RequantArrays(rq), zp_x, cores)
    assert np.array_equal(got, want)


# (case, tiles (rows, cols, K, C))
CONV_TILINGS = [
    ("3x3_s1_same_c3_k8", (4, 3, 5, 2)),
    ("5x5_s2_asym_c5_k7", (2, 4, 4, 3)),
    ("7x7_s3_c8_k13", (1, 2, 13, 3)),
    ("3x1_dil2_s21_c4_k9", (3, 5, 9, 1)),
    ("2x4_s13_c7_k4", (2, 2, 3, 7)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case,tiles", CONV_TILINGS)
def test_conv_tiled_with_border_pads_and_partial_sums(lib, case, tiles, mode):
    h, w, c, k, fy, fx, stride, dil, pads = CONV_CASES[case]
    rng = np.random.default_rng(seed((case, mode, "tiled")))
    x, wt, bias, zp_x = random_conv(rng, h, w, c, k, fy, fx)
    acc = conv_acc(x, wt, bias, stride, pads, dil, zp_x)
    rq = make_requant(mode, acc, rng)
    want = requantized(acc, rq)
    cores = CORES[len(case) % 3]
    got = conv_tiled(lib, x, wt, bias, rq, stride, pads, dil, zp_x, tiles, cores)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("stride", [1, 2, 3])
def test_pointwise_matches_golden_and_conv2d(lib, stride, cores):
    rng = np.random.default_rng(100 + stride * 10 + cores)
    x, wt, bias, zp_x = random_conv(rng, 9, 7, 11, 10, 1, 1)
    acc = conv_acc(x, wt, bias, (stride, stride), (0,) * 4, (1, 1), zp_x)
    rq = make_requant("tflite", acc, rng)
    want = requantized(acc, rq)
    got_pw = conv_tiled(lib, x, wt, bias, rq, (stride, stride), (0,) * 4, (1, 1), zp_x, (2, 3, 6, 4), cores,
                        pointwise=True)
    got_cv = conv_tiled(lib, x, wt, bias, rq, (stride, stride), (0,) * 4, (1, 1), zp_x, (3, 7, 10, 11), cores)
    assert np.array_equal(got_pw, want)
    assert np.array_equal(got_cv, want)


@pytest.mark.parametrize("cores", CORES)
def test_pointwise_with_padding(lib, cores):
    """1x1 convolutions with (asymmetric) padding: padded output pixels accumulate the pad value
    (tw_matmul_fill_s8) without scratch, in tiles with border pads and C-tiled partial sums."""
    rng = np.random.default_rng(200 + cores)
    for stride, pads, tiles in (((1, 1), (1, 2, 0, 1), (3, 5, 4, 5)), ((2, 1), (2, 0, 1, 3), (2, 5, 7, 4)),
                                ((3, 2), (0, 1, 2, 0), (5, 5, 3, 11))):
        x, wt, bias, zp_x = random_conv(rng, 7, 6, 11, 9, 1, 1)
        acc = conv_acc(x, wt, bias, stride, pads, (1, 1), zp_x)
        rq = make_requant("tflite", acc, rng)
        want = requantized(acc, rq)
        got = conv_tiled(lib, x, wt, bias, rq, stride, pads, (1, 1), zp_x, tiles, cores, pointwise=True)
        assert np.array_equal(got, want), (stride, pads)


def test_conv_positive_shift_and_onnx_ties(lib):
    """Small accumulators need multipliers > 1 (tflite left shift); power-of-two onnx scales hit .5 ties."""
    rng = np.random.default_rng(7)
    x, wt, bias, zp_x = random_conv(rng, 5, 5, 1, 6, 1, 1)
    wt[...] = rng.integers(-2, 3, wt.shape)
    bias = (rng.integers(-3, 4, 6) - zp_x * wt.astype(np.int64).sum(axis=(1, 2, 3))).astype(np.int32)
    acc = conv_acc(x, wt, bias, (1, 1), (0,) * 4, (1, 1), zp_x)
    for rq in (make_requant("tflite", acc, rng), make_requant("tflite_single", acc, rng),
               make_requant("onnx", acc, rng, ties=True)):
        if rq.mode == "tflite":
            assert (rq.shift > 0).any()
        want = requantized(acc, rq)
        got = kc.conv(lib, Window(5, 5, 5, 5, 1, 1), x, wt, bias, kc.RequantArrays(rq), zp_x, 3)
        assert np.array_equal(got, want)


# ------------------------------------------------------------------------------ depthwise

# (H, W, C, mult, FY, FX, stride, dilation, pads, tiles (rows, cols, channels))
DW_CASES = {
    "3x3_s1_m1": (10, 9, 13, 1, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), (4, 4, 5)),
    "5x5_s2_m2": (11, 12, 5, 2, 5, 5, (2, 2), (1, 1), (2, 2, 1, 2), (3, 2, 2)),
    "7x7_s3_m3": (13, 9, 3, 3, 7, 7, (3, 3), (1, 1), (3, 2, 3, 3), (2, 3, 1)),
    "3x3_dil2_s1_m1": (9, 9, 6, 1, 3, 3, (1, 1), (2, 2), (2, 2, 2, 2), (5, 9, 4)),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", list(DW_CASES))
def test_depthwise_tiled(lib, case, mode):
    h, w, c, m, fy, fx, stride, dil, pads, tiles = DW_CASES[case]
    rng = np.random.default_rng(seed((case, mode)))
    x, wt, bias, zp_x = random_conv(rng, h, w, c, 0, fy, fx, depthwise_mult=m)
    k = c * m
    acc = conv_acc(x, wt, bias, stride, pads, dil, zp_x, groups=c)
    rq = make_requant(mode, acc, rng)
    want = requantized(acc, rq)
    w_hwk = wt[..., 0].transpose(1, 2, 0)  # [FY, FX, K]: the C kernel's layout
    got = np.zeros_like(want)
    for cores in CORES:
        def call(win, xt, box):
            for c0, c1 in tiles_of(c, tiles[2]):
                k0, k1 = c0 * m, c1 * m
                y = kc.depthwise(lib, win, xt[..., c0:c1], w_hwk[..., k0:k1], bias[k0:k1], m,
                                 kc.RequantArrays(rq, k0, k1), zp_x, cores)
                got[box[0]:box[1], box[2]:box[3], k0:k1] = y

        got[...] = 0
        run_windowed_tiled(lib, x, fy, fx, stride, pads, dil, tiles[:2], call)
        assert np.array_equal(got, want), cores
    # and the whole layer as one tile
    win = Window(h, w, want.shape[0], want.shape[1], fy, fx, *stride, *dil, pads)
    assert np.array_equal(kc.depthwise(lib, win, x, w_hwk, bias, m, kc.RequantArrays(rq), zp_x, 8), want)
    assert k == want.shape[-1]


# ------------------------------------------------------------------------------ fully connected

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("rows,c,k", [(1, 37, 10), (2, 64, 13), (3, 29, 4), (1, 250, 3)])
def test_fully_connected(lib, rows, c, k, cores, mode):
    rng = np.random.default_rng(seed((rows, c, k, cores, mode)))
    zp_x = int(rng.integers(-30, 31))
    x = rng.integers(-128, 128, (rows, c)).astype(np.int8)
    wt = rng.integers(-127, 128, (k, c)).astype(np.int8)
    bias = (rng.integers(-4000, 4000, k) - zp_x * wt.astype(np.int64).sum(axis=1)).astype(np.int32)
    acc = dense_acc(x, wt, bias, 0, 0)
    rq = make_requant(mode, acc, rng)
    want = apply_requant(acc, rq).astype(np.int8)
    assert np.array_equal(kc.fully_connected(lib, x, wt, bias, rq=kc.RequantArrays(rq), cores=cores), want)
    # C tiled in slices of 16 with int32 partial sums, K tiled by 5
    got = np.zeros_like(want)
    for k0, k1 in tiles_of(k, 5):
        ctiles = tiles_of(c, 16)
        psum = np.zeros((rows, k1 - k0), dtype=np.int32)
        for i, (c0, c1) in enumerate(ctiles):
            flags = (ACC_FIRST if i == 0 else 0) | (ACC_LAST if i == len(ctiles) - 1 else 0)
            y = kc.fully_connected(lib, x[:, c0:c1], wt[k0:k1, c0:c1], bias[k0:k1], kc.RequantArrays(rq, k0, k1),
                                   cores, psum, flags)
        got[:, k0:k1] = y
    assert np.array_equal(got, want)


# ------------------------------------------------------------------------------ elementwise

def add_params(rng, op: str):
    sa, sb, so = rng.uniform(0.01, 0.2, 3)
    za, zb, zo = (int(v) for v in rng.integers(-40, 41, 3))
    qmin, qmax = (zo, 127) if rng.random() < 0.3 else (-128, 127)
    if op == "mul":
        mo = quantize_multiplier(float(np.float32(np.float32(sa) * np.float32(sb)) / np.float32(so)))
        params = TfliteMulParams(output_multiplier=mo[0], output_shift=mo[1], qmin=qmin, qmax=qmax)
        prm = [za, 0, 0, zb, 0, 0, 0, mo[0], mo[1], zo, qmin, qmax]
    else:
        twice_max = 2.0 * max(sa, sb)
        m1, m2 = quantize_multiplier(sa / twice_max), quantize_multiplier(sb / twice_max)
        mo = quantize_multiplier(twice_max / ((1 << 20) * so))
        params = TfliteAddSubParams(left_shift=20, input_multipliers=(m1[0], m2[0]), input_shifts=(m1[1], m2[1]),
                                    output_multiplier=mo[0], output_shift=mo[1], qmin=qmin, qmax=qmax)
        prm = [za, m1[0], m1[1], zb, m2[0], m2[1], 20, mo[0], mo[1], zo, qmin, qmax]
    return params, prm, (za, sa), (zb, sb), (zo, so)


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_elementwise(lib, op, cores):
    rng = np.random.default_rng(seed((op, cores)))
    fn = {"add": g_elt.add, "sub": g_elt.sub, "mul": g_elt.mul}[op]
    for n in (1, 7, 1000):
        params, prm, (za, sa), (zb, sb), (zo, so) = add_params(rng, op)
        a = rng.integers(-128, 128, (1, n)).astype(np.int8)
        b = rng.integers(-128, 128, (1, n)).astype(np.int8)
        want = golden_node(fn, Op(op), params, [(a, za, sa), (b, zb, sb)], a.shape, zo, so)
        assert np.array_equal(kc.elementwise(lib, op, prm, a, b, cores), want)
        inplace = a.copy()  # out aliases the first input
        kc.elementwise(lib, op, prm, inplace, b, cores, out=inplace)
        assert np.array_equal(inplace, want)


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("cores", CORES)
def test_add_onnx_matches_qlinearadd_golden(lib, cores, exact):
    """tw_add_onnx_s8 (and, exact, tw_add_onnx_exact_s8: the same in integers) against
    golden/onnx_ops.py add (onnxruntime's QLinearAdd in float32 fmas), both operand orders
    (a_index), clamps, and scales that make many .5 ties."""
    rng = np.random.default_rng(seed(("add_onnx", cores)))
    call = kc.add_onnx_exact if exact else kc.add_onnx
    for trial in range(12):
        sa, sb, so = rng.uniform(0.005, 0.2, 3)
        if trial % 3 == 0:  # power-of-two ratios: r lands on .5 often (round half to even)
            sa, sb, so = 2.0 ** rng.integers(-7, -3, 3)
        za, zb, zo = (int(v) for v in rng.integers(-60, 61, 3))
        ra, rb, fixed = onnx_add_params(sa, za, sb, zb, so, zo)
        a_index = trial % 2
        qmin, qmax = (zo, 127) if trial % 4 == 1 else (-128, 127)
        params = OnnxAddParams(a_index=a_index, ratio_a=ra, ratio_b=rb, fixed=fixed, qmin=qmin, qmax=qmax)
        a = rng.integers(-128, 128, (1, 997)).astype(np.int8)
        b = rng.integers(-128, 128, (1, 997)).astype(np.int8)
        want = golden_node(g_onnx.add, Op.ADD, params, [(a, za, sa), (b, zb, sb)], a.shape, zo, so)
        first, second = (b, a) if a_index == 1 else (a, b)
        got = call(lib, ra, rb, fixed, qmin, qmax, first, second, cores)
        assert np.array_equal(got, want), trial


def biased(u: np.ndarray) -> np.ndarray:
    """How tilewise stores a uint8 tensor: the int8 bytes u - 128 (u ^ 0x80)."""
    return (np.asarray(u, dtype=np.int64) - 128).astype(np.int8)


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("cores", CORES)
def test_add_onnx_u8_matches_qlinearadd_golden_on_uint8(lib, cores, exact):
    """tw_add_onnx_u8 (exact: tw_add_onnx_exact_s8) on biased uint8 storage against golden add on
    uint8 tensors: uint8 zero points (0..255), clamps, power-of-two scales (ties), every uint8
    value of a against random b."""
    rng = np.random.default_rng(seed(("add_onnx_u8", cores)))
    call = kc.add_onnx_exact if exact else kc.add_onnx
    for trial in range(12):
        sa, sb, so = rng.uniform(0.005, 0.2, 3)
        if trial % 3 == 0:
            sa, sb, so = 2.0 ** rng.integers(-7, -3, 3)
        za, zb, zo = (int(v) for v in rng.integers(0, 256, 3))
        ra, rb, fixed = onnx_add_params(sa, za, sb, zb, so, zo)
        a_index = trial % 2
        qmin, qmax = (zo, 255) if trial % 4 == 1 else (0, 255)
        params = OnnxAddParams(a_index=a_index, ratio_a=ra, ratio_b=rb, fixed=fixed, qmin=qmin, qmax=qmax)
        a = np.tile(np.arange(256), 4)[None].astype(np.uint8)
        b = rng.integers(0, 256, a.shape).astype(np.uint8)
        want = golden_node(g_onnx.add, Op.ADD, params, [(a, za, sa), (b, zb, sb)], a.shape, zo, so, "uint8")
        assert want.min() >= 0 and want.max() <= 255
        first, second = (b, a) if a_index == 1 else (a, b)
        got = call(lib, ra, rb, fixed, qmin, qmax, biased(first), biased(second), cores, u8=True)
        assert np.array_equal(got, biased(want)), trial


@pytest.mark.parametrize("cores", CORES)
def test_global_avgpool_onnx_in_pixel_tiles(lib, cores):
    """tw_global_avgpool_rq_s8 against golden/onnx_ops.py mean (QLinearGlobalAveragePool)."""
    rng = np.random.default_rng(seed(("gap_onnx", cores)))
    for h, w, c in ((8, 8, 32), (5, 3, 13), (1, 1, 7)):
        x = rng.integers(-128, 128, (h, w, c)).astype(np.int8)
        si, so = rng.uniform(0.02, 0.1, 2)
        zi, zo = (int(v) for v in rng.integers(-30, 31, 2))
        scale = global_pool_scale(si, so, h * w)
        rq = Requant("onnx", multiplier=np.ones(1, np.int64), shift=np.zeros(1, np.int64), zero_point=zo,
                     qmin=-128, qmax=127, scale=np.asarray([scale], np.float32))
        params = OnnxMeanParams(axes=(1, 2), keepdims=True, x_zero_point=zi, count=h * w, requant=rq)
        want = golden_node(g_onnx.mean, Op.MEAN, params, [(x[None], zi, si)], (1, 1, 1, c), zo, so).reshape(c)
        pixels = x.reshape(h * w, c)
        ra = kc.RequantArrays(rq)
        assert np.array_equal(kc.global_avgpool_rq(lib, pixels, zi, ra, cores), want)
        acc = np.full(c, -777, dtype=np.int32)
        out = np.full(c, 0x5A, dtype=np.int8)
        ptiles = tiles_of(h * w, 5)
        for i, (p0, p1) in enumerate(ptiles):
            flags = (ACC_FIRST if i == 0 else 0) | (ACC_LAST if i == len(ptiles) - 1 else 0)
            kc.global_avgpool_rq(lib, pixels[p0:p1], zi, ra, cores, acc, flags, out)
        assert np.array_equal(out, want)


# ------------------------------------------------------------------------------ pooling

# (H, W, C, FY, FX, stride, pads, tiles (rows, cols))
POOL_CASES = {
    "2x2_s2": (8, 9, 5, 2, 2, (2, 2), (0, 0, 0, 1), (2, 3)),
    "3x3_s1_same": (7, 7, 3, 3, 3, (1, 1), (1, 1, 1, 1), (3, 2)),
    "3x3_s2_asym": (9, 10, 4, 3, 3, (2, 2), (1, 0, 1, 1), (2, 2)),
    "5x3_s3": (11, 8, 6, 5, 3, (3, 1), (2, 1, 2, 1), (1, 4)),
    "global_7x5": (7, 5, 9, 7, 5, (1, 1), (0, 0, 0, 0), (1, 1)),
}


def pool_golden(rng, geometry, op: str):
    """A random int8 input of `geometry` (a POOL_CASES tuple), the clamp of `op` ("avg" or
    "max") and the golden TFLite pooling of it."""
    h, w, c, fy, fx, stride, pads, _ = geometry
    x = rng.integers(-128, 128, (h, w, c)).astype(np.int8)
    qmin, qmax = (-10, 127) if op == "avg" else (-128, 100)
    ir_op, cls, fn = ((Op.AVG_POOL, TfliteAvgPoolParams, g_pool.avg_pool) if op == "avg"
                      else (Op.MAX_POOL, MaxPoolParams, g_pool.max_pool))
    params = cls(kernel=(fy, fx), stride=stride, pads=pads, qmin=qmin, qmax=qmax)
    oy, ox = conv_out(h, fy, stride[0], pads[0], pads[2]), conv_out(w, fx, stride[1], pads[1], pads[3])
    return x, (qmin, qmax), golden_node(fn, ir_op, params, [(x[None], 0, 0.1)], (1, oy, ox, c), 0)[0]


@pytest.mark.parametrize("op", ["avg", "max"])
@pytest.mark.parametrize("case", list(POOL_CASES))
def test_pool_tiled(lib, case, op):
    h, w, c, fy, fx, stride, pads, tiles = POOL_CASES[case]
    x, (qmin, qmax), want = pool_golden(np.random.default_rng(seed((case, op))), POOL_CASES[case], op)
    for cores in CORES:
        got = np.zeros_like(want)

        def call(win, xt, box):
            got[box[0]:box[1], box[2]:box[3]] = kc.pool(lib, op, win, xt, qmin, qmax, cores)

        run_windowed_tiled(lib, x, fy, fx, stride, pads, (1, 1), tiles, call)
        assert np.array_equal(got, want), cores


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("case", list(POOL_CASES))
def test_avgpool_onnx_tiled(lib, case, dtype):
    """tw_avgpool_onnx_s8 against golden/onnx_ops.py avg_pool (QLinearAveragePool's float32
    steps): with and without counted padding, clamps, power-of-two scales (ties), int8 and
    uint8 tensors (stored as u - 128), tiled with border pads."""
    h, w, c, fy, fx, stride, pads, tiles = POOL_CASES[case]
    rng = np.random.default_rng(seed((case, "avg_onnx", dtype)))
    lo, hi = (0, 255) if dtype == "uint8" else (-128, 127)
    off = 128 if dtype == "uint8" else 0
    oy, ox = conv_out(h, fy, stride[0], pads[0], pads[2]), conv_out(w, fx, stride[1], pads[1], pads[3])
    for trial in range(4):
        x = rng.integers(lo, hi + 1, (h, w, c))
        xs, ys = rng.uniform(0.01, 0.1, 2)
        if trial % 2:
            xs, ys = 2.0 ** rng.integers(-7, -3, 2)
        xz, yz = (int(v) for v in rng.integers(lo + 20, hi - 20, 2))
        cip = trial >= 2
        qmin = yz if trial == 1 else lo
        params = OnnxAvgPoolParams(kernel=(fy, fx), stride=stride, pads=pads, count_include_pad=cip,
                                   x_scale=float(np.float32(xs)), x_zero_point=xz, y_scale=float(np.float32(ys)),
                                   y_zero_point=yz, qmin=qmin, qmax=hi)
        want = golden_node(g_onnx.avg_pool, Op.AVG_POOL, params, [(x[None], xz, xs)], (1, oy, ox, c), yz, ys,
                           dtype)[0]
        for cores in (1, 4):
            got = np.zeros(want.shape, dtype=np.int8)

            def call(win, xt, box):
                got[box[0]:box[1], box[2]:box[3]] = kc.avgpool_onnx(
                    lib, win, xt - off, xs, ys, xz - off, yz, cip, qmin, hi, off, cores)

            run_windowed_tiled(lib, x, fy, fx, stride, pads, (1, 1), tiles, call)
            assert np.array_equal(got.astype(np.int64) + off, want), (trial, cores)


@pytest.mark.parametrize("cores", CORES)
def test_global_avgpool_as_tflite_mean_in_pixel_tiles(lib, cores):
    rng = np.random.default_rng(50 + cores)
    for h, w, c in ((5, 5, 16), (7, 3, 13), (1, 1, 8)):
        x = rng.integers(-128, 128, (h, w, c)).astype(np.int8)
        (zi, zo), (si, so) = rng.integers(-30, 31, 2), rng.uniform(0.02, 0.1, 2)
        m, s = quantize_multiplier(float(si / so))
        params = TfliteMeanParams(axes=(1, 2), keepdims=True, multiplier=m, shift=s)
        want = golden_node(g_pool.mean, Op.MEAN, params, [(x[None], int(zi), si)], (1, 1, 1, c), int(zo), so).reshape(c)
        mp, sp = g_pool._mean_scale(m, s, h * w)
        prm = [1, int(zi), mp, sp, int(zo), -128, 127]
        pixels = x.reshape(h * w, c)
        assert np.array_equal(kc.global_avgpool(lib, pixels, prm, cores), want)
        acc = np.full(c, 12345, dtype=np.int32)  # stale content must be ignored by the first tile
        out = np.full(c, 0x5A, dtype=np.int8)
        ptiles = tiles_of(h * w, 4)
        for i, (p0, p1) in enumerate(ptiles):
            flags = (ACC_FIRST if i == 0 else 0) | (ACC_LAST if i == len(ptiles) - 1 else 0)
            kc.global_avgpool(lib, pixels[p0:p1], prm, cores, acc, flags, out)
        assert np.array_equal(out, want)


def test_global_avgpool_as_full_window_average_pool(lib):
    rng = np.random.default_rng(60)
    h, w, c = 6, 5, 11
    x = rng.integers(-128, 128, (h, w, c)).astype(np.int8)
    params = TfliteAvgPoolParams(kernel=(h, w), stride=(1, 1), pads=(0, 0, 0, 0), qmin=-128, qmax=127)
    want = golden_node(g_pool.avg_pool, Op.AVG_POOL, params, [(x[None], 0, 0.1)], (1, 1, 1, c), 0).reshape(c)
    prm = [h * w, 0, 1 << 30, 1, 0, -128, 127]
    for cores in CORES:
        assert np.array_equal(kc.global_avgpool(lib, x.reshape(h * w, c), prm, cores), want)


# ------------------------------------------------------------------------------ softmax

@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("depth", [1, 10, 37, 300])
def test_softmax(lib, depth, cores):
    rng = np.random.default_rng(depth * 10 + cores)
    for s_in, beta in ((0.0625, 1.0), (0.17, 1.0), (0.011, 0.6), (0.5, 1.0)):
        x = rng.integers(-128, 128, (5, depth)).astype(np.int8)
        x[0] = rng.integers(-3, 3, depth)        # flat row: many near-equal exps
        mult, shift, diff_min = softmax_params(beta, s_in)
        params = TfliteSoftmaxParams(input_multiplier=mult, input_left_shift=shift, diff_min=diff_min)
        want = golden_node(g_act.softmax, Op.SOFTMAX, params, [(x, 0, s_in)], x.shape, -128, 1 / 256)
        assert np.array_equal(kc.softmax(lib, x, mult, shift, diff_min, cores), want), (s_in, beta)


def test_softmax_few_classes_many_rows(lib):
    """Two to four classes give outputs across the whole int8 range: every rounding step shows."""
    rng = np.random.default_rng(77)
    for depth in (2, 3, 4):
        for s_in in (0.02, 0.1, 0.3):
            x = rng.integers(-128, 128, (3000, depth)).astype(np.int8)
            mult, shift, diff_min = softmax_params(1.0, s_in)
            params = TfliteSoftmaxParams(input_multiplier=mult, input_left_shift=shift, diff_min=diff_min)
            want = golden_node(g_act.softmax, Op.SOFTMAX, params, [(x, 0, s_in)], x.shape, -128, 1 / 256)
            assert np.array_equal(kc.softmax(lib, x, mult, shift, diff_min, 3), want), (depth, s_in)


# ------------------------------------------------------------------------------ sanitizers

def test_kernels_clean_under_sanitizers():
    """Every kernel and the host DMA, in exactly-sized heap buffers, under ASan + UBSan (abort on any
    finding); the driver also cross-checks core counts, C tiling, 1x1 vs im2col and DMA copies."""
    exe = kc.build.build_executable(
        "tw_sanitize",
        kc.build.kernel_sources() + [kc.build.HAL / "tw_hal_host.c", kc.build.TESTS_C / "sanitize_main.c"],
        [kc.build.KERNELS, kc.build.HAL], ("-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"))
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "runtime error" not in proc.stderr and "ERROR: AddressSanitizer" not in proc.stderr
    assert proc.stdout.startswith("forks ")


# ------------------------------------------------------------------------------ MLPerf Tiny layers

def test_mlperf_layers_match_golden(lib, mlperf_model):
    """Every layer of an MLPerf Tiny model, in its lowered (folded) form, through the C kernels on
    the golden model's own intermediate activations: bit-exact with golden/layers.py run_layer."""
    from tilewise.frontend import load_model
    from tilewise.golden.layers import run_layers
    from tilewise.passes import canonicalize, lower

    lg = lower(canonicalize(load_model(mlperf_model)))
    rng = np.random.default_rng(seed(mlperf_model.name))
    name = lg.inputs[0]
    x = rng.integers(-128, 128, lg.tensors[name].shape).astype(np.int8)
    values = run_layers(lg, {name: x}, keep_all=True)
    checked = 0
    for i, layer in enumerate(lg.layers):
        got = kc.run_layer(lib, layer, lg, [values[t] for t in layer.inputs], CORES[i % 3])
        if got is not None:
            assert np.array_equal(got, values[layer.output]), f"{layer.op} layer {i} ({layer.name})"
            checked += 1
    assert checked >= len(lg.layers) - 1


# ------------------------------------------------------------------------------ onnx softmax, tables

@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_softmax_onnx_matches_qlinearsoftmax_golden(lib, dtype):
    """tw_softmax_onnx_s8 against golden/onnx_ops.py softmax (QLinearSoftmax's float32 table, sum
    and division): depths 1..300, constant rows, extreme values, int8 and uint8 (stored u - 128)."""
    from tilewise.frontend.onnx_qparams import softmax_table, softmax_y_scale_inv

    rng = np.random.default_rng(seed(("softmax_onnx", dtype)))
    lo, hi = (0, 255) if dtype == "uint8" else (-128, 127)
    off = 128 if dtype == "uint8" else 0
    # depth 1: t·y_scale_inv overflows float32 (the non-finite path)
    for rows, depth in ((3, 10), (1, 1), (5, 300), (4, 7), (6, 1)):
        xs = float(np.float32(rng.uniform(0.02, 0.3)))
        ys = 1.0 / 256
        yz = lo
        if rng.random() < 0.5 or depth == 1:
            ys, yz = float(np.float32(rng.uniform(0.002, 0.01))), int(rng.integers(lo, lo + 200))
        x = rng.integers(lo, hi + 1, (rows, depth))
        x[0] = x[0, 0]
        x[-1, : min(depth, 2)] = (hi, lo)[: min(depth, 2)]
        table = softmax_table(xs, depth)
        ysi = softmax_y_scale_inv(ys)
        params = OnnxSoftmaxParams(axis=-1, table=table, y_scale_inv=ysi, y_zero_point=yz)
        want = golden_node(g_onnx.softmax, Op.SOFTMAX, params, [(x, 0, xs)], x.shape, yz, ys, dtype)
        for cores in (1, 3):
            nonfinite = (hi if yz < 0 else lo) - off
            got = kc.softmax_onnx(lib, x - off, table, ysi, yz - off, nonfinite, cores)
            assert np.array_equal(got.astype(np.int64) + off, want), (rows, depth, cores)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_lookup_table_matches_tflite_logistic_golden(lib, dtype):
    """tw_lut_s8 against golden/activation.py logistic on every input value."""
    from tilewise.frontend.tflite_act import sigmoid_table

    lo, hi = (0, 255) if dtype == "uint8" else (-128, 127)
    off = 128 if dtype == "uint8" else 0
    table = sigmoid_table(dtype, 0.06, lo + 100, 1.0 / 256, lo)
    x = np.arange(lo, hi + 1)[None]
    params = TfliteLogisticParams(table=table)
    want = golden_node(g_act.logistic, Op.LOGISTIC, params, [(x, lo + 100, 0.06)], x.shape, lo, 1.0 / 256, dtype)
    assert len(set(want.reshape(-1).tolist())) > 100
    stored = (np.asarray(table, dtype=np.int64) - off).astype(np.int8)
    for cores in (1, 4):
        got = kc.lut(lib, stored, x - off, cores)
        assert np.array_equal(got.astype(np.int64) + off, want), cores


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_concat2_matches_qlinearconcat_golden(lib, dtype):
    """tw_concat2_s8 with golden requantization tables (and a copied input of the output's
    quantization) against golden/onnx_ops.py concat, along channels and along rows."""
    rng = np.random.default_rng(seed(("concat", dtype)))
    lo, hi = (0, 255) if dtype == "uint8" else (-128, 127)
    off = 128 if dtype == "uint8" else 0
    a = rng.integers(lo, hi + 1, (1, 5, 4, 3))
    a.reshape(-1)[:60] = np.linspace(lo, hi, 60).astype(np.int64)
    for axis, b_shape in ((3, (1, 5, 4, 6)), (1, (1, 2, 4, 3))):
        b = rng.integers(lo, hi + 1, b_shape)
        (sa, za), (sy, zy) = (0.013, lo + 40), (0.031, lo + 100)
        params = ConcatParams(mode="onnx", axis=axis, input_quant=((sa, za), (sy, zy)), output_quant=(sy, zy))
        want = golden_node(g_onnx.concat, Op.CONCAT, params, [(a, za, sa), (b, zy, sy)],
                           np.concatenate([a, b], axis=axis).shape, zy, sy, dtype)
        lut_a = g_onnx.requantize_values(np.arange(lo, hi + 1), sa, za, sy, zy, dtype) - off
        outer = int(np.prod(a.shape[:axis]))
        got = kc.concat2(lib, (a - off).reshape(outer, -1), lut_a, (b - off).reshape(outer, -1), None)
        assert np.array_equal(got.astype(np.int64).reshape(want.shape) + off, want), axis


# ------------------------------------------------------------------------------ extreme values
#
# Windows and reductions where every value sits at the edge of int8, with results computed by hand
# (and checked against the golden model too): a kernel that starts a max at -127, rounds an average
# the wrong way at ±.5 or lets an accumulator near the int32 limits overflow fails here, even where
# random tiles almost never reach those values.

#: the longest reductions of the MLPerf Tiny models: ic_resnet8's 3x3x64 conv (576), vww's 1x1 conv
#: over 256 channels, ad_autoencoder's first fully connected layer (640 inputs)
RED_CONV, RED_PW, RED_FC = (3, 3, 64), 256, 640
#: (x, w, product, hand result at scale 2^-25): acc = INT32_MAX = 2^31 - 1 → 63.99999997 → 64
#: (shift mode floors: 63); acc = INT32_MIN = -2^31 → -64 (-64)
EXTREMES = {"max": (-128, -128, 16384, 64, 63), "min": (-128, 127, -16256, -64, -64)}


def extreme_requant(mode: str, k: int, zp: int) -> Requant:
    """Scale 2^-25 in `mode`: tflite (M0 2^30, shift -24), single rounding, onnx, shift (k 1, d 25)."""
    ones, zero = np.ones(k, np.int64), np.zeros(k, np.int64)
    if mode in ("tflite", "tflite_single"):
        rq = Requant("tflite", multiplier=ones << 30, shift=zero - 24, zero_point=zp, qmin=-128, qmax=127)
        return replace(rq, rounding="single") if mode == "tflite_single" else rq
    if mode == "shift":
        return Requant("shift", multiplier=ones, shift=zero + 25, zero_point=zp, qmin=-128, qmax=127, bias=zero)
    return Requant("onnx", multiplier=ones, shift=zero, zero_point=zp, qmin=-128, qmax=127,
                   scale=np.full(k, 2.0**-25, np.float32))


def extreme_case(which: str, n_red: int, k: int, mode: str, zp: int):
    """(x value, w value, bias [k] int32 putting every accumulator at INT32_MAX or INT32_MIN after
    n_red products, requant, the hand-computed output: clamp(±64 + zp) (63 in shift mode))."""
    xv, wv, prod, out, out_shift = EXTREMES[which]
    edge = (1 << 31) - 1 if which == "max" else -(1 << 31)
    bias = np.full(k, edge - n_red * prod, dtype=np.int64)
    assert (np.abs(bias) < 1 << 31).all()
    want = min(127, max(-128, (out_shift if mode == "shift" else out) + zp))
    return xv, wv, bias.astype(np.int32), extreme_requant(mode, k, zp), want


#: (which, zp): the plain value, then the clamp edges: exactly qmax / qmin, and one beyond
EXTREME_ZP = [("max", 0), ("max", 63), ("max", 64), ("min", 0), ("min", -64), ("min", -65)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("which,zp", EXTREME_ZP)
def test_conv_extreme_values_at_int32_limits(lib, which, zp, mode):
    """A 3x3 conv over 64 channels (ic_resnet8's longest reduction) with every input, pad and
    weight at the int8 edge: every accumulator, border pixels included, is exactly INT32_MAX or
    INT32_MIN; untiled and in C tiles of 16 with int32 partial sums, on 1 and 8 cores."""
    fy, fx, c = RED_CONV
    k = 5
    xv, wv, bias, rq, want = extreme_case(which, fy * fx * c, k, mode, zp)
    x = np.full((5, 4, c), xv, np.int8)
    wt = np.full((k, fy, fx, c), wv, np.int8)
    pads = (1, 1, 1, 1)
    acc = conv_acc(x, wt, bias, (1, 1), pads, (1, 1), xv)   # pads take the pad value xv
    assert set(acc.reshape(-1).tolist()) == {(1 << 31) - 1 if which == "max" else -(1 << 31)}
    golden = requantized(acc, rq)
    assert (golden == want).all(), (np.unique(golden), want)
    win = Window(5, 4, 5, 4, fy, fx, 1, 1, 1, 1, pads)
    for cores in (1, 8):
        got = kc.conv(lib, win, x, wt, bias, kc.RequantArrays(rq), xv, cores)
        assert (got == want).all(), (cores, np.unique(got), want)
    got = conv_tiled(lib, x, wt, bias, rq, (1, 1), pads, (1, 1), xv, (2, 3, 3, 16), 3)
    assert (got == want).all(), (np.unique(got), want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("which,zp", EXTREME_ZP)
def test_pointwise_extreme_values_at_int32_limits(lib, which, zp, mode):
    """A 1x1 conv over 256 channels (vww's widest) with padding, extreme values, accumulators at
    the int32 limits (padded pixels accumulate the pad value too)."""
    k = 3
    xv, wv, bias, rq, want = extreme_case(which, RED_PW, k, mode, zp)
    x = np.full((3, 2, RED_PW), xv, np.int8)
    wt = np.full((k, 1, 1, RED_PW), wv, np.int8)
    pads = (1, 0, 0, 1)
    win = Window(3, 2, 4, 3, 1, 1, 1, 1, 1, 1, pads)
    for cores in (1, 3):
        got = kc.conv(lib, win, x, wt, bias, kc.RequantArrays(rq), xv, cores, pointwise=True)
        assert (got == want).all(), (cores, np.unique(got), want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("which,zp", EXTREME_ZP)
def test_depthwise_extreme_values_at_int32_limits(lib, which, zp, mode):
    """A 7x7 depthwise window (padded, 49 taps per channel) at the int8 edges, accumulators at the
    int32 limits, 9 channels (SIMD groups and a remainder in the pulp family)."""
    c = 9
    xv, wv, bias, rq, want = extreme_case(which, 49, c, mode, zp)
    x = np.full((6, 7, c), xv, np.int8)
    w_hwk = np.full((7, 7, c), wv, np.int8)
    pads = (3, 3, 3, 3)
    win = Window(6, 7, 6, 7, 7, 7, 1, 1, 1, 1, pads)
    golden = requantized(conv_acc(x, w_hwk.transpose(2, 0, 1)[..., None], bias, (1, 1), pads, (1, 1), xv,
                                  groups=c), rq)
    assert (golden == want).all()
    for cores in (1, 8):
        got = kc.depthwise(lib, win, x, w_hwk, bias, 1, kc.RequantArrays(rq), xv, cores)
        assert (got == want).all(), (cores, np.unique(got), want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("which,zp", EXTREME_ZP)
def test_fully_connected_extreme_values_at_int32_limits(lib, which, zp, mode):
    """640 inputs (ad_autoencoder's first layer) at the int8 edges, accumulators at the int32
    limits; untiled and in C tiles of 128 with int32 partial sums."""
    k = 6
    xv, wv, bias, rq, want = extreme_case(which, RED_FC, k, mode, zp)
    x = np.full((2, RED_FC), xv, np.int8)
    wt = np.full((k, RED_FC), wv, np.int8)
    assert (requantized(dense_acc(x, wt, bias, 0, 0), rq) == want).all()
    for cores in (1, 3):
        got = kc.fully_connected(lib, x, wt, bias, kc.RequantArrays(rq), cores)
        assert (got == want).all(), (cores, np.unique(got), want)
    psum = np.zeros((2, k), np.int32)
    ctiles = tiles_of(RED_FC, 128)
    for i, (c0, c1) in enumerate(ctiles):
        flags = (ACC_FIRST if i == 0 else 0) | (ACC_LAST if i == len(ctiles) - 1 else 0)
        got = kc.fully_connected(lib, x[:, c0:c1], wt[:, c0:c1], bias, kc.RequantArrays(rq), 8, psum, flags)
    assert (got == want).all(), (np.unique(got), want)


def _pool_windows(lib, op: str, x, fy, fx, stride, pads, qmin, qmax):
    """Pool x [H, W, C] on 1 and 8 cores untiled and in 2x2-output tiles; the results."""
    h, w = x.shape[:2]
    oy, ox = conv_out(h, fy, stride[0], pads[0], pads[2]), conv_out(w, fx, stride[1], pads[1], pads[3])
    outs = [kc.pool(lib, op, Window(h, w, oy, ox, fy, fx, *stride, 1, 1, pads), x, qmin, qmax, cores)
            for cores in (1, 8)]
    tiled = np.zeros_like(outs[0])

    def call(win, xt, box):
        tiled[box[0]:box[1], box[2]:box[3]] = kc.pool(lib, op, win, xt, qmin, qmax, 3)

    run_windowed_tiled(lib, x, fy, fx, stride, pads, (1, 1), (2, 2), call)
    return outs + [tiled]


@pytest.mark.parametrize("case", ["2x2_s2", "3x3_s1_same", "global_7x5"])
def test_maxpool_all_minus_128(lib, case):
    """Every window value is -128 (padded windows too): the max is -128, so a max started at -127
    (or any value above the int8 minimum) shows; 5 and 9 channels (SIMD groups and remainders)."""
    h, w, _, fy, fx, stride, pads, _ = POOL_CASES[case]
    for c in (5, 9):
        x = np.full((h, w, c), -128, np.int8)
        want = pool_golden_of(x, "max", fy, fx, stride, pads, -128, 127)
        assert (want == -128).all()
        for got in _pool_windows(lib, "max", x, fy, fx, stride, pads, -128, 127):
            assert (got == -128).all(), np.unique(got)
        # one channel at -127 somewhere in each window must win only in that channel
        x[..., 0] = -127
        for got in _pool_windows(lib, "max", x, fy, fx, stride, pads, -128, 127):
            assert (got[..., 0] == -127).all() and (got[..., 1:] == -128).all()


def pool_golden_of(x, op, fy, fx, stride, pads, qmin, qmax):
    h, w, c = x.shape
    ir_op, cls, fn = ((Op.AVG_POOL, TfliteAvgPoolParams, g_pool.avg_pool) if op == "avg"
                      else (Op.MAX_POOL, MaxPoolParams, g_pool.max_pool))
    params = cls(kernel=(fy, fx), stride=stride, pads=pads, qmin=qmin, qmax=qmax)
    oy, ox = conv_out(h, fy, stride[0], pads[0], pads[2]), conv_out(w, fx, stride[1], pads[1], pads[3])
    return golden_node(fn, ir_op, params, [(x[None], 0, 0.1)], (1, oy, ox, c), 0)[0]


@pytest.mark.parametrize("value", [-128, 127])
@pytest.mark.parametrize("case", ["2x2_s2", "3x3_s2_asym", "global_7x5"])
def test_avgpool_all_extreme(lib, case, value):
    """Every value -128 (or 127): the sums reach ±128·35 and the average is the value itself,
    border windows (fewer taps) included."""
    h, w, _, fy, fx, stride, pads, _ = POOL_CASES[case]
    x = np.full((h, w, 6), value, np.int8)
    assert (pool_golden_of(x, "avg", fy, fx, stride, pads, -128, 127) == value).all()
    for got in _pool_windows(lib, "avg", x, fy, fx, stride, pads, -128, 127):
        assert (got == value).all(), np.unique(got)


def test_avgpool_rounds_half_away_from_zero(lib):
    """2x2 windows whose averages are ±0.25, ±0.5, ±0.75, ±1.5, ±126.5 and -127.5: TFLite rounds
    half away from zero (±0.5 → ±1, ±1.5 → ±2, -127.5 → -128), hand-computed per window."""
    sums = [1, -1, 2, -2, 3, -3, 6, -6, 506, -506, -510, 0]
    want = [0, 0, 1, -1, 1, -1, 2, -2, 127, -127, -128, 0]
    c = 5
    x = np.zeros((2, 2 * len(sums), c), np.int8)
    for i, s in enumerate(sums):   # window i: columns 2i, 2i+1; four values summing to s
        q, r = divmod(s, 4)        # floor division: values q and q + 1 (r of them)
        vals = [q + 1] * r + [q] * (4 - r)
        x[:, 2 * i:2 * i + 2, :] = np.array(vals, np.int64).reshape(2, 2)[..., None]
    want_arr = np.array(want, np.int64)[None, :, None].repeat(c, axis=2)
    assert np.array_equal(pool_golden_of(x, "avg", 2, 2, (2, 2), (0,) * 4, -128, 127), want_arr)
    for got in _pool_windows(lib, "avg", x, 2, 2, (2, 2), (0,) * 4, -128, 127):
        assert np.array_equal(got, want_arr), got[0, :, 0]
