"""The dense layer with int16 weights laid out at codegen for the Arm core (issue 31:
bindings/pulp/widened.py, tw_pulp_fully_connected_s8w16_* in c/tw_pulp_linear.c).

- the layout: widen_tile against its definition (blocks of 4 rows, per step and row the halves
  (w0, w2), (w1, w3); zero past c);
- stm32h7 picks it for dense layers of 4 or more inputs (the cost model prices it below the int8
  form) and links 2·k·round4(c) weight bytes (analyze's constants are what is linked); fewer
  than 4 inputs keep the int8 kernel;
- bit-exact against the golden model on the host (its plain-C form), on the instruction counter
  and on QEMU (the Arm kernel: its 2-step asm loop, an odd step, the partial step, a last block of
  3 rows), tflite double and single rounding;
- its counted instructions and estimated cycles against the cost model's prediction for the
  layer (bench/calibrate_m7.py --networks ad_autoencoder --only fcw_step,fcw_neuron fitted them)
  within BAND.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilewise.bindings.pulp import widened
from tilewise.ir.operands import const_bytes
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target

from . import arm_exact
from .codegen_cases import LayerSpec, layer_graph

#: |measured / predicted − 1| of one widened dense layer, both units
BAND = 0.10


def test_widen_tile_is_the_kernels_order():
    rng = np.random.default_rng(3)
    w = rng.integers(-128, 128, (7, 10)).astype(np.int8)
    h = widened.widen_tile(w)
    steps = 3
    assert h.dtype == np.dtype("<i2") and h.size == 7 * steps * 4
    pad = np.zeros((7, 12), np.int16)
    pad[:, :10] = w
    pos = 0
    for k0, nb in ((0, 4), (4, 3)):
        for s in range(steps):
            for j in range(nb):
                row = pad[k0 + j, 4 * s:4 * s + 4]
                assert list(h[pos:pos + 4]) == [row[0], row[2], row[1], row[3]], (k0, s, j)
                pos += 4
    assert pos == h.size


def _placed(spec: LayerSpec, seed: int = 0):
    lg = layer_graph(spec, seed)
    ns = schedule_network(lg, get_target("stm32h7"))
    i = next(i for i, layer in enumerate(lg.layers) if layer.nest.kind == "fc")
    return lg, ns, i


def test_stm32h7_takes_the_widened_dense_and_links_its_bytes():
    lg, ns, i = _placed(LayerSpec("fc", c=37, k=11, h=1, w=1))
    b = ns.placement(i).binding
    assert b.name.startswith("fully_connected_s8w16"), b.name
    layer = lg.layers[i]
    linked = 11 * 40 * 2 + 11 * 20
    assert const_bytes(layer, b.const_bytes, b.nest_for(layer.nest)) == linked
    consts = b.consts.build(layer, lg, ns.schedules[i])
    assert len(consts.blob) == linked
    # fewer than 4 inputs: the int8 kernel
    _, ns3, i3 = _placed(LayerSpec("fc", c=3, k=8, h=1, w=1))
    assert not ns3.placement(i3).binding.name.startswith("fully_connected_s8w16")


@pytest.mark.parametrize("mode,c,k", [("tflite", 37, 11), ("tflite_single", 70, 16),
                                      ("tflite", 12, 5)])
def test_widened_dense_bit_exact_host_and_count(tmp_path, mode, c, k):
    lg, ns, i = _placed(LayerSpec("fc", c=c, k=k, h=1, w=1, mode=mode), seed=c)
    assert ns.placement(i).binding.name.startswith("fully_connected_s8w16")
    arm_exact.host_and_count(ns, lg, tmp_path)


def test_widened_dense_bit_exact_on_qemu(tmp_path):
    lg, ns, _ = _placed(LayerSpec("fc", c=37, k=11, h=1, w=1))
    arm_exact.on_qemu(ns, lg, tmp_path)


def test_widened_dense_prediction_against_the_count(tmp_path):
    lg, ns, i = _placed(LayerSpec("fc", c=256, k=64, h=1, w=1))
    arm_exact.prediction_within(ns, lg, i, tmp_path, BAND)
