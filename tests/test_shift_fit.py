"""frontend/shift_fit.py: NEMO's division requantization and its int32 shift form agree on every
accumulator of the domain, or no form is given."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tilewise.frontend.shift_fit import fit
from tilewise.golden.requant import divide


def _both(a, b, D, trunc, lo, hi, B, form):
    acc = np.arange(-B, B + 1, dtype=np.int64)[:, None]
    want = np.clip(divide(acc * a[None, :] + b[None, :], D, "trunc" if trunc else "floor"), lo, hi)
    got = np.clip((acc * form.multiplier[None, :] + form.bias[None, :]) >> form.shift, lo, hi)
    return want, got


@pytest.mark.parametrize("seed", range(4))
def test_every_form_found_equals_the_division_on_the_whole_domain(seed):
    rng = random.Random(seed)
    found = 0
    for _ in range(60):
        C = rng.randint(1, 4)
        D = rng.choice([2 ** rng.randint(1, 26), 2 ** rng.randint(2, 24) - 1, rng.randint(2, 10 ** 7)])
        trunc = rng.random() < 0.7
        lo, hi = rng.choice([(0, 255), (-128, 127), (0, 15)])
        B = rng.randint(1, 60000)
        m = rng.randint(1, 300)
        a = m * np.array([rng.randint(-3000, 3000) for _ in range(C)])
        b = m * np.array([rng.randint(-10 ** 7, 10 ** 7) for _ in range(C)])
        form = fit(a, b, D, trunc, lo, hi, -B, B)
        if form is None:
            continue
        found += 1
        want, got = _both(a, b, D, trunc, lo, hi, B, form)
        assert np.array_equal(want, got), (D, trunc, lo, hi, B, a, b, form)
        assert np.abs(form.multiplier).max() < 2 ** 31 and np.abs(form.bias).max() < 2 ** 31
    assert found >= 20      # the fit is not vacuous


def test_nemo_2_to_the_d_minus_1_divisor_becomes_a_shift():
    """trunc(46·(κ·acc + λ) / (2^22 − 1)) into [0, 255], κ of both signs and zero."""
    k = np.array([31, -17, 0, 120])
    lam = np.array([4000, 9100, 3_000_000, -500])
    a, b = 46 * k, 46 * lam
    form = fit(a, b, 2 ** 22 - 1, True, 0, 255, -30000, 30000)
    assert form is not None and form.multiplier[2] == 0 and form.multiplier[1] < 0
    want, got = _both(a, b, 2 ** 22 - 1, True, 0, 255, 30000, form)
    assert np.array_equal(want, got)


def test_truncation_toward_zero_with_negative_codes_has_no_shift_form():
    """The zero code of a truncating division spans two steps' width: no floor shift has that
    where the domain crosses it."""
    assert fit(np.array([3]), np.array([0]), 1024, True, -128, 127, -100000, 100000) is None
    # floor division of the same: a shift
    assert fit(np.array([3]), np.array([0]), 1024, False, -128, 127, -100000, 100000) is not None


def test_no_form_where_int32_constants_cannot_place_the_steps():
    """λ·m/D ≈ 1 output step: L ≈ 2^s, so s ≤ 30, where K = a·2^s/D is too coarse to put each of
    the ~250 steps over ±300k accumulators on the division's."""
    assert fit(np.array([782]), np.array([4186000]), 2 ** 22 - 1, True, 0, 255, -300000, 300000) is None


def test_wide_outputs_are_not_fitted():
    assert fit(np.array([3]), np.array([0]), 1023, False, -32768, 32767, -10, 10) is None
