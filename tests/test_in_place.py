"""In-place execution (memory/inplace.py, bindings/pulp/in_place.py): outputs written over their
dying input at the lag the kernels' loop order allows, chosen where it lowers the L2 peak.

- the planner: linked pairs sit exactly at their lag, nothing else overlaps, the linked lower
  bound holds, chains of links stay rigid, and links that would raise the peak are left out;
- the lags: the values the kernels' orders give on the MLPerf Tiny geometries;
- a small MobileNet-like network on stm32h7 (conv 3x3, depthwise s1 / s2, pointwise expand and
  project, a residual add): the layers run in place, the peak falls below the plan without
  links, and the generated C is bit-exact on the host; with the pointwise lag cut to 0 (an
  expanding 1x1 writes ahead of what it reads) the same network is not — the lag is what makes
  it exact. The Arm path (QEMU / the counter) runs in place on kws_dscnn and ic_resnet8 in
  tests/test_qemu.py. Fused chains are off here (tests/test_chains.py has them).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from tilewise.bindings.pulp import in_place
from tilewise.frontend import load_model
from tilewise.ir.layer import LoopNest
from tilewise.memory.buffers import Buffer
from tilewise.memory.inplace import Link, linked_conflicts, lower_bound_linked, units
from tilewise.memory.plan import plan_in_place
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target

from .tflite_builder import ACT, SAME, ModelBuilder


def _chain(n: int, sizes: list[int], lags: list[int]) -> tuple[list[Buffer], list[Link]]:
    """t0 → t1 → … each produced at step i and read by step i + 1 only."""
    bufs = [Buffer(f"act:t{i}", sizes[i], max(0, i - 1) if i else 0, i) for i in range(n)]
    bufs = [Buffer(b.name, b.size, i, i + 1) for i, b in enumerate(bufs)]
    links = [Link(f"act:t{i + 1}", f"act:t{i}", lags[i]) for i in range(n - 1)]
    return bufs, links


def test_a_chain_is_one_rigid_unit_at_its_lags():
    bufs, links = _chain(4, [64, 64, 128, 32], [0, 16, 0])
    (unit,) = units(bufs, links)
    rel = {b.name: r for b, r in unit}
    assert rel["act:t0"] - rel["act:t1"] == 0 and rel["act:t1"] - rel["act:t2"] == 16
    assert min(rel.values()) == 0


def test_linked_plans_valid_and_lower_on_random_networks():
    """Random chains with side buffers (a residual kept across steps): every kept link at its
    exact lag, no other overlap, peak ≥ the linked bound, never above the plan without links."""
    rng = random.Random(7)
    for _ in range(30):
        n = rng.randint(3, 9)
        sizes = [4 * rng.randint(4, 64) for _ in range(n)]
        lags = [4 * rng.randint(0, 8) for _ in range(n - 1)]
        bufs, links = _chain(n, sizes, lags)
        bufs.append(Buffer("act:skip", 4 * rng.randint(4, 64), 0, n - 1))
        plan = plan_in_place(bufs, links, 4, restarts=20)
        assert not linked_conflicts(bufs, plan.offsets, plan.links)
        for lk in plan.links:
            assert plan.offsets[lk.input] - plan.offsets[lk.output] == lk.lag
        assert plan.peak >= plan.lower_bound == lower_bound_linked(bufs, plan.links, 4)
        assert plan.peak <= plan_in_place(bufs, [], 4, restarts=20).peak


def test_conflicts_still_seen_between_unlinked_or_misplaced_buffers():
    a, b = Buffer("act:a", 64, 0, 1), Buffer("act:b", 64, 1, 2)
    assert not linked_conflicts([a, b], {"act:a": 16, "act:b": 0}, [Link("act:b", "act:a", 16)])
    assert linked_conflicts([a, b], {"act:a": 8, "act:b": 0}, [Link("act:b", "act:a", 16)])
    assert linked_conflicts([a, b], {"act:a": 16, "act:b": 0}, [])


def test_lags_of_the_kernels_loop_orders():
    """depthwise: the ring holds every row an output row needs, so a same or smaller output
    starts where its input does; a 1x1 of equal channels two pixels ahead (its pixel pair); an
    expanding 1x1 (8 → 16, 48x48: vww's second pointwise) nearly the input's size; a 3x3 conv
    with pad 1 a row and three pixels (the rows above the current one are still read)."""
    dw = LoopNest("dwconv", 64, 64, 25, 5, 3, 3, 1, 1, (1, 1, 1, 1), 25, 5)
    dw2 = LoopNest("dwconv", 16, 16, 24, 24, 3, 3, 2, 2, (0, 0, 1, 1), 48, 48)
    assert in_place.depthwise_lag(dw) == 0 and in_place.depthwise_lag(dw2) == 0
    assert in_place.conv_lag(LoopNest("conv", 64, 64, 25, 5, 1, 1, 1, 1, (0, 0, 0, 0), 25, 5)) == 128
    assert in_place.conv_lag(LoopNest("conv", 16, 8, 48, 48, 1, 1, 1, 1, (0, 0, 0, 0), 48, 48)) \
        == (48 * 48 - 2) * 8 + 2 * 16
    assert in_place.conv_lag(LoopNest("conv", 16, 16, 32, 32, 3, 3, 1, 1, (1, 1, 1, 1), 32, 32)) \
        == (32 + 3) * 16


def _conv(b, r, x, c, k, f, hw, name, stride=1):
    w = b.const(f"{name}_w", r.randint(-127, 128, (k, f, f, c)).astype(np.int8), "int8",
                scale=r.uniform(0.002, 0.02, k), zero_point=0)
    bias = b.const(f"{name}_b", r.randint(-2000, 2000, k), "int32", scale=np.full(k, 1e-4),
                   zero_point=0)
    y = b.tensor(name, (1, *hw, k), "int8", scale=0.05, zero_point=-3)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=SAME, StrideW=stride,
         StrideH=stride, FusedActivationFunction=ACT["RELU"], DilationWFactor=1,
         DilationHFactor=1)
    return y


def _dw(b, r, x, c, hw, name, stride=1):
    w = b.const(f"{name}_w", r.randint(-127, 128, (1, 3, 3, c)).astype(np.int8), "int8",
                scale=r.uniform(0.002, 0.02, c), zero_point=0, quantized_dimension=3)
    bias = b.const(f"{name}_b", r.randint(-2000, 2000, c), "int32", scale=np.full(c, 1e-4),
                   zero_point=0)
    y = b.tensor(name, (1, *hw, c), "int8", scale=0.05, zero_point=-3)
    b.op("DEPTHWISE_CONV_2D", [x, w, bias], [y], "DepthwiseConv2DOptions", Padding=SAME,
         StrideW=stride, StrideH=stride, DepthMultiplier=1, FusedActivationFunction=ACT["RELU"],
         DilationWFactor=1, DilationHFactor=1)
    return y


def mobile_block(path):
    """conv 3x3 → dw → 1x1 expand → dw s2 → 1x1 → 1x1 + add (residual) → 1x1: 12x12 input."""
    r, b = np.random.RandomState(11), ModelBuilder()
    x = b.input("x", (1, 12, 12, 4), "int8", scale=0.05, zero_point=-3)
    h = _conv(b, r, x, 4, 8, 3, (12, 12), "c0")
    h = _dw(b, r, h, 8, (12, 12), "d1")
    h = _conv(b, r, h, 8, 16, 1, (12, 12), "p2")
    h = _dw(b, r, h, 16, (6, 6), "d3", stride=2)
    s = _conv(b, r, h, 16, 16, 1, (6, 6), "p4")
    g = _conv(b, r, s, 16, 16, 1, (6, 6), "p5")
    a = b.tensor("a", (1, 6, 6, 16), "int8", scale=0.07, zero_point=-1)
    b.op("ADD", [g, s], [a], "AddOptions", FusedActivationFunction=ACT["NONE"])
    b.output(_conv(b, r, a, 16, 8, 1, (6, 6), "p7"))
    return b.save(path)


@pytest.fixture()
def block(tmp_path):
    path = mobile_block(tmp_path / "block.tflite")
    return path, load_model(str(path))


def _validate(path, graph, tmp_path):
    from tilewise.validate import validate_model

    # in-place execution alone: no fused chain (its expand → depthwise s2 fuses otherwise,
    # tests/test_chains.py)
    ns = schedule_network(lower(graph), get_target("stm32h7"), "model", chains=False)
    return ns, validate_model(path, ns, graph, 3, 0, tmp_path / "p").to_json()


def test_block_runs_in_place_below_the_unlinked_peak_bit_exact(block, tmp_path):
    path, graph = block
    ns, r = _validate(path, graph, tmp_path)
    m = ns.memory
    outs = {ns.layers.layers[i].output: l.name for i, l in enumerate(ns.layers.layers)}
    kinds = {outs[t] for t in m.in_place}
    assert {"op1_depthwise_conv_2d", "op2_conv_2d"} <= {k.split("/")[-1] for k in kinds}, kinds
    assert m.peak_without_in_place is not None and m.peak < m.peak_without_in_place
    assert m.peak >= m.lower_bound and m.planner.startswith("in-place/")
    assert r["bit_exact"], r["mismatches"][:3]


def test_an_expanding_pointwise_without_its_lag_is_not_exact(block, tmp_path, monkeypatch):
    """The control: the lag is what keeps the output from overwriting input still to be read."""
    monkeypatch.setattr(in_place, "conv_lag", lambda n, align=4: 0)
    path, graph = block
    ns, r = _validate(path, graph, tmp_path)
    assert any(lag == 0 for _, lag in ns.memory.in_place.values())
    assert not r["bit_exact"]


def test_analyze_shows_what_runs_in_place(block):
    """analyze: per layer `in_place` {over, lag_bytes} where the plan links it, the peak without
    in-place in the totals, and a line naming the layers under the table."""
    import io

    from rich.console import Console

    from tilewise.report.analysis import analyze_layers
    from tilewise.report.tables import print_analysis

    _, graph = block
    lg = lower(graph)
    ns = schedule_network(lg, get_target("stm32h7"), "model")
    a = analyze_layers(lg, ns)
    j = a.to_json()
    rows = {r["name"]: r for r in j["layers"]}
    for out, (over, lag) in ns.memory.in_place.items():
        name = next(layer.name for layer in ns.layers.layers if layer.output == out)
        assert rows[name]["in_place"] == {"over": over, "lag_bytes": lag}
    assert sum("in_place" in r for r in j["layers"]) == len(ns.memory.in_place) > 0
    assert j["totals"]["peak_l2_without_in_place_bytes"] == ns.memory.peak_without_in_place
    buf = io.StringIO()
    print_analysis(a, Console(file=buf, width=200))
    assert f"in place (peak L2 {ns.memory.peak:,} B, {ns.memory.peak_without_in_place:,} B " \
           "without)" in buf.getvalue()
