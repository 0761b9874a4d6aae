"""The linear form of onnx requantization (tilewise/bindings/pulp/onnx_linear.py, issue 27):

- every channel `fit` accepts gives the exact form's clamped outputs on every accumulator of its
  bound, checked exhaustively over random scales, bounds and int8 / uint8 output clamps — and the
  form applies to most channels (the kernels' speed rests on it);
- a channel it cannot fit is refused (None), not approximated: for one such channel the lines
  nearest its scale are checked to miss;
- the onnx24 words of real layers mix both forms (m >= 0 linear, m < 0 exact), so the bundled
  example's GVSoC and host validations (tests/test_pulp_gvsoc.py, tests/test_onnx_requant_kernels.py)
  run both paths of tw_pulp_rq_onnx24.
"""

from __future__ import annotations

import numpy as np

from tilewise.bindings.pulp import constants, onnx_linear
from tilewise.examples import EXAMPLE_ONNX
from tilewise.frontend import load_model
from tilewise.golden import onnx_requant_exact as exact
from tilewise.passes import lower


def _exact(acc: np.ndarray, scale: np.float32, lo: int, hi: int) -> np.ndarray:
    mult, r = exact.constants(scale)
    return np.clip(exact.round_product(acc, mult, r), lo, hi)


def _cases(n: int, seed: int):
    rng = np.random.default_rng(seed)
    for i in range(n):
        scale = np.float32(2.0 ** rng.uniform(-16, -2.05))
        bound = int(rng.integers(1, 1 << 17)) if i % 3 else int(rng.integers(1, 1 << 10))
        if i % 4 == 0:                                  # uint8 output
            zp = int(rng.integers(0, 256))
            yield scale, bound, -zp, 255 - zp
        else:
            zp = int(rng.integers(-128, 128))
            yield scale, bound, -128 - zp, 127 - zp


def test_fitted_channels_equal_the_exact_form_on_every_accumulator():
    fitted = 0
    cases = list(_cases(160, 27))
    for scale, bound, lo, hi in cases:
        words = onnx_linear.fit(float(scale), bound, lo, hi)
        if words is None:
            continue
        fitted += 1
        acc = np.arange(-bound, bound + 1, dtype=np.int64)
        got = np.clip(onnx_linear.evaluate(acc, words), lo, hi)
        assert np.array_equal(got, _exact(acc, scale, lo, hi)), (scale, bound, lo, hi, words)
        m, sh, b, c = words
        assert 0 <= m < 2**31 and 0 <= sh <= 31 and 0 <= c <= 31 and abs(b) <= 2**30
        assert bound << sh < 2**31                     # acc << sh fits the kernel's int32
    assert fitted >= 0.8 * len(cases), fitted


def test_a_channel_without_a_line_is_refused():
    """Some channel has no line near its scale: fit says None, and the obvious lines — the three
    multipliers nearest the scale, each with 17 offsets around one half — each miss some
    accumulator of its bound (the exact form then stays)."""
    for scale, bound, lo, hi in _cases(400, 5):
        if bound < 1 << 12 or onnx_linear.fit(float(scale), bound, lo, hi) is not None:
            continue
        acc = np.arange(-bound, bound + 1, dtype=np.int64)
        want = _exact(acc, scale, lo, hi)
        sh, c, m0 = onnx_linear.nearest_line(float(scale), bound)
        for m in (m0 - 1, m0, m0 + 1):
            for b in (1 << (c - 1)) + np.arange(-8, 9) * (1 << max(c - 8, 0)):
                got = np.clip(onnx_linear.evaluate(acc, (m, sh, int(b), c)), lo, hi)
                assert not np.array_equal(got, want)
        return
    raise AssertionError("no refused channel among 400 random ones")


def test_example_layers_mix_both_forms():
    lg = lower(load_model(EXAMPLE_ONNX))
    lin = exact_form = 0
    for layer in lg.layers:
        if layer.requant is None or layer.requant.mode != "onnx" or layer.weights is None:
            continue
        assert constants.onnx24_fits(layer, lg), layer.name
        m, _, _, _ = constants.words(layer, lg, onnx24=True)
        lin += int((m >= 0).sum())
        exact_form += int((m < 0).sum())
    assert lin > 0 and exact_form > 0, (lin, exact_form)
    assert lin >= 0.8 * (lin + exact_form), (lin, exact_form)
