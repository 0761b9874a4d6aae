"""onnx-mode requantization in the kernels (issue 27): the pulp family's tw_pulp_rq_onnx and the
portable tw_requant.h compute onnxruntime's float32 requantization in integers from the constants
the compiler emits (golden/onnx_requant_exact.py `constants`), bit-exact with the golden model
(golden/requant.py, float32 numpy) on generated projects built on the host.

The layers' per-channel scales are chosen to reach every path of the C: scales >= 1/4 (r <= 32,
the pulp family's 64-bit path; 1/4 itself is r = 32), just below 1/4 (r = 33, its one-word path),
powers of two and 3·2^-k on small accumulators (exact ties k + 1/2, rounded half to even),
accumulators beyond 2^24 (float32 rounds them first), a zero and a subnormal scale; on conv,
1x1 conv, depthwise and dense layers, on the pulp family (gap8's cluster), on stm32h7 (the
pulp kernels built for Arm, host path) and on the portable family. The cost model's
requant_onnx is held against GVSoC in tests/test_pulp_gvsoc.py.

The pulp family's onnx24 variant (no range check, constants.onnx24_fits) is tested against the
exact formula on 400k pairs, chosen only where |acc| <= 2^24 and every scale < 1/4, and run
bit-exact on the same layers with small accumulators; the folded onnx add (add_onnx_fold_s8) is
chosen and bit-exact where fold_onnx proves it, and refuses a grid it cannot match.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tilewise.bindings.portable import elementwise
from tilewise.bindings.pulp import addfold, simple
from tilewise.bindings.pulp import constants as pulp_constants
from tilewise.golden import onnx_requant_exact as exact
from tilewise.pipeline import schedule_network
from tilewise.targets import stm32h7
from tilewise.targets.registry import get_target
from tilewise.validate import make_inputs, validate_network

from .codegen_cases import LayerSpec, c_cache, layer_graph  # noqa: F401 (fixture)
from .pulp_targets import portable_target, pulp_target

#: (scale, kind of channel): "small" channels have one ±1 tap and a small bias (|acc| ≲ 300,
#: outputs within int8 for scales up to 1/2), "big" ones random weights and a bias beyond 2^24
SCALES = ((0.25, "small"), (0.5, "small"), (0.375, "small"), (1.0, "tiny"), (2.0, "tiny"),
          (0.2499999, "small"), (0.125, "small"), (2.0 ** -5, "rand"), (3 * 2.0 ** -9, "rand"),
          (2.0 ** -19, "big"), (3 * 2.0 ** -20, "big"), (0.0, "rand"), (1e-40, "rand"),
          (2.0 ** -12, "rand"), (0.3, "small"), (2.0 ** -8, "rand"))

SPECS = {
    "conv3x3": LayerSpec("conv", c=5, k=16, h=7, w=6, fy=3, fx=3, pads=(1, 1, 1, 1), mode="onnx"),
    "conv1x1": LayerSpec("conv", c=12, k=16, h=5, w=4, mode="onnx"),
    "depthwise": LayerSpec("dwconv", c=16, k=16, h=8, w=7, fy=3, fx=3, pads=(1, 1, 1, 1), mode="onnx"),
    "dense": LayerSpec("fc", c=40, k=16, h=1, w=1, mode="onnx"),
}


def onnx_layer_graph(spec: LayerSpec, seed: int):
    """One layer of `spec` whose channels take SCALES (weights and bias per channel kind)."""
    lg = layer_graph(spec, seed)
    layer = lg.layers[-1]
    rng = np.random.default_rng(seed + 100)
    w = np.array(layer.weights, dtype=np.int64)
    k = w.shape[0]
    raw = rng.integers(-3000, 3000, k)
    scale = np.empty(k, np.float32)
    for ch in range(k):
        s, kind = SCALES[ch % len(SCALES)]
        scale[ch] = s
        if kind in ("small", "tiny"):
            row = np.zeros(w[ch].size, np.int64)
            row[rng.integers(row.size)] = rng.choice((-1, 1))
            w[ch] = row.reshape(w[ch].shape)
            raw[ch] = rng.integers(-60, 61) if kind == "small" else rng.integers(-20, 21)
        elif kind == "big":
            raw[ch] = rng.choice((-1, 1)) * ((1 << 25) + int(rng.integers(0, 1 << 20)))
    bias = raw - layer.pad_value * w.reshape(k, -1).sum(axis=1)
    rq = replace(layer.requant, scale=scale, multiplier=np.ones(k, np.int64),
                 shift=np.zeros(k, np.int64), qmin=-128, qmax=127)
    new = replace(layer, weights=w.astype(np.int8), bias=bias.astype(np.int32), requant=rq)
    return replace(lg, layers=(*lg.layers[:-1], new))


def test_the_scales_reach_every_path():
    mult, r = exact.constants(np.array([s for s, _ in SCALES], np.float32))
    assert (r <= 32).any() and (r == 32).any() and (r == 33).any() and (r > 33).any()
    assert (mult == 0).sum() == 2                                   # 0 and the subnormal
    m, a, b, c = pulp_constants.onnx_words(np.array([s for s, _ in SCALES], np.float32), len(SCALES))
    assert np.array_equal(m, mult) and np.array_equal(a != 0, r >= 33)
    assert np.array_equal(np.where(a != 0, c + 32, c), r) and np.array_equal(b[r < 33], 0 * b[r < 33])
    assert np.array_equal(b[r >= 33], 1 << (r[r >= 33] - 33))


@pytest.mark.parametrize("family", ["pulp", "stm32h7", "portable"])
@pytest.mark.parametrize("case", list(SPECS))
def test_onnx_requant_kernels_bit_exact(case, family, tmp_path, c_cache):
    lg = onnx_layer_graph(SPECS[case], 11)
    if family == "pulp":
        tgt = pulp_target("gap8", l1_kb=4)
    elif family == "stm32h7":
        tgt = get_target("stm32h7")
    else:
        tgt = portable_target("gap8", l1_kb=4)
    ns = schedule_network(lg, tgt, "model")
    fam = {c.placement.binding.family.name for c in ns.partition.choices}
    assert fam == {"portable" if family == "portable" else "pulp"}, fam
    inputs = make_inputs(lg, 3, seed=4)
    report, _ = validate_network(ns, tmp_path / "p", inputs, cache=c_cache)
    assert report.bit_exact, report.to_json()


# ------------------------------------------------------------------------------ the onnx24 variant

#: per-channel scales of the onnx24 layers: all < 1/4 (r >= 33: 0.2499999 is r = 33), ties on
#: powers of two and 3·2^-k, a zero and a subnormal scale (m = 0 takes r = 33)
SCALES24 = (0.2499999, 0.125, 2.0 ** -5, 3 * 2.0 ** -9, 2.0 ** -12, 2.0 ** -8, 0.0, 1e-40,
            0.01, 3 * 2.0 ** -7, 0.0625, 2.0 ** -10, 0.07, 0.003, 2.0 ** -6, 0.2)


def onnx24_layer_graph(spec: LayerSpec, seed: int, big: bool = False):
    """One layer of `spec` with SCALES24 per channel and small weights and biases (|acc| well
    within 2^24), or with `big` one channel's bias just beyond 2^24 − 128·Σ|w| (|acc| may exceed
    2^24: onnx24 must not be chosen)."""
    lg = layer_graph(spec, seed)
    layer = lg.layers[-1]
    rng = np.random.default_rng(seed + 200)
    w = np.array(layer.weights, dtype=np.int64)
    k = w.shape[0]
    raw = rng.integers(-3000, 3000, k)
    if big:
        raw[1] = (1 << 24) + 1
    bias = raw - layer.pad_value * w.reshape(k, -1).sum(axis=1)
    scale = np.array([SCALES24[ch % len(SCALES24)] for ch in range(k)], np.float32)
    rq = replace(layer.requant, scale=scale, multiplier=np.ones(k, np.int64),
                 shift=np.zeros(k, np.int64), qmin=-128, qmax=127)
    new = replace(layer, bias=bias.astype(np.int32), requant=rq)
    return replace(lg, layers=(*lg.layers[:-1], new))


def test_onnx24_formula_is_exact_within_its_bound():
    """The onnx24 words' arithmetic equals golden/onnx_requant_exact.round_product (itself proven
    and tested against float32) for |acc| <= 2^24 and scales < 1/4: random pairs, accumulators at
    ±2^24 and near it, and pairs on exact ties and on the double-rounding band's edges; and not
    beyond the bound, which is why the binding proves it (constants.onnx24_fits)."""
    rng = np.random.default_rng(24)
    n = 400_000
    e = rng.integers(-40, -2, n)
    scale = np.ldexp(rng.uniform(1.0, 2.0, n), e).astype(np.float32)
    scale = np.where(scale >= 0.25, np.float32(0.2499999), scale)
    acc = rng.integers(-(1 << 24), (1 << 24) + 1, n)
    acc[: n // 8] = rng.integers(-300, 301, n // 8)
    acc[:4] = (1 << 24, -(1 << 24), (1 << 24) - 1, 0)
    # exact ties and the double-rounding band: X = (j + 1/2)(1 ± 2^-24·t) for small scales
    j = rng.integers(0, 300, n // 8)
    k = rng.integers(8, 16, n // 8)
    scale[-(n // 8):] = np.ldexp(1.0, -k).astype(np.float32)
    acc[-(n // 8):] = ((2 * j + 1) << (k - 1)) + rng.integers(-2, 3, n // 8)
    mult, r = exact.constants(scale)
    want = exact.round_product(acc, mult, r)
    got = onnx24_vec(acc, scale)
    sel = np.abs(want) < exact.EXACT_BOUND
    assert np.array_equal(got[sel], want[sel])
    assert (np.sign(got[~sel]) == np.sign(want[~sel])).all()
    # beyond 2^24 the one-word form is not fl(acc)'s: some accumulator gives another answer
    big = rng.integers(1 << 24, 1 << 31, 200_000)
    s = np.full(big.size, np.float32(2.0 ** -20))
    m2, r2 = exact.constants(s)
    assert not np.array_equal(onnx24_vec(big, s), exact.round_product(big, m2, r2))


def onnx24_vec(acc, scale) -> np.ndarray:
    """tw_pulp_rq_onnx24 (tw_pulp_requant.h, its host path) in numpy on the words of
    pulp_constants.onnx24_words, one scale per accumulator: the C's uint32 arithmetic."""
    acc = np.asarray(acc, np.int64)
    m, a, b, c = (np.asarray(v, np.int64) for v in pulp_constants.onnx24_words(
        np.asarray(scale, np.float32), acc.size))
    assert (m <= 0).all()                 # no bound given: every channel in the exact form
    p = acc * -m
    hi, lo = p >> 32, p & 0xFFFFFFFF
    x = (hi ^ (hi >> 63)) & 0xFFFFFFFF
    h = (exact.msb64(x | 1) << 8) & 0xFFFFFFFF
    nb = -((hi >> c) & 1)
    carry = (((nb & 0xFFFFFFFF) ^ h) < lo).astype(np.int64)
    t = (hi + b - nb + carry) & 0xFFFFFFFF
    return (t - ((t >> 31) << 32)) >> c


def test_onnx24_is_chosen_only_where_its_bound_holds():
    """The *_onnx24 bindings are legal exactly where |acc| <= 2^24 and every scale < 1/4: the
    layer whose bias lets |acc| exceed 2^24 by one, and one with a scale of 1/4, keep the
    general onnx kernel (a schedule choosing onnx24 there fails this test)."""
    spec = SPECS["conv3x3"]
    tgt = pulp_target("gap8", l1_kb=4)
    for lg, want in ((onnx24_layer_graph(spec, 5), "conv2d_s8_onnx24"),
                     (onnx24_layer_graph(spec, 5, big=True), "conv2d_s8_onnx"),
                     (onnx_layer_graph(spec, 11), "conv2d_s8_onnx")):
        layer = lg.layers[-1]
        assert (pulp_constants.onnx24_fits(layer, lg)) == want.endswith("24")
        ns = schedule_network(lg, tgt, "model")
        assert ns.partition.choices[-1].placement.binding.name == want
    lg = onnx24_layer_graph(spec, 5)
    layer = lg.layers[-1]
    assert int(pulp_constants.acc_bound(layer, lg).max()) <= pulp_constants.ONNX24_ACC
    quarter = replace(layer, requant=replace(layer.requant, scale=np.full(
        layer.nest.K, 0.25, np.float32)))
    assert "1/4" in pulp_constants.onnx24_reason(quarter, lg)
    big = onnx24_layer_graph(spec, 5, big=True)
    assert "2^24" in pulp_constants.onnx24_reason(big.layers[-1], big)


@pytest.mark.parametrize("family", ["pulp", "cortex-m7"])
@pytest.mark.parametrize("case", list(SPECS))
def test_onnx24_kernels_bit_exact(case, family, tmp_path, c_cache):
    """The onnx24 variant (chosen: its bound holds) bit-exact on the host build of the pulp
    kernels and of those built for the Cortex-M7 (priced without its FPU, which stm32h7 prefers:
    there the onnx binding is chosen)."""
    lg = onnx24_layer_graph(SPECS[case], 7)
    if family == "cortex-m7":
        fpu = schedule_network(lg, get_target("stm32h7"), "model").partition.choices[-1]
        assert fpu.placement.binding.name.endswith("_onnx"), fpu.placement.binding.name
    tgt = pulp_target("gap8", l1_kb=4) if family == "pulp" else stm32h7.without_fpu(get_target("stm32h7"))
    ns = schedule_network(lg, tgt, "model")
    assert ns.partition.choices[-1].placement.binding.name.endswith("_onnx24")
    inputs = make_inputs(lg, 3, seed=4)
    report, _ = validate_network(ns, tmp_path / "p", inputs, cache=c_cache)
    assert report.bit_exact, report.to_json()


# ------------------------------------------------------------------------------ the folded onnx add

@pytest.mark.parametrize("family", ["pulp", "stm32h7"])
@pytest.mark.parametrize("a_index", [0, 1])
def test_folded_onnx_add_bit_exact(family, a_index, tmp_path, c_cache):
    """The folded onnx add (add_onnx_fold_s8: tables the compiler proves equal to onnxruntime's
    float32 QLinearAdd on every pair of codes, bindings/pulp/addfold.py fold_onnx) is chosen where
    it exists and is bit-exact on the host build (either operand as the kernel's a)."""
    lg = layer_graph(LayerSpec("add", c=12, k=12, h=6, w=5, mode="onnx"), 3 + a_index)
    add = lg.layers[-1]
    lg = replace(lg, layers=(*lg.layers[:-1], replace(add, params=replace(add.params,
                                                                          a_index=a_index))))
    assert simple.onnx_fold(lg.layers[-1], lg) is not None
    tgt = pulp_target("gap8", l1_kb=4) if family == "pulp" else get_target("stm32h7")
    ns = schedule_network(lg, tgt, "model")
    assert ns.partition.choices[-1].placement.binding.name == "add_onnx_fold_s8"
    report, _ = validate_network(ns, tmp_path / "p", make_inputs(lg, 3, seed=5), cache=c_cache)
    assert report.bit_exact, report.to_json()


def test_onnx_add_fold_refuses_what_it_cannot_prove():
    """fold_onnx returns None where no candidate equals the golden grid: a grid with one pair
    changed has no fold, and the binding's check then says so."""
    lg = layer_graph(LayerSpec("add", c=4, k=4, h=2, w=2, mode="onnx"), 3)
    add = lg.layers[-1]
    f = simple.onnx_fold(add, lg)
    assert f is not None and 0 <= f.shift <= 31 and len(f.tables) == 512
    a = add.params
    ex = elementwise.add_onnx_exact(a, 0, -128, 127)
    want = addfold.onnx_golden_grid(a.ratio_a, a.ratio_b, a.fixed, 0, -128, 127)
    assert addfold.fold_onnx(ex["ma"], ex["tb"], ex["shift"], 0, want, -128, 127) is not None
    bad = want.copy()
    bad[130, 140] += 1 if bad[130, 140] < 127 else -1
    assert addfold.fold_onnx(ex["ma"], ex["tb"], ex["shift"], 0, bad, -128, 127) is None
