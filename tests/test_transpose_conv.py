"""TFLite TRANSPOSE_CONV, int8 and 16x8: the golden model (LiteRT's scatter form, golden/conv.py)
against LiteRT BUILTIN_REF over padding SAME/VALID, strides, filter shapes, an explicit output
shape, with and without bias and fused activations; the generated C (tw_transpose_conv on the cpu
module, bindings/portable/host.py) validated bit-exact against both; malformed files refused in
one sentence."""

from __future__ import annotations

import numpy as np
import pytest

from tilewise.errors import UnsupportedOpError
from tilewise.frontend import load_model
from tilewise.golden.conv import transpose_conv_acc
from tilewise.ir.ops import Op
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets import get_target
from tilewise.validate.check import validate_model

from .tconv_models import transpose_conv
from .tflite_builder import compare_with_litert

CASES = {
    "same_s2": dict(),
    "valid_s2": dict(padding=1),
    "same_s1": dict(stride=(1, 1)),
    "same_s2x3_f4x2": dict(stride=(2, 3), f=(4, 2)),
    "no_bias": dict(bias=False),
    "relu": dict(act=1),
    "relu6": dict(act=3),
    "explicit_output_shape": dict(out_hw=(8, 9)),
    "valid_s3x2": dict(padding=1, stride=(3, 2)),
    "s16_same": dict(dtype="int16"),
    "s16_valid_s1x2": dict(dtype="int16", padding=1, stride=(1, 2)),
    "s16_no_bias": dict(dtype="int16", bias=False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_matches_litert(name, tmp_path):
    bad, total = compare_with_litert(transpose_conv(**CASES[name]).save(tmp_path / "m.tflite"), n=8)
    assert total > 0 and bad == 0


def test_scatter_statement_against_a_direct_loop():
    """transpose_conv_acc against the textbook loop over input pixels and taps."""
    r = np.random.default_rng(0)
    x = r.integers(-128, 128, (1, 3, 4, 2))
    w = r.integers(-127, 128, (3, 3, 2, 2))
    bias = r.integers(-50, 50, 3)
    got = transpose_conv_acc(x, w, bias, 5, (2, 2), (1, 0), (6, 7))
    want = np.tile(bias, (1, 6, 7, 1)).astype(np.int64)
    for iy in range(3):
        for ix in range(4):
            for fy in range(3):
                for fx in range(2):
                    oy, ox = iy * 2 - 1 + fy, ix * 2 + fx
                    if 0 <= oy < 6 and 0 <= ox < 7:
                        want[0, oy, ox] += w[:, fy, fx, :] @ (x[0, iy, ix] - 5)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("name,target", [("same_s2", "gap8"), ("valid_s3x2", "stm32h7"),
                                         ("relu", "gap9"), ("s16_same", "gap8"),
                                         ("s16_valid_s1x2", "pulp-open"), ("s16_no_bias", "stm32h7"),
                                         ("explicit_output_shape", "gap8")])
def test_generated_c_is_bit_exact_with_litert(name, target, tmp_path):
    path = transpose_conv(**CASES[name]).save(tmp_path / "m.tflite")
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target(target), "model")
    assert [(layer.op, s.module) for layer, s in zip(ns.layers.layers, ns.schedules)] == \
        [(Op.TRANSPOSE_CONV, "cpu")]
    r = validate_model(path, ns, graph, 4, 0, tmp_path / "p").to_json()
    assert r["bit_exact"] and r["golden_vs_reference"] == 0, r


def test_output_shape_that_does_not_map_back_onto_the_input_is_refused(tmp_path):
    path = transpose_conv(out_hw=(9, 11)).save(tmp_path / "m.tflite")
    with pytest.raises(UnsupportedOpError, match=r"operator 0 \(TRANSPOSE_CONV.*maps? that output back onto 5x6"):
        load_model(path)
