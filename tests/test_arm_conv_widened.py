"""The conv and 1x1 conv with int16 weights laid out at codegen for the Arm core (issue 31:
bindings/pulp/widened.py conv_layout, tw_pulp_conv{2d,1x1}_s8w16_* in c/tw_pulp_conv.c, the 2x4
MatMul tw_pulp_arm_mm2x4w in c/tw_pulp_matmul_arm.h).

- the layout: widen_tile(halves_first) against its definition (blocks of 2 rows, per step the
  even words of both rows, then their odd words; an odd last block padded with a zero row);
- stm32h7 picks it for convs whose kernel rows (FX·C values) are a multiple of 4 and links
  2·round2(k)·FY·FX·C weight bytes; a 3x3 kernel on 3 input channels keeps the int8 kernel;
- bit-exact (the int8 conv bindings taken out, so that every case runs it) against the golden
  model on the host (its plain-C form), on the instruction counter
  and on QEMU (the Arm kernel: the 2-step loop, an odd last step, a single step, a last quad of
  fewer than 4 pixels, an odd channel count, padding and stride, tflite double and single
  rounding);
- its counted instructions and estimated cycles against the cost model's prediction for a layer
  (bench/calibrate_m7.py --only cw_step,cw_block,cw_unpack fitted them) within BAND.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tilewise.bindings.pulp import widened
from tilewise.ir.operands import const_bytes
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target

from . import arm_exact
from .codegen_cases import LayerSpec, layer_graph

#: |measured / predicted − 1| of one widened conv layer, both units
BAND = 0.10


def test_widen_tile_halves_first_is_the_kernels_order():
    rng = np.random.default_rng(5)
    w = rng.integers(-128, 128, (3, 8)).astype(np.int8)
    h = widened.widen_tile(w, 2, halves_first=True)
    assert h.dtype == np.dtype("<i2") and h.size == 4 * 8
    pad = np.zeros((4, 8), np.int16)
    pad[:3] = w
    pos = 0
    for k0 in (0, 2):
        for s in range(2):
            a, b = pad[k0, 4 * s:4 * s + 4], pad[k0 + 1, 4 * s:4 * s + 4]
            assert list(h[pos:pos + 8]) == [a[0], a[2], b[0], b[2], a[1], a[3], b[1], b[3]], (k0, s)
            pos += 8


def _widened_only(target):
    """`target` without the int8 conv bindings: the widened conv wherever its check passes."""
    return replace(target, modules=tuple(
        replace(m, bindings=tuple(b for b in m.bindings if not b.name.startswith("conv2d_s8_")))
        for m in target.modules))


def _placed(spec: LayerSpec, seed: int = 0, forced: bool = False):
    lg = layer_graph(spec, seed)
    target = get_target("stm32h7")
    ns = schedule_network(lg, _widened_only(target) if forced else target)
    i = next(i for i, layer in enumerate(lg.layers) if layer.nest.kind == "conv")
    return lg, ns, i


def test_stm32h7_takes_the_widened_conv_and_links_its_bytes():
    lg, ns, i = _placed(LayerSpec("conv", c=16, k=11, h=8, w=8, fy=3, fx=3, pads=(1, 1, 1, 1)))
    b = ns.placement(i).binding
    assert b.name.startswith("conv2d_s8w16"), b.name
    layer = lg.layers[i]
    linked = 2 * 12 * 9 * 16 + 11 * 20
    assert const_bytes(layer, b.const_bytes, b.nest_for(layer.nest)) == linked
    assert len(b.consts.build(layer, lg, ns.schedules[i]).blob) == linked
    # 3 input channels (a first layer): the int8 kernel
    _, ns3, i3 = _placed(LayerSpec("conv", c=3, k=8, h=8, w=8, fy=3, fx=3))
    assert not ns3.placement(i3).binding.name.startswith("conv2d_s8w16")


#: the cases of the Arm kernel's paths (module docstring)
CASES = [
    LayerSpec("conv", c=16, k=11, h=7, w=5, fy=3, fx=3, pads=(1, 1, 1, 1)),          # odd k, 35 px
    LayerSpec("conv", c=8, k=6, h=9, w=9, fy=3, fx=3, sy=2, sx=2, pads=(0, 1, 0, 1),
              mode="tflite_single"),                                                 # 18 steps, stride
    LayerSpec("conv", c=12, k=8, h=6, w=6, fy=1, fx=1),                               # 1x1, 3 steps
    LayerSpec("conv", c=4, k=5, h=3, w=3, fy=1, fx=1, sy=2, sx=2, pads=(1, 1, 1, 1)),  # 1 step, pad px
    LayerSpec("conv", c=1, k=8, h=12, w=6, fy=5, fx=4, pads=(2, 1, 2, 2)),           # KWS's first
]


@pytest.mark.parametrize("spec", CASES, ids=lambda s: f"{s.fy}x{s.fx}c{s.c}k{s.k}")
def test_widened_conv_bit_exact_host_and_count(tmp_path, spec):
    lg, ns, i = _placed(spec, seed=spec.c + spec.k, forced=True)
    assert ns.placement(i).binding.name.startswith("conv2d_s8w16")
    arm_exact.host_and_count(ns, lg, tmp_path)


def test_widened_conv_bit_exact_on_qemu(tmp_path):
    lg, ns, _ = _placed(CASES[0], seed=27, forced=True)
    arm_exact.on_qemu(ns, lg, tmp_path)


def test_widened_conv_prediction_against_the_count(tmp_path):
    lg, ns, i = _placed(LayerSpec("conv", c=32, k=32, h=12, w=12, fy=3, fx=3,
                                  pads=(1, 1, 1, 1)))
    assert ns.placement(i).binding.name.startswith("conv2d_s8w16")
    arm_exact.prediction_within(ns, lg, i, tmp_path, BAND)
