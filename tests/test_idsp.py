"""Seed 002's IDSP model: Table 5.3 (access-minimizing tiles) and Fig. 5.12 (Pareto front).

Figures: seed 002 Tables 5.2/5.3, §5.5 Fig. 5.12; notes/idsp-model.md.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tilewise.ir.layer import LoopNest
from tilewise.schedule import idsp
from tilewise.schedule.cost import Evaluator
from tilewise.targets import get_target

from .placed import seed002

# Table 5.3: (layer, schedule) -> (TOx, TOy, TOc, TOn, TKc), "optimal" kB, "actual" kB (None = >512)
TABLE_5_3 = {
    ("conv1", "intra"): ((28, 28, 32, 8, 1), 410, 512),
    ("conv1", "inter_kc"): ((28, 28, 32, 8, 1), 410, 512),
    ("conv1", "inter_oc"): ((28, 28, 1, 8, 1), 30, 32),
    ("conv1", "inter_oxoyon"): ((28, 28, 32, 1, 1), 53, 64),
    ("conv1", "inter_oxoyon_dir_ox"): ((1, 28, 32, 1, 1), 4, 4),
    ("conv2", "intra"): ((14, 14, 64, 8, 32), 458, 512),
    ("conv2", "inter_kc"): ((14, 14, 64, 8, 1), 204, 256),
    ("conv2", "inter_oc"): ((14, 14, 1, 8, 32), 167, 256),
    ("conv2", "inter_oxoyon"): ((14, 14, 64, 1, 32), 145, 256),
    ("conv2", "inter_oxoyon_dir_ox"): ((1, 14, 64, 1, 32), 107, 128),
    ("fc3", "intra"): ((1, 1, 512, 8, 448), 3193, None),
    ("fc3", "inter_kc"): ((1, 1, 512, 8, 7), 9, 16),
    ("fc3", "inter_oc"): ((1, 1, 1, 8, 3136), 55, 64),
    ("fc3", "inter_oxoyon"): ((1, 1, 512, 1, 448), 3143, None),
    ("fc3", "inter_oxoyon_dir_ox"): ((1, 1, 512, 1, 448), 3143, None),
    ("fc4", "intra"): ((1, 1, 10, 8, 512), 18, 32),
    ("fc4", "inter_kc"): ((1, 1, 10, 8, 1), 0.2, 0.25),
    ("fc4", "inter_oc"): ((1, 1, 1, 8, 512), 9, 16),
    ("fc4", "inter_oxoyon"): ((1, 1, 10, 1, 512), 11, 16),
    ("fc4", "inter_oxoyon_dir_ox"): ((1, 1, 10, 1, 512), 11, 16),
}
MIN_TOTALS = {"conv1": 209_696, "conv2": 234_496, "fc3": 1_634_816, "fc4": 9_296}


@functools.cache
def conv2_front(padded_work_limit=None):
    """Fig. 5.12's exploration (computed once for the tests below)."""
    sys = idsp.IdspSystem.from_target(get_target("idsp"))
    return idsp.pareto(idsp.LENET["conv2"], sys, padded_work_limit=padded_work_limit)


@pytest.mark.parametrize("key", list(TABLE_5_3), ids=lambda k: f"{k[0]}-{k[1]}")
def test_table_5_3(key):
    name, sched = key
    layer = idsp.LENET[name]
    tile, optimal_kb, actual_kb = TABLE_5_3[key]
    r = idsp.access_optimum(layer, sched)
    # every schedule converges to loading every element once (seed 002 §5.2.6)
    assert r.min_accesses == MIN_TOTALS[name]
    # the least buffer reaching the minimum: the table's "optimal" column (its conv1 inter-Oc
    # "30" is 28.3 kB computed, the text's own arithmetic says 28,978 B)
    assert r.optimal_bytes / 1024 == pytest.approx(optimal_kb, rel=0.1, abs=0.05)
    if actual_kb is None:   # not reachable within 512 kB: the table lists the best tile at 512 kB
        assert r.memory_bytes is None and r.optimal_bytes > 512 * 1024
        assert idsp.buffer_bytes_of(layer, tile) <= 512 * 1024
        assert idsp.accesses_of(layer, sched, tile) == pytest.approx(r.accesses, rel=1e-12)
        assert r.tile == tile
    else:
        # reached first at the table's power-of-two memory, by the table's tile
        assert r.memory_bytes == actual_kb * 1024
        assert idsp.buffer_bytes_of(layer, tile) <= r.memory_bytes
        assert idsp.accesses_of(layer, sched, tile) == pytest.approx(MIN_TOTALS[name], rel=1e-12)
        if key != ("fc3", "inter_kc"):   # there TKc = 1 ties TKc = 7 with a smaller buffer
            assert r.tile == tile


def test_fig_5_12_pareto():
    """conv2, 450 MHz, 32 MAC/cycle, 32 elements/cycle, 150-cycle DMA, 64 kB of 128 kB eligible."""
    sys = idsp.IdspSystem.from_target(get_target("idsp"))
    assert (sys.clock_mhz, sys.macs_per_cycle, sys.bus_elems_per_cycle, sys.dma_init) == \
        (450.0, 32.0, 32.0, 150.0)
    n, front = conv2_front()
    assert n == 9_957_790
    got = [(s.schedule, s.tile, round(s.gops, 3), round(s.ops_per_byte, 1)) for s in front]
    assert got == [
        ("inter_oxoyon", (14, 14, 16, 1, 32), 28.673, 166.1),
        ("inter_oc", (14, 14, 8, 2, 32), 28.671, 206.9),
        ("inter_kc", (14, 14, 32, 4, 2), 28.563, 217.8),
        ("inter_oxoyon_dir_ox", (7, 7, 32, 1, 32), 28.512, 226.6),
        ("inter_oxoyon_dir_ox", (1, 14, 32, 2, 32), 28.390, 252.9),
    ]


def test_padded_work_heuristic_keeps_the_front():
    n_all, front = conv2_front()
    n_cut, front_cut = conv2_front(1.05)
    assert n_cut < n_all / 2
    assert [(s.schedule, s.tile) for s in front_cut] == [(s.schedule, s.tile) for s in front]


@pytest.mark.parametrize("sched", ["intra", "inter_kc", "inter_oc", "inter_oxoyon"])
def test_schedules_are_loop_orders(sched):
    """The generic model, run on the idsp target with a schedule's loop order, moves exactly the
    elements the seed's access formula counts (a layer without padding, tiles dividing evenly,
    every tile loop running more than once); with single-trip loops it reuses more, never less."""
    nest = LoopNest("conv", K=16, C=8, OY=6, OX=6, FY=3, FX=3, IY=8, IX=8, N=2,
                    x_bits=16, w_bits=16, y_bits=16)
    layer = idsp.IdspLayer.from_nest(nest)
    target = get_target("idsp")
    ev = Evaluator(nest, target, seed002(target, nest))   # the seed's DSP: 16-bit psums spilled
    order = idsp.LOOP_ORDERS.get(sched, ("n", "k", "oy", "ox", "c"))
    every_loop = [(3, 2, 4, 1, 4), (2, 3, 8, 1, 2), (1, 1, 2, 1, 1), (3, 3, 8, 1, 4)]
    single_trips = [(6, 3, 8, 2, 2), (2, 6, 16, 1, 8), (6, 6, 16, 2, 8)]
    for tile in every_loop + single_trips:
        sel = dict(zip(("ox", "oy", "k", "n", "c"), (np.array([v]) for v in tile)))
        r = ev.exact(sel, order, 2)
        moved = sum(int(v[2][0]) for v in r["ops"].values()) / 2   # bytes → elements
        want = idsp.accesses_of(layer, sched, tile)
        if sched == "intra" or tile in single_trips:
            assert moved <= want   # intra-tile reuse only: any loop order reuses at least that
        else:
            assert moved == pytest.approx(want, rel=1e-12)
