"""The pulp sub-byte conv (tw_pulp_subbyte.h): packed 4/2-bit operands, bit-exact with a numpy
integer reference on the host (the kernels' C path) and on GVSoC's pulp-open cluster (the XpulpV2
path: pv.sdotsp.b, pv.sra.sci.b; and built with PULP-NN's p.extracti + pv.pack unpacking), on
1, 3 and 8 cores.

Cases (tests/pulp_subbyte_cases.py): x4w4→y4, x2w2→y2, x8w4→y8 and x8w2→y8 (mixed: weight rows in
the binding's lane order), x4w2→y4, x2w4→y8, x4w8→y2, x8w8→y4, x4w4→y8; 3×3 with pad 1,
strides, asymmetric pads, 1×1, dense layers (a 1×1 conv on a 1×1 input), an odd number of output
pixels, out_c not a multiple of 4 (the
1x2 leftover path), fewer pixel pairs than cores (channel groups), shift32 / tflite / tflite_right
requantization. Plus the layout helpers of bindings/pulp/subbyte.py against the contract.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilewise.bindings.pulp import subbyte
from tilewise.platforms.gvsoc import execute as run_firmware
from tilewise.platforms.gvsoc import runner
from tilewise.platforms.pulp_open import toolchain
from tilewise.validate.firmware_run import parse

from . import pulp_subbyte_cases as sb
from .conftest import absent

CORES = (1, 3, 8)


def cases() -> list[sb.SbCase]:
    rng = np.random.default_rng(15)
    mc = sb.make_case
    p1 = (1, 1, 1, 1)
    return [
        mc("x4w4y4_3x3", rng, 6, 7, 16, 12, 3, 3, (4, 4, 4), pads=p1),
        mc("x2w2y2_3x3", rng, 5, 6, 32, 8, 3, 3, (2, 2, 2), pads=p1),
        mc("x8w4y8_3x3", rng, 5, 5, 8, 10, 3, 3, (8, 4, 8), pads=p1),
        mc("x8w2y8_3x3", rng, 4, 5, 16, 8, 3, 3, (8, 2, 8), pads=p1),
        mc("x4w2y4_3x3_s2", rng, 7, 7, 16, 6, 3, 3, (4, 2, 4), stride=(2, 2), pads=(0, 1, 1, 0)),
        mc("x2w4y8_1x1", rng, 3, 5, 16, 7, 1, 1, (2, 4, 8)),
        mc("x4w8y2_3x3", rng, 4, 4, 8, 16, 3, 3, (4, 8, 2), pads=(1, 0, 0, 1)),
        mc("x8w8y4_3x3", rng, 4, 3, 4, 6, 3, 3, (8, 8, 4), pads=p1),
        mc("x4w4y8_2x2_pairs_lt_cores", rng, 3, 3, 8, 24, 2, 2, (4, 4, 8)),
        mc("x4w4y4_tflite", rng, 5, 5, 16, 8, 3, 3, (4, 4, 4), pads=p1, mode="tflite"),
        mc("x8w4y4_tflite", rng, 6, 6, 32, 16, 3, 3, (8, 4, 4), pads=p1, mode="tflite"),
        mc("x2w2y2_5x5", rng, 6, 6, 16, 4, 5, 5, (2, 2, 2), pads=(2, 2, 2, 2)),
        mc("dense_x4w2y8", rng, 1, 1, 64, 10, 1, 1, (4, 2, 8)),       # a dense layer: 1x1 on 1x1
        mc("dense_x8w4y4", rng, 1, 1, 48, 6, 1, 1, (8, 4, 4), mode="tflite"),
    ]


def _check(got, cs):
    assert set(got) == {(c.name, n) for c in cs for n in c.cores}
    bad = {k: v[0] for k, v in got.items() if v[0]}
    assert not bad, bad


def test_layout_helpers_follow_the_contract():
    v = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9])
    assert list(subbyte.pack(v, 4)) == [0x21, 0x43, 0x65, 0x87, 0x09]
    assert list(subbyte.pack([-1, 0, 1, -2], 2)) == [0b10010011]
    w = np.random.default_rng(0).integers(-8, 8, 64)
    assert np.array_equal(subbyte.unpack(subbyte.pack(w, 4), 4, 64, True), w)
    assert list(subbyte.lane_order(4, 8)) == [0, 2, 4, 6, 1, 3, 5, 7]
    assert list(subbyte.lane_order(2, 16)[:8]) == [0, 4, 8, 12, 1, 5, 9, 13]
    assert list(subbyte.lane_order(8, 8)) == list(range(8))
    # equal widths: the plain contract order; mixed: the permutation of the docstring
    wt = np.arange(32).reshape(1, 1, 1, 32) % 8 - 4
    assert np.array_equal(subbyte.weight_bytes(wt, 4, 4), subbyte.pack(wt, 4))
    assert not np.array_equal(subbyte.weight_bytes(wt, 8, 4), subbyte.pack(wt, 4))
    assert subbyte.refusal(12, 8, 3, 3, 4, 4, 4) is not None          # 12·4 bits: no whole words
    assert subbyte.refusal(16, 3, 3, 3, 4, 4, 4) is not None          # 3 outputs of 4 bits
    assert subbyte.refusal(16, 8, 3, 3, 4, 4, 4, (2, 2)) is not None
    assert subbyte.refusal(16, 8, 3, 3, 4, 4, 3) is not None
    assert subbyte.refusal(16, 8, 3, 3, 4, 2, 2) is None


def test_subbyte_conv_bit_exact_on_host(tmp_path):
    cs = cases()
    _check(sb.run_host(cs, tmp_path), cs)


@pytest.mark.parametrize("defines", [(), ("TW_PULP_SB_EXTRACT",)], ids=["shift", "extract"])
def test_subbyte_conv_bit_exact_on_gvsoc(defines, tmp_path):
    """Both unpackings of the weights: shift + pv.sra.sci.b (the kernels'), p.extracti +
    pv.packhi.b / pv.packlo.b (PULP-NN's, bench/pulp_subbyte.py's comparison)."""
    try:
        runner()
        toolchain()
    except Exception as e:   # noqa: BLE001 - the one-sentence TilewiseError
        absent(str(e))
    cs = cases()
    run = parse(run_firmware(sb.build_firmware(cs, tmp_path, defines), timeout=600))
    assert run.status == 0, run.text[-2000:]
    got = sb.parse(cs, run.text)
    _check(got, cs)
    assert all(got[(c.name, n)][1] > 0 for c in cs for n in c.cores)


def test_corrupted_weights_are_caught(tmp_path):
    """The harness can fail: each case with a third of its weight bytes altered, or (mixed
    widths) its weights in the plain contract order instead of the lane order, mismatches."""
    rng = np.random.default_rng(1)
    broken = []
    for bits in ((4, 4, 4), (2, 2, 2), (8, 4, 8)):
        c = sb.make_case(f"x{bits}", rng, 4, 4, 16, 8, 3, 3, bits, pads=(1, 1, 1, 1), cores=(1,))
        w = np.array(c.bufs[3])
        w[: w.size // 3] ^= 0x77
        broken.append(sb.SbCase(c.name, c.prm, (*c.bufs[:3], w, *c.bufs[4:]), c.want, c.variant,
                                c.cores, c.macs))
    wt = rng.integers(-8, 8, (8, 3, 3, 16))
    c = sb.make_case("plain", rng, 4, 4, 16, 8, 3, 3, (8, 4, 8), pads=(1, 1, 1, 1), cores=(1,))
    assert not np.array_equal(subbyte.weight_bytes(wt, 8, 4), subbyte.pack(wt, 4))
    plain = subbyte.pack(subbyte.unpack(c.bufs[3], 4, 8 * 9 * 16, True)
                         .reshape(8, -1)[:, subbyte.lane_order(4, 144)], 4)
    broken.append(sb.SbCase("plain", c.prm, (*c.bufs[:3], plain, *c.bufs[4:]), c.want,
                            c.variant, c.cores, c.macs))
    got = sb.run_host(broken, tmp_path)
    assert all(got[(b.name, 1)][0] > 0 for b in broken), got


def test_layer_check_is_inert_for_8_bit_and_reads_the_nest_bits():
    from dataclasses import replace

    from tilewise.examples import EXAMPLE_ONNX
    from tilewise.frontend import load_model
    from tilewise.passes import lower

    lg = lower(load_model(EXAMPLE_ONNX))
    layers = {l.name: l for l in lg.layers}
    conv = layers["conv3_quant"]                    # 16 -> 32 channels, 3x3

    def at(layer, bits, clip=True):
        w = np.clip(layer.weights, -(1 << (bits[1] - 1)), (1 << (bits[1] - 1)) - 1)
        nest = replace(layer.nest, x_bits=bits[0], w_bits=bits[1], y_bits=bits[2])
        return replace(layer, nest=nest, weights=w if clip else layer.weights)

    assert "8-bit throughout" in subbyte.check(conv, lg)
    assert subbyte.check(at(conv, (4, 4, 4)), lg) is None
    assert subbyte.check(at(conv, (8, 2, 8)), lg) is None
    assert subbyte.check(at(layers["fc_quant"], (4, 4, 4)), lg) is None      # dense: 1x1 on 1x1
    assert "declared 4-bit" in subbyte.check(at(conv, (4, 4, 4), clip=False), lg)
    assert subbyte.check(at(conv, (2, 2, 2)), lg) is None                   # 16 x 2 bits: a word
    assert "not a conv2d" in subbyte.check(at(layers["dw2_quant"], (4, 4, 4)), lg)
    assert "not whole 32-bit words" in subbyte.check(at(layers["conv1_quant"], (4, 4, 4)), lg)
    # the cost formula orders the widths as measured (8 < 4 <= 2 bits per MAC) and scales
    cost = subbyte.SubbyteCost()
    c = {b: cost.cycles(at(conv, (b, b, b)).nest, 1) for b in (8, 4, 2)}
    assert c[8] < c[4] and c[8] < c[2]
    assert cost.cycles(at(conv, (4, 4, 4)).nest, 8) < c[4] / 7
