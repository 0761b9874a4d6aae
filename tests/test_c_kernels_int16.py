"""The 16x8 C kernels (tw_kernels/tw_s16.h: int16 activations, int8 weights, int64 accumulation,
TFLite's int64 MultiplyByQuantizedMultiplier) against the golden model, bit for bit.

References: golden/conv.py conv2d_acc / dense_acc + golden/requant.py apply_requant with a
Requant(wide=True) (golden/fixedpoint.py multiply_by_quantized_multiplier_64). The kernels are
called through ctypes from the session library of tests/tw_kernel_calls.py, each core of 1, 3 and 8
called in turn (kernels do not touch the HAL); layers are also cut into C tiles with int32 partial
sums (TW_ACC_FIRST / 0 / TW_ACC_LAST) and the result must equal the untiled golden output.
tw_add_s16 / tw_sub_s16 against golden/elementwise.py add / sub with TFLite's int16 parameters.
"""

from __future__ import annotations

import ctypes
import zlib

import numpy as np
import pytest

from tilewise.golden.conv import conv2d_acc, dense_acc
from tilewise.golden.requant import apply_requant
from tilewise.ir.requant import Requant, quantize_multiplier

from . import tw_kernel_calls as kc

ACC_FIRST, ACC_LAST = 1, 2
CORES = (1, 3, 8)
P16, P8, P32 = (ctypes.POINTER(t) for t in (ctypes.c_int16, ctypes.c_int8, ctypes.c_int32))


class Win(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int) for n in ("in_h", "in_w", "out_h", "out_w", "k_h", "k_w", "s_h",
                                            "s_w", "d_h", "d_w", "pad_t", "pad_l", "pad_b", "pad_r")]


class Rq16(ctypes.Structure):
    _fields_ = [("mode", ctypes.c_int), ("scale", ctypes.POINTER(ctypes.c_double)), ("mult", P32), ("shift", P32),
                ("lambda_", P32), ("post_mult", ctypes.c_int64), ("div_d", ctypes.c_int64), ("div_trunc", ctypes.c_int),
                ("zero_point", ctypes.c_int32), ("qmin", ctypes.c_int32), ("qmax", ctypes.c_int32)]


class Conv16(ctypes.Structure):
    _fields_ = [("win", Win), ("in_", P16), ("in_c", ctypes.c_int), ("w", P8), ("bias", P32),
                ("out", P16), ("out_bytes", ctypes.c_int), ("out_c", ctypes.c_int), ("pad_value", ctypes.c_int16),
                ("psum", P32), ("acc_flags", ctypes.c_int), ("acc32", ctypes.c_int), ("rq", Rq16)]


@pytest.fixture(scope="session")
def lib():
    lib = kc.load_library()
    for name in ("tw_conv2d_s16", "tw_fully_connected_s16"):
        fn = getattr(lib, name)
        fn.restype = None
        fn.argtypes = [ctypes.POINTER(Conv16), ctypes.c_int, ctypes.c_int]
    return lib


def _p(a: np.ndarray | None, t):
    return ctypes.cast(None, t) if a is None else a.ctypes.data_as(t)


def wide_requant(acc: np.ndarray, rng: np.random.Generator, qmin: int = -32768, qmax: int = 32767) -> Requant:
    """A wide tflite requant spreading `acc` (channels last) over the int16 range."""
    k = acc.shape[-1]
    spread = np.abs(acc.reshape(-1, k)).max(axis=0) + 1.0
    pairs = [quantize_multiplier(float(v)) for v in rng.uniform(0.5, 3.0, k) * 32767 / spread]
    return Requant("tflite", np.array([m for m, _ in pairs], np.int32), np.array([s for _, s in pairs], np.int32),
                   zero_point=int(rng.integers(-50, 50)), qmin=qmin, qmax=qmax, wide=True)


def _call(lib, fn: str, x, w, bias, rq: Requant, k0: int, k1: int, out, psum, flags: int, cores: int,
          win: Win | None = None, pad_value: int = 0) -> None:
    mult = np.ascontiguousarray(rq.multiplier[k0:k1], np.int32)
    shift = np.ascontiguousarray(rq.shift[k0:k1], np.int32)
    real = None
    if rq.rounding == "real":
        real = np.ascontiguousarray(np.broadcast_to(rq.scale, (len(rq.multiplier),))[k0:k1], np.float64)
    a = Conv16(win=win or Win(), in_=_p(x, P16), in_c=x.shape[-1], w=_p(w, P8), bias=_p(bias, P32),
               out=_p(out, P16), out_bytes=2, out_c=k1 - k0, pad_value=pad_value, psum=_p(psum, P32),
               acc_flags=flags, acc32=0,
               rq=Rq16(0, _p(real, ctypes.POINTER(ctypes.c_double)), _p(mult, P32), _p(shift, P32), None, 1, 1, 0,
                       rq.zero_point, rq.qmin, rq.qmax))
    for core in range(cores):
        getattr(lib, fn)(ctypes.byref(a), core, cores)


def _seed(*parts) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(parts).encode()))


CONVS = [  # (in_h, in_w, C, K, fy, fx, stride, dilation, pads t l b r)
    (7, 9, 5, 6, 3, 3, 1, 1, (1, 1, 1, 1)),
    (8, 8, 16, 7, 1, 1, 2, 1, (0, 0, 0, 0)),
    (6, 10, 3, 4, 1, 1, 1, 1, (1, 0, 1, 2)),      # 1x1 with padded taps
    (9, 7, 4, 3, 3, 2, 2, 2, (2, 1, 0, 1)),
]


@pytest.mark.parametrize("geom", CONVS, ids=lambda g: "x".join(map(str, g[:6])))
@pytest.mark.parametrize("cores", CORES)
def test_conv2d_s16_matches_golden(lib, geom, cores):
    ih, iw, c, k, fy, fx, s, d, pads = geom
    rng = _seed("conv", geom, cores)
    x = rng.integers(-32768, 32768, (1, ih, iw, c)).astype(np.int16)
    x.flat[:3] = (-32768, 32767, -32768)
    w = rng.integers(-128, 128, (k, fy, fx, c)).astype(np.int8)
    bias = rng.integers(-2**24, 2**24, k).astype(np.int32)
    acc = conv2d_acc(x, w, bias, 0, 0, (s, s), pads, (d, d), pad_value=0)
    rq = wide_requant(acc, rng)
    want = apply_requant(acc, rq)[0]
    oh, ow = want.shape[:2]
    win = Win(ih, iw, oh, ow, fy, fx, s, s, d, d, *pads)
    out = np.full((oh, ow, k), 0x5A5A, np.int16)
    _call(lib, "tw_conv2d_s16", x[0], w, bias, rq, 0, k, out, None, ACC_FIRST | ACC_LAST, cores, win)
    assert np.array_equal(out, want)
    # K tiles (per-channel requant offset) x C tiles (int32 partial sums) assembled == untiled
    tiled = np.full_like(out, 0x5A5A)
    kt, ct = (k + 1) // 2, max(1, c // 2)
    for k0 in range(0, k, kt):
        k1 = min(k, k0 + kt)
        o = np.full((oh, ow, k1 - k0), 0x5A5A, np.int16)
        psum = np.zeros((oh, ow, k1 - k0), np.int32)
        starts = list(range(0, c, ct))
        for i, c0 in enumerate(starts):
            c1 = min(c, c0 + ct)
            flags = (ACC_FIRST if i == 0 else 0) | (ACC_LAST if i == len(starts) - 1 else 0)
            _call(lib, "tw_conv2d_s16", np.ascontiguousarray(x[0, :, :, c0:c1]),
                  np.ascontiguousarray(w[k0:k1, :, :, c0:c1]), np.ascontiguousarray(bias[k0:k1]),
                  rq, k0, k1, o, psum, flags, cores, win)
        tiled[:, :, k0:k1] = o
    assert np.array_equal(tiled, want)


@pytest.mark.parametrize("c,k", [(48, 10), (4096, 5), (3, 17)])
@pytest.mark.parametrize("cores", CORES)
def test_fully_connected_s16_int64_accumulation(lib, c, k, cores):
    rng = _seed("fc", c, k, cores)
    x = rng.integers(-32768, 32768, c).astype(np.int16)
    w = rng.integers(-128, 128, (k, c)).astype(np.int8)
    if c == 4096:  # |acc| = 2^34 on channel 0: only an int64 accumulator gets it right
        x[:] = -32768
        w[0] = -128
    bias = rng.integers(-2**30, 2**30, k).astype(np.int32)
    acc = dense_acc(x[None], w, bias, 0)
    assert c != 4096 or int(np.abs(acc).max()) > 2**31
    rq = wide_requant(acc, rng, qmin=0, qmax=32767)   # a fused ReLU's clamp
    want = apply_requant(acc, rq)[0]
    out = np.full(k, 0x5A5A, np.int16)
    _call(lib, "tw_fully_connected_s16", x, w, bias, rq, 0, k, out, None, ACC_FIRST | ACC_LAST, cores)
    assert np.array_equal(out, want)


def test_requant16_rounding_and_edges(lib):
    """MBQM64 at its edges: M0 at and above 0x7FFF0000 (saturated 16-bit multiplier), shifts from
    -31 to 14, exact ties of both signs; acc = bias through a 1-input fc with x = 1, w = 1."""
    mults = [1 << 30, 0x7FFF0000 - 1, 0x7FFF0000, 0x7FFFFFFF, 1518500250, 1 << 30]
    shifts = [-31, -1, 0, 14, -16, -15]
    accs = np.array([-(2**31) + 1, 2**31 - 1, -3 * 2**14, 3 * 2**14, -12345678, 2**15 + 2**14], np.int64)
    k = len(mults)
    rq = Requant("tflite", np.array(mults, np.int32), np.array(shifts, np.int32), zero_point=-7,
                 qmin=-32768, qmax=32767, wide=True)
    x, w = np.ones(1, np.int16), np.ones((k, 1), np.int8)
    for a in accs:
        bias = (np.full(k, a) - 1).astype(np.int32)
        want = apply_requant(dense_acc(x[None], w, bias, 0), rq)[0]
        out = np.zeros(k, np.int16)
        _call(lib, "tw_fully_connected_s16", x, w, bias, rq, 0, k, out, None, ACC_FIRST | ACC_LAST, 1)
        assert np.array_equal(out, want), (a, out, want)


class AddParams(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int32) for n in ("a_zp", "a_mult", "a_shift", "b_zp", "b_mult", "b_shift",
                                              "left_shift", "out_mult", "out_shift", "out_zp", "qmin", "qmax")]


@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("scales", [(0.0005, 0.0004, 0.005), (0.0003, 0.0007, 0.0009), (0.001, 0.001, 0.00001)])
@pytest.mark.parametrize("cores", CORES)
def test_add_sub_s16_matches_golden(lib, op, scales, cores):
    """int16 ADD/SUB with the frontend's parameters (tests/test_tflite_ops.py builds such models) —
    extremes, saturation and every core split."""
    from tilewise.golden import elementwise as g_elt
    from tilewise.ir.graph import Graph, Node
    from tilewise.ir.ops import Op
    from tilewise.ir.params import TfliteAddSubParams
    from tilewise.ir.tensor import QuantParams, Tensor

    sa, sb, so = (float(np.float32(v)) for v in scales)
    twice_max = 2.0 * max(sa, sb)             # frontend/tflite_ops.py add_sub, int16: left_shift 15
    m1, m2 = quantize_multiplier(sa / twice_max), quantize_multiplier(sb / twice_max)
    mo = quantize_multiplier(twice_max / float(np.float32(1 << 15) * np.float32(so)))
    prm = TfliteAddSubParams(left_shift=15, input_multipliers=(m1[0], m2[0]), input_shifts=(m1[1], m2[1]),
                             output_multiplier=mo[0], output_shift=mo[1], qmin=-32768, qmax=32767)
    t = {n: Tensor(n, (1, 5, 7, 6), "int16", QuantParams((s,), (0,))) for n, s in zip("aby", scales)}
    node = Node("y", Op(op), ("a", "b"), ("y",), prm)
    rng = _seed("add", op, scales, cores)
    a = rng.integers(-32768, 32768, (1, 5, 7, 6)).astype(np.int16)
    b = rng.integers(-32768, 32768, (1, 5, 7, 6)).astype(np.int16)
    a.flat[:4], b.flat[:4] = (-32768, 32767, 32767, -32768), (32767, -32768, 32767, -32768)
    want = getattr(g_elt, op)(node, Graph("g", t, (node,), ("a", "b"), ("y",)), [a, b])
    (m1, m2), (s1, s2) = prm.input_multipliers, prm.input_shifts
    p = AddParams(0, m1, s1, 0, m2, s2, prm.left_shift, prm.output_multiplier, prm.output_shift, 0, prm.qmin,
                  prm.qmax)
    out = np.full(a.shape, 0x5A5A, np.int16)
    fn = getattr(lib, f"tw_{op}_s16")
    fn.restype = None
    fn.argtypes = [ctypes.POINTER(AddParams), P16, P16, P16, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    for core in range(cores):
        fn(ctypes.byref(p), _p(a, P16), _p(b, P16), _p(out, P16), a.size, core, cores)
    assert np.array_equal(out, want)


def test_real_requant_rounding_and_edges(lib):
    """The 16x8 dense layer's "real" requant (LiteRT's reference FULLY_CONNECTED):
    round(double(acc)·scale) half away from zero — exact ties of both signs —, results beyond
    int32 (INT32_MIN, as x86-64 converts them, then the clamp), C = golden real_requant. The
    accumulator is a partial sum (psum, the last C tile) plus x·w = 2^22."""
    scales = np.array([0.5, 0.25, 1.5e-5, 3.0517578125e-05, 0.999999, 2.0], np.float64)
    k = len(scales)
    rq = Requant("tflite", np.full(k, 1 << 30, np.int64), np.zeros(k, np.int64), zero_point=3,
                 qmin=-32768, qmax=32767, wide=True, rounding="real", scale=scales)
    x, w = np.full(1, -32768, np.int16), np.full((k, 1), -128, np.int8)
    for acc in (-3, -1, 1, 3, 5, 65535, -65537, 12345, 2**31 - 1, -(2**31) + 2**22):
        psum = np.full(k, acc - 2**22, np.int32)
        want = apply_requant(np.full((1, k), acc, np.int64), rq)[0]
        out = np.zeros(k, np.int16)
        _call(lib, "tw_fully_connected_s16", x, w, None, rq, 0, k, out, psum, ACC_LAST, 1)
        assert np.array_equal(out, want), (acc, out, want)
    assert apply_requant(np.full((1, k), 2**31 - 1, np.int64), rq)[0, -1] == -32768   # INT32_MIN


# ------------------------------------------------------------------------------ extreme values

class Pool16(ctypes.Structure):
    _fields_ = [("win", Win), ("in_", P16), ("c", ctypes.c_int), ("out", P16), ("qmin", ctypes.c_int32),
                ("qmax", ctypes.c_int32)]


def _pool16(lib, op: str, x: np.ndarray, fy: int, fx: int, stride: int, pads, cores: int) -> np.ndarray:
    """tw_maxpool_s16 / tw_avgpool_s16 on x [H, W, C] int16, clamp to the int16 range."""
    from tilewise.ir.shapes import conv_out

    h, w, c = x.shape
    oh, ow = conv_out(h, fy, stride, pads[0], pads[2]), conv_out(w, fx, stride, pads[1], pads[3])
    x = np.ascontiguousarray(x, np.int16)
    out = np.full((oh, ow, c), 0x5A5A, np.int16)
    a = Pool16(Win(h, w, oh, ow, fy, fx, stride, stride, 1, 1, *pads), _p(x, P16), c, _p(out, P16), -32768, 32767)
    fn = getattr(lib, f"tw_{op}pool_s16")
    fn.restype = None
    fn.argtypes = [ctypes.POINTER(Pool16), ctypes.c_int, ctypes.c_int]
    for core in range(cores):
        fn(ctypes.byref(a), core, cores)
    return out


@pytest.mark.parametrize("cores", (1, 3))
def test_pool_s16_extreme_windows(lib, cores):
    """int16 pools where every window value is -32768 (max: a max started above the int16 minimum
    shows) or 32767 (avg: sums of up to 9·32767), border windows with fewer taps included."""
    pads = (1, 1, 1, 1)
    lo = np.full((5, 6, 3), -32768, np.int16)
    assert (_pool16(lib, "max", lo, 3, 3, 1, pads, cores) == -32768).all()
    assert (_pool16(lib, "avg", lo, 3, 3, 2, pads, cores) == -32768).all()
    hi = np.full((5, 6, 3), 32767, np.int16)
    assert (_pool16(lib, "avg", hi, 3, 3, 1, pads, cores) == 32767).all()
    assert (_pool16(lib, "max", hi, 3, 3, 2, pads, cores) == 32767).all()


def test_avgpool_s16_rounds_half_away_from_zero(lib):
    """2x2 windows with averages ±0.5, ±1.5, ±0.25, ±32766.5: half away from zero, by hand."""
    sums = [2, -2, 6, -6, 1, -1, 131066, -131066, -131070]
    want = [1, -1, 2, -2, 0, 0, 32767, -32767, -32768]
    x = np.zeros((2, 2 * len(sums), 1), np.int64)
    for i, s in enumerate(sums):
        q, r = divmod(s, 4)
        x[:, 2 * i:2 * i + 2, 0] = np.array([q + 1] * r + [q] * (4 - r)).reshape(2, 2)
    got = _pool16(lib, "avg", x.astype(np.int16), 2, 2, 2, (0, 0, 0, 0), 1)
    assert got[0, :, 0].tolist() == want


@pytest.mark.parametrize("which", ["max", "min"])
@pytest.mark.parametrize("cores", (1, 8))
def test_conv2d_s16_extreme_values_beyond_int32(lib, which, cores):
    """A 3x3 conv over 64 channels (ic_resnet8's reduction, 576 taps) with every input, pad and
    weight at the edge: x = -32768, w = -128 (or 127), so every accumulator is 576·2^22 =
    2415919104 (or -2397044736), beyond int32 — only the int64 accumulator holds it. At scale 2^-20
    (M0 2^30, shift -19) the outputs are exactly 2304 (-2286), border pixels included."""
    wv, want = (-128, 2304) if which == "max" else (127, -2286)
    k, c = 3, 64
    x = np.full((1, 4, 5, c), -32768, np.int16)
    w = np.full((k, 3, 3, c), wv, np.int8)
    bias = np.zeros(k, np.int32)
    pads = (1, 1, 1, 1)
    acc = conv2d_acc(x, w, bias, 0, 0, (1, 1), pads, (1, 1), pad_value=-32768)
    assert set(acc.reshape(-1).tolist()) == {576 * -32768 * wv} and abs(576 * 32768 * wv) > 2**31
    rq = Requant("tflite", np.full(k, 1 << 30, np.int64), np.full(k, -19, np.int64), zero_point=0,
                 qmin=-32768, qmax=32767, wide=True)
    assert (apply_requant(acc, rq) == want).all()
    out = np.full((4, 5, k), 0x5A5A, np.int16)
    _call(lib, "tw_conv2d_s16", x[0], w, bias, rq, 0, k, out, None, ACC_FIRST | ACC_LAST, cores,
          Win(4, 5, 4, 5, 3, 3, 1, 1, 1, 1, *pads), pad_value=-32768)
    assert (out == want).all(), np.unique(out)
