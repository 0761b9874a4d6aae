"""The pulp kernel family's C (tilewise/bindings/pulp/c) on the host, against the golden model.

The host build is the kernels' portable C path (TW_PULP_ASM 0: the XpulpV2 operations as inline
C functions, the same code path the cluster runs). tests/c/pulp_shim.c gives it the entry points
of the portable shim, so the portable family's kernel tests (tests/test_c_kernels.py) run here
unchanged against the pulp library — random tiles, every requant mode, border tiles with their
own pads, C-tiled partial sums, 1, 3 and 8 cores, the MLPerf Tiny layers, the extreme-value
windows and int32-limit accumulators — except the geometries
the generated code never passes (dilation, depth multipliers: templates/window.j2, checks.py).
Then what is the pulp family's own: its 32-bit MultiplyByQuantizedMultiplier, shift mode's 32- and
64-bit kernels at the edges of int32, its depthwise layout and ring buffer, uint8 storage, and the
work split on tiles smaller than the core count.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilewise.bindings.pulp import addfold
from tilewise.bindings.pulp.simple import one_rounding
from tilewise.golden import elementwise as g_elt
from tilewise.golden.conv import dense_acc
from tilewise.golden.fixedpoint import multiply_by_quantized_multiplier, multiply_by_quantized_multiplier_single
from tilewise.golden.requant import apply_requant
from tilewise.ir.ops import Op
from tilewise.ir.params import TfliteAddSubParams
from tilewise.ir.requant import Requant

from . import tw_kernel_calls as kc
from .test_c_kernels import (  # noqa: F401  (pytest collects them here, with this module's lib)
    CONV_CASES,
    CORES,
    DW_CASES,
    MODES,
    add_params,
    conv_acc,
    conv_tiled,
    golden_node,
    make_requant,
    quantize_multiplier,
    random_conv,
    requantized,
    run_windowed_tiled,
    seed,
    test_avgpool_all_extreme,
    test_avgpool_rounds_half_away_from_zero,
    test_conv_extreme_values_at_int32_limits,
    test_conv_positive_shift_and_onnx_ties,
    test_conv_single_tile,
    test_conv_tiled_with_border_pads_and_partial_sums,
    test_depthwise_extreme_values_at_int32_limits,
    test_depthwise_tiled,
    test_elementwise,
    test_fully_connected,
    test_fully_connected_extreme_values_at_int32_limits,
    test_global_avgpool_as_full_window_average_pool,
    test_global_avgpool_as_tflite_mean_in_pixel_tiles,
    test_global_avgpool_onnx_in_pixel_tiles,
    test_maxpool_all_minus_128,
    test_mlperf_layers_match_golden,
    test_pointwise_extreme_values_at_int32_limits,
    test_pointwise_matches_golden_and_conv2d,
    test_pointwise_with_padding,
    test_pool_tiled,
    tiles_of,
)
from .tw_kernel_calls import ADD_PARAMS, Window


@pytest.fixture(scope="session")
def lib():
    return kc.load_library("pulp")


def not_generated(item) -> bool:
    """The portable tests' dilated and depth-multiplier cases, which generated code never passes
    to a kernel: not collected here (tests/conftest.py deselects them)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    case = params.get("case")
    if case in CONV_CASES and CONV_CASES[case][7] != (1, 1):
        return True
    return case in DW_CASES and (DW_CASES[case][3] != 1 or DW_CASES[case][7] != (1, 1))


@pytest.fixture()
def shift32(lib):
    lib.shim_pulp_shift32(1)
    yield
    lib.shim_pulp_shift32(0)


@pytest.fixture()
def tflite_right(lib):
    lib.shim_pulp_tflite_right(1)
    yield
    lib.shim_pulp_tflite_right(0)


# ------------------------------------------------------------------------------ requantization

def test_mbqm_32bit_matches_golden(lib):
    """tw_pulp_requant.h's MultiplyByQuantizedMultiplier (double and single rounding) on random
    and extreme int32 values, every multiplier but -2^31 (refused by the bindings)."""
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.integers(-(1 << 31), 1 << 31, 3000), rng.integers(-5000, 5000, 1000),
                        [-(1 << 31), (1 << 31) - 1, 0, -1, 1] * 4])
    m = rng.integers(-(1 << 31) + 1, 1 << 31, x.size)
    m[: x.size // 2] = rng.integers(1 << 30, 1 << 31, x.size // 2)
    m[-20:] = [(1 << 31) - 1, 1 << 30, -(1 << 31) + 1, 1, 0] * 4
    shift = rng.integers(-31, 13, x.size)
    for single, fn in ((0, multiply_by_quantized_multiplier), (1, multiply_by_quantized_multiplier_single)):
        want = fn(x, m, shift)
        got = np.array([lib.shim_mbqm(int(a), int(b), int(s), single) for a, b, s in zip(x, m, shift)])
        assert np.array_equal(got, want), single


def shift_requant(k, d, lam, zp=3, qmin=-128, qmax=127) -> Requant:
    n = len(k)
    return Requant("shift", multiplier=np.asarray(k, np.int64), shift=np.broadcast_to(np.asarray(d), (n,)).copy(),
                   zero_point=zp, qmin=qmin, qmax=qmax, bias=np.asarray(lam, np.int64))


@pytest.mark.parametrize("cores", CORES)
def test_shift_mode_64bit_edges(lib, cores):
    """Shift mode where k·acc + lambda needs 64 bits: products near ±2^62, right shifts 0..63,
    values far beyond int32 that saturate, lambda at the int32 edges."""
    rng = np.random.default_rng(seed(("shift64", cores)))
    rows, c, k = 3, 64, 24
    x = rng.integers(-128, 128, (rows, c)).astype(np.int8)
    wt = rng.integers(-127, 128, (k, c)).astype(np.int8)
    bias = rng.integers(-(1 << 30), 1 << 30, k).astype(np.int32)
    acc = dense_acc(x, wt, bias, 0, 0)
    kk = rng.integers(-(1 << 31), 1 << 31, k)
    kk[:4] = [(1 << 31) - 1, -(1 << 31), 1, -1]
    d = np.concatenate([[0, 1, 31, 32, 33, 62, 63], rng.integers(0, 64, k - 7)])
    lam = rng.integers(-(1 << 31), 1 << 31, k)
    lam[:2] = [(1 << 31) - 1, -(1 << 31)]
    rq = Requant("shift", multiplier=kk.astype(np.int64), shift=d.astype(np.int64), zero_point=-5,
                 qmin=-128, qmax=127, bias=lam.astype(np.int64))
    want = requantized(acc, rq)
    assert 0 < (want == 127).sum() and 0 < (want == -128).sum() and 0 < ((want > -128) & (want < 127)).sum()
    assert np.array_equal(kc.fully_connected(lib, x, wt, bias, kc.RequantArrays(rq), cores), want)


@pytest.mark.parametrize("cores", CORES)
def test_shift_mode_32bit_kernels(lib, shift32, cores):
    """TW_PULP_RQ_SHIFT32 (one p.mac and a shift) on layers where k·acc + lambda fits int32 for
    every accumulator (what the binding proves before choosing it): conv, 1x1, dense, depthwise."""
    rng = np.random.default_rng(seed(("shift32", cores)))
    x, wt, bias, zp_x = random_conv(rng, 7, 6, 9, 10, 3, 3)
    acc = conv_acc(x, wt, bias, (1, 1), (1, 1, 1, 1), (1, 1), zp_x)
    bound = int(np.abs(acc).max()) + 1
    k = rng.integers(1, (1 << 30) // bound, 10)
    d = rng.integers(8, 40, 10)
    lam = rng.integers(-(1 << 29), 1 << 29, 10)
    rq = shift_requant(k, d, lam)
    want = requantized(acc, rq)
    got = conv_tiled(lib, x, wt, bias, rq, (1, 1), (1, 1, 1, 1), (1, 1), zp_x, (3, 4, 10, 9), cores)
    assert np.array_equal(got, want)
    acc1 = conv_acc(x, wt[:, 1:2, 1:2, :], bias, (1, 1), (0,) * 4, (1, 1), zp_x)
    got1 = conv_tiled(lib, x, wt[:, 1:2, 1:2, :].copy(), bias, rq, (1, 1), (0,) * 4, (1, 1), zp_x,
                      (7, 6, 10, 9), cores, pointwise=True)
    assert np.array_equal(got1, requantized(acc1, rq))
    flat = x.reshape(-1, 9)[:5]
    dacc = dense_acc(flat, wt[:, 0, 0, :], bias, 0, 0)
    got_fc = kc.fully_connected(lib, flat, wt[:, 0, 0, :], bias, kc.RequantArrays(rq), cores)
    assert np.array_equal(got_fc, requantized(dacc, rq))


@pytest.mark.parametrize("cores", CORES)
def test_tflite_right_shift_kernels(lib, tflite_right, cores):
    """TW_PULP_RQ_TFLITE_RIGHT (RoundingDivideByPOT as (y + 2^(e-1) - [y < 0]) >> e) on layers
    whose shifts are all negative, as the binding requires: conv, 1x1, dense, depthwise against
    TFLite's double rounding, ties included (power-of-two scales)."""
    rng = np.random.default_rng(seed(("tflite_right", cores)))
    x, wt, bias, zp_x = random_conv(rng, 7, 6, 9, 12, 3, 3)
    acc = conv_acc(x, wt, bias, (1, 1), (1, 1, 1, 1), (1, 1), zp_x)
    for ties in (False, True):
        rq = make_requant("tflite", acc, rng, ties=ties)
        assert (np.asarray(rq.shift) <= -1).all()
        want = requantized(acc, rq)
        got = conv_tiled(lib, x, wt, bias, rq, (1, 1), (1, 1, 1, 1), (1, 1), zp_x, (3, 4, 12, 9),
                         cores)
        assert np.array_equal(got, want), ties
    acc1 = conv_acc(x, wt[:, 1:2, 1:2, :], bias, (1, 1), (0,) * 4, (1, 1), zp_x)
    rq1 = make_requant("tflite", acc1, rng)
    got1 = conv_tiled(lib, x, wt[:, 1:2, 1:2, :].copy(), bias, rq1, (1, 1), (0,) * 4, (1, 1), zp_x,
                      (7, 6, 12, 9), cores, pointwise=True)
    assert np.array_equal(got1, requantized(acc1, rq1))
    flat = x.reshape(-1, 9)[:5]
    dacc = dense_acc(flat, wt[:, 0, 0, :], bias, 0, 0)
    rq2 = make_requant("tflite", dacc, rng)
    got_fc = kc.fully_connected(lib, flat, wt[:, 0, 0, :], bias, kc.RequantArrays(rq2), cores)
    assert np.array_equal(got_fc, requantized(dacc, rq2))


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("op", ["add", "sub"])
def test_add_by_tables_one_rounding_where_it_fits(lib, op, cores):
    """tw_pulp_add_s8's one-rounding output (right = 1) wherever simple.one_rounding allows it —
    TFLite's scales, power-of-two scales (ties), extreme zero points — against the golden add; and
    one_rounding refuses a left output shift and sums that would overflow the rounding."""
    rng = np.random.default_rng(seed(("add_right", op, cores)))
    fn = {"add": g_elt.add, "sub": g_elt.sub}[op]
    fits = 0
    for trial in range(12):
        params, prm, (za, sa), (zb, sb), (zo, so) = add_params(rng, op)
        if trial % 3 == 0:       # power-of-two scale ratios: sums on .5 ties
            sa, sb, so = 2.0 ** rng.integers(-7, -3, 3)
            params, prm, *_ = add_params_for(sa, sb, so, za, zb, zo, params.qmin, params.qmax)
        a = rng.integers(-128, 128, (1, 999)).astype(np.int8)
        b = rng.integers(-128, 128, (1, 999)).astype(np.int8)
        a[0, :256] = b[0, :256] = np.arange(-128, 128)
        want = golden_node(fn, Op(op), params, [(a, za, sa), (b, zb, sb)], a.shape, zo, so)
        right = one_rounding(dict(zip(ADD_PARAMS, prm)))
        fits += right
        lib.shim_pulp_add_right(int(right))
        try:
            assert np.array_equal(kc.elementwise(lib, op, prm, a, b, cores), want), trial
        finally:
            lib.shim_pulp_add_right(0)
    assert fits >= 10
    p = dict(zip(ADD_PARAMS, prm))
    assert not one_rounding({**p, "out_shift": 1})
    assert not one_rounding({**p, "left_shift": 30, "a_shift": 0, "b_shift": 0,
                             "a_mult": (1 << 31) - 1, "b_mult": (1 << 31) - 1, "out_shift": -31})


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("op", ["add", "sub"])
def test_add_folded_form_where_addfold_proves_it(lib, op, cores):
    """The folded form (tw_pulp_add_fold_tables + tw_pulp_add_fold_s8) with the fold
    addfold.fold finds — TFLite's scales, power-of-two scales (ties), extreme zero points, fused
    clamps — on every pair of codes (65,536 elements: the C's tables and lanes, not only the
    Python proof) and on a run of odd length at an odd offset (unaligned words, the n % 4 tail),
    against the golden add; fold finds one for most layers."""
    rng = np.random.default_rng(seed(("add_fold", op, cores)))
    fn = {"add": g_elt.add, "sub": g_elt.sub}[op]
    folded = 0
    for trial in range(12):
        params, prm, (za, sa), (zb, sb), (zo, so) = add_params(rng, op)
        if trial % 3 == 0:       # power-of-two scale ratios: sums on .5 ties
            sa, sb, so = 2.0 ** rng.integers(-7, -3, 3)
            params, prm, *_ = add_params_for(sa, sb, so, za, zb, zo, params.qmin, params.qmax)
        f = addfold.fold(dict(zip(ADD_PARAMS, prm)), op == "sub")
        if f is None:
            continue
        folded += 1
        grid = np.arange(-128, 128, dtype=np.int8)
        a = np.concatenate([np.repeat(grid, 256), rng.integers(-128, 128, 1003).astype(np.int8)])
        b = np.concatenate([np.tile(grid, 256), rng.integers(-128, 128, 1003).astype(np.int8)])
        a, b = a[None, :], b[None, :]
        want = golden_node(fn, Op(op), params, [(a, za, sa), (b, zb, sb)], a.shape, zo, so)
        lib.shim_pulp_add_fold(kc.ptr(kc.c_array(list(f.words()), np.int32)))
        try:
            assert np.array_equal(kc.elementwise(lib, op, prm, a, b, cores), want), trial
            odd = slice(65537, 65537 + 999)
            assert np.array_equal(kc.elementwise(lib, op, prm, a[:, odd], b[:, odd], cores),
                                  want[:, odd]), trial
        finally:
            lib.shim_pulp_add_fold(None)
    assert folded >= 9


def test_addfold_refuses_what_is_not_exact():
    """fold proves its form on every pair of codes and returns None where no candidate is exact:
    output = (a + b + 4) / 2 (power-of-two scales) puts every other sum on a tie, which TFLite
    rounds away from zero — one rounding term cannot do both signs, but either sign alone folds
    (a clamp at 0 removes the other); a fold rounding half an output step off differs; and a
    negative output multiplier is refused."""
    p = dict(a_zp=3, a_mult=1 << 30, a_shift=-1, b_zp=-7, b_mult=1 << 30, b_shift=-1,
             left_shift=20, out_mult=1 << 30, out_shift=-18, out_zp=0, qmin=-128, qmax=127)
    assert addfold.fold(p, False) is None
    for clamp in ({"qmin": 0}, {"qmax": 0}):
        q = {**p, **clamp}
        f = addfold.fold(q, False)
        assert f is not None
        assert np.array_equal(addfold.folded_grid(q, False, f), addfold.golden_grid(q, False))
        wrong = addfold.Fold(f.a_round + (1 << (f.k + f.shift - 1)), f.b_round, f.k, f.shift)
        assert not np.array_equal(addfold.folded_grid(q, False, wrong),
                                  addfold.golden_grid(q, False))
    assert addfold.fold({**p, "qmin": 0, "out_mult": -(1 << 30)}, False) is None


def add_params_for(sa, sb, so, za, zb, zo, qmin, qmax):
    """test_c_kernels.add_params for given scales and zero points (TFLite's add preparation)."""
    twice_max = 2.0 * max(sa, sb)
    m1, m2 = quantize_multiplier(sa / twice_max), quantize_multiplier(sb / twice_max)
    mo = quantize_multiplier(twice_max / ((1 << 20) * so))
    params = TfliteAddSubParams(left_shift=20, input_multipliers=(m1[0], m2[0]),
                                input_shifts=(m1[1], m2[1]), output_multiplier=mo[0],
                                output_shift=mo[1], qmin=qmin, qmax=qmax)
    prm = [za, m1[0], m1[1], zb, m2[0], m2[1], 20, mo[0], mo[1], zo, qmin, qmax]
    return params, prm


# ------------------------------------------------------------------------------ depthwise

# (H, W, C, FY, FX, stride, pads, tiles (rows, cols, channels)): multiplier 1, the pulp layout
PULP_DW_CASES = {
    "3x3_s1_same": (10, 9, 13, 3, 3, (1, 1), (1, 1, 1, 1), (4, 4, 5)),
    "3x3_s2": (11, 12, 16, 3, 3, (2, 2), (1, 1, 1, 1), (3, 5, 16)),
    "5x5_s2_asym": (11, 12, 5, 5, 5, (2, 2), (2, 2, 1, 2), (3, 2, 2)),
    "7x7_s3": (13, 9, 3, 7, 7, (3, 3), (3, 2, 3, 3), (2, 3, 1)),
    "3x1_s1": (6, 5, 8, 3, 1, (1, 1), (1, 0, 1, 0), (6, 5, 8)),
    "1x5_s12": (5, 13, 6, 1, 5, (1, 2), (0, 2, 0, 2), (2, 3, 3)),
    "2x2_s3_one_row": (2, 10, 7, 2, 2, (3, 3), (0, 0, 0, 1), (1, 4, 7)),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", list(PULP_DW_CASES))
def test_depthwise_layouts_and_strides(lib, case, mode):
    h, w, c, fy, fx, stride, pads, tiles = PULP_DW_CASES[case]
    rng = np.random.default_rng(seed((case, mode, "pulp")))
    x, wt, bias, zp_x = random_conv(rng, h, w, c, 0, fy, fx, depthwise_mult=1)
    acc = conv_acc(x, wt, bias, stride, pads, (1, 1), zp_x, groups=c)
    rq = make_requant(mode, acc, rng)
    want = requantized(acc, rq)
    w_hwk = wt[..., 0].transpose(1, 2, 0)
    for cores in CORES:
        got = np.zeros_like(want)

        def call(win, xt, box):
            for c0, c1 in tiles_of(c, tiles[2]):
                got[box[0]:box[1], box[2]:box[3], c0:c1] = kc.depthwise(
                    lib, win, xt[..., c0:c1], w_hwk[..., c0:c1], bias[c0:c1], 1,
                    kc.RequantArrays(rq, c0, c1), zp_x, cores)

        run_windowed_tiled(lib, x, fy, fx, stride, pads, (1, 1), tiles[:2], call)
        assert np.array_equal(got, want), cores


# ------------------------------------------------------------------------------ uint8 storage

@pytest.mark.parametrize("mode", MODES)
def test_uint8_storage(lib, mode):
    """conv, 1x1, depthwise and dense on uint8 tensors stored biased (u − 128): the kernels see
    x − 128, a pad value zp − 128, a bias raised by 128·Σw and an output zero point and clamp
    lowered by 128, and give the golden uint8 output − 128."""
    rng = np.random.default_rng(seed(("uint8", mode)))
    for kind in ("conv", "pointwise", "depthwise", "dense"):
        fy = fx = 1 if kind in ("pointwise", "dense") else 3
        c = 12
        k = c if kind == "depthwise" else 7
        xu = rng.integers(0, 256, (6, 5, c))
        zp_x = int(rng.integers(0, 256))
        wt = rng.integers(-127, 128, (k, fy, fx, 1 if kind == "depthwise" else c)).astype(np.int8)
        sw = wt.astype(np.int64).sum(axis=(1, 2, 3))
        bias = rng.integers(-3000, 3000, k) - zp_x * sw
        pads = (1, 1, 1, 1) if kind in ("conv", "depthwise") else (0,) * 4
        groups = c if kind == "depthwise" else 1
        acc = conv_acc(xu, wt, bias, (1, 1), pads, (1, 1), zp_x, groups=groups)
        rq = make_requant(mode, acc, rng)
        zp = int(rng.integers(0, 256))
        rq = Requant(rq.mode, rq.multiplier, rq.shift, zp, zp if rng.random() < 0.5 else 0, 255,
                     scale=rq.scale, bias=rq.bias, rounding=rq.rounding)
        want = apply_requant(acc, rq)
        stored_rq = Requant(rq.mode, rq.multiplier, rq.shift, zp - 128, rq.qmin - 128, rq.qmax - 128,
                            scale=rq.scale, bias=rq.bias, rounding=rq.rounding)
        xs = (xu - 128).astype(np.int8)
        bs = (bias + 128 * sw).astype(np.int32)
        ra = kc.RequantArrays(stored_rq)
        if kind == "depthwise":
            win = Window(6, 5, 6, 5, 3, 3, pads=pads)
            got = kc.depthwise(lib, win, xs, wt[..., 0].transpose(1, 2, 0), bs, 1, ra, zp_x - 128, 8)
        elif kind == "dense":
            got = kc.fully_connected(lib, xs.reshape(-1, c), wt[:, 0, 0, :], bs, ra, 8).reshape(want.shape)
        else:
            win = Window(6, 5, 6, 5, fy, fx, pads=pads)
            got = kc.conv(lib, win, xs, wt, bs, ra, zp_x - 128, 8, pointwise=kind == "pointwise")
        assert np.array_equal(got.astype(np.int64) + 128, want), kind


# ------------------------------------------------------------------------------ work split

@pytest.mark.parametrize("cores", (3, 8))
def test_tiles_smaller_than_the_core_count(lib, cores):
    """One to three output pixels on 8 cores: the conv splits the pixel pairs' channels into
    groups, the pools split channel words, the dense layer neurons — results unchanged."""
    rng = np.random.default_rng(seed(("small", cores)))
    for oh, ow, k in ((1, 1, 37), (1, 2, 9), (1, 3, 64), (2, 1, 3)):
        x, wt, bias, zp_x = random_conv(rng, oh + 2, ow + 2, 6, k, 3, 3)
        acc = conv_acc(x, wt, bias, (1, 1), (0,) * 4, (1, 1), zp_x)
        rq = make_requant("tflite", acc, rng)
        got = kc.conv(lib, Window(oh + 2, ow + 2, oh, ow, 3, 3), x, wt, bias, kc.RequantArrays(rq), zp_x, cores)
        assert np.array_equal(got, requantized(acc, rq)), (oh, ow, k)
