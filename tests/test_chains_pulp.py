"""Fused chains on pulp-open (schedule/chain.py, pipeline.py `_untiled`): under a RAM budget the
unfused plan misses, a chain's members leave the cluster's L1 tiles for cluster-l2 — the 8 cores
on the L2 tensors, one fork per member and band, each band's rows split over the cores
(targets/pulp_open.py) — and the generated firmware runs them on GVSoC.

- without a budget pulp-open keeps the fastest schedule: no chain, no layer on cluster-l2; with
  the least RAM tilewise finds as the budget, the chain's members run on cluster-l2, the RAM is
  within the budget and below the unfused schedule's; a budget the unfused plan meets keeps it;
- ic_resnet8: the budget between the least RAM and the unfused schedule's keeps one of its two
  chains (the L1 arena counted as the members' placement leaves it), fewer cycles than both;
- a 1x1 expand -> stride-2 depthwise pair and a residual block (3x3 conv -> 3x3 conv -> add of
  the block's input) as chains on GVSoC: bit-exact, the DMA of the cluster's layers as
  scheduled, each chain's measured cycles within ±25% of its prediction;
- MobileNetV2 1.0 at 64x64 (its first three stages, bench/geometries.py's random weights): at
  the least RAM its activations are >= 3x below the unfused plan's per-layer bound with the same
  MACs, bit-exact on GVSoC, each chain within ±25% of its prediction (bench table 15 holds the
  96x96 five-stage network).
"""

from __future__ import annotations

import pytest

from bench.geometries import mobilenet_v2
from bench.pulp_chains import activation_bytes, least_ram
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.platforms.gvsoc import runner
from tilewise.platforms.pulp_open import toolchain
from tilewise.targets.registry import get_target
from tilewise.validate import make_inputs, validate_network

from .conftest import absent, mlperf_path
from .test_chains import expand_block, residual_block

TARGET = "pulp-open"


@pytest.fixture(scope="module")
def gvsoc():
    try:
        runner()
        toolchain()
    except Exception as e:   # noqa: BLE001 - the one-sentence TilewiseError
        absent(str(e))


def _modules(ns):
    return [ns.placement(i).module.name for i in range(len(ns.layers.layers))]


def test_a_budget_moves_a_chain_onto_the_cluster_from_l2(tmp_path):
    lg = lower(load_model(str(expand_block(tmp_path / "expand.tflite"))))
    t = get_target(TARGET)
    fast = schedule_network(lg, t, "model")
    assert not fast.chains and "cluster-l2" not in _modules(fast)
    budget = least_ram(lg, t)
    ns = schedule_network(lg, t, "model", ram_budget=budget)
    (ch,) = ns.chains
    assert ch.layers == ("op1_conv_2d", "op2_depthwise_conv_2d"), ch
    mods = _modules(ns)
    assert mods[1] == mods[2] == "cluster-l2" and mods[0] == mods[3] == "cluster", mods
    assert ns.ram_bytes <= budget < fast.ram_bytes
    assert activation_bytes(ns) < activation_bytes(fast)
    assert not schedule_network(lg, t, "model", ram_budget=fast.ram_bytes).chains


def test_a_budget_keeps_only_the_chains_it_needs():
    lg = lower(load_model(str(mlperf_path("ic_resnet8"))))
    t = get_target(TARGET)
    least = schedule_network(lg, t, "model", ram_budget=least_ram(lg, t))
    fast = schedule_network(lg, t, "model")
    mid = schedule_network(lg, t, "model", ram_budget=least.ram_bytes + 10 * 1024)
    assert len(least.chains) == 2 and len(mid.chains) == 1 and not fast.chains
    assert least.ram_bytes < mid.ram_bytes <= least.ram_bytes + 10 * 1024 < fast.ram_bytes
    assert fast.cycles < mid.cycles < least.cycles


def _on_gvsoc(lg, tmp_path):
    t = get_target(TARGET)
    ns = schedule_network(lg, t, "model", ram_budget=least_ram(lg, t))
    assert ns.chains
    report, _ = validate_network(ns, tmp_path / "p", make_inputs(lg, 1, 0)[:1], on="gvsoc")
    r = report.to_json()
    assert r["bit_exact"], r["mismatches"][:3]
    assert (r["dma_bytes_measured"], r["dma_transfers_measured"]) == \
        (r["dma_bytes_predicted"], r["dma_transfers_predicted"])
    index = {layer.name: k for k, layer in enumerate(lg.layers)}
    for ch in ns.chains:
        # the chain runs at its last member's step, the others' steps run nothing
        steps = [r["layers"][index[n]]["measured_cycles"] for n in ch.layers]
        assert steps[:-1] == [0] * (len(steps) - 1) and steps[-1] > 0, steps
        assert 0.75 <= steps[-1] / ch.cycles <= 1.25, (ch.layers, steps[-1], ch.cycles)
    return ns, r


@pytest.mark.parametrize("build", [expand_block, residual_block])
def test_chains_on_the_cluster_from_l2_bit_exact_on_gvsoc(build, gvsoc, tmp_path):
    _on_gvsoc(lower(load_model(str(build(tmp_path / "m.tflite")))), tmp_path)


def test_mobilenet_v2_reduced_bit_exact_on_gvsoc(gvsoc, tmp_path):
    lg = mobilenet_v2(64, 10, stages=3)
    ns, _ = _on_gvsoc(lg, tmp_path)
    unfused = schedule_network(lg, get_target(TARGET), "model")
    assert activation_bytes(unfused) >= 3 * activation_bytes(ns), \
        (activation_bytes(unfused), activation_bytes(ns))
    assert ns.macs == unfused.macs
