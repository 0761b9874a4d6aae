"""L3→L2 tiling: the seed-001 cascade, the traffic search, and the network-level bridge."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tilewise.errors import TilewiseError
from tilewise.frontend import load_model
from tilewise.ir.layer import LoopNest
from tilewise.memory import LayerStep, conflicts, plan_network, steps_from_layer_graph
from tilewise.passes import canonicalize, lower
from tilewise.schedule.l3 import _candidate, _rank, l3_dma, l3_network, plan_l3, plan_memory
from tilewise.targets.registry import get_target

from .conftest import mlperf_path

BIG = LoopNest("conv", K=256, C=128, OY=16, OX=16, FY=3, FX=3, pads=(1, 1, 1, 1), IY=16, IX=16)
W_BIG = 256 * 128 * 9 + 256 * 8  # weights + per-channel constants
X_BIG, Y_BIG = 128 * 16 * 16, 256 * 16 * 16


def test_fits_whole():
    t = plan_l3(BIG, X_BIG + Y_BIG + W_BIG)
    assert t.stage == "none" and not t.tiled and t.n_tiles == 1 and t.l3_bytes == 0
    assert t.sub_nest == BIG


def test_next_weights_count_in_eq5():
    l2 = X_BIG + Y_BIG + W_BIG
    t = plan_l3(BIG, l2, w_next_bytes=1000)
    assert t.tiled and t.l2_w_next == 1000 and t.l2_total <= l2


def test_weights_exceed_small_l2_are_tiled_by_output_channel():
    l2 = 200_000  # weights alone are 296,960 bytes
    t = plan_l3(BIG, l2)
    assert t.stage == "w" and t.w_tiled and not t.y_in_l3 and not t.x_in_l3
    assert t.k_tile % 4 == 0 and t.k_tile < 256
    # double-buffered weight tiles, input and output whole in L2
    assert t.l2_w == 2 * (t.k_tile * 128 * 9 + t.k_tile * 8)
    assert t.l2_x == X_BIG and t.l2_y == Y_BIG and t.l2_total <= l2
    # the largest multiple of 4 that fits: one more step of 4 would not
    bigger = _candidate(BIG, t.k_tile + 4, 16, False, False, "rows_outer", 0, 8, 1.0, 0.0)
    assert bigger.l2_total > l2
    assert t.n_k == -(-256 // t.k_tile) and t.n_tiles == t.n_k
    assert t.sub_nest.K == t.k_tile and t.sub_nest.C == 128 and t.sub_nest.OY == 16
    assert t.l3_bytes == W_BIG  # each weight tile read once


def test_cascade_falls_through_to_output_tiling():
    # weights alone fit once double buffered at k=4, but x + y do not leave room: tile y too
    l2 = X_BIG + 40_000
    t = plan_l3(BIG, l2)
    assert t.stage == "wy" and t.y_in_l3 and t.w_tiled and t.l2_total <= l2
    assert t.oy_tile < 16 and t.iy_tile == min(16, t.oy_tile + 2)
    assert t.sub_nest.OY == t.oy_tile and t.sub_nest.pads == (0, 1, 0, 1)
    # earlier stages have no candidate that fits
    for k in range(4, 257, 4):
        assert _candidate(BIG, k, 16, False, False, "rows_outer", 0, 8, 1.0, 0.0).l2_total > l2
    full_w = _candidate(BIG, 256, 1, False, True, "rows_outer", 0, 8, 1.0, 0.0)
    assert full_w.l2_total > l2  # "y" alone (weights whole) cannot fit either


def test_input_in_l3_tiles_input_rows():
    t = plan_l3(BIG, 10**7, x_in_l3=True)
    assert t.x_in_l3 and t.stage == "x" and t.l3_bytes > 0
    # plenty of L2: the input is read from L3 once, whole, and nothing else is cut
    assert t.n_tiles == 1 and t.l3_bytes == X_BIG and t.l2_x == X_BIG
    # tight L2: input stripes double buffered, output rows stay in L2
    t = plan_l3(BIG, Y_BIG + W_BIG + 2 * 128 * 16 * 6, x_in_l3=True)
    assert t.stage == "x" and t.oy_tile == 4 and t.iy_tile == 6 and t.l2_x == 2 * 128 * 16 * 6
    # halo rows read twice; the first and last tiles read one row less (padding)
    assert t.n_tiles == 4 and t.l3_bytes == (5 + 6 + 6 + 5) * 128 * 16
    assert [(r.iy0, r.iy, r.nest.pads[0], r.nest.pads[2]) for r in t.tiles] == [
        (0, 5, 1, 0), (3, 6, 0, 0), (7, 6, 0, 0), (11, 5, 0, 1)]


def test_search_beats_cascade_on_traffic():
    l2 = 100_000
    c = plan_l3(BIG, l2, l3_bandwidth=2.0, l3_setup_cycles=100)
    s = plan_l3(BIG, l2, strategy="search", l3_bandwidth=2.0, l3_setup_cycles=100)
    assert s.l2_total <= l2 and c.l2_total <= l2
    assert s.l3_cycles <= c.l3_cycles
    # k tiles outside row tiles cannot write output row tiles to L3 (a row completes only at the
    # last k tile): the search never picks that order with the output in L3
    assert not (s.order == "k_outer" and s.y_in_l3 and s.w_tiled and s.n_rows > 1)


def test_nothing_fits_raises():
    with pytest.raises(TilewiseError, match="cannot be tiled from L3 into L2 of 3000 bytes"):
        plan_l3(BIG, 3000)


nests = st.builds(
    lambda kind, k, c, oy, f: LoopNest(
        kind, K=k if kind == "conv" else c, C=c, OY=oy, OX=oy, FY=f, FX=f,
        pads=(f // 2,) * 4, IY=oy, IX=oy),
    st.sampled_from(["conv", "dwconv"]), st.sampled_from([8, 16, 32, 64]),
    st.sampled_from([4, 16, 32]), st.integers(1, 24), st.sampled_from([1, 3]))


@settings(max_examples=40, deadline=None)
@given(nests, st.floats(0.05, 1.2), st.booleans())
@example(LoopNest("conv", K=16, C=16, OY=6, OX=6, FY=3, FX=3, pads=(1, 1, 1, 1), IY=6, IX=6),
         0.9375, True)   # the cascade writes fewer L3 bytes here but leaves more to read back
def test_search_never_worse_than_cascade(nest, frac, x_l3):
    whole = _candidate(nest, nest.K, nest.OY, False, False, "rows_outer", 0, 8, 1.0, 0.0).l2_total
    l2 = max(64, int(whole * frac))
    try:
        s = plan_l3(nest, l2, x_in_l3=x_l3, strategy="search", l3_setup_cycles=50)
    except TilewiseError:
        # the search space contains the cascade's: nothing fits for either
        with pytest.raises(TilewiseError):
            plan_l3(nest, l2, x_in_l3=x_l3, l3_setup_cycles=50)
        return
    try:
        c = plan_l3(nest, l2, x_in_l3=x_l3, l3_setup_cycles=50)
    except TilewiseError:
        # the cascade never tiles weights alone once the input is in L3 (seed 001): only then
        # may the search fit where it does not
        assert x_l3 and s.w_tiled and not s.y_in_l3
        return
    assert c.l2_total <= l2 and s.l2_total <= l2
    # what the search minimizes: its L3 cycles plus the next layer's read-back of an output it
    # leaves in L3 (the cascade may write fewer bytes here and leave more to read back)
    mk = {"setup": 50, "bw": 1.0}
    assert _rank(s, nest, mk) <= _rank(c, nest, mk) + 1e-9
    assert c.x_in_l3 == x_l3 == s.x_in_l3


def test_network_bridge_feeds_the_memory_planner():
    a = LoopNest("conv", K=64, C=16, OY=32, OX=32, FY=3, FX=3, pads=(1, 1, 1, 1), IY=32, IX=32)
    b = LoopNest("conv", K=16, C=64, OY=32, OX=32, FY=1, FX=1, IY=32, IX=32)
    steps = [LayerStep("a", ("x",), "y", 64 * 16 * 9 + 64 * 8),
             LayerStep("b", ("y",), "z", 16 * 64 + 16 * 8)]
    sizes = {"x": 16 * 32 * 32, "y": 64 * 32 * 32, "z": 16 * 32 * 32}
    l2 = 60_000  # y alone is 65,536 bytes: it must live in L3
    net = l3_network(steps, {"a": a, "b": b}, sizes, l2, outputs=("z",))
    assert net.l3_tensors == frozenset({"y"})
    ta, tb = net.tilings["a"], net.tilings["b"]
    assert ta.y_in_l3 and tb.x_in_l3
    plan = plan_network(list(net.steps), sizes, l2, outputs=("z",), l3_tensors=net.l3_tensors)
    assert plan.peak <= l2 and conflicts(plan.plan.buffers, plan.plan.offsets) == []
    assert "act:y" not in plan.plan.offsets
    sa = next(s for s in net.steps if s.name == "a")
    assert sa.scratch_bytes == ta.l2_y  # the double-buffered output tiles


# ------------------------------------------------------------------ a real network

def _lowered(name: str):
    return lower(canonicalize(load_model(mlperf_path(name))))


@pytest.mark.parametrize("l2_kb", [32, 16])
def test_resnet8_in_a_small_l2(l2_kb):
    """ic_resnet8 needs 127,896 B of L2 with every weight resident and 68,096 B with weights
    streamed; at 32 kB and 16 kB its activations must go through L3 too."""
    lg = _lowered("ic_resnet8")
    steps, sizes = steps_from_layer_graph(lg)
    nests = {layer.name: layer.nest for layer in lg.layers}
    l2 = l2_kb * 1024
    with pytest.raises(TilewiseError, match=r"layer '.*' cannot fit in L2"):
        plan_network(steps, sizes, l2, outputs=lg.outputs)   # without L3 tiling
    dma = l3_dma(get_target("gap8"))
    assert dma == {"l3_bandwidth": 2.0, "l3_setup_cycles": 100.0}  # 200 MB/s at 100 MHz
    for strategy in ("cascade", "search"):
        net, plan = plan_memory(steps, nests, sizes, l2, outputs=lg.outputs, strategy=strategy,
                                **dma)
        assert plan.peak <= l2 and plan.lower_bound <= plan.peak
        assert conflicts(plan.plan.buffers, plan.plan.offsets) == []
        assert net.l3_tensors and net.tilings
        for t in net.tilings.values():
            assert t.tiled
        # every consumer of an L3 tensor streams its input from L3
        for s in lg.layers:
            if any(i in net.l3_tensors for i in s.inputs):
                assert net.tilings[s.name].x_in_l3
        assert set(plan.weights_in_l2) | set(plan.weights_in_l3) == {
            s.name for s in steps if s.weight_bytes > 0}


def test_network_output_never_left_in_l3():
    """The caller reads a network output from L2: the output layer may tile weights, never y."""
    free = plan_l3(BIG, 100_000)
    assert free.y_in_l3
    with pytest.raises(TilewiseError):
        plan_l3(BIG, 100_000, y_to_l3=False)   # input + whole output + 2 weight tiles > 100 kB
    kept = plan_l3(BIG, 120_000, y_to_l3=False)
    assert not kept.y_in_l3 and kept.w_tiled and kept.l2_total <= 120_000
