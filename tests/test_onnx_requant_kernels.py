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
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tilewise.bindings.pulp import constants as pulp_constants
from tilewise.golden import onnx_requant_exact as exact
from tilewise.pipeline import schedule_network
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
